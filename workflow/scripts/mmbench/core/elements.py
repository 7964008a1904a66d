"""The element types, declared once.

A value of the configuration's `dtype` axis names an `ElementType`: the scalar type of the
inputs A and B, the scalar type of the output C (and of C0 in C += A.B) and the type the products
are summed in.  For the course kernels all three are one type (float32, float64, int32); for the
16-bit inputs of the tensor cores they differ (bfloat16 and float16 inputs, float32 output and
accumulation), as in nvbench's `{In, Out}` type pairs and cuBLAS's GemmEx.

Everything the pipeline needs to know about a type is here: the C++ names the kernels are
compiled with, the NumPy type that holds its values on the host, its size, the guard-zone
sentinel, its unit roundoff (for the tolerance), whether its arithmetic is exact, and the route
to its cuBLAS reference.  Nothing else in the package writes a type's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

# cudaDataType_t values (library_types.h), as cuBLAS's GemmEx and cuBLASLt take them
CUDA_R_32F, CUDA_R_64F, CUDA_R_16F, CUDA_R_16BF, CUDA_R_32I = 0, 1, 2, 14, 10
CUDA_R_8F_E4M3, CUDA_R_8F_E5M2 = 28, 29


@dataclass(frozen=True)
class Scalar:
    """One scalar type as it lies in memory."""

    name: str
    ctype: str  # the C++ type a kernel is compiled with
    numpy: str  # the NumPy dtype that holds its values on the host ("bfloat16": ml_dtypes)
    nbytes: int
    # significand bits p (unit roundoff 2^-p); None for integers, whose arithmetic is exact
    significand_bits: int | None
    # the guard-zone bit pattern: a NaN of the type (integers: an unlikely value)
    sentinel: int
    cuda_data_type: int
    # its CUtensorMapDataType member (cuda-bindings' driver API), for a tensor map of it
    tensor_map_type: str

    @property
    def integer(self) -> bool:
        return self.significand_bits is None

    @property
    def device_as_bits(self) -> bool:
        """Held in device memory as its bits (an unsigned integer array): CuPy knows no FP8
        type (it takes ml_dtypes' bfloat16 since v14, not its FP8 types)."""
        return self.numpy.startswith("float8")

    @property
    def unit_roundoff(self) -> float:
        return 0.0 if self.integer else 2.0**-self.significand_bits

    @property
    def np_dtype(self) -> np.dtype:
        return numpy_dtype(self.numpy)

    @property
    def bits(self) -> np.dtype:
        """The unsigned integer type of the same size (guard zones are written as bits)."""
        return np.dtype(f"uint{8 * self.nbytes}")

    def exactly_holds(self, integer_max: float) -> bool:
        """True when every integer 0..integer_max is exactly representable."""
        return self.integer or integer_max < 2**self.significand_bits


# the host types NumPy lacks, from ml_dtypes (JAX's, the kept one)
ML_DTYPES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")


@cache
def code_values(name: str) -> np.ndarray:
    """The value in float64 of each of the 256 codes of an 8-bit ml_dtypes type (FP8), as
    ml_dtypes reads them: widening through this table is exact (on the host about three times
    faster than ml_dtypes' own cast of an 8192 x 8192 matrix).  Read-only: it is shared."""
    table = np.arange(256, dtype=np.uint8).view(numpy_dtype(name)).astype(np.float64)
    table.flags.writeable = False
    return table


@cache
def numpy_dtype(name: str) -> np.dtype:
    if name in ML_DTYPES:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


SCALARS = {
    s.name: s
    for s in (
        Scalar(
            "float32",
            "float",
            "float32",
            4,
            24,
            0xFFBADBAD,
            CUDA_R_32F,
            "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
        ),
        Scalar(
            "float64",
            "double",
            "float64",
            8,
            53,
            0xFFF4BADBADBADBAD,
            CUDA_R_64F,
            "CU_TENSOR_MAP_DATA_TYPE_FLOAT64",
        ),
        Scalar(
            "int32",
            "int",
            "int32",
            4,
            None,
            0xFFBADBAD,
            CUDA_R_32I,
            "CU_TENSOR_MAP_DATA_TYPE_INT32",
        ),
        # 0xFFBA is a NaN in both 16-bit formats (all-ones exponent, non-zero fraction)
        Scalar(
            "float16",
            "__half",
            "float16",
            2,
            11,
            0xFFBA,
            CUDA_R_16F,
            "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
        ),
        Scalar(
            "bfloat16",
            "__nv_bfloat16",
            "bfloat16",
            2,
            8,
            0xFFBA,
            CUDA_R_16BF,
            "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
        ),
        # the two FP8 formats of Hopper's tensor cores (OCP FP8: e4m3 "fn", finite, its one NaN
        # S.1111.111; e5m2 IEEE-like): 3 and 2 stored fraction bits; 0x7F is a NaN of both.
        # A tensor map copies their bytes as UINT8.
        Scalar(
            "float8_e4m3",
            "__nv_fp8_e4m3",
            "float8_e4m3fn",
            1,
            4,
            0x7F,
            CUDA_R_8F_E4M3,
            "CU_TENSOR_MAP_DATA_TYPE_UINT8",
        ),
        Scalar(
            "float8_e5m2",
            "__nv_fp8_e5m2",
            "float8_e5m2",
            1,
            3,
            0x7F,
            CUDA_R_8F_E5M2,
            "CU_TENSOR_MAP_DATA_TYPE_UINT8",
        ),
    )
}


@dataclass(frozen=True)
class ElementType:
    """A value of the dtype axis: the types of the inputs, of the output and of the sums."""

    name: str
    input: Scalar
    output: Scalar
    accumulator: Scalar
    # how its cuBLAS reference is called: "gemm" (cublas<t>gemm of the one type), "gemm_ex"
    # (cublasGemmEx: inputs of one type, output and compute of another), "lt" (cuBLASLt's
    # matmul through nvmath-python: FP8), None (no reference)
    cublas: str | None
    # the precision class of the ladder (the panel a kernel is drawn in), per math mode
    classes: tuple[tuple[str, str], ...]
    # extra relative error of each sum on the tensor cores, whose FP32 adds are not documented
    # to round to nearest: the bound then takes two units of roundoff per add, not one
    sums_on_tensor_cores: bool = False
    # where the tensor cores keep fewer significand bits in their sums than the accumulator's
    # type: how many (FP8 on Hopper: about 14, DeepSeek-V3 technical report, section 3.3.2,
    # measured on H800s; not documented by NVIDIA), and the products one instruction adds to
    # its running sum (wgmma's k: 32 for FP8).  A kernel may move its sums to FP32 registers
    # every so many products (arith.tolerance_scale's `promoted_every`).
    tensor_core_sum_bits: int | None = None
    tensor_core_k: int = 1
    # the k a kernel's stage reads (FP8: one 128-byte swizzle row, 128 e4m3 values, in every
    # Hopper FP8 GEMM, libraries' included): its instructions cover k rounded up to it (zeros
    # past the matrix), and each one sums its running sum again, whatever it adds
    tensor_core_k_tile: int = 1

    def precision_class(self, math: str) -> str | None:
        return dict(self.classes).get(math or "ieee")

    def compile_defines(self) -> dict[str, str]:
        """The macros a kernel is compiled with: ELEM_T (the inputs' type: one type for A, B and
        C in every kernel whose element type is not mixed), OUT_T and ACC_T."""
        return dict(ELEM_T=self.input.ctype, OUT_T=self.output.ctype, ACC_T=self.accumulator.ctype)


def _same(name: str, cublas: str | None, classes) -> ElementType:
    s = SCALARS[name]
    return ElementType(name, s, s, s, cublas, tuple(classes))


ELEMENT_TYPES: dict[str, ElementType] = {
    e.name: e
    for e in (
        _same("float32", "gemm", [("ieee", "FP32"), ("tf32", "TF32")]),
        _same("float64", "gemm", [("ieee", "FP64")]),
        _same("int32", None, [("ieee", "INT32")]),
        ElementType(
            "bfloat16",
            SCALARS["bfloat16"],
            SCALARS["float32"],
            SCALARS["float32"],
            "gemm_ex",
            (("ieee", "BF16"),),
            sums_on_tensor_cores=True,
        ),
        ElementType(
            "float16",
            SCALARS["float16"],
            SCALARS["float32"],
            SCALARS["float32"],
            "gemm_ex",
            (("ieee", "FP16"),),
            sums_on_tensor_cores=True,
        ),
        # e4m3 inputs (per-tensor scales of 1), float32 output and sums; its reference is
        # cuBLASLt's FP8 matmul (nvmath-python's bindings, measure/launch.py)
        ElementType(
            "float8_e4m3",
            SCALARS["float8_e4m3"],
            SCALARS["float32"],
            SCALARS["float32"],
            "lt",
            (("ieee", "FP8"),),
            sums_on_tensor_cores=True,
            tensor_core_sum_bits=14,
            tensor_core_k=32,
            tensor_core_k_tile=128,
        ),
    )
}
# the ladder's panels, in order
CLASS_ORDER = ["FP32", "TF32", "BF16", "FP16", "FP8", "FP64", "INT32"]


def element_type(name: str) -> ElementType:
    try:
        return ELEMENT_TYPES[name]
    except KeyError:
        raise ValueError(
            f"unknown element type {name!r}; valid values: {', '.join(ELEMENT_TYPES)}"
        ) from None


def precision_class(dtype: str, math: str) -> str | None:
    e = ELEMENT_TYPES.get(dtype)
    return e.precision_class(math) if e else None
