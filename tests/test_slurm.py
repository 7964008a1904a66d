"""The workflow through a real SLURM: a single-node cluster on loopback (slurmctld, slurmd,
munged from Debian's packages), with a `gpu` GRES backed by a placeholder device file.

.ci/run installs slurm-wlm and munge; elsewhere these tests skip with the reason."""

import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import DATA, ROOT, copy_recorded

NEEDS = [shutil.which(x) for x in ("slurmctld", "slurmd", "munged", "sbatch")]
pytestmark = [
    pytest.mark.slurm,
    pytest.mark.skipif(
        not all(NEEDS), reason="SLURM not installed (.ci/run installs slurm-wlm and munge)"
    ),
    pytest.mark.skipif(os.geteuid() != 0, reason="starting slurmd needs root"),
]


def _mem_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            return int(line.split()[1]) // 1024 - 512
    return 2000


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    d = tmp_path_factory.mktemp("slurm")
    host = platform.node().split(".")[0]
    for sub in ("state", "spool", "log"):
        (d / sub).mkdir()
    conf = d / "slurm.conf"
    conf.write_text(f"""
ClusterName=mmbench
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=3600
ReturnToService=2
NodeName={host} CPUs={os.cpu_count()} RealMemory={_mem_mb()} Gres=gpu:1 State=UNKNOWN
PartitionName=gpu Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
    (d / "gres.conf").write_text("Name=gpu File=/dev/null\n")
    # the standard location, as on a real cluster: jobs' srun steps read it from there (the
    # executor plugin clears SLURM_* variables, SLURM_CONF among them, inside jobs)
    etc = Path("/etc/slurm")
    made = [x for x in (etc, Path("/run/munge")) if not x.exists()]  # removed afterwards
    etc.mkdir(parents=True, exist_ok=True)
    saved = {}
    for name in ("slurm.conf", "gres.conf"):
        if (etc / name).exists():
            saved[name] = (etc / name).read_bytes()
        shutil.copy(d / name, etc / name)
    conf = etc / "slurm.conf"
    env = dict(os.environ, SLURM_CONF=str(conf))
    Path("/run/munge").mkdir(parents=True, exist_ok=True)
    key = Path("/etc/munge/munge.key")
    made_key = not key.exists()
    if made_key:
        subprocess.run(["mungekey", "--create"], check=True)
    munge_was_running = _running("munged")
    if not munge_was_running:
        subprocess.run(["munged", "--force"], check=False)
    subprocess.run(["slurmctld", "-f", str(conf)], check=True, env=env)
    subprocess.run(["slurmd", "-f", str(conf)], check=True, env=env)
    for _ in range(60):
        out = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=env)
        if out.stdout.strip() in ("idle", "mix", "alloc"):
            break
        time.sleep(1)
    else:
        pytest.fail(
            f"the test cluster did not come up: {out.stdout} {out.stderr} "
            f"{(d / 'log' / 'slurmctld.log').read_text()[-2000:]}"
        )
    yield env
    # leave the machine as it was found: daemons stopped, files restored or removed
    for pidfile in ("slurmd.pid", "slurmctld.pid"):
        p = d / pidfile
        if p.exists():
            subprocess.run(["kill", p.read_text().strip()], check=False)
    if not munge_was_running:
        subprocess.run(["pkill", "-x", "munged"], check=False)
    for name in ("slurmd", "slurmctld", "munged"):
        for _ in range(50):
            if not _running(name) or (name == "munged" and munge_was_running):
                break
            time.sleep(0.1)
    for name in ("slurm.conf", "gres.conf"):
        if name in saved:
            (etc / name).write_bytes(saved[name])
        else:
            (etc / name).unlink(missing_ok=True)
    if made_key:
        key.unlink(missing_ok=True)
    for folder in made:
        shutil.rmtree(folder, ignore_errors=True)
    left = [x for x in ("slurmctld", "slurmd") if _running(x)]
    left += ["munged"] if not munge_was_running and _running("munged") else []
    assert not left, f"the SLURM test cluster left {left} running"


def _running(name: str) -> bool:
    return subprocess.run(["pgrep", "-x", name], capture_output=True).returncode == 0


def wait_for(env, job_id: str, timeout=120) -> str:
    for _ in range(timeout):
        out = subprocess.run(
            ["scontrol", "show", "job", job_id], capture_output=True, text=True, env=env
        ).stdout
        if re.search(r"JobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT)", out):
            return out
        time.sleep(1)
    raise AssertionError(f"job {job_id} did not end: {out}")


def test_a_gpu_request_reaches_slurm(cluster, tmp_path):
    out = subprocess.run(
        [
            "sbatch",
            "--parsable",
            "--gpus=1",
            "-o",
            str(tmp_path / "o.txt"),
            "--wrap",
            "echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES",
        ],
        capture_output=True,
        text=True,
        env=cluster,
        check=True,
    )
    info = wait_for(cluster, out.stdout.strip())
    assert "JobState=COMPLETED" in info
    assert re.search(r"TresPerJob=gres[:/]gpu:1", info), info
    assert "CUDA_VISIBLE_DEVICES=0" in (tmp_path / "o.txt").read_text()


def _workdir(tmp_path):
    for name in ("workflow", "kernels", "config", "profiles", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    return tmp_path


def _snakemake(env, cwd, *args, timeout=1500):
    # the test node has 2 CPUs: a compile group may use 2 (the profile says 4)
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--profile",
        "profiles/slurm",
        "--jobs",
        "4",
        "--cores",
        "2",
        *args,
    ]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.skipif(not shutil.which("nvcc"), reason="nvcc not installed")
def test_gpu_free_part_runs_through_slurm(cluster, tmp_path):
    """Compiling the default experiment's kernels (grouped jobs) and its resources table, and
    rendering from recorded results, via sbatch; then the measurement job's request as SLURM
    recorded it.  (Every instantiation of the registry compiles in test_workflow.py.)"""
    from mmbench.core.registry import load_registry
    from mmbench.plan import plan
    from mmbench.plan.config import validate

    work = _workdir(tmp_path)
    out = _snakemake(cluster, work, "results/tables/resources.csv", "--config", "arch=sm_90")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    registry = load_registry()
    wanted = plan.expand(validate({}, registry), registry, "sm_90").instantiations
    cubins = list((work / "results" / "build" / "sm_90").glob("*/*.cubin"))
    assert len(cubins) == len(wanted) > 10
    copy_recorded(DATA / "h100-main" / "results", work / "results", dirs_exist_ok=True)
    out = _snakemake(cluster, work, "--config", "render_only=true")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert (work / "results" / "figures" / "roofline.png").stat().st_size > 10_000
    jobs = subprocess.run(
        ["scontrol", "show", "job"], capture_output=True, text=True, env=cluster
    ).stdout
    compile_jobs = [j for j in jobs.split("\n\n") if "compile" in j]
    assert compile_jobs and not any(
        "gpu" in j.split("TresPerJob=")[-1].split()[0] for j in compile_jobs if "TresPerJob=" in j
    )
    # a measurement job asks SLURM for one GPU (it fails here: the node's "GPU" is /dev/null);
    # its memory and CPUs are scaled down to this 2-CPU test node
    try:
        _snakemake(
            cluster,
            work,
            "--config",
            "arch=sm_90",
            "variants=[naive_guarded]",
            "sizes=[64]",
            "render_only=false",
            "profile={enabled: false}",
            "--set-resources",
            "measure_variant:mem_mb=2000",
            "measure_variant:cpus_per_task=1",
            "--until",
            "measure_variant",
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        pass
    jobs = subprocess.run(
        ["scontrol", "show", "job"], capture_output=True, text=True, env=cluster
    ).stdout
    measure = [j for j in jobs.split("\n\n") if "measure_variant" in j]
    assert measure, jobs[-3000:]
    assert re.search(r"TresPerJob=gres[:/]gpu:1", measure[-1]), measure[-1]
