"""Writes kernels/wgmma.cuh: one wrapper per wgmma shape the kernels use.

An inline-asm statement must name every accumulator register (N / 2 floats per thread of a
64 x N product), so each shape is its own specialisation; they are generated here from one line
each.  A new shape is one line of SHAPES, then `python kernels/wgmma.py` (tests/test_kernels.py
checks that the committed header is what this writes).

    kind     the operands: "bf16" (A K-major and B MN-major, both in shared memory through
             descriptors; k = 16), "bf16_at" (the same with A MN-major and B K-major: a
             product of transposed operands, C^T = B^T . A^T), "tf32_rs" (A in registers, the mma.sync TF32 fragment;
             B K-major in shared memory; k = 8), "tf32" (A and B both K-major in shared
             memory, as TF32 must be there; k = 8) or "e4m3" (FP8: A and B both K-major in
             shared memory, as FP8 must be; k = 32)
    n        the product's N (a multiple of 8 from 8 to 256; PTX ISA, "wgmma .shape")
"""

from __future__ import annotations

import sys
from pathlib import Path

SHAPES = [
    ("bf16", 64),
    ("bf16", 128),
    ("bf16", 192),
    ("bf16", 256),
    ("bf16_at", 16),
    ("bf16_at", 32),
    ("bf16_at", 64),
    ("bf16_at", 96),
    ("bf16_at", 128),
    ("bf16_at", 144),
    ("bf16_at", 160),
    ("bf16_at", 192),
    ("tf32_rs", 64),
    ("tf32_rs", 128),
    ("tf32_rs", 256),
    ("e4m3", 16),
    ("e4m3", 32),
    ("e4m3", 48),
    ("e4m3", 64),
    ("e4m3", 80),
    ("e4m3", 96),
    ("e4m3", 128),
    ("e4m3", 144),
    ("e4m3", 160),
    ("e4m3", 192),
    ("tf32", 16),
    ("tf32", 32),
    ("tf32", 64),
    ("tf32", 128),
    ("tf32", 256),
]

HEADER = Path(__file__).with_name("wgmma.cuh")


def both_k_major(k: int, inputs: str, doc: str) -> dict:
    """A kind whose A and B both come K-major from shared memory through descriptors, as FP8
    and TF32 must there: their instructions take no transpose operands."""
    return dict(
        k=k,
        params="uint64_t desc_a, uint64_t desc_b, int scale_d",
        inputs=['"l"(desc_a)', '"l"(desc_b)'],
        types=f"f32.{inputs}.{inputs}",
        tail="p, 1, 1",  # scale-d, imm-scale-a, imm-scale-b
        operand_text=lambda first: f"%{first}, %{first + 1}",
        doc=f"d (64 x N) (+)= A (64 x {k}, K-major, desc_a) . B ({k} x N, K-major: N rows of 32 "
        f"bytes, desc_b); {doc}",
    )


def bf16(a_mn_major: bool) -> dict:
    """A bfloat16 kind, both operands from shared memory through descriptors, one of them
    MN-major (the transpose bit, which bfloat16 allows): B (the rungs' k x n B), or A (B^T
    as the A of a product of exchanged operands, with the rungs' A as its K-major B)."""
    a, b = ("MN-major", "K-major: N rows of 32 bytes") if a_mn_major else ("K-major", "MN-major")
    return dict(
        k=16,
        params="uint64_t desc_a, uint64_t desc_b, int scale_d",
        inputs=['"l"(desc_a)', '"l"(desc_b)'],
        types="f32.bf16.bf16",
        # scale-d, imm-scale-a, imm-scale-b, transpose a, transpose b (1: MN-major)
        tail=f"p, 1, 1, {int(a_mn_major)}, {int(not a_mn_major)}",
        operand_text=lambda first: f"%{first}, %{first + 1}",
        doc=f"d (64 x N) (+)= A (64 x 16, {a}, desc_a) . B (16 x N, {b}, desc_b); "
        "scale_d = 0 ignores d's old value",
    )


# kind -> (k, C++ parameters after d, asm operands after the accumulators, their constraints,
#          the instruction's type suffix and its trailing immediates)
KINDS = {
    "bf16": bf16(a_mn_major=False),
    "bf16_at": bf16(a_mn_major=True),
    "e4m3": both_k_major(32, "e4m3", "e4m3 inputs, FP32 d"),
    "tf32": both_k_major(8, "tf32", "FP32 inputs read as TF32"),
    "tf32_rs": dict(
        k=8,
        params="const unsigned *a, uint64_t desc_b, int scale_d",
        inputs=['"r"(a[0])', '"r"(a[1])', '"r"(a[2])', '"r"(a[3])', '"l"(desc_b)'],
        types="f32.tf32.tf32",
        tail="p, 1, 1",  # scale-d, imm-scale-a, imm-scale-b
        operand_text=lambda first: (
            f"{{%{first}, %{first + 1}, %{first + 2}, %{first + 3}}}, %{first + 4}"
        ),
        doc="d (64 x N) (+)= A (64 x 8 in registers: a[0..3], the mma.sync TF32 fragment) . "
        "B (8 x N, K-major, desc_b)",
    ),
}


def wrapper(kind: str, n: int) -> str:
    spec = KINDS[kind]
    regs = n // 2
    inputs = spec["inputs"]
    scale = regs + len(inputs)  # the scale_d operand follows the accumulators and the inputs
    accumulators = ", ".join(f"%{i}" for i in range(regs))
    outputs = ",\n          ".join(
        ", ".join(f'"+f"(d[{i}])' for i in range(j, j + 4)) for j in range(0, regs, 4)
    )
    return (
        f"template <>\n"
        f"__device__ __forceinline__ void wgmma_{kind}<{n}>(float *d, {spec['params']}) {{\n"
        f"    asm volatile(\n"
        f'        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{scale}, 0;\\n"\n'
        f'        "wgmma.mma_async.sync.aligned.m64n{n}k{spec["k"]}.{spec["types"]} {{"\n'
        f'        "{accumulators}"\n'
        f'        "}}, {spec["operand_text"](regs)}, {spec["tail"]};\\n}}\\n"\n'
        f"        : {outputs}\n"
        f'        : {", ".join(inputs)}, "r"(scale_d));\n'
        f"}}\n"
    )


def header() -> str:
    out = [
        "// Generated by kernels/wgmma.py from its SHAPES (one line per shape); do not edit.\n"
        "// One wrapper per wgmma shape: an asm statement names every accumulator register.\n"
        "//\n"
        '// Accumulator layout of a warpgroup\'s 64 x N product (PTX ISA, "wgmma 64xNx16 D"):\n'
        "// thread 32 w + 4 g + q (warp w, lane group g, quad q) holds d[4 j + e] =\n"
        "// D[16 w + g + 8 (e / 2)][8 j + 2 q + e % 2], j < N / 8.\n"
        "#pragma once\n"
        "#include <stdint.h>\n"
    ]
    for kind, spec in KINDS.items():
        out.append(
            f"\n// {spec['doc']}\n"
            f"template <int N>\n"
            f"__device__ __forceinline__ void wgmma_{kind}(float *d, {spec['params']});\n"
        )
    for kind, n in SHAPES:
        if kind not in KINDS or n % 8 or not 8 <= n <= 256:
            raise ValueError(f"wgmma shape ({kind!r}, {n}): valid kinds {sorted(KINDS)}, "
                             "N a multiple of 8 from 8 to 256")  # fmt: skip
        out.append("\n" + wrapper(kind, n))
    return "".join(out)


if __name__ == "__main__":
    HEADER.write_text(header())
    print(f"wrote {HEADER} ({len(SHAPES)} shapes)", file=sys.stderr)
