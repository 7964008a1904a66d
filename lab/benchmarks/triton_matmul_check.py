"""A Triton persistent matmul of ours, tried on the GPU machine before it becomes a backend of
the pipeline (issue "CUTLASS and Triton as reference lines", item 2): does it verify at even and
odd shapes in BF16, TF32 and FP8, and what do Triton's own `do_bench` and plain CUDA events
around back-to-back launches say of it and of torch.matmul (cuBLAS) at 4096 and 8192?

    python3 lab/benchmarks/triton_matmul_check.py [--sizes 4096 8192] [--configs N]

Needs PyTorch and Triton (the GPU machine has both); prints one line per check and per timing.
The kernel: each program walks output tiles in grouped order (GROUP tile rows at a time, for L2
reuse), one program per multiprocessor; a tile is BM x BN, k stepped by BK with masked loads,
sums in FP32 (tl.dot, TF32 for float32 inputs), C = A.B or C += A.B stored masked.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                      stride_cm, stride_cn, ACCUMULATE: tl.constexpr, BM: tl.constexpr,
                      BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
                      PROGRAMS: tl.constexpr, TF32: tl.constexpr):  # fmt: skip
    pid = tl.program_id(0)
    tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    tiles = tiles_m * tiles_n
    for tile in range(pid, tiles, PROGRAMS):
        # grouped order: GROUP rows of tiles walked column by column
        group = tile // (GROUP * tiles_n)
        first_m = group * GROUP
        rows = min(tiles_m - first_m, GROUP)
        tm = first_m + (tile % (GROUP * tiles_n)) % rows
        tn = (tile % (GROUP * tiles_n)) // rows
        offs_m = tm * BM + tl.arange(0, BM)
        offs_n = tn * BN + tl.arange(0, BN)
        offs_k = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            ks = k0 + offs_k
            a = tl.load(a_ptr + offs_m[:, None] * stride_am + ks[None, :] * stride_ak,
                        mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)  # fmt: skip
            b = tl.load(b_ptr + ks[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                        mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)  # fmt: skip
            if TF32:
                acc = tl.dot(a, b, acc, input_precision="tf32")
            else:
                acc = tl.dot(a, b, acc)
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
        mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
        if ACCUMULATE:
            acc += tl.load(c_ptrs, mask=mask, other=0.0)
        tl.store(c_ptrs, acc, mask=mask)


# (BM, BN, BK, GROUP, warps, stages) per input type: the tiles Triton's Hopper tutorials use
CONFIGS = {
    torch.bfloat16: [(128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 4, 4), (128, 128, 64, 8, 8, 4)],
    torch.float32: [(128, 128, 32, 8, 8, 3), (128, 256, 32, 8, 8, 3)],
    torch.float8_e4m3fn: [(128, 256, 128, 8, 8, 3), (128, 128, 128, 8, 8, 4)],
}


def launch(a, b, c, config, accumulate=False):
    bm, bn, bk, group, warps, stages = config
    m, k = a.shape
    n = b.shape[1]
    programs = torch.cuda.get_device_properties(a.device).multi_processor_count
    programs = min(programs, triton.cdiv(m, bm) * triton.cdiv(n, bn))
    matmul_persistent[(programs,)](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
        c.stride(1), ACCUMULATE=accumulate, BM=bm, BN=bn, BK=bk, GROUP=group, PROGRAMS=programs,
        TF32=a.dtype == torch.float32, num_warps=warps, num_stages=stages,
    )  # fmt: skip


def operands(dtype, m, n, k, seed=7):
    """A (m x k) and B (k x n) drawn normal, then cast; FP8's B handed over K-major (its
    transpose's storage), as the FP8 rungs and cuBLASLt take it."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g).to(dtype)
    if dtype == torch.float8_e4m3fn:
        b = torch.randn(n, k, device="cuda", generator=g).to(dtype).t()  # k x n, K-major
    else:
        b = torch.randn(k, n, device="cuda", generator=g).to(dtype)
    return a, b


def check(dtype, m, n, k, config, accumulate) -> tuple[bool, float]:
    """Verified against the float64 product of the same (rounded) inputs: the relative L2
    error within the type's bound (TF32 and the 16-bit types: 2^-10 of the sums' scale; FP8,
    inputs exact in float64, sums in FP32: 2^-16 x sqrt(k))."""
    a, b = operands(dtype, m, n, k)
    c0 = torch.randn(m, n, device="cuda", dtype=torch.float32)
    c = c0.clone()
    launch(a, b, c, config, accumulate)
    ref = a.double() @ b.double()  # TF32's rounding of float32 inputs is inside the bound
    if accumulate:
        ref = ref + c0.double()
    err = float((c.double() - ref).norm() / ref.norm())
    bound = 2.0**-16 * k**0.5 if dtype == torch.float8_e4m3fn else 2.0**-9
    return err <= bound, err


def events_ms(fn, count=50) -> float:
    """Back-to-back launches between two CUDA events after two warm-up calls: ms per launch."""
    fn()
    fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(count):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / count


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    p.add_argument("--configs", type=int, default=3, help="configurations per type at most")
    a = p.parse_args(argv)
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"triton {triton.__version__}")  # fmt: skip
    bad = 0
    for dtype, configs in CONFIGS.items():
        for config in configs[: a.configs]:
            for (m, n, k), acc in [((1024, 1024, 1024), False), ((1000, 1104, 48), True),
                                   ((33, 4112, 144), False)]:  # fmt: skip
                ok, err = check(dtype, m, n, k, config, acc)
                bad += not ok
                print(f"check {dtype} {config} {m}x{n}x{k} acc={acc}: "
                      f"{'PASS' if ok else 'FAIL'} (rel L2 {err:.2e})")  # fmt: skip
    for dtype, configs in CONFIGS.items():
        for size in a.sizes:
            x, y = operands(dtype, size, size, size)
            c = torch.empty(size, size, device="cuda", dtype=torch.float32)
            calls = {f"triton {cf}": partial(launch, x, y, c, cf) for cf in configs[: a.configs]}
            if dtype == torch.float8_e4m3fn:
                one = torch.ones((), device="cuda")
                calls["torch (cuBLASLt)"] = partial(torch._scaled_mm, x, y, one, one,
                                                    out_dtype=torch.float32)  # fmt: skip
            else:
                torch.backends.cuda.matmul.allow_tf32 = dtype == torch.float32
                calls["torch (cuBLAS)"] = partial(torch.matmul, x, y)
            for name, fn in calls.items():
                tf = 2.0 * size**3 / 1e9  # GFLOP of the product: over ms, TFLOP/s
                print(f"time {dtype} {size} {name}: events {tf / events_ms(fn):.1f} TFLOP/s, "
                      f"do_bench {tf / triton.testing.do_bench(fn):.1f} TFLOP/s")  # fmt: skip
    print(f"{bad} check(s) failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
