"""The kernels folder as source: the headers in layers with one definition of each helper, the
wgmma wrappers generated from one line per shape, and each kernel's shared facts (tile bytes,
boxes, threads) computed once, by the registry, and used by the kernel (no GPU, no compiler)."""

from __future__ import annotations

import importlib.util
import itertools
import os
import re

from mmbench.core.registry import kernel_dependencies, load_registry

from .conftest import ROOT

KERNELS = ROOT / "kernels"
HELPER = re.compile(r"^__device__ __forceinline__ [\w:<>* ]+?\b(\w+)\(", re.MULTILINE)
INCLUDE = re.compile(r'^#include "([^"]+)"', re.MULTILINE)
# the persistent skeleton of the Hopper rungs and the headers built on it
SKELETON = {"persistent.cuh", "bf16_steps.cuh", "kmajor_steps.cuh", "f64_steps.cuh",
            "tma_store.cuh"}  # fmt: skip


def _generator():
    spec = importlib.util.spec_from_file_location("wgmma", KERNELS / "wgmma.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_wgmma_header_is_what_its_generator_writes():
    """kernels/wgmma.cuh is generated (python kernels/wgmma.py): committed as written."""
    assert (KERNELS / "wgmma.cuh").read_text() == _generator().header()


def test_a_generated_wrapper_names_its_operands_as_the_ptx_isa_counts_them():
    """Hand count for bfloat16, N = 64: 32 accumulators (%0-%31), the two descriptors (%32,
    %33), the scale-d predicate's operand %34; for TF32 from registers, N = 128: 64
    accumulators, four A registers in braces (%64-%67), the descriptor %68, scale-d %69."""
    gen = _generator()
    bf16 = gen.wrapper("bf16", 64)
    assert "m64n64k16.f32.bf16.bf16" in bf16 and "setp.ne.b32 p, %34, 0" in bf16
    assert '"%0, %1, ' in bf16 and ', %31"' in bf16 and "}, %32, %33, p, 1, 1, 0, 1;" in bf16
    assert bf16.count('"+f"(d[') == 32 and '"+f"(d[31])' in bf16
    tf32 = gen.wrapper("tf32_rs", 128)
    assert "m64n128k8.f32.tf32.tf32" in tf32 and "setp.ne.b32 p, %69, 0" in tf32
    assert "}, {%64, %65, %66, %67}, %68, p, 1, 1;" in tf32
    assert tf32.count('"+f"(d[') == 64


def test_a_new_shape_is_one_line():
    """bfloat16 with N = 192 (96 accumulators): declared by its line in SHAPES alone."""
    gen = _generator()
    assert ("bf16", 192) in gen.SHAPES
    text = (KERNELS / "wgmma.cuh").read_text()
    assert "void wgmma_bf16<192>(" in text and "setp.ne.b32 p, %98, 0" in text


def test_every_helper_is_defined_once_in_the_kernels_folder():
    """smem_addr, to_tf32, the mbarrier and TMA helpers: one definition each, so any kernel can
    include any header (tile_copy.cuh and hopper.cuh together)."""
    seen: dict[str, str] = {}
    twice = []
    for path in sorted(KERNELS.glob("*.cu*")):
        text = re.sub(r"template <>\n__device__[^\n]*\n", "", path.read_text())  # specialisations
        for name in HELPER.findall(text):
            if name in seen:
                twice.append(f"{name}: {seen[name]} and {path.name}")
            seen[name] = path.name
    assert not twice, twice


def test_the_headers_are_layers():
    """common.cuh <- ptx.cuh <- tile_copy.cuh <- hopper.cuh (wgmma.cuh beside it) <-
    persistent.cuh (the persistent skeleton, with split_k.cuh and stream_k.cuh) <- its step sets
    (bf16_steps.cuh, kmajor_steps.cuh) and tma_store.cuh (the TMA-store epilogue)."""
    includes = {p.name: INCLUDE.findall(p.read_text()) for p in KERNELS.glob("*.cuh")}
    assert includes["ptx.cuh"] == ["common.cuh"]
    assert includes["tile_copy.cuh"] == ["ptx.cuh"]
    assert includes["hopper.cuh"] == ["tile_copy.cuh", "wgmma.cuh"]
    assert includes["wgmma.cuh"] == [] and includes["common.cuh"] == []
    assert includes["persistent.cuh"] == ["hopper.cuh", "split_k.cuh", "stream_k.cuh"]
    assert includes["stream_k.cuh"] == []  # plain arithmetic, for the host as for the device
    for header in ("bf16_steps.cuh", "kmajor_steps.cuh", "tma_store.cuh"):
        assert includes[header] == ["persistent.cuh"], header
    # every tensor-core kernel includes a header of this line, none copies its helpers
    for path in sorted(KERNELS.glob("1[5-9]_*.cu")) + sorted(KERNELS.glob("2[0-9]_*.cu")):
        used = {p.name for p in kernel_dependencies(path)}
        assert used & {"tile_copy.cuh", "hopper.cuh"}, path


def test_each_derived_fact_is_used_by_its_kernel_and_not_derived_there_again():
    """The registry computes what kernel and launch share (-D each): the kernel uses every such
    name and defines none of them itself (a second derivation could disagree: a hang on an
    mbarrier, or wrong results)."""
    for v in load_registry().values():
        if not v.derived:
            continue
        # the kernel's own files (a rung may build another's kernel with other parameters) and
        # the persistent skeleton's headers it builds on, which use its rungs' facts
        # (a Triton kernel's .py file: its tl.constexpr arguments of the same names)
        files = [p for p in kernel_dependencies(KERNELS / v.source)
                 if p.suffix in (".cu", ".py") or p.name in SKELETON]  # fmt: skip
        source = "\n".join(p.read_text() for p in files)
        for name, _ in v.derived:
            assert re.search(rf"\b{name}\b", source), f"{v.name}: {name} unused by {v.source}"
            assert not re.search(rf"constexpr [\w ]+\b{name}\s*=", source), (v.name, name)
            assert not re.search(rf"#define {name}\b", source), (v.name, name)
            assert not re.search(rf"^\s*{name}\s*=", source, re.M), (v.name, name)


def test_the_hopper_rungs_take_their_boxes_and_stage_bytes_from_the_registry():
    """A hand check of ws_bf16 at BM = 128, BN = 256 (bfloat16, 2 bytes): BK = 128 / 2 = 64,
    A_BYTES = 128 * 64 * 2 = 16384, B_BYTES = 64 * 256 * 2 = 32768, STAGE_BYTES = 49152; the
    tensor-map boxes [128, 64] and [64, 64]; 4 stages: 4 * 49152 + 1024 bytes dynamic."""
    v = load_registry()["ws_bf16"]
    params = {"dtype": "bfloat16", "BM": 128, "BN": 256, "STAGES": 4, "CONSUMERS": 2}
    facts = v.facts(params)
    assert facts["BK"] == 64 and facts["THREADS"] == 384
    assert (facts["A_BYTES"], facts["B_BYTES"], facts["STAGE_BYTES"]) == (16384, 32768, 49152)
    spec = v.launch_spec(params, 256, 256, 256, (256, 256, 256), False)
    assert spec.block == (384, 1, 1) and spec.dynamic_shared_bytes == 4 * 49152 + 1024
    boxes = [(a.box_rows, a.box_cols) for a in spec.args if hasattr(a, "box_rows")]
    assert boxes == [(128, 64), (64, 64)]
    assert v.defines(params) == params | facts  # what nvcc gets: -D each


def test_the_ping_pong_ring_reads_every_stage_in_its_phase():
    """tools/ring_model.py: pingpong_bf16's producer, consumers and barriers as a model with
    PTX's parity waits, under random interleavings and copy delays: with the order barrier
    between the consumers' k-loops no consumer reads another k-tile's data and every run ends;
    without it, the parity wait takes an older phase within a few runs (the model can fail)."""
    path = ROOT / "tools" / "ring_model.py"
    spec = importlib.util.spec_from_file_location("ring_model", path)
    model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model)
    assert model.trials(2000) == []
    unordered = model.trials(100, order=False)
    assert unordered and "read" in unordered[0][1][0]


def test_the_fp8_kernel_compiles_without_spills_in_blocks_and_clusters(tmp_path):
    """kernels/25_persistent_fp8.cu (persistent_fp8, docs/ladder.md "An FP8 rung") with the
    real nvcc for sm_90a and the pipeline's flags, its facts given by hand: the tile shapes it
    allows (BM = 128 with BN = 64 or 128, BM = 256 with BN = 64: at most 64 accumulators and two
    sets of 64 partial sums a consumer thread, m64 products; with one set, CHAIN 1, BM = 128 with
    BN = 160 or 192 too: 96 and 96 at most), every stage 128-byte rows of e4m3 (BK = 128), in blocks of
    their own and in clusters of 2 (whose producer keeps 48 registers: with 40 its multicast
    loop spilled 8 bytes), each k-tile's sums promoted alone or in chains of 8 (CHAIN), all
    without spills and without ptxas serialising the wgmmas (its C7514 "wgmma.mma_async
    instructions are serialized" warning, which a chain left in flight across a loop's back
    edge drew: every wgmma would then wait for the one before)."""
    import shutil
    import subprocess

    import pytest

    from mmbench.plan.compile import nvcc_command

    if not shutil.which("nvcc"):
        pytest.skip("nvcc is not installed here")
    from concurrent.futures import ThreadPoolExecutor

    def build(shape):
        bm, bn, cluster, chain = shape
        params = {"dtype": "float8_e4m3", "BM": bm, "BN": bn, "STAGES": 4,
                  "CLUSTER": cluster, "GROUP": 8, "CHAIN": chain, "BK": 128,
                  "CONSUMERS": 2, "THREADS": 384,
                  "A_BYTES": bm * 128, "B_BYTES": bn * 128,
                  "STAGE_BYTES": (bm + bn) * 128}  # fmt: skip
        cubin = tmp_path / f"fp8_{bm}_{bn}_{cluster}_{chain}.cubin"
        cmd = nvcc_command(KERNELS / "25_persistent_fp8.cu", cubin, "sm_90a", params)
        return shape, subprocess.run(cmd, capture_output=True, text=True)

    shapes = [
        (bm, bn, cluster, chain)
        for bm, bn, cluster, chain in itertools.product(
            (128, 256), (64, 128, 160, 192), (1, 2), (1, 8)
        )
        # accumulators and partial sums a consumer thread: 96 and 96 at most, in a chain
        # (two sets) 64 and 2 x 64
        if (bm // 128) * bn <= (192 if chain == 1 else 128)
    ]
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:  # one nvcc a core
        built = list(pool.map(build, shapes))
    for (bm, bn, cluster, chain), out in built:
        assert out.returncode == 0, out.stderr[-3000:]
        spills = [int(x) for x in re.findall(r"(\d+) bytes spill stores", out.stderr)]
        assert spills and max(spills) == 0, (bm, bn, cluster, chain, out.stderr)
        assert "serialized" not in out.stderr, (bm, bn, cluster, chain, out.stderr)


def _code_lines(text: str) -> list[str]:
    """A source's lines as a reader compares them: comments, blank lines and lone punctuation
    dropped, white space folded."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    out = []
    for line in text.splitlines():
        line = " ".join(line.split("//")[0].split())
        if line and not re.fullmatch(r"[{}();,\s]*", line):
            out.append(line)
    return out


def _shared_run(a: list[str], b: list[str], n: int = 6) -> list[str] | None:
    """The first run of n consecutive lines of a that stands in b too, or None."""
    runs = {tuple(b[i : i + n]) for i in range(len(b) - n + 1)}
    for i in range(len(a) - n + 1):
        if tuple(a[i : i + n]) in runs:
            return a[i : i + n]
    return None


def test_the_shared_run_check_sees_six_lines_copied_between_two_files():
    """Hand-made: six statements copied into another file, comments and spacing changed, are
    found; five are not."""
    body = [f"int x{i} = {i};" for i in range(6)]
    a = "\n".join(["void f() {", *body, "}"])
    b = "\n".join(["// another file", "void g() {", *(f"  {s}  // here" for s in body), "}"])
    assert _shared_run(_code_lines(a), _code_lines(b)) == body
    assert _shared_run(_code_lines(a), _code_lines("\n".join(body[:5]))) is None


def test_no_two_persistent_rungs_share_six_lines():
    """The persistent Hopper rungs (kernels/20-34, 36 and 37: the registry's sm_90a rungs from
    20 on; not the CUDA-core skinny_simt, 35) hold only their own steps: what they share is in the
    skeleton (persistent.cuh) and its step sets, so no two of their files share a run of six lines
    (issue "past cuBLAS at any shape", item 1)."""
    hopper = {v.source for v in load_registry().values() if v.compiled and v.arch == "sm_90a"}
    files = sorted(KERNELS / f for f in hopper if f[:2].isdigit() and f >= "20")
    assert len(files) == 17
    lines = {p.name: _code_lines(p.read_text()) for p in files}
    shared = [(a, b, run) for a, b in itertools.combinations(lines, 2)
              if (run := _shared_run(lines[a], lines[b]))]  # fmt: skip
    assert not shared, shared
