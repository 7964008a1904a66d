"""On the GPU: the runner with real cubins.  Skipped with a reason where there is no GPU; run
on the GPU machine with `pytest -m gpu`."""

import itertools
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from mmbench.core.axes import Configuration
from mmbench.core.rates import with_rates
from mmbench.core.registry import kernel_dependencies, load_registry
from mmbench.core.row import SAMPLES
from mmbench.measure.launch import Workspace
from mmbench.measure.runner import Runner
from mmbench.measure.timing import Sampling
from mmbench.plan import plan
from mmbench.plan.builds import build_instantiation
from mmbench.plan.compile import compile_cubin, nvcc_command

from .conftest import ROOT, covering, read_csv

pytestmark = pytest.mark.gpu

FAST = Sampling(warmup=1, min_samples=2, max_samples=3, min_time_s=0.0, max_time_s=1.0)


@pytest.fixture(scope="module")
def arch():
    gpus = plan.detect_gpus()
    return "sm_" + gpus[0]["compute_cap"].replace(".", "")


def run(registry, arch, tmp_path, name, confs, kernels=ROOT / "kernels"):
    """Compiles what the configurations need (as the compile rule does, the instantiations at
    once, one nvcc each on the machine's cores) and measures them."""
    v = registry[name]
    todo = {c.instance: c.instance_params for c in confs} if v.compiled else {}

    def build(instance: str) -> str:
        out = tmp_path / f"{name}_{instance}.{v.build_ext}"
        if kernels == ROOT / "kernels":  # as its compile rule builds it (a Triton build too)
            build_instantiation(v, todo[instance], out, arch, out.with_suffix(".log"),
                                f"{name} {instance}")  # fmt: skip
            return str(out)
        cmd = nvcc_command(kernels / v.source, out, v.arch or arch, v.defines(todo[instance]),
                           shared=v.shared, libraries=v.libraries)  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        return str(out)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        cubins = dict(zip(todo, pool.map(build, todo), strict=True))
    rows = []
    # the rates as the job's table gets them (core/rates.py): the runner records measurements
    Runner(v, cubins, FAST).run(confs, lambda c, row: rows.append(with_rates(row)))
    return rows


def naive_guarded_cubin(registry, arch, tmp_path):
    """naive_guarded's float32 TILE 16 instantiation, built as the compile rule builds it
    (compile_cubin: the cubin names its instantiation) into tmp_path."""
    v = registry["naive_guarded"]
    cubin = tmp_path / "naive_guarded" / "float32_TILE16.cubin"
    compile_cubin(ROOT / "kernels" / v.source, cubin, arch, {"dtype": "float32", "TILE": 16},
                  tmp_path / "ng.log", "naive_guarded float32_TILE16")  # fmt: skip
    return cubin


def conf(variant, m, n=None, k=None, tile=32, coarsen=4, registry=None, **kw):
    """A configuration; TILE and COARSEN go to the variants that declare them."""
    declared = dict((registry or load_registry())[variant].params)
    params = {}
    if "TILE" in declared:
        params["TILE"] = tile
    if "COARSEN" in declared:
        params["COARSEN"] = coarsen
    base = dict(
        variant=variant,
        params=params,
        dtype="float32",
        m=m,
        n=n or m,
        k=k or m,
        accumulate=False,
        memory="pinned",
        distribution="int09",
        seed=7,
    )
    return Configuration(**(base | kw))


def test_kernel00_fails_at_641_with_its_first_mismatches_and_never_crashes(
    registry, arch, tmp_path
):
    rows = run(
        registry,
        arch,
        tmp_path,
        "naive_unguarded",
        [conf("naive_unguarded", 641, expected="FAIL"), conf("naive_unguarded", 640)],
    )
    bad, good = rows
    assert bad["verification"] == "FAIL" and good["verification"] == "PASS"
    assert bad["grid"] == "20x20x1"  # seed 002: nBlocks 20x20 at 641
    assert bad["mismatches"] == 641 * 641 - 640 * 640  # the unwritten border
    assert bad["first_mismatches"].startswith("0:640: ")
    assert len(bad["first_mismatches"].split(" | ")) == 10
    assert bad["oob_writes"] == 0
    assert bad["kernel_ms_median"] > 0 and good["kernel_gflops"] > 0


def test_kernel10_outside_its_precondition_runs_in_guard_zones(registry, arch, tmp_path):
    rows = run(
        registry,
        arch,
        tmp_path,
        "tiled_unguarded",
        [
            conf("tiled_unguarded", 641, expected="FAIL"),
            conf("tiled_unguarded", 640),
            conf("tiled_unguarded", 96, 64, 32, tile=16, dtype="float64", accumulate=True),
        ],
    )
    assert rows[0]["verification"] == "FAIL"
    assert rows[0]["oob_writes"] > 0  # its writes past C landed in the guard zone
    assert rows[1]["verification"] == "PASS" and rows[1]["oob_writes"] == 0
    assert rows[2]["verification"] == "PASS"


@pytest.mark.parametrize("variant", ["naive_guarded", "naive_xrow", "tiled_guarded", "coarsened"])
def test_guarded_variants_pass_every_shape_type_and_mode(registry, arch, tmp_path, variant):
    confs = []
    for (m, n, k), dtype, acc, mem, tile in itertools.product(
        [(100, 70, 37), (33, 129, 65), (64, 64, 64)],
        ["float32", "float64", "int32"],
        [False, True],
        ["pinned", "pageable"],
        [8, 32],
    ):
        dist = "int09" if dtype == "int32" or (m, n, k) == (64, 64, 64) else "uniform"
        confs.append(
            conf(
                variant,
                m,
                n,
                k,
                dtype=dtype,
                accumulate=acc,
                memory=mem,
                tile=tile,
                distribution=dist,
            )
        )
    rows = run(registry, arch, tmp_path, variant, confs)
    failed = [
        (r["dtype"], r["m"], r["n"], r["k"], r["accumulate"], r["first_mismatches"], r.get("error"))
        for r in rows
        if r["verification"] != "PASS"
    ]
    assert not failed
    assert all(r["samples"] >= 2 and r["global_ms_median"] >= r["kernel_ms_median"] for r in rows)
    assert {r["tolerance"] for r in rows} >= {"exact"}


def test_cublas_reference_line(registry, arch, tmp_path):
    confs = [
        conf("cublas", 300, 200, 100, dtype=d, accumulate=a, distribution="uniform")
        for d in ("float32", "float64")
        for a in (False, True)
    ]
    rows = run(registry, arch, tmp_path, "cublas", confs)
    assert [r["verification"] for r in rows] == ["PASS"] * 4
    assert all(r["gpu_uuid"].startswith("GPU-") and r["driver_version"] for r in rows)


def test_cublas_tf32_takes_b_transposed_where_its_rung_does(registry, arch, tmp_path):
    """cublas_tf32_tn (registry `b_layout: n_by_k`): B handed over as its transpose, read with
    op T, verifies at shapes where m, n and k all differ (a swapped m and n, or an operand
    read untransposed, would not), with C += A.B, in contiguous and padded, strided layouts."""
    confs = [
        Configuration.of("cublas_tf32_tn", {"dtype": "float32"}, m=m, n=n, k=k, accumulate=acc,
                         memory=mem, distribution="normal", seed=7, math="tf32", pad=pad,
                         transfer=tr)
        for m, n, k in ((300, 200, 100), (1000, 1100, 37), (33, 31, 4097))
        for acc in (False, True)
        for mem, pad, tr in (("pinned", 0, "contiguous"), ("pageable", 3, "strided"))
    ]  # fmt: skip
    rows = run(registry, arch, tmp_path, "cublas_tf32_tn", confs)
    assert [r["verification"] for r in rows] == ["PASS"] * len(confs), [
        (r["m"], r["n"], r["k"], r.get("error"), r.get("first_mismatches")) for r in rows
    ]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_sixteen_bit_cublas_references_verify(registry, arch, tmp_path, dtype):
    """bfloat16 / float16 inputs, float32 output and sums (cublasGemmEx): exact on integers,
    within the bound on normal inputs, at odd and large sizes and with C += A.B."""
    shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (33, 31, 37)]
    confs = [
        conf("cublas", m, n, k, dtype=dtype, distribution=d, accumulate=acc)
        for (m, n, k), d, acc in itertools.product(shapes, ["normal", "int09"], [False, True])
        if not (acc and m > 4096)
    ]
    rows = run(registry, arch, tmp_path, "cublas", confs)
    bad = [(r["m"], r["distribution"], r["accumulate"], r.get("error"), r.get("first_mismatches"))
           for r in rows if r["verification"] != "PASS"]  # fmt: skip
    assert not bad
    for r in rows:
        exact = r["distribution"] == "int09"
        assert (r["tolerance"] == "exact") == exact, r["tolerance"]
        print(f"{dtype} {r['m']}x{r['n']}x{r['k']} {r['distribution']} acc={r['accumulate']}: "
              f"{r['verification']}, {r['kernel_ms_median']:.3f} ms, "
              f"{r['kernel_gflops'] / 1e3:.1f} TFLOP/s, rel L2 {r['rel_l2_error']:.2e}")  # fmt: skip


def _driver_launched() -> list[str]:
    """The registry's variants whose launch needs the CUDA driver (tensor maps, clusters)."""
    out = []
    for name, v in load_registry().items():
        if v.backend != "cubin":  # a library launches its own
            continue
        spec = v.launch_spec(v.instantiations()[0], 64, 64, 64, (64, 64, 64), False)
        if spec.needs_driver:
            out.append(name)
    return out or ["none"]


@pytest.mark.parametrize("variant", _driver_launched())
def test_driver_launched_kernels_verify_at_odd_sizes_and_shapes(registry, arch, tmp_path, variant):
    """Every kernel launched with tensor maps or a cluster, its first and last instantiation and
    one with each parameter value those two lack (covering), at 4096, 1, 31, 33, 4097 and
    1000 x 37 . 37 x 1100, with C += A.B, in pinned, pageable (a padded, strided layout) and
    mapped memory."""
    if variant == "none":
        pytest.skip("no registry variant launches through the CUDA driver")
    v = registry[variant]
    instances = plan.buildable(v, {}, arch)[0]
    shapes = [(4096, 4096, 4096), (1, 1, 1), (31, 31, 31), (33, 33, 33), (4097, 4097, 4097),
              (1000, 1100, 37)]  # fmt: skip
    layouts = [("pinned", 0, "contiguous"), ("pageable", 3, "strided"), ("mapped", 0, "strided")]
    confs = [
        Configuration.of(variant, params, m=m, n=n, k=k, accumulate=acc, memory=mem,
                         distribution="normal", seed=7, math=v.math, pad=pad, transfer=t)
        for params in covering(instances)
        for (m, n, k), acc, (mem, pad, t) in itertools.product(shapes, [False, True], layouts)
        if not (mem == "mapped" and m > 1100)
    ]  # fmt: skip
    rows = run(registry, arch, tmp_path, variant, confs)
    bad = [(r["label"], r["m"], r["n"], r["k"], r["memory"], r["accumulate"], r.get("error"),
            r.get("first_mismatches")) for r in rows if r["verification"] != "PASS"]  # fmt: skip
    assert not bad
    # one instantiation launches in clusters at every shape or at none (persistent_bf16's
    # CLUSTER=1 and CLUSTER=2 differ)
    for label in {r["label"] for r in rows}:
        clustered = {bool(r["cluster"]) for r in rows if r["label"] == label}
        assert len(clustered) == 1, (label, clustered)
    for r in rows:
        if r["m"] == r["n"] == r["k"] and r["memory"] == "pinned" and not r["accumulate"]:
            print(f"{r['label']} {r['m']}: {r['verification']}, kernel ld {r['kernel_ld']}, "
                  f"{r['kernel_gflops']:.0f} GFLOP/s")  # fmt: skip


SPLIT_K = [name for name, v in load_registry().items() if "SPLITS" in dict(v.shape_facts)]


@pytest.mark.parametrize("variant", SPLIT_K)
def test_split_k_products_verify_and_record_their_splits(registry, arch, tmp_path, variant):
    """Products with too few output tiles for the GPU and a long k (kernels/split_k.cuh): the
    first and the last instantiation of each split-K kernel at 128 x 4096 x 4096, at odd
    shapes (129 x 1001 x 3001; 1 x 33 x 5000, one row of C) and at a short k that is not split
    (1000 x 1100 x 37), and, for the kernels that split only the last wave's tiles (HEAD), at
    3001 x 3001 x 1000 and 1500 x 1999 x 3001 (a few waves and a short last one), with C = A.B
    and C += A.B, contiguous and with a leading dimension that breaks 16-byte rows (pad 3, the
    harness's aligned copy for the TMA kernels).  Every row PASSes, and records its splits;
    the long-k products with few tiles ran split, and so did some last waves."""
    v = registry[variant]
    instances = plan.buildable(v, {}, arch)[0]
    shapes = [(128, 4096, 4096), (129, 1001, 3001), (1, 33, 5000), (1000, 1100, 37)]
    # HEAD: the persistent kernels' whole tiles; SPLIT_ROWS: warptile_db's whole rows
    head = next((f for f in ("HEAD", "SPLIT_ROWS") if f in dict(v.shape_facts)), None)
    tail = head is not None
    if tail:
        shapes += [(3001, 3001, 1000), (1500, 1999, 3001)]
    confs = [
        Configuration.of(variant, params, m=m, n=n, k=k, accumulate=acc, memory="pinned",
                         distribution="normal", seed=7, math=v.math, pad=pad,
                         transfer="strided" if pad else "contiguous")
        for params in {id(p): p for p in (instances[0], instances[-1])}.values()
        for (m, n, k), acc, pad in itertools.product(shapes, [False, True], [0, 3])
    ]  # fmt: skip
    rows = run(registry, arch, tmp_path, variant, confs)
    bad = [(r["label"], r["m"], r["n"], r["k"], r["pad"], r["accumulate"], r["launch_facts"],
            r.get("error"), r.get("first_mismatches")) for r in rows if r["verification"] != "PASS"]  # fmt: skip
    assert not bad
    splits = {(r["label"], r["m"], r["n"], r["k"]):
              int(r["launch_facts"].split("SPLITS=")[1].split()[0]) for r in rows}  # fmt: skip
    # 1 x 33 x 5000 is one output tile for any tile shape: split (5000 // 256 = 19, at most 16);
    # k = 37 is shorter than one split's least depth (256): not split
    assert all(s > 1 for (_, m, _, _), s in splits.items() if m == 1), splits
    assert all(s == 1 for (_, _, _, k), s in splits.items() if k == 37), splits
    if tail:  # a last wave split behind whole tiles (HEAD > 0) ran and verified
        heads = [r for r in rows if f"{head}=" in r["launch_facts"]
                 and int(r["launch_facts"].split(f"{head}=")[1].split()[0]) > 0
                 and int(r["launch_facts"].split("SPLITS=")[1].split()[0]) > 1]  # fmt: skip
        assert heads, splits
    for key, s in sorted(splits.items()):
        print(variant, *key, f"SPLITS={s}")


def _peer_rows(registry, arch, tmp_path, variant, instances, shapes) -> list[dict]:
    """A peer's builds (CUTLASS's, Triton's) measured at `shapes`, C = A.B and C += A.B,
    contiguous and with leading dimensions that break 16-byte rows (pad 3: the harness's
    aligned copy), normal inputs: every row PASSes (a failing one printed whole, where
    pytest's message would cut it short), and each build's rate at 1024^3 is printed."""
    v = registry[variant]
    confs = [
        Configuration.of(variant, params, m=m, n=n, k=k, accumulate=acc, memory="pinned",
                         distribution="normal", seed=5, pad=pad, math=v.math,
                         transfer="strided" if pad else "contiguous")
        for params in instances
        for (m, n, k), acc, pad in itertools.product(shapes, [False, True], [0, 3])
    ]  # fmt: skip
    rows = run(registry, arch, tmp_path, variant, confs)
    bad = [(r["label"], r["m"], r["n"], r["k"], r["pad"], r["accumulate"], r["verification"],
            r.get("error"), r.get("max_abs_error"), r.get("tolerance"), r.get("mismatches"),
            r.get("oob_writes"), r.get("first_mismatches"))
           for r in rows if r["verification"] != "PASS"]  # fmt: skip
    for b in bad:
        print("not PASS:", *b)
    assert not bad
    assert len(rows) == len(instances) * len(shapes) * 4
    for r in rows:
        if r["m"] == 1024 and not r["accumulate"] and not r["pad"]:
            print(f"{r['label']}: {r['kernel_gflops']:.0f} GFLOP/s")
    return rows


@pytest.mark.parametrize("variant", ["cutlass_bf16", "cutlass_tf32", "cutlass_fp8", "cutlass_f64"])
def test_cutlass_builds_verify_at_even_and_odd_shapes(registry, arch, tmp_path, variant):
    """A CUTLASS variant (backend shared: kernels/cutlass_gemm.cu, CUTLASS's Hopper GEMM called
    through its C entry points): each of its builds at 1024 x 1024 x 1024, at
    1000 x 1100 x 37 (a k shorter than one k-tile) and at 33 x 4099 x 129 (a side < 64 and
    sides that are not multiples of its tiles), C = A.B and C += A.B, contiguous and with
    leading dimensions that break 16-byte rows (pad 3: the harness's aligned copy): every row
    PASSes, and its grid and block are the library's (0 in the row).  A product whose n or k
    CUTLASS's TMA refuses runs padded, as the plan runs it (registry `padded_to`)."""
    v = registry[variant]
    instances = plan.buildable(v, {}, arch)[0]
    # registry: the three 128 x 128 builds and two 128 x 256; FP8 the two cooperative 128 x 128
    # ones (the others spill); FP64 the four tiles of CUTLASS's own SM90 FP64 tests
    assert len(instances) == {"cutlass_fp8": 2, "cutlass_f64": 4}.get(variant, 5)
    shapes = [v.padded(1024, 1024, 1024), v.padded(1000, 1100, 37), v.padded(33, 4099, 129)]
    rows = _peer_rows(registry, arch, tmp_path, variant, instances, shapes)
    assert {r["grid"] for r in rows} == {"0x0x0"}


@pytest.mark.parametrize("variant", ["triton_bf16", "triton_tf32", "triton_fp8"])
def test_triton_builds_verify_at_even_and_odd_shapes(registry, arch, tmp_path, variant):
    """A Triton variant (backend triton: kernels/triton_matmul.py lowered by Triton, assembled
    by ptxas, launched by our harness with Triton's dynamic shared memory and scratch): its
    first and last builds at 1024 x 1024 x 1024, at 1000 x 1100 x 37 (a k shorter than one
    k-step) and at 33 x 4099 x 129 (a side < 64 and sides that are not multiples of its tiles),
    C = A.B and C += A.B, contiguous and with leading dimensions that break 16-byte rows (pad 3:
    the harness's aligned copy): every row PASSes, one program per multiprocessor at most."""
    v = registry[variant]
    instances = plan.buildable(v, {}, arch)[0]
    assert len(instances) == 3  # registry: 128 x 128 tiles, 2-4 stages, 8 warps
    shapes = [(1024, 1024, 1024), (1000, 1100, 37), (33, 4099, 129)]
    rows = _peer_rows(registry, arch, tmp_path, variant, [instances[0], instances[-1]], shapes)
    import cupy as cp

    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    for r in rows:
        programs = int(r["grid"].split("x")[0])
        assert programs == min(sms, -(-r["m"] // 128) * -(-r["n"] // 128)), r["grid"]


def test_skinny_simt_verifies_at_either_small_side(registry, arch, tmp_path):
    """skinny_simt (kernels/35_skinny_simt.cu), every instantiation (float32 and float64, the
    small side m or n, PIPE 1, 2 and 3), at products of one small side either way round (17 x 4099 x 129 and
    4099 x 17 x 129, a side that is not a multiple of any MT), a tiny one that splits along k
    (30 x 169 x 470: one tile, 470 // 64 = 7 shares), 1 x 1 x 1 and 33 x 31 x 37, C = A.B and
    C += A.B, contiguous and with leading dimensions that break 16-byte rows (pad 3: the
    harness's aligned copy): every row PASSes, and 30 x 169 x 470 ran split."""
    v = registry["skinny_simt"]
    instances = plan.buildable(v, {}, arch)[0]
    assert len(instances) == 40  # test_registry's hand count
    shapes = [(17, 4099, 129), (4099, 17, 129), (30, 169, 470), (1, 1, 1), (33, 31, 37)]
    confs = [
        Configuration.of("skinny_simt", params, m=m, n=n, k=k, accumulate=acc, memory="pinned",
                         distribution="normal", seed=11, pad=pad,
                         transfer="strided" if pad else "contiguous")
        for params in instances
        for (m, n, k), acc, pad in itertools.product(shapes, [False, True], [0, 3])
    ]  # fmt: skip
    rows = run(registry, arch, tmp_path, "skinny_simt", confs)
    bad = [(r["label"], r["m"], r["n"], r["k"], r["pad"], r["accumulate"], r["launch_facts"],
            r.get("error"), r.get("first_mismatches")) for r in rows if r["verification"] != "PASS"]  # fmt: skip
    assert not bad
    assert len(rows) == 40 * 5 * 2 * 2
    splits = {int(r["launch_facts"].split("SPLITS=")[1].split()[0])
              for r in rows if (r["m"], r["n"], r["k"]) == (30, 169, 470)}  # fmt: skip
    assert min(splits) > 1, splits
    for r in rows:
        if r["m"] in (17, 4099) and not r["accumulate"] and not r["pad"]:
            print(f"{r['label']} {r['m']}x{r['n']}x{r['k']}: {r['kernel_gflops']:.0f} GFLOP/s")


@pytest.mark.parametrize("variant,builds", [("skinny_dot", 56), ("warptile_ring", 69)])
def test_every_build_verifies_at_small_odd_sides(registry, arch, tmp_path, variant, builds):
    """Every instantiation (test_registry's hand count of each) of skinny_dot
    (kernels/38_skinny_dot.cu: float32 and float64, a small n on the CUDA cores) and of
    warptile_ring (kernels/39_warptile_ring.cu: float32 warp tiles on a cp.async ring), at
    products whose small side is no multiple of any tile (4099 x 17 x 129, 611 x 71 x 702, 17 x
    40 x 1029: a k that ends inside a lane's run or a k-tile), one whose few tiles split along k
    (30 x 24 x 2000), 1 x 1 x 1 and 33 x 31 x 37; C = A.B contiguous, and C += A.B with leading
    dimensions that break 16-byte rows (pad 3: the harness's aligned copy; warptile_ring's B
    then goes one element a copy): every row PASSes, and 30 x 24 x 2000 ran split."""
    v = registry[variant]
    instances = plan.buildable(v, {}, arch)[0]
    assert len(instances) == builds
    shapes = [(4099, 17, 129), (611, 71, 702), (17, 40, 1029), (30, 24, 2000), (1, 1, 1),
              (33, 31, 37)]  # fmt: skip
    confs = [
        Configuration.of(variant, params, m=m, n=n, k=k, accumulate=acc, memory="pinned",
                         distribution="normal", seed=11, pad=pad,
                         transfer="strided" if pad else "contiguous")
        for params in instances
        for (m, n, k), (acc, pad) in itertools.product(shapes, [(False, 0), (True, 3)])
    ]  # fmt: skip
    rows = run(registry, arch, tmp_path, variant, confs)
    bad = [(r["label"], r["m"], r["n"], r["k"], r["pad"], r["accumulate"], r["launch_facts"],
            r.get("error"), r.get("first_mismatches")) for r in rows if r["verification"] != "PASS"]  # fmt: skip
    assert not bad, bad[:20]
    assert len(rows) == builds * 6 * 2
    splits = {int(r["launch_facts"].split("SPLITS=")[1].split()[0])
              for r in rows if (r["m"], r["n"], r["k"]) == (30, 24, 2000)}  # fmt: skip
    assert min(splits) > 1, splits
    for r in rows:
        if (r["m"], r["n"]) == (611, 71) and not r["accumulate"]:
            print(f"{r['label']} 611x71x702: {r['kernel_gflops']:.0f} GFLOP/s")


@pytest.mark.parametrize("variant,instance", [
    ("skinny_fp8", "float8_e4m3_BM128_BN160_STAGES4_CLUSTER4_GROUP8_CHAIN1"),
    ("skinny_bf16", "bfloat16_BM128_BN160_STAGES4_CLUSTER4_GROUP8"),
])  # fmt: skip
def test_a_stream_k_grid_in_clusters_of_four_is_what_the_gpu_holds_at_once(
    registry, arch, tmp_path, variant, instance
):
    """The skinny rungs in clusters of four (160 rows of A, 128 of B) at 129 x 14712 x 5968 (29
    clusters' tiles, shared among every worker) and at 17 x 4099 x 129 and 150 x 1142 x 535:
    the occupancy calculator's count of clusters at once is at least one and at most the
    multiprocessors divided by four; the launch at the first product is that many clusters;
    every row PASSes with C = A.B and C += A.B."""
    import cupy as cp

    from mmbench.measure.launch import Modules, active_clusters

    v = registry[variant]
    params = v.instance(instance)
    shapes = [(129, 14712, 5968), (17, 4099, 129), (150, 1142, 535)]
    confs = [Configuration.of(variant, params, m=m, n=n, k=k, accumulate=acc,
                              memory="pinned", distribution="normal", seed=11)
             for (m, n, k), acc in itertools.product(shapes, [False, True])]  # fmt: skip
    rows = run(registry, arch, tmp_path, variant, confs)
    bad = [(r["m"], r["n"], r["k"], r["accumulate"], r.get("error")) for r in rows
           if r["verification"] != "PASS"]  # fmt: skip
    assert not bad and len(rows) == 6
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    cubin = str(tmp_path / f"{variant}_{confs[0].instance}.cubin")
    spec = v.launch_spec(params, 129, 14712, 5968, (5968, 5968, 14712), False, sms)
    slots = active_clusters(Modules(cp).function(cubin, v.symbol), spec)
    assert 1 <= slots <= sms // 4, (slots, sms)
    grids = {r["grid"] for r in rows if (r["m"], r["n"], r["k"]) == shapes[0]}
    assert grids == {f"{4 * slots}x1x1"}, (grids, slots)
    print(f"{sms} multiprocessors hold {slots} clusters of four blocks of {variant} at once")


@pytest.mark.parametrize("variant,instance,shape", [
    ("skinny_fp8", "float8_e4m3_BM128_BN144_STAGES4_CLUSTER1_GROUP8_CHAIN1", (129, 14712, 5968)),
    ("skinny_tf32_tn", "float32_BM128_BN16_STAGES4_CLUSTER1_GROUP8", (18, 152, 2881)),
    ("streamk_fp8", "float8_e4m3_BM128_BN64_STAGES6_CLUSTER2_GROUP8_CHAIN1", (150, 1142, 5035)),
    ("streamk_f64", "float64_BM64_BN128_WM32_WN64_STAGES3_BLOCKS2", (34, 11325, 6122)),
])  # fmt: skip
def test_every_stream_k_grid_the_model_weighs_verifies(registry, arch, tmp_path, variant,
                                                       instance, shape):  # fmt: skip
    """Each stream-K grid the time model weighs (core/timemodel.py worker_choices: the entry's
    rule, every tile whole, each tile split a whole number of ways; tests/test_model.py counts
    them by hand) at a product of few tiles, C = A.B and C += A.B: every row PASSes and ran the
    grid it asked for (its workers, in clusters of two for streamk_fp8's build; the rule's
    where it asked for none)."""
    import cupy as cp

    from mmbench.core.timemodel import worker_choices

    v = registry[variant]
    params = v.instance(instance)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    choices = worker_choices(v, params, *shape, sms)
    assert len(choices) > 1, choices
    confs = [Configuration.of(variant, params, m=shape[0], n=shape[1], k=shape[2],
                              accumulate=acc, memory="pinned", distribution="normal", seed=11,
                              workers=w)
             for w, acc in itertools.product(choices, [False, True])]  # fmt: skip
    rows = run(registry, arch, tmp_path, variant, confs)
    bad = [(r["workers"], r["accumulate"], r["launch_facts"], r.get("error")) for r in rows
           if r["verification"] != "PASS"]  # fmt: skip
    assert not bad and len(rows) == 2 * len(choices)
    cluster = params.get("CLUSTER", 1)
    rule = v.launch(params, *shape, sms)[0][0]
    for r in rows:
        want = r["workers"] * cluster if r["workers"] else rule
        assert r["grid"] == f"{want}x1x1", (r["workers"], r["grid"])
    for r in rows:
        if not r["accumulate"]:
            print(
                f"{variant} workers {r['workers']}: {r['launch_facts']}, "
                f"{r['kernel_gflops']:.0f} GFLOP/s"
            )


# the rungs that split k: on the persistent skeleton, or with split_k.cuh's fix-ups of their own
SPLIT_RUNGS = [name for name, v in load_registry().items() if v.compiled
               and {"persistent.cuh", "split_k.cuh"}
               & {p.name for p in kernel_dependencies(ROOT / "kernels" / v.source)}]  # fmt: skip


def test_the_split_rungs_results_are_the_same_bits_in_two_runs(registry, arch, tmp_path,
                                                                monkeypatch):  # fmt: skip
    """Every rung that splits k (on the persistent skeleton or with split_k.cuh), its first
    instantiation, at products it splits (128 x 4096 x 4096: few tiles and a long k;
    1 x 33 x 5000; 3001 x 3001 x 1000, a short last wave) and at odd ones it does not
    (1000 x 1100 x 37; 17 x 4099 x 129, a side < 32), measured twice in two runs of the
    runner: the result C that each verification reads (every launch's) has the same bytes in
    both runs, and every row PASSes.  The split fix-up adds the partial sums in the splits'
    order whichever unit finishes last, so no run-to-run order of the blocks changes a bit."""
    import hashlib

    import cupy as cp

    from mmbench.measure import oracle

    seen: list[str] = []
    check = oracle.verify_device

    def recording(cp_, got, *args, **kw):
        seen.append(hashlib.sha256(cp.asnumpy(got).tobytes()).hexdigest())
        return check(cp_, got, *args, **kw)

    monkeypatch.setattr(oracle, "verify_device", recording)
    shapes = [(128, 4096, 4096), (1, 33, 5000), (3001, 3001, 1000), (1000, 1100, 37),
              (17, 4099, 129)]  # fmt: skip
    work = {}  # each rung's configurations and cubin, built once for both runs
    commands = []
    for name in SPLIT_RUNGS:
        v = registry[name]
        params = plan.buildable(v, {}, arch)[0][0]
        confs = [Configuration.of(name, params, m=m, n=n, k=k, accumulate=False,
                                  memory="pinned", distribution="normal", seed=11, math=v.math)
                 for m, n, k in shapes]  # fmt: skip
        cubin = tmp_path / f"{name}.cubin"
        commands.append(
            nvcc_command(ROOT / "kernels" / v.source, cubin, v.arch or arch, v.defines(params))
        )
        work[name] = (v, confs, {confs[0].instance: str(cubin)})
    with ThreadPoolExecutor(os.cpu_count()) as pool:  # the rungs' builds side by side
        list(pool.map(lambda cmd: subprocess.run(cmd, check=True, capture_output=True), commands))
    runs = []
    for _ in range(2):
        rows: list[dict] = []
        digests = []
        for name, (v, confs, cubins) in work.items():
            seen.clear()
            Runner(v, cubins, FAST).run(confs, lambda c, row, out=rows: out.append(with_rates(row)))
            digests.append((name, list(seen)))
        runs.append(digests)
        bad = [(r["label"], r["m"], r["n"], r["k"]) for r in rows if r["verification"] != "PASS"]
        assert not bad
    assert all(d for _, d in runs[0]), runs[0]
    assert runs[0] == runs[1]
    splits = [r["launch_facts"] for r in rows if "SPLITS=" in r["launch_facts"]
              and int(r["launch_facts"].split("SPLITS=")[1].split()[0]) > 1]  # fmt: skip
    assert splits  # some of them ran split
    print(
        f"{len(SPLIT_RUNGS)} rungs, {len(rows)} configurations, {len(splits)} split; "
        f"{sum(len(d) for _, d in runs[0])} results the same in both runs"
    )


# -- memory modes, leading dimensions, cold cache, faults, resume ------------------------------


@pytest.mark.parametrize("variant", ["tiled_guarded", "cublas"])
def test_every_memory_mode_and_transfer_verifies(registry, arch, tmp_path, variant):
    confs = []
    for mem, pad, transfer, cache in [
        ("pageable", 0, "contiguous", "warm"),
        ("pinned", 0, "contiguous", "cold"),
        ("pageable", 16, "pack", "warm"),
        ("pinned", 16, "copy2d", "warm"),
        ("pinned", 16, "strided", "cold"),
        ("managed", 0, "contiguous", "warm"),
        ("managed", 16, "strided", "warm"),
        ("managed_prefetch", 16, "strided", "cold"),
        ("mapped", 0, "contiguous", "warm"),
        ("mapped", 16, "strided", "warm"),
    ]:
        confs.append(
            conf(
                variant,
                300,
                200,
                100,
                dtype="float64",
                accumulate=True,
                memory=mem,
                pad=pad,
                transfer=transfer,
                cache=cache,
                distribution="uniform",
            )
        )
    rows = run(registry, arch, tmp_path, variant, confs)
    bad = [
        (
            r["memory"],
            r["pad"],
            r["transfer"],
            r.get("error"),
            r.get("first_mismatches"),
            r.get("oob_writes"),
            r.get("freivalds"),
        )
        for r in rows
        if r["verification"] != "PASS"
    ]
    assert not bad
    by = {(r["memory"], r["pad"], r["transfer"]): r for r in rows}
    assert by[("mapped", 0, "contiguous")]["h2d_ms_median"] < 0.05  # zero-copy: no copies
    assert by[("pinned", 16, "strided")]["kernel_ld"] == "116/216/216"
    assert by[("pinned", 16, "copy2d")]["kernel_ld"] == "100/200/200"
    assert all(r["freivalds"] == "PASS" for r in rows)
    assert all(r["sm_clock_mhz"] > 0 for r in rows)
    # the clock probe measured the clock the samples left the GPU at: NVML's within a few steps
    assert all(abs(r["sm_clock_probe_mhz"] / r["sm_clock_mhz"] - 1) < 0.05 for r in rows), [
        (r["sm_clock_probe_mhz"], r["sm_clock_mhz"]) for r in rows
    ]
    # the passes took the placements in turn (FAST takes 2 or 3 samples), each verified (C +=
    # A.B: each took one more pass from C0); mapped memory is used in place: one placement
    for r in rows:
        used = 1 if r["memory"] == "mapped" else min(4, max(r["samples"], r["batch_samples"]))
        assert r["placements"] == used, (r["memory"], r["placements"], r["samples"])
    # burst rows record no power: their window is not the kernel back to back
    assert all(r["power_w_median"] != r["power_w_median"] for r in rows)


def test_a_short_kernel_gets_batched_samples_beside_its_single_launches(registry, arch, tmp_path):
    """cuBLAS at 256 (~10 us): batches of back-to-back launches behind the blocking kernel,
    their per-launch time at most the single launch's (no launch gap in it)."""
    s = Sampling(warmup=1, min_samples=5, max_samples=20, min_time_s=0.0, batch_min_ms=1.0)
    rows = []
    v = registry["cublas"]
    Runner(v, {}, s).run([conf("cublas", 256)], lambda c, row: rows.append(row))
    (r,) = rows
    assert r["verification"] == "PASS" and r["batch_samples"] >= 5
    assert r["batch_size"] > 10 and r["batch_ms_median"] <= r["kernel_ms_median"]
    assert r["sm_clock_mhz"] > 0 and r["placements"] == 4
    assert abs(r["sm_clock_probe_mhz"] / r["sm_clock_mhz"] - 1) < 0.05
    kept = r[SAMPLES]  # what compare reads: the probe's clock and NVML's beside it
    assert kept["sm_clock_probe_mhz"] == pytest.approx(r["sm_clock_probe_mhz"], abs=1e-3)
    assert kept["nvml_clock_at_probe_mhz"] > 0


@pytest.mark.parametrize("variant,shape", [("tiled_guarded", (33, 33, 33)),
                                           ("warptile_db", (1, 33, 5000))])  # fmt: skip
def test_a_batch_launched_through_the_driver_writes_what_cupys_launch_writes(
    registry, arch, tmp_path, variant, shape
):
    """The batches launch a CuPy-launched kernel through cuLaunchKernelEx, its arguments packed
    once (Runner.batch_launch, launch.DriverLaunch), where the verified pass checks CuPy's
    launch.  Three launches back to back each way on the same placed operands (mapped host
    memory: the kernel reads and writes the host's matrices, no copy between) write the same C,
    bit for bit (integer inputs: exact sums in any order), and not zeros; warptile_db at 1 x 33
    x 5000 splits k (one output tile) through a workspace the two launches share, whose
    counters each launch must leave as it found them."""
    v = registry[variant]
    m, n, k = shape
    params = v.instantiations()[0]
    c = Configuration.of(variant, params, m=m, n=n, k=k, accumulate=False, memory="mapped",
                         distribution="int09",
                         seed=7, math=v.math)  # fmt: skip
    cubin = tmp_path / "k.cubin"
    subprocess.run(nvcc_command(ROOT / "kernels" / v.source, cubin, v.arch or arch,
                                v.defines(c.instance_params)), check=True, capture_output=True)  # fmt: skip

    class BothPaths(Runner):
        def measure(self, conf, state):
            ref = self.reference(conf, state)
            pl = self.placement(conf, state, ref)
            out = pl.result_matrix().inner
            found = {}
            for how in ("cupy", "driver"):
                self.batch_launch = how
                site = self.site(conf, pl, self.lanes[0])
                out.fill(0)
                site.lane.batcher().run(site.launch, 3)
                workspace = sum(a.nbytes for a in site.spec.args if isinstance(a, Workspace))
                found[how] = (type(site.launch).__name__, workspace, self.cp.asnumpy(out).copy())
            return {"found": found}

        def describe(self, row):
            return f"{variant}: both launch paths"

    rows = []
    BothPaths(v, {c.instance: str(cubin)}, FAST).run([c], lambda conf, row: rows.append(row))
    assert "found" in rows[0], rows[0].get("error")
    (cupy_kind, ws, cupy_c), (driver_kind, ws_driver, driver_c) = rows[0]["found"].values()
    assert driver_kind == "DriverLaunch" and cupy_kind != "DriverLaunch"
    assert ws == ws_driver and (ws > 0) == (variant == "warptile_db")
    assert (cupy_c != 0).any() and (cupy_c == driver_c).all()


def test_a_short_kernels_time_is_the_same_after_a_pageable_copy_as_after_a_pinned_one(registry):
    """cuBLAS at 641 (~30 us): the kernel segment is held behind the blocking kernel until the
    launch is queued, so the host's launch after a pageable copy (which returns near its end)
    is not in it.  Without the hold the pageable rows were 2.16 times the pinned ones on an H200
    (0.068 against 0.032 ms, tests/data/phases/h200-default-pair-timings.csv)."""
    s = Sampling(warmup=2, min_samples=20, max_samples=40, min_time_s=0.0, max_time_s=2.0)
    rows = []
    confs = [conf("cublas", 641, memory=m) for m in ("pageable", "pinned")]
    Runner(registry["cublas"], {}, s).run(confs, lambda c, row: rows.append(row))
    pageable, pinned = rows
    assert [r["verification"] for r in rows] == ["PASS", "PASS"]
    assert abs(pageable["kernel_ms_median"] / pinned["kernel_ms_median"] - 1) < 0.1, rows
    assert pageable["h2d_ms_median"] > pinned["h2d_ms_median"]


def fault_in_first_configuration(monkeypatch, where, fault):
    """Makes the launch of configuration seed 1 call fault(n) at its n-th call where that call
    comes from `where` (PassTimer.one_pass: a held timed pass, the launch's first pass being
    neither held nor faulted; Batcher.queue: a batch), then launch as usual."""
    import sys

    from mmbench.measure import runner as runner_module

    made = runner_module.launcher

    def launcher(cp, variant, conf, *args, **kw):
        go, spec = made(cp, variant, conf, *args, **kw)
        if conf.seed != 1:
            return go, spec
        calls = []

        def faulty():
            calls.append(sys._getframe(1).f_code.co_name)
            if calls[-1] == where and len(calls) > 1:
                fault(len(calls))
            go()

        return faulty, spec

    monkeypatch.setattr(runner_module, "launcher", launcher)


def two_short_configurations(registry) -> list[dict]:
    """cuBLAS at 256 (~10 us, batched), seeds 1 and 2, measured by one runner: their rows."""
    s = Sampling(warmup=1, min_samples=3, max_samples=5, min_time_s=0.0, batch_min_ms=1.0)
    rows = []
    confs = [conf("cublas", 256, seed=1), conf("cublas", 256, seed=2)]
    Runner(registry["cublas"], {}, s).run(confs, lambda c, row: rows.append(row))
    return rows


@pytest.mark.parametrize("where", ["one_pass", "queue"], ids=["held pass", "batch"])
def test_a_launch_that_raises_behind_the_blocking_kernel_costs_only_its_configuration(
    registry, monkeypatch, where
):
    """The first configuration's launch raising in a held timed pass or inside a batch: the
    blocking kernel queued before it is released at once, so the second configuration PASSes
    without waiting for its 10 s timeout and without the timed-out count that every later check
    raised on (9fcb95e's code: the second an ERROR row, 'not queued within 10 s')."""

    def raising(n):
        raise RuntimeError(f"launch {n} raised inside {where}")

    fault_in_first_configuration(monkeypatch, where, raising)
    failed, passed = two_short_configurations(registry)
    assert failed["verification"] == "ERROR"
    assert f"raised inside {where}" in failed["error"], failed["error"]
    assert passed["verification"] == "PASS", passed.get("error")
    assert passed["batch_samples"] >= 3
    # neither waited for the blocking kernel's timeout (10 s)
    assert failed["config_wall_ms"] < 5000 and passed["config_wall_ms"] < 5000


def test_a_blocking_kernel_that_timed_out_costs_only_its_configuration(registry, monkeypatch):
    """The blocking kernel's timeout (0.5 s here) run out in the first configuration's held
    pass (its launch queued 1 s late): that configuration is an ERROR row saying so, and the
    second PASSes, since the timed-out count is reset once reported."""
    import time

    from mmbench.measure import batcher

    monkeypatch.setattr(batcher, "BLOCK_TIMEOUT_S", 0.5)
    fault_in_first_configuration(monkeypatch, "one_pass", lambda n: time.sleep(1.0))
    failed, passed = two_short_configurations(registry)
    assert failed["verification"] == "ERROR"
    assert "not queued within" in failed["error"], failed["error"]
    assert passed["verification"] == "PASS", passed.get("error")


def test_a_sustained_load_settles_then_records_clock_power_and_energy(registry, arch, tmp_path):
    """cuBLAS DGEMM at 4096 on normal inputs, sustained: settled within the bound, the window
    run back to back, power read during it, energy by the counter's rule."""
    s = Sampling(warmup=1, min_samples=5, sustained_window_s=1.5, settle_max_s=20)
    rows = []
    c = conf("cublas", 4096, dtype="float64", distribution="normal", load="sustained")
    Runner(registry["cublas"], {}, s).run([c], lambda c, row: rows.append(row))
    (r,) = rows
    assert r["verification"] == "PASS", r.get("error")
    assert r["settled"] == "True" and 1.0 <= r["settle_s"] < 20
    assert r["window_s"] >= 1.4 and r["duty"] > 0.95 and r["samples"] >= 5
    assert 100 < r["power_w_median"] < 1000 and r["telemetry_reads"] > 100
    assert 100 < r["energy_power_w"] < 1000 and r["energy_window_s"] >= 0.9
    assert abs(r["energy_power_w"] / r["power_w_median"] - 1) < 0.1
    # the worker records measurements only; the table derives the rates (core/rates.py)
    assert r["kernel_gflops"] != r["kernel_gflops"] and r["gflops_per_w"] != r["gflops_per_w"]
    gflops = 2 * 4096**3 / (r["kernel_ms"] * 1e-3) / 1e9  # by hand: 2 m n k over the time
    rated = with_rates(r)
    assert rated["kernel_gflops"] == pytest.approx(gflops)
    assert rated["gflops_per_w"] == pytest.approx(gflops / r["energy_power_w"])
    assert rated["energy_j_per_product"] == pytest.approx(
        r["energy_power_w"] * r["kernel_ms"] / 1e3
    )
    assert r["global_ms_median"] != r["global_ms_median"]  # copies are not timed
    kept = r[SAMPLES]
    # no clock probe after a sustained load: the clock leaves the power limit's once it stops
    assert r["sm_clock_probe_mhz"] != r["sm_clock_probe_mhz"]
    # the window opens with the batch queued when the rule held: the load's wall time is its
    # settling, its window and what the window's rows count as untimed, and less than one
    # batch of sustained_batch_ms (100 ms) besides (the launch that sizes the batches, the
    # telemetry's end); the batch that ran out untimed after the settling was 100 ms more
    wall, gpu = kept["host_phases_ms"]["timed passes"]
    rest_s = (wall - gpu) / 1e3 - r["settle_s"] - r["window_s"] * (1 - r["duty"])
    assert -0.02 < rest_s < s.sustained_batch_ms / 1e3, rest_s


def test_a_flushed_load_times_each_product_alone_and_records_its_duty(registry, arch, tmp_path):
    """cuBLAS BF16 at 4096 on normal inputs, sustained and flushed (mamf-finder's MSMF: L2
    flushed by a memset before every launch, measure/flushed.py): both settle and verify; the
    flushed window spends part of its wall time on the memsets (its duty below the sustained
    one's, which runs back to back), and its clock and power are recorded as the sustained
    one's.  Prints both rates, clocks, powers and duties (the MSMF comparison's figures)."""
    s = Sampling(warmup=1, min_samples=5, sustained_window_s=1.5, settle_max_s=20)
    rows = []
    confs = [conf("cublas", 4096, dtype="bfloat16", distribution="normal", load=load)
             for load in ("sustained", "flushed")]  # fmt: skip
    Runner(registry["cublas"], {}, s).run(confs, lambda c, row: rows.append(row))
    by = {r["load"]: r for r in rows}
    for r in rows:
        assert r["verification"] == "PASS", r.get("error")
        assert r["settled"] == "True" and r["samples"] >= 5 and r["window_s"] >= 1.4
        assert 100 < r["power_w_median"] < 1000 and r["sm_clock_mhz"] > 500
        rated = with_rates(r)
        print(f"{r['load']}: {rated['kernel_gflops'] / 1e3:.1f} TFLOP/s at "
              f"{r['sm_clock_mhz']:.0f} MHz, {r['power_w_median']:.0f} W, duty {r['duty']:.3f}")  # fmt: skip
    assert by["sustained"]["duty"] > 0.95
    # 2 x L2 bytes written before each product of about 0.2 ms: a visible share of the window
    assert 0.3 < by["flushed"]["duty"] < by["sustained"]["duty"] - 0.02


@pytest.mark.parametrize("serve", [False, True], ids=["own worker", "the run's worker"])
def test_a_faulting_configuration_costs_only_itself(tmp_path, arch, serve, monkeypatch):
    """An illegal address in configuration 13 ends its worker's context: 13 is an ERROR row,
    12, 14 and 15 PASS (a new worker measures them), whether the job's worker is its own or
    the run's (which then ends, and a fresh one takes the rest)."""
    from mmbench.core.registry import load_registry
    from mmbench.service import served
    from mmbench.service.jobs import run_job

    monkeypatch.chdir(tmp_path)  # this test's own run

    reg_path = ROOT / "tests" / "data" / "fault_kernels" / "registry.yaml"
    v = load_registry(reg_path)["faulty"]
    cubin = tmp_path / "faulty" / "float32_TILE16.cubin"
    compile_cubin(reg_path.parent / v.source, cubin, arch, {"dtype": "float32", "TILE": 16},
                  tmp_path / "faulty.log", "faulty float32_TILE16")  # fmt: skip
    reg = load_registry(reg_path)
    confs = [conf("faulty", m, tile=16, registry=reg).as_dict() for m in (12, 13, 14, 15)]
    settings = dict(sampling=FAST.__dict__, freivalds_vectors=1)
    out = tmp_path / "faulty.csv"
    run_job(
        "faulty",
        str(reg_path),
        confs,
        {"float32_TILE16": str(cubin)},
        [],
        "test",
        settings,
        str(out),
        str(tmp_path / "log.txt"),
        serve=serve,
    )
    served.stop()

    df = read_csv(out)
    assert df.m.tolist() == [12, 13, 14, 15]
    assert df.verification.tolist() == ["PASS", "ERROR", "PASS", "PASS"]
    assert "illegal" in df.error[1].lower() or "ended" in df.error[1]
    assert not (tmp_path / "faulty.csv.journal.jsonl").exists()


@pytest.mark.parametrize(
    ("serve", "how"),
    [(False, "SIGTERM"), (True, "SIGTERM"), (True, "SIGKILL")],
    ids=["own worker, SIGTERM", "the run's worker, SIGTERM", "the run's worker, SIGKILL"],
)
def test_a_stopped_job_leaves_no_worker_measuring(tmp_path, registry, arch, serve, how):
    """A measurement job stopped mid-way: by SIGTERM (Snakemake cancelling it, `timeout`
    stopping the run) it ends with 143 and kills its worker; by SIGKILL (nothing of it runs)
    the run's worker sees its end of the socket closed before its next configuration and ends.
    Either way no worker of it measures on. Before, SIGTERM left the worker measuring the job's
    configurations on the GPU after its job had ended. The journal keeps what was measured."""
    import json
    import os
    import signal
    import sys
    import time

    from mmbench.service import served

    cubin = naive_guarded_cubin(registry, arch, tmp_path)
    # eight configurations of about a second each (naive_guarded at 4096: tens of ms a pass)
    sampling = Sampling(warmup=1, min_samples=10, max_samples=10, min_time_s=0.0, max_time_s=5.0)
    confs = [conf("naive_guarded", 4096 - i, tile=16).as_dict() for i in range(8)]
    args = ["naive_guarded", str(ROOT / "kernels" / "registry.yaml"), confs,
            {"float32_TILE16": str(cubin)}, [], "src",
            dict(sampling=sampling.__dict__, freivalds_vectors=1), str(tmp_path / "ng.csv"),
            str(tmp_path / "log.txt")]  # fmt: skip
    (tmp_path / "args.json").write_text(json.dumps(args))
    job = subprocess.Popen(
        [sys.executable, "-c", (
            "import json, sys\n"
            "from mmbench.service import served\n"
            "from mmbench.service.jobs import run_job\n"
            "served.end_on_sigterm()\n"
            "try:\n"
            f"    run_job(*json.load(open('args.json')), serve={serve})\n"
            "except served.Terminated:\n"
            "    sys.exit(served.TERMINATED_EXIT)\n"
        )],
        # the job's imports as this process has them (on the GPU machine, wheels in PYTHONPATH)
        cwd=tmp_path, env=os.environ | {"PYTHONPATH": os.pathsep.join(
            [str(ROOT / "workflow" / "scripts"), os.environ.get("PYTHONPATH", "")])},
    )  # fmt: skip
    journal = tmp_path / "ng.csv.journal.jsonl"

    def rows() -> int:
        text = journal.read_text() if journal.exists() else ""
        return sum('"row"' in line for line in text.splitlines())

    deadline = time.monotonic() + 120
    while rows() < 1 and time.monotonic() < deadline and job.poll() is None:
        time.sleep(0.1)
    assert rows() >= 1, "the job measured nothing before the stop"
    job.send_signal(getattr(signal, how))
    code = served.TERMINATED_EXIT if how == "SIGTERM" else -signal.SIGKILL
    assert job.wait(timeout=30) == code
    time.sleep(3.0)  # a configuration a worker had begun may end; none may begin after it
    settled = rows()
    time.sleep(5.0)  # several configurations' time: an orphaned worker would add rows
    assert rows() == settled < len(confs)
    assert not any(served.alive(int(e.get("pid", 0))) for _, e in served.entries()
                   if e.get("owner") == str(tmp_path))  # fmt: skip
    served.stop(str(tmp_path))


def test_an_interrupted_job_resumes_from_its_journal(tmp_path, registry, arch, caplog):
    import json
    import logging

    from mmbench.core.cubins import file_sha
    from mmbench.service import worker
    from mmbench.service.jobs import measured_on, run_job
    from mmbench.service.journal import journal_key

    v = registry["naive_guarded"]
    cubin = naive_guarded_cubin(registry, arch, tmp_path)
    insts = {"float32_TILE16": str(cubin)}
    settings = dict(sampling=FAST.__dict__, freivalds_vectors=1)
    confs = [conf("naive_guarded", m, tile=16).as_dict() for m in (64, 96)]
    out = tmp_path / "ng.csv"
    journal = tmp_path / "ng.csv.journal.jsonl"
    # a first job measured only the first configuration before it was killed, on this GPU
    # (the lock key names it: host and UUID) with this launch spec
    from mmbench.service import gpus

    gpu = gpus.candidates()[0][1]
    launch = v.launch_sha()
    on, _ = measured_on(gpu)  # the GPU, its driver and the harness, as run_job keys them
    key0 = journal_key(confs[0], file_sha(cubin), f"src/{launch}", settings, on)
    spec = dict(
        variant="naive_guarded",
        registry=str(ROOT / "kernels" / "registry.yaml"),
        instantiations=insts,
        settings=settings,
        journal=str(journal),
        log=str(tmp_path / "log1.txt"),
        todo=[[key0, confs[0]]],
        source_sha="src",
    )
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    assert worker.main(str(tmp_path / "spec.json")) == 0
    first = [json.loads(x) for x in journal.read_text().splitlines() if '"row"' in x][0]["row"]
    caplog.set_level(logging.INFO, logger="mmbench.service.jobs")
    times: dict = {}
    run_job(
        "naive_guarded",
        str(ROOT / "kernels" / "registry.yaml"),
        confs,
        insts,
        [],
        "src",
        settings,
        str(out),
        str(tmp_path / "log2.txt"),
        times=times,
    )
    df = read_csv(out)
    assert df.verification.tolist() == ["PASS", "PASS"]
    assert df.timestamp[0] == first["timestamp"]  # kept from the journal, not measured again
    assert "resuming: 1 of 2 configurations already measured" in caplog.text
    # the one worker of this job stamped its start-up, in order, between its spawn and exit
    # (the journal's stamps of the first, in-process worker are not taken for its); it was
    # spawned before the job held the GPU (its imports overlap the wait for the lock) and told
    # its GPU only once the job held it, before its first CUDA call (cupy)
    (w,) = times["workers"]
    order = ["spawned", "imported", "told", "cupy", "ready", "done", "exited"]
    assert [w[k] for k in order] == sorted(w[k] for k in order), w
    assert times["began"] <= w["spawned"] <= times["asked"] <= times["locked"] <= w["told"], w
    assert w["exited"] <= times["tables"]


def test_the_runs_worker_measures_two_jobs_in_one_context_sharing_their_references(
    tmp_path, registry, arch, monkeypatch
):
    """Two measurement jobs (naive_guarded, then cuBLAS) of one local run (worker: run): the
    second is measured by the first's worker process, whose references of both shapes it takes
    rather than builds; both verify.  The worker ends with the run (served.stop)."""

    from mmbench.service import served
    from mmbench.service.jobs import run_job

    monkeypatch.chdir(tmp_path)  # this test's own run
    cubin = naive_guarded_cubin(registry, arch, tmp_path)
    settings = dict(sampling=FAST.__dict__, freivalds_vectors=1)
    jobs = dict(
        naive_guarded=({"float32_TILE16": str(cubin)}, dict(tile=16)),
        cublas=({}, {}),
    )
    times = {}
    try:
        for name, (insts, kw) in jobs.items():
            times[name] = {}
            confs = [conf(name, m, **kw).as_dict() for m in (64, 96)]
            out = tmp_path / f"{name}.csv"
            run_job(name, str(ROOT / "kernels" / "registry.yaml"), confs, insts, [], "src",
                    settings, str(out), str(tmp_path / f"{name}.log"), times=times[name],
                    serve=True)  # fmt: skip
            assert read_csv(out).verification.tolist() == ["PASS", "PASS"]
        assert served.serving()
    finally:
        served.stop()
    (first,), (second,) = times["naive_guarded"]["workers"], times["cublas"]["workers"]
    assert first["pid"] == second["pid"] and second["jobs_before"] == 1
    assert first["references_built"] == 2 and first["references_reused"] == 0
    assert second["references_built"] == 0 and second["references_reused"] == 2
    assert not served.serving()


def test_a_profiles_target_runs_in_the_runs_worker_which_then_measures_with_its_reference(
    tmp_path, registry, arch, monkeypatch
):
    """A profile job of a local run (worker: run) sends its target's runs without a profiler
    (event-timed, then CUPTI-recorded) to the run's worker: the event time and CUPTI's kernel
    rows come back from it, and the same worker process then measures the variant's job, taking
    the reference the target built for that shape rather than building it again."""
    import importlib.util
    import json

    from mmbench.profile.profiling import profile
    from mmbench.service import gpus, programs, served
    from mmbench.service.jobs import run_job

    monkeypatch.chdir(tmp_path)  # this test's own run
    cubin = naive_guarded_cubin(registry, arch, tmp_path)
    c = conf("naive_guarded", 256, tile=16)
    spec = dict(configuration=c.as_dict(), registry=str(ROOT / "kernels" / "registry.yaml"),
                cubin=str(cubin), kernel_name="naive_guarded", warmup=1, metric_set="e3f",
                freivalds_vectors=1)  # fmt: skip
    cupti_here = importlib.util.find_spec("cupti") is not None
    tools = dict(ncu="off", nsys="off", cupti=cupti_here)
    times: dict = {}
    try:
        rows = profile(spec, tmp_path / "profile", tools, gpus.acquire, programs.Launch(serve=True))
        assert served.serving()
        (entry,) = [e for _, e in served.entries() if e["owner"] == str(tmp_path)]
        settings = dict(sampling=FAST.__dict__, freivalds_vectors=1)
        run_job("naive_guarded", str(ROOT / "kernels" / "registry.yaml"), [c.as_dict()],
                {"float32_TILE16": str(cubin)}, [], "src", settings, str(tmp_path / "ng.csv"),
                str(tmp_path / "ng.log"), times=times, serve=True)  # fmt: skip
    finally:
        served.stop()
    event = rows[0]
    assert event["metric"] == "event_time" and event["status"] == "ok", event
    assert 0 < event["value"] < 1000
    said = (tmp_path / "profile" / "target.log").read_text()
    assert json.loads((tmp_path / "profile" / "event.json").read_text())["verified"], said
    if cupti_here:  # the CUPTI-recorded run, in the same worker after the event-timed one
        ok = {(r["metric"], r.get("tool_metric")) for r in rows if r["status"] == "ok"}
        assert ("gpu_activity_time", "naive_guarded") in ok, rows
        assert any(metric == "cupti_kernel_time" for metric, _ in ok), rows
    (worker,) = times["workers"]
    assert worker["pid"] == entry["pid"] and worker["jobs_before"] == 1
    assert worker["references_built"] == 0 and worker["references_reused"] == 1
    assert read_csv(tmp_path / "ng.csv").verification.tolist() == ["PASS"]
    assert not served.serving()


def test_one_nsight_compute_run_profiles_each_configuration_in_its_own_range(
    tmp_path, registry, arch
):
    """The profile section's one Nsight Compute run (profiling.record_ncu_batch): naive_guarded
    at 256 (TILE 16) and cuBLAS at 320 in one process, each timed pass in its range.  Each
    configuration's rows are its own launch's: naive_guarded's grid is 16 x 16 = 256 blocks of
    16 x 16 = 256 threads (by hand), the same as Nsight Compute finds profiling it alone; cuBLAS
    gets rows of a kernel of its own, not naive_guarded's."""
    import json
    import shutil

    from mmbench.profile import profilers
    from mmbench.profile.profiling import read_ncu, read_ncu_batch, record_ncu, record_ncu_batch
    from mmbench.service import gpus, programs

    ncu = shutil.which("ncu")
    if ncu is None:
        pytest.skip("Nsight Compute (ncu) is not on PATH")
    cubin = naive_guarded_cubin(registry, arch, tmp_path)
    base = dict(registry=str(ROOT / "kernels" / "registry.yaml"), warmup=3, metric_set="e3f",
                freivalds_vectors=1)  # fmt: skip
    specs = {
        "ng": base | dict(configuration=conf("naive_guarded", 256, tile=16).as_dict(),
                          cubin=str(cubin), kernel_name="naive_guarded"),
        "cb": base | dict(configuration=conf("cublas", 320).as_dict(), cubin=None,
                          kernel_name=registry["cublas"].profile_kernel),
    }  # fmt: skip
    entries = []
    for stem, spec in specs.items():
        path = tmp_path / f"{stem}.json"
        path.write_text(json.dumps(spec))
        entries.append((stem, path))
    mapping, version = profilers.load_mapping(), profilers.tool_version(ncu)
    with gpus.acquire() as env:
        recorded, done = record_ncu_batch(ncu, entries, tmp_path / "batch", mapping, "e3f", env,
                                          programs.Launch())  # fmt: skip
        alone = record_ncu(ncu, specs["ng"], entries[0][1], tmp_path, mapping, "e3f", env,
                           programs.Launch())  # fmt: skip
    assert [(d["stem"], d["ranged"], d["code"]) for d in done] == [("ng", True, 0), ("cb", True, 0)]
    # the grid each launched, which the report's launch must have (a library's is not known)
    assert [d["grid"] for d in done] == ["16x16x1", "0x0x0"]
    # each configuration's account of its time: begun before it ended, the second after the
    # first, its range (the profiler's replays) a part of it
    assert done[0]["ended"] <= done[1]["started"]
    assert all(0 < d["range_s"] < d["ended"] - d["started"] for d in done)
    rows = read_ncu_batch(ncu, recorded, done, specs, tmp_path / "batch", mapping, "e3f", env,
                          version)  # fmt: skip
    assert set(rows) == {"ng", "cb"}
    ng = {r["metric"]: r for r in rows["ng"]}
    assert (ng["grid_size"]["value"], ng["block_size"]["value"]) == (256, 256)
    by_itself = {r["metric"]: r for r in read_ncu(ncu, alone, specs["ng"], tmp_path, mapping,
                                                  "e3f", env, version)}  # fmt: skip
    for metric in ("grid_size", "block_size", "registers_per_thread", "shared_memory_per_block"):
        assert ng[metric]["value"] == by_itself[metric]["value"], metric
    cb = {r["metric"]: r for r in rows["cb"]}
    assert cb["duration"]["status"] == "ok" and cb["duration"]["value"] > 0
    # naive_guarded's launches are told from cuBLAS's by name: no range opened with a MARKER
    assert [d["marker"] for d in done] == [False, False]
    raw = (tmp_path / "batch" / "ncu_raw.csv").read_text()
    assert raw.count("mmbench_profile_marker") == 0
    # each configuration's event-timed run, in the batch (record_targets): its kernel's time,
    # verified; a profile job given it and the batch's rows asks for no GPU
    from mmbench.profile.profiling import profile, record_targets

    with gpus.acquire() as env:
        targets = record_targets(entries, tmp_path / "batch", env, False, programs.Launch())
    assert set(targets) == {"ng", "cb"}
    for stem in targets:
        assert targets[stem]["event"]["status"] == "ok" and targets[stem]["event"]["value"] > 0

    def no_gpu():
        raise AssertionError("the GPU was asked for")

    got = profile(specs["ng"], tmp_path / "ng-job", dict(ncu=ncu, nsys="off", cupti=False),
                  no_gpu, programs.Launch(), rows["ng"], targets["ng"])  # fmt: skip
    assert got[0] == targets["ng"]["event"] and got[1 : 1 + len(rows["ng"])] == rows["ng"]


def test_out_of_memory_at_run_time_is_a_row_not_a_lost_job(registry, arch, tmp_path):
    import cupy as cp

    free, _ = cp.cuda.runtime.memGetInfo()
    blocker = cp.empty(free - (1 << 30), dtype=cp.uint8)  # leave about 1 GiB
    try:
        rows = run(
            registry,
            arch,
            tmp_path,
            "naive_guarded",
            [conf("naive_guarded", 16384, tile=16), conf("naive_guarded", 64, tile=16)],
        )
    finally:
        del blocker
    assert rows[0]["verification"] == "ERROR" and "OutOfMemory" in rows[0]["error"]
    assert rows[1]["verification"] == "PASS"


def test_a_write_past_the_old_fixed_guard_zone_is_caught(tmp_path, arch):
    """An unguarded kernel that writes 40 rows past C (beyond the 33 rows of the old constant
    guard zone) declares that reach; its guard zone is sized from it and the write is seen."""
    reg_path = ROOT / "tests" / "data" / "fault_kernels" / "registry.yaml"
    reg = load_registry(reg_path)
    rows, _ = reg["overreach"].reach_of({"dtype": "float32", "TILE": 16}, 64, 64, 64)
    assert rows > 33
    out = run(
        reg,
        arch,
        tmp_path,
        "overreach",
        [
            conf("overreach", 64, tile=16, registry=reg),
            conf("overreach", 48, tile=16, registry=reg),
        ],
        kernels=reg_path.parent,
    )
    for row in out:
        assert row["verification"] == "FAIL" and row["oob_writes"] >= 1, row
        assert row["mismatches"] == 0  # C itself is right: only the stray write fails it


# -- the ladder's tensor-core rungs ---------------------------------------------------------------


# the ladder's tensor-core rungs: TF32, bfloat16 or float64 on the ladder (registry `ladder:`),
# cuBLAS's TF32 reference with them (CUTLASS's builds, lines beside cuBLAS, have tests of their own)
TENSOR_CORE_RUNGS = [
    name
    for name, v in load_registry().items()
    if v.ladder
    and (v.rung or v.family == "cuBLAS")
    and name != "cublas"
    and (v.math == "tf32" or {"bfloat16", "float64"} & set(v.ladder))
]


@pytest.mark.parametrize("variant", TENSOR_CORE_RUNGS)
def test_tensor_core_rungs_verify_with_rounded_sums_and_odd_leading_dimensions(
    registry, arch, tmp_path, variant
):
    """Uniform inputs (every sum rounds: the TF32 or FP64 tolerance, not exactness), C += A.B,
    odd shapes, and a leading dimension that breaks 16-byte alignment (pad 1: the kernels' 4- or
    8-byte copy path) against the aligned one; two instantiations of each rung."""
    v = registry[variant]
    instances = plan.buildable(v, {}, arch)[0]
    confs = [
        Configuration.of(
            variant,
            params,
            m=m,
            n=n,
            k=k,
            accumulate=acc,
            memory="pinned",
            distribution="uniform",
            seed=7,
            math=v.math,
            pad=pad,
            transfer="strided" if pad else "contiguous",
        )
        for params in instances[:: max(1, len(instances) - 1)][:2]
        for (m, n, k), acc, pad in itertools.product(
            [(257, 131, 301), (64, 128, 1000)], [False, True], [0, 1]
        )
    ]
    rows = run(registry, arch, tmp_path, variant, confs)
    bad = [(r["label"], r["m"], r["n"], r["k"], r["pad"], r.get("error"), r.get("first_mismatches"),
            r.get("rel_l2_error")) for r in rows if r["verification"] != "PASS"]  # fmt: skip
    assert not bad
    assert all(r["tolerance"] != "exact" for r in rows)
    if v.math == "tf32":  # TF32 inputs: errors far above float32's, within the TF32 bound
        assert max(r["rel_l2_error"] for r in rows) > 1e-5


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_the_fused_device_check_agrees_with_the_element_wise_one(dtype):
    """verify_device (one fused kernel) gives verify's answer: counts, largest error and norms
    for a passing result; for a failing one (a wrong element, NaN, Inf) the element-wise path
    with its listing."""
    import cupy as cp
    import numpy as np

    from mmbench.measure.verify import verify, verify_device

    rng = np.random.default_rng(7)
    ref = rng.integers(0, 50, (300, 257)).astype(np.float64)
    bound = ref + 1.0
    if dtype == "int32":
        got, scale, integer = ref.astype(np.int32), 0.0, True
    else:
        got = (ref * (1 + rng.uniform(-1e-7, 1e-7, ref.shape))).astype(dtype)
        scale, integer = 1e-6, False
    d_ref, d_bound = cp.asarray(ref), cp.asarray(bound)
    fused = verify_device(cp, cp.asarray(got), d_ref, d_bound, scale, integer)
    plain = verify(np, got, ref, bound, scale, integer)
    assert fused.passed and plain.passed
    assert (fused.mismatches, fused.nonfinite) == (0, 0)
    assert fused.max_abs_error == plain.max_abs_error
    assert fused.rel_l2_error == pytest.approx(plain.rel_l2_error, rel=1e-9, abs=1e-300)
    bad = got.copy()
    bad[3, 4] += 7
    if dtype != "int32":
        bad[5, 6], bad[7, 8] = np.nan, np.inf
    fused = verify_device(cp, cp.asarray(bad), d_ref, d_bound, scale, integer)
    plain = verify(np, bad, ref, bound, scale, integer)
    assert not fused.passed
    assert fused.mismatches == plain.mismatches == (1 if dtype == "int32" else 3)
    assert fused.first_mismatches == plain.first_mismatches
    assert (fused.nonfinite, fused.max_abs_error) == (plain.nonfinite, plain.max_abs_error)
    assert fused.rel_l2_error == pytest.approx(plain.rel_l2_error, rel=1e-9)
    # more mismatches than are listed, scattered (one in the last element): the first ten in
    # row-major order, as the element-wise listing has them, found by the fused passes
    many = got.copy()
    places = [(0, 0), (299, 256), (150, 3), (2, 200), (2, 199)] + [
        (r, 17) for r in range(9, 300, 23)
    ]
    for r, c in places:
        many[r, c] += 9
    fused = verify_device(cp, cp.asarray(many), d_ref, d_bound, scale, integer)
    plain = verify(np, many, ref, bound, scale, integer)
    assert fused.mismatches == plain.mismatches == len(places) == 18
    assert len(fused.first_mismatches) == 10
    assert fused.first_mismatches == plain.first_mismatches
    # by hand: row-major order of the places above
    where = [m.split(": ")[0] for m in fused.first_mismatches]
    assert where == ["0:0", "2:199", "2:200", "9:17", "32:17", "55:17", "78:17", "101:17",
                     "124:17", "147:17"]  # fmt: skip


def test_cublaslt_fp8_verifies_where_it_has_an_algorithm_and_frees_its_descriptors(
    registry, arch, tmp_path
):
    """cuBLASLt's FP8 matmul (cublaslt_fp8, nvmath-python's bindings) at shapes its registry
    `requires` lets through (n and k multiples of 16; m any: 1001), with C = A.B and C += A.B,
    in pinned and pageable memory: every row PASSes.  Each configuration's launcher creates a
    matmul descriptor and three layouts; once the runner has let go of it they are destroyed
    (a weakref finalizer on the launcher): none is left alive."""
    import gc

    from mmbench.measure import launch

    shapes = [(1001, 1024, 1024), (64, 48, 32), (1000, 1024, 4000)]
    confs = [
        Configuration.of("cublaslt_fp8", {"dtype": "float8_e4m3"}, m=m, n=n, k=k, accumulate=acc,
                         memory=mem, distribution="normal", seed=7)
        for (m, n, k), acc, mem in itertools.product(shapes, [False, True], ["pinned", "pageable"])
    ]  # fmt: skip
    rows = run(registry, arch, tmp_path, "cublaslt_fp8", confs)
    assert [r["verification"] for r in rows] == ["PASS"] * len(confs), [
        (r["m"], r["n"], r["k"], r.get("error")) for r in rows if r["verification"] != "PASS"
    ]
    gc.collect()
    assert launch.lt_descriptors_alive == 0


def test_inputs_widen_to_float64_exactly_subnormals_included():
    """The device reference's widening (oracle.widened) against the host's own casts (NumPy,
    ml_dtypes): every bfloat16 and FP8 code, and float32 subnormals, bit for bit, NaN where
    NaN.  CuPy's float32 cast alone flushed the subnormals to zero (H100, 2026-11-28)."""
    import cupy as cp
    import ml_dtypes
    import numpy as np

    from mmbench.measure.oracle import widened

    tiny = np.array([1, 2, 0x7FFFFF, 0x80000001, 0x807FFFFF, 0x00800000, 0], np.uint32)
    cases = {
        "float32": np.concatenate(
            [tiny, np.arange(0, 1 << 32, 65521, dtype=np.uint64).astype(np.uint32)]
        ).view(np.float32),  # fmt: skip
        "bfloat16": np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16),
        "float8_e4m3fn": np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn),
        "float8_e5m2": np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e5m2),
    }
    for name, host in cases.items():
        with np.errstate(invalid="ignore"):
            want = host.astype(np.float64)
        got = widened(cp, host).get()
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan), name
        assert np.array_equal(got[~nan].view(np.uint64), want[~nan].view(np.uint64)), name
