"""The Snakemake workflow itself, run for real: lint, the main command's DAG, config errors
before any job, and every kernel instantiation compiled with the real nvcc."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from mmbench.plan import plan

from .conftest import (
    COMPILE_ALL,
    ROOT,
    compare_run,
    copy_recorded,
    copy_workflow,
    read_csv,
    snakemake,
)


def test_lint_is_clean_with_an_architecture_named():
    """(The plain lint, as the workflow catalog runs it: tests/test_catalog.py.)"""
    out = snakemake("--lint", "--config", "arch=sm_90")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Congratulations, your workflow is in a good condition!" in out.stdout + out.stderr


def test_without_a_gpu_the_main_command_says_so_once_and_starts_nothing(workdir):
    """The main command on a machine without a GPU: one message naming the missing GPU and the
    three ways forward, no traceback, no job; with the architecture named, the run stops
    before its first job (onstart) rather than compiling and failing every GPU job."""
    if plan.detect_gpus():
        pytest.skip("a GPU is visible here")
    out = snakemake("--cores", "1", "--config", "sizes=[8000,10000,12000]", cwd=workdir)
    text = out.stdout + out.stderr
    assert out.returncode == 1
    assert text.count("mmbench: no GPU on this machine (nvidia-smi sees none)") == 1
    assert "Traceback" not in text and "Exception" not in text
    assert "rule " not in text and not (workdir / "results").exists()
    named = snakemake("--cores", "1", "--config", "arch=sm_90", cwd=workdir)
    text = named.stdout + named.stderr
    assert named.returncode == 1
    assert "job(s) of this run need a GPU; no GPU on this machine" in text
    assert "rule compile_kernel" not in text and not (workdir / "results" / "build").exists()


def test_main_command_dag(workdir):
    out = snakemake(
        "-n", "--cores", "1", "--config", "sizes=[8000,10000,12000]", "arch=sm_90", cwd=workdir
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout + out.stderr
    stats = dict(
        line.split()[:2] for line in text.split("Job stats:")[1].splitlines()[3:] if line.strip()
    )
    # one measurement job per variant of config/config.yaml; one cubin per compiled
    # instantiation of the main command (counted by hand: float32, tiles 16 and 32, coarsening 2
    # and 4): 5 course kernels x 2 tiles + coarsened 2 x 2; cuBLAS compiles nothing
    variants = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["variants"]
    assert stats["measure_variant"] == str(len(variants)) == "7"
    assert stats["compile_kernel"] == str(5 * 2 + 2 * 2)
    assert stats["render"] == "1"  # every figure, table and the summary
    # but the roofline and the three profiler tables of config.yaml's lists, drawn early
    assert stats["render_profiles"] == "1"
    assert "gpu=1" in text  # measurement jobs hold the one GPU
    # refusals are announced where they are written (refused.csv and the summary), not by a
    # dry run; and no run names a cached copy of config.yaml
    assert "refused before running" not in text
    assert "is extended by additional config" not in text
    assert not (workdir / "results").exists()


@pytest.mark.parametrize(
    "entry,message",
    [
        ("tiles=[64]", "config key 'tiles[0]': 64 is not valid for naive_unguarded"),
        ("arch=sm_91", "config key 'arch': 'sm_91' is not an architecture this nvcc builds for"),
        (
            "arch=90",
            "config key 'arch': 90 is a compute capability, not an architecture name; "
            "did you mean arch=sm_90?",
        ),
        ("shapes=[[10,20]]", "config key 'shapes[0]': [10, 20] has 2 values: a shape is [m, n, k]"),
        ("sampling={min_samples:0}", "YAML needs a space after the colon, as in {min_samples: 0}"),
        ("sizes=[100,x]", "config key 'sizes[1]': 'x' is not of type integer"),
        ("sizes=[2000000]", "config key 'sizes[0]': 2000000 is out of range"),
        ("sizes=[200000]", "config key 'sizes': 200000 needs"),
        ("variants=[]", "config key 'variants': the list is empty"),
    ],
)
def test_invalid_config_stops_before_any_job(workdir, entry, message):
    arch = [] if entry.startswith("arch=") else ["arch=sm_90"]
    out = snakemake("--cores", "1", "--config", entry, *arch, cwd=workdir)
    assert out.returncode != 0
    assert message in out.stderr
    assert not (workdir / "results").exists()


@pytest.mark.slow  # sm_90 about 35 minutes on 2 cores: .ci/run runs it after the README's command
@pytest.mark.skipif(not shutil.which("nvcc"), reason="nvcc not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_instantiation_compiles(request, tmp_path, arch, registry):
    if arch == "sm_90":  # the session's build, which test_ptxas reads too
        workdir, out = request.getfixturevalue("sm90_build")
    else:
        workdir = copy_workflow(tmp_path)
        out = snakemake(*COMPILE_ALL, "--config", f"arch={arch}", cwd=workdir)
    assert out.returncode == 0, out.stderr[-3000:]
    cubins = sorted((workdir / "results" / "build" / arch).glob("*/*.cubin"))
    libraries = sorted((workdir / "results" / "build" / arch).glob("*/*.so"))  # shared builds
    assert len(cubins) + len(libraries) == len(plan.all_instantiations(registry, arch))
    # hand counts from kernels/registry.yaml, independent of the planning code: tiled_guarded
    # builds 3 element types x 3 TILEs = 9 everywhere; persistent_bf16 (sm_90a only) with 3 or 4
    # STAGES: 2 BM x 3 BN x 2 STAGES x 2 CLUSTER x 2 GROUP = 48, less the 8 with BM = BN = 256
    # (256 accumulators a consumer thread, over its 128) and the 8 with BN = 64 in clusters of 2
    # (one 64-column box of B cannot divide between two blocks) = 32; with 6 STAGES only
    # BM + BN <= 266 fits 200 KiB (6 x 128 bytes a row): 128 x 64 (CLUSTER 1, 2 GROUPs) and
    # 128 x 128 (2 CLUSTERs x 2 GROUPs) = 6; with 8 STAGES only BM + BN <= 200: 128 x 64 = 2;
    # 32 + 6 + 2 = 40
    build = workdir / "results" / "build" / arch
    assert len(list((build / "tiled_guarded").glob("*.cubin"))) == 9
    assert len(list((build / "persistent_bf16").glob("*.cubin"))) == (40 if arch == "sm_90" else 0)
    # cutlass_bf16, cutlass_f64, cutlass_fp8, cutlass_tf32 (sm_90a, shared builds): 5, 4, 2 and
    # 5 (tests/test_registry.py counts them by hand)
    cutlass = (
        ["cutlass_bf16"] * 5 + ["cutlass_f64"] * 4 + ["cutlass_fp8"] * 2 + ["cutlass_tf32"] * 5
    )
    assert [p.parent.name for p in libraries] == (cutlass if arch == "sm_90" else [])
    # triton_bf16, triton_fp8, triton_tf32 (sm_90a, where Triton is installed: the triton extra,
    # which .ci/run installs for these tests): 128 x 128 tiles, 8 warps, STAGES 2, 3 and 4,
    # each ring within 227 KiB (4 x 256 rows x 128 bytes = 128 KiB) = 3 each, with Triton's
    # launch facts beside
    facts = sorted(p.parent.name for p in build.glob("triton_*/*.triton.json"))
    has_triton = importlib.util.find_spec("triton") is not None
    triton = ["triton_bf16"] * 3 + ["triton_fp8"] * 3 + ["triton_tf32"] * 3
    assert facts == (triton if arch == "sm_90" and has_triton else [])
    assert all(p.stat().st_size > 1000 for p in cubins)
    report = workdir / "results" / "build" / arch / "tiled_guarded" / "float64_TILE32.ptxas.txt"
    assert f"for '{arch}'" in report.read_text()
    # the cubin really holds the named entry point for that architecture
    if shutil.which("cuobjdump"):
        dump = subprocess.run(["cuobjdump", "-elf", str(cubins[0])], capture_output=True, text=True)
        assert arch in dump.stdout


def test_edited_header_is_an_input_of_every_compile(workdir):
    out = snakemake(
        "-n", "--cores", "1", "compile_all", "--config", "arch=sm_90", "-p", cwd=workdir
    )
    assert "kernels/common.cuh" in out.stdout


def test_aggregation_renders_from_recorded_runs(workdir):
    """Copy a real run's per-variant results back (as from a cluster: tables, samples,
    manifests) and rebuild the tables and the summary without measuring anything."""

    data = ROOT / "tests" / "data" / "compare" / "h100-a" / "runs"
    runs = workdir / "results" / "compare" / "runs"
    copy_recorded(data, runs)
    out = snakemake(
        "--cores",
        "1",
        "results/compare/tables/summary.txt",
        "results/compare/tables/since_previous.txt",
        "--configfile",
        "config/presets/compare.yaml",
        "--config",
        "arch=sm_90",
        "--allowed-rules",
        "timings_table",
        "refused_table",
        "render",
        "since_previous",
        cwd=workdir,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    tables = workdir / "results" / "compare" / "tables"
    assert (tables / "since_previous.txt").read_text() == ""  # no archive: nothing edited
    # each job's messages go to its log, not to Snakemake's stderr
    logs = workdir / "results" / "compare" / "logs"
    assert "rows from" in (logs / "aggregate" / "timings.log").read_text()
    assert "rows from" not in out.stderr
    summary = (tables / "summary.txt").read_text()
    df = pd.concat(read_csv(p) for p in sorted(runs.glob("*.csv")))
    assert f"{len(df)} configurations: {len(df)} PASS" in summary
    assert "Since the previous kernel source" not in summary  # no archive: nothing edited
    assert Path(workdir / "results" / "compare" / "tables" / "timings.csv").exists()


def test_a_run_that_cannot_reach_a_gpu_fails_at_once_with_the_cause(workdir):
    """Without a usable GPU (here: CuPy missing, or no device, or a driver too old), the
    measurement job stops with the cause on the console and the run exits non-zero; no table
    that looks like results is written."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            pytest.skip("a GPU is visible here: this test is for machines without one")
    except Exception:  # noqa: BLE001 - no CuPy or no driver: exactly the case under test
        pass
    # --no-hooks: past the workflow's own stop before the first job (onstart), to the job's
    # check, which a job sent to a cluster node without a usable GPU meets
    out = snakemake(
        "--cores",
        "1",
        "--no-hooks",
        "results/runs/naive_guarded.csv",
        "--config",
        "arch=sm_90",
        "sizes=[64]",
        "variants=[naive_guarded]",
        "tiles=[16]",
        cwd=workdir,
    )
    assert out.returncode != 0
    console = out.stdout + out.stderr
    assert "measure_variant naive_guarded: no usable GPU: " in console, console[-3000:]
    assert not (workdir / "results" / "runs" / "naive_guarded.csv").exists()


def test_a_profile_that_cannot_run_fails_its_job_and_writes_no_table(workdir):
    """Without a usable GPU the profile job fails with the cause (issue "what a new user hit",
    point 3): no CSV of "failed" rows is left behind to be taken for a profile, and the next run
    profiles the configuration again."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            pytest.skip("a GPU is visible here: this test is for machines without one")
    except Exception:  # noqa: BLE001 - no CuPy or no driver: exactly the case under test
        pass
    target = "results/profile/naive_guarded/float32_TILE32_2048x2048x2048.csv"
    out = snakemake(
        "--cores", "1", "--no-hooks", target, "--config", "arch=sm_90", "variants=[naive_guarded]",
        "profile={variants: [naive_guarded], sizes: [2048], ncu: 'off', nsys: 'off'}",
        cwd=workdir,
    )  # fmt: skip
    assert out.returncode != 0
    console = out.stdout + out.stderr
    assert "profile_kernel naive_guarded TILE=32 2048x2048x2048: " in console, console[-3000:]
    assert "could not run naive_guarded" in console
    assert not (workdir / target).exists()


@pytest.mark.skipif(not shutil.which("nvcc"), reason="nvcc not installed")
def test_a_compile_error_shows_the_compiler_message_on_the_console(workdir):
    src = workdir / "kernels" / "05_tiled_guarded.cu"
    src.write_text(src.read_text().replace("elem_t tmp = 0;", "elem_t tmp = 0 oops;"))
    out = snakemake(
        "--cores", "1", "results/build/sm_90/tiled_guarded/float32_TILE16.cubin",
        "--config", "arch=sm_90", cwd=workdir,
    )  # fmt: skip
    assert out.returncode != 0
    assert "nvcc failed for tiled_guarded float32_TILE16:" in out.stderr
    assert 'error: expected a ";"' in out.stderr


@pytest.mark.skipif(not shutil.which("nvcc"), reason="nvcc not installed")
def test_an_edit_older_than_its_cubin_is_compiled_again(workdir):
    """A tree copied or checked out keeps its files' times: an edited kernel older than the
    cubin built from the old text must still be built again (its sources' hash is a param)."""
    cubin = "results/build/sm_90/tiled_guarded/float32_TILE16.cubin"
    built = snakemake("--cores", "1", cubin, "--config", "arch=sm_90", cwd=workdir)
    assert built.returncode == 0, built.stderr[-3000:]
    src = workdir / "kernels" / "05_tiled_guarded.cu"
    stamp = (workdir / cubin).stat().st_mtime - 3600
    src.write_text(src.read_text() + "\n// an edit\n")
    os.utime(src, (stamp, stamp))
    again = snakemake("-n", "--cores", "1", cubin, "--config", "arch=sm_90", cwd=workdir)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Params have changed since last execution" in again.stdout + again.stderr


@pytest.mark.skipif(not shutil.which("nvcc"), reason="nvcc not installed")
def test_a_registry_symbol_the_kernel_does_not_define_fails_its_build(workdir):
    """tiled_guarded's registry entry naming an entry point its .cu does not define (a typo):
    the build fails naming it and the entry function ptxas compiled, instead of a cubin that
    only a GPU run would find wrong (issue "what a new user hit", item 2)."""
    registry = workdir / "kernels" / "registry.yaml"
    text = registry.read_text()
    assert text.count("    symbol: tiled_guarded\n") == 1
    registry.write_text(text.replace("    symbol: tiled_guarded\n", "    symbol: tiled_gaurded\n"))
    cubin = "results/build/sm_90/tiled_guarded/float32_TILE16.cubin"
    out = snakemake("--cores", "1", "--config", "arch=sm_90", "--", cubin, cwd=workdir)
    assert out.returncode != 0
    assert (
        "tiled_guarded float32_TILE16: the registry's entry point 'tiled_gaurded' is not in the "
        "cubin nvcc built from" in out.stderr
    ), out.stderr[-3000:]
    assert "(its entry functions: tiled_guarded)" in out.stderr
    assert not (workdir / cubin).exists()


@pytest.mark.skipif(not shutil.which("nvcc"), reason="nvcc not installed")
def test_a_full_run_decides_its_figures_once_the_timings_exist(workdir):
    """The measurement tables of a real run (recorded on the H100) in place: the run compiles,
    aggregates, makes the figures its data allows in its render job and says which it left
    out, without a GPU."""
    rec = compare_run("h100-a") / "runs"
    cfg = [
        "--configfile",
        "config/presets/compare.yaml",
        "--config",
        "arch=sm_90",
        "report={figures: [time_vs_n, remainder_effect], tables: [kernel_times]}",
    ]
    res = workdir / "results" / "compare"
    compiled = snakemake("--cores", "2", "results/compare/tables/resources.csv", *cfg, cwd=workdir)
    assert compiled.returncode == 0, compiled.stderr[-3000:]
    (res / "runs").mkdir(parents=True, exist_ok=True)
    for f in rec.iterdir():  # written now: newer than the cubins, as a finished job's are
        shutil.copyfile(f, res / "runs" / f.name)
    out = snakemake("--cores", "2", *cfg, cwd=workdir)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "measure_variant" not in out.stdout + out.stderr  # the recorded tables are newer
    assert "rule timings_table" in out.stdout + out.stderr
    assert "rule render" in out.stdout + out.stderr
    assert (res / "figures" / "time_vs_n.png").exists()
    assert not (res / "figures" / "remainder_effect.png").exists()
    assert "figure remainder_effect not made" in out.stdout + out.stderr


def _parsed(argv: list[str], cwd) -> dict:
    import os

    from snakemake.cli import parse_args

    here = os.getcwd()
    os.chdir(cwd)
    try:
        _, args = parse_args(argv)
    finally:
        os.chdir(here)
    return {k: v.value for k, v in (args.resources or {}).items()}


@pytest.mark.slurm
@pytest.mark.skipif(
    importlib.util.find_spec("snakemake_executor_plugin_slurm") is None,
    reason="the SLURM executor plugin is not installed (pip install -e '.[slurm]'; .ci/run does)",
)
def test_the_slurm_profile_queues_sixteen_gpu_jobs_and_a_local_run_one(tmp_path):
    import shutil
    import subprocess

    # Snakemake's own parser: the workflow profile (workflow/profiles/default) is layered over the
    # cluster profile, so it must not set a gpu limit of its own
    assert _parsed(["--profile", "profiles/slurm", "-n"], ROOT) == {"gpu": 16}
    assert "gpu" not in _parsed(["--cores", "1", "-n"], ROOT)
    assert _parsed(["--cores", "1", "--resources", "gpu=2", "-n"], ROOT) == {"gpu": 2}
    # a local run with no limit given: one GPU, two GPU jobs at a time (one waits at its lock)
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout
    for rel in files.split():
        if (ROOT / rel).is_file():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, tmp_path / rel)
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "results/tables/refused.csv",
           "--config", "arch=sm_90"]  # fmt: skip
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    # two GPU jobs at a time on the one GPU: one holding it, the next waiting at its lock
    assert 'Provided resources: gpu=Resource("gpu", 2)' in out.stdout + out.stderr


@pytest.mark.skipif(not shutil.which("nvcc"), reason="needs nvcc")
def test_a_checkout_at_a_path_with_shell_syntax_runs_no_command(tmp_path):
    work = tmp_path / "c d$(touch PWNED)d"
    work.mkdir()
    for name in ("workflow", "kernels", "config", "profiles", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / name)
    cubin = "results/build/sm_90/tiled_guarded/float32_TILE16.cubin"
    peak = "results/build/sm_90/microbench/peak.cubin"
    out = snakemake("--cores", "2", "--config", "arch=sm_90", "--", cubin, peak, cwd=work)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (work / cubin).stat().st_size > 1000 and (work / peak).stat().st_size > 1000
    assert not list(tmp_path.rglob("PWNED"))
    # overwritten with garbage: found, and built again (an updated input of its build, so what
    # ran it is measured again); once rebuilt, nothing is left to do
    (work / cubin).write_bytes(b"garbage")
    dry = snakemake("-n", "--config", "arch=sm_90", "--", cubin, cwd=work)
    assert f"{cubin} is not what its build wrote" in dry.stderr
    assert f"Updated input files: {cubin[: -len('.cubin')]}.rebuild" in dry.stdout
    again = snakemake("--cores", "1", "--config", "arch=sm_90", "--", cubin, cwd=work)
    assert again.returncode == 0, again.stderr[-2000:]
    assert (work / cubin).read_bytes() != b"garbage"
    done = snakemake("-n", "--config", "arch=sm_90", "--", cubin, cwd=work)
    assert "Nothing to be done" in done.stdout + done.stderr


def test_every_gpu_rule_asks_the_slurm_profile_for_a_gpu():
    """A rule that holds the GPU (resources: gpu=1) runs on the GPU partition with a GPU under
    profiles/slurm, by its name in set-resources (a new GPU rule left out would queue on the
    default partition without a GPU)."""
    import yaml

    gpu_rules = _gpu_rules()
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    asked = {r for r, res in profile["set-resources"].items() if res.get("gpu") == 1}
    assert gpu_rules >= {"measure_variant", "pair_variant"}, gpu_rules
    assert gpu_rules <= asked, gpu_rules - asked
    assert all(profile["set-resources"][r]["slurm_partition"] == "gpu" for r in gpu_rules)


def _gpu_rules() -> set[str]:
    """The rules that hold the GPU (resources: gpu=1), read from the rule files."""

    found = set()
    for smk in (ROOT / "workflow" / "rules").glob("*.smk"):
        text = smk.read_text()
        for block in re.split(r"^(?=(?: {4})?(?:rule|checkpoint) \w+:)", text, flags=re.M)[1:]:
            name = re.match(r"\s*(?:rule|checkpoint) (\w+):", block).group(1)
            # gpu=1, or (profile_kernel) a function: 1 where its job may have to hold it
            if re.search(r"^\s+resources:\n(?:\s+#.*\n)*\s+gpu=(1|profile_job_gpus),", block, re.M):
                found.add(name)
    return found


def test_a_local_run_gives_its_gpu_jobs_no_core_and_profiles_before_it_measures(workdir):
    """The main command's dry run: every job that holds the GPU takes no core of `--cores 1`
    (so compiling, aggregating and drawing go on beside the measurement; issue "the main command
    at the speed of the GPU"), the profilers and the ceilings (priority 20) go before the
    measurement jobs (10), so the tables made from the profiles are made while the GPU
    measures, and the other jobs keep their one core."""
    out = snakemake(
        "-n", "--cores", "1", "--config", "sizes=[8000,10000,12000]", "arch=sm_90", cwd=workdir
    )
    assert out.returncode == 0, out.stderr
    seen: dict[str, set[str]] = {}
    gpus: dict[str, set[str]] = {}
    rule = None
    for line in out.stdout.splitlines():
        if line.startswith(("rule ", "localrule ", "checkpoint ")):
            rule = line.split()[1].rstrip(":")
            seen.setdefault(rule, set())
        elif rule and line.strip().startswith(("threads:", "priority:")):
            seen[rule].add(line.strip())
        elif rule and line.strip().startswith("resources:") and "gpu=" in line:
            gpus.setdefault(rule, set()).add(line.split("gpu=")[1].split(",")[0])
    gpu = _gpu_rules() & set(seen)
    # the measurement, the batch and the ceilings take the GPU's slot; a profile job, whose
    # rows the batch makes (no Nsight Systems here), does not
    assert gpus["measure_variant"] == gpus["profile_ncu"] == gpus["device_ceilings"] == {"1"}
    assert gpus["profile_kernel"] == {"0"}
    # the main command's GPU jobs, by hand: 7 measurements, one Nsight Compute run for the 2
    # profiles, their event-timed runs, ceilings
    assert gpu == {"measure_variant", "profile_ncu", "profile_kernel", "device_ceilings"}
    assert seen["measure_variant"] == {"threads: 0", "priority: 10"}
    assert seen["profile_kernel"] == seen["device_ceilings"] == {"threads: 0", "priority: 20"}
    assert seen["profile_ncu"] == {"threads: 0", "priority: 20"}
    # Snakemake prints no threads line for a job of one thread
    assert not seen["compile_kernel"] and not seen["timings_table"]


def test_the_profiles_share_one_nsight_compute_run(workdir):
    """The main command's dry run: one profile_ncu job, on both profiled cubins (by hand: seed
    002's kernel00 and kernel10, TILE 32), whose table each profile job reads; with
    profile.ncu off, neither the job nor the input."""
    jobs = {}
    for ncu in ("auto", "off"):
        out = snakemake("-n", "--cores", "1", "--config", "sizes=[8000,10000,12000]",
                        "arch=sm_90", f"profile={{ncu: '{ncu}'}}", cwd=workdir)  # fmt: skip
        assert out.returncode == 0, out.stderr
        jobs[ncu] = re.findall(r"^(?:local)?rule (\w+):\n\s+input: ([^\n]*)", out.stdout, re.M)
    batch = [inputs for rule, inputs in jobs["auto"] if rule == "profile_ncu"]
    assert batch == [
        "results/build/sm_90/naive_unguarded/float32_TILE32.cubin, "
        "results/build/sm_90/tiled_unguarded/float32_TILE32.cubin"
    ]
    profiles = [inputs for rule, inputs in jobs["auto"] if rule == "profile_kernel"]
    assert len(profiles) == 2 and all("results/profile/ncu_batch.json" in i for i in profiles)
    assert not [r for r, _ in jobs["off"] if r == "profile_ncu"]
    off = [inputs for rule, inputs in jobs["off"] if rule == "profile_kernel"]
    assert len(off) == 2 and not any("ncu_batch" in i for i in off)


def test_snakemake_runs_a_job_of_no_core_beside_one_of_one_core_at_cores_1(tmp_path):
    """What the rule above relies on, with the installed Snakemake: at `--cores 1`, a job of
    `threads: 0` that holds gpu=1 runs at the same time as a job of one core (each waits until
    it sees the other started, and fails after 60 s if it never does), and two jobs holding
    gpu=1 never run at the same time (the second finds the first's end marker)."""
    (tmp_path / "Snakefile").write_text(
        """
workflow.register_resource("gpu", 1)

def wait_for(path):
    return f"for i in $(seq 600); do [ -e {path} ] && break; sleep 0.1; done; [ -e {path} ]"

rule all:
    input: "gpu_a.done", "gpu_b.done", "cpu.done"

rule gpu_a:
    output: "gpu_a.done"
    threads: 0
    resources: gpu=1
    priority: 20
    shell: "touch gpu_a.started; " + wait_for("cpu.started") + "; [ ! -e gpu_b.started ]; touch {output}"

rule gpu_b:
    input: "cpu.done"
    output: "gpu_b.done"
    threads: 0
    resources: gpu=1
    shell: "touch gpu_b.started; [ -e gpu_a.done ]; touch {output}"

rule cpu:
    output: "cpu.done"
    shell: "touch cpu.started; " + wait_for("gpu_a.started") + "; touch {output}"
"""
    )
    out = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert all((tmp_path / f).exists() for f in ("gpu_a.done", "gpu_b.done", "cpu.done"))


# -- identity that does not depend on clocks (issue "nothing lost, nothing planted", point 5) ---


@pytest.mark.skipif(not shutil.which("nvcc"), reason="needs nvcc")
def test_a_swapped_cubin_and_results_dated_in_the_future_are_built_again(tmp_path):
    """Two instantiations of tiled_guarded built.  (1) TILE=32's cubin and .sha256 copied over
    TILE=16's: its sha256 agrees with its record, the name built into it does not; the
    measurement job refuses it and the workflow builds it again.  (2) Then every file under
    results/ dated a year ahead (a copy from a machine whose clock ran ahead) and the kernel
    edited: the edit is built, with one message about the dates."""
    from mmbench.service.jobs import JobFailed, run_job

    work = copy_workflow(tmp_path)
    folder = "results/build/sm_90/tiled_guarded"
    a, b = f"{folder}/float32_TILE16.cubin", f"{folder}/float32_TILE32.cubin"
    out = snakemake("--cores", "2", "--config", "arch=sm_90", "--", a, b, cwd=work)
    assert out.returncode == 0, out.stderr[-2000:]
    assert b"mmbench-cubin:tiled_guarded/float32_TILE16\0" in (work / a).read_bytes()
    for ext in ("cubin", "sha256"):
        shutil.copy(work / f"{b[: -len('.cubin')]}.{ext}", work / f"{a[: -len('.cubin')]}.{ext}")
    sha = (work / a).with_suffix(".sha256")
    sha.write_text(sha.read_text().replace("TILE32", "TILE16"))
    # the job refuses it before any GPU is asked for
    with pytest.raises(JobFailed) as err:
        run_job("tiled_guarded", str(work / "kernels" / "registry.yaml"), [],
                {"float32_TILE16": str(work / a)}, [], "s", {}, str(tmp_path / "t.csv"),
                str(tmp_path / "log"))  # fmt: skip
    assert (
        f"{work / a} names tiled_guarded/float32_TILE32, not tiled_guarded/float32_TILE16"
        in str(err.value)
    )
    again = snakemake("--cores", "1", "--config", "arch=sm_90", "--", a, cwd=work)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"{a} is not what its build wrote" in again.stderr
    assert b"mmbench-cubin:tiled_guarded/float32_TILE16\0" in (work / a).read_bytes()

    ahead = time.time() + 365 * 86400
    for p in (work / "results").rglob("*"):
        os.utime(p, (ahead, ahead))
    kernel = work / "kernels" / "05_tiled_guarded.cu"
    kernel.write_text(kernel.read_text() + "\n// an edit\n")
    edited = snakemake("--cores", "1", "--config", "arch=sm_90", "--", a, cwd=work)
    assert edited.returncode == 0, edited.stderr[-2000:]
    assert "under results/ were dated in the future" in edited.stderr
    assert "rule compile_kernel" in edited.stdout + edited.stderr
    assert (work / a).stat().st_mtime <= time.time()
    done = snakemake("-n", "--config", "arch=sm_90", "--", a, cwd=work)
    assert "Nothing to be done" in done.stdout + done.stderr
