"""Expands a validated config and the registry into the configurations to measure.

One configuration = one row of results/tables/timings.csv.  Configurations a variant cannot
run are refused here, before any GPU time is spent, each with its reason.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
from dataclasses import asdict, dataclass, field

from . import arith
from .config import ConfigError
from .registry import Variant

# Largest GPU memory of a current single GPU (B200, 192 GB); used to refuse impossible sizes
# when planning on a machine that sees no GPU (a CI runner, a cluster's login node).
LARGEST_GPU_GIB = 192.0


@dataclass(frozen=True)
class Configuration:
    variant: str
    tile: int  # 0 where the variant has no tile (cuBLAS chooses its own)
    coarsen: int
    dtype: str
    m: int
    n: int
    k: int
    accumulate: bool
    memory: str
    distribution: str
    seed: int
    operation: str = "gemm"
    pad: int = 0
    transfer: str = "contiguous"
    cache: str = "warm"
    precondition_met: bool = True
    expected: str = "PASS"
    notes: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Plan:
    runs: dict[str, list[Configuration]] = field(default_factory=dict)
    refused: list[dict] = field(default_factory=list)
    # (variant, dtype, tile, coarsen) of every cubin the runs need
    instantiations: list[tuple[str, str, int, int]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.runs.values())


def shapes_of(cfg: dict) -> list[tuple[int, int, int]]:
    """(m, n, k) of every product: the square sizes, then the rectangular shapes."""
    sizes = list(cfg["sizes"])
    for start, stop, step in cfg.get("size_ranges", []):
        sizes += range(start, stop + 1, step)
    out = [(s, s, s) for s in sizes] + [tuple(s) for s in cfg.get("shapes", [])]
    return list(dict.fromkeys(out))


COPY_MODES = ("pageable", "pinned")


def layouts(cfg: dict) -> list[tuple[str, int, str]]:
    """(memory, pad, transfer) combinations: the transfer mode only matters for padded matrices
    in pageable or pinned memory; managed and mapped matrices are used in place (strided)."""
    out = []
    for mem, pad in itertools.product(cfg["memory"], cfg.get("leading_pad", [0])):
        if pad == 0:
            out.append((mem, 0, "contiguous"))
        elif mem in COPY_MODES:
            out += [(mem, pad, t) for t in cfg.get("transfer", ["pack"])]
        else:
            out.append((mem, pad, "strided"))
    return list(dict.fromkeys(out))


def all_instantiations(registry: dict[str, Variant]) -> list[tuple[str, str, int, int]]:
    """Every (variant, dtype, tile, coarsen) the registry can build (CI compiles them all)."""
    out = []
    for v in registry.values():
        if not v.compiled:
            continue
        for dtype, tile, f in itertools.product(v.dtypes, v.tiles, v.coarsen):
            if (
                v.static_shared_bytes(tile, f, arith.DTYPE_BYTES[dtype])
                <= arith.STATIC_SHARED_LIMIT
            ):
                out.append((v.name, dtype, tile, f))
    return out


def expand(cfg: dict, registry: dict[str, Variant]) -> Plan:
    plan = Plan()
    shapes = shapes_of(cfg)
    insts: dict[tuple, None] = {}
    for name in cfg["variants"]:
        v = registry[name]
        runs: list[Configuration] = []
        tiles = [t for t in cfg["tiles"] if t in v.tiles] if v.tiles else [0]
        factors = [f for f in cfg["coarsen"] if f in v.coarsen] if len(v.coarsen) > 1 else [1]
        base = dict(variant=name, distribution=cfg["distribution"], seed=cfg["seed"])
        if not tiles:
            plan.refused.append(
                dict(base, reason=f"supports tiles {list(v.tiles)}, none of {cfg['tiles']}")
            )
        for dtype in cfg["dtypes"]:
            if dtype not in v.dtypes:
                plan.refused.append(
                    dict(base, dtype=dtype, reason=f"supports dtypes {', '.join(v.dtypes)} only")
                )
                continue
            for tile, f in itertools.product(tiles, factors):
                smem = v.static_shared_bytes(tile, f, arith.DTYPE_BYTES[dtype])
                if smem > arith.STATIC_SHARED_LIMIT:
                    plan.refused.append(
                        dict(
                            base,
                            dtype=dtype,
                            tile=tile,
                            coarsen=f,
                            reason=f"needs {smem} B of static shared memory, over the 48 KiB limit",
                        )
                    )
                    continue
                accumulate = cfg["accumulate"] if v.operation == "gemm" else [False]
                for (m, n, k), acc, (mem, pad, transfer), cache in itertools.product(
                    shapes, accumulate, layouts(cfg), cfg.get("cache", ["warm"])
                ):
                    unmet = v.unmet(m, n, k, tile, f)
                    conf = Configuration(
                        variant=name,
                        tile=tile,
                        coarsen=f,
                        dtype=dtype,
                        m=m,
                        n=n,
                        k=k,
                        accumulate=acc,
                        memory=mem,
                        distribution=cfg["distribution"],
                        seed=cfg["seed"],
                        operation=v.operation,
                        pad=pad,
                        transfer=transfer,
                        cache=cache,
                        precondition_met=not unmet,
                        expected="FAIL" if unmet else "PASS",
                        notes="; ".join(unmet),
                    )
                    if unmet and v.unsafe_when_unmet and not cfg["demonstrate_failures"]:
                        plan.refused.append(
                            dict(
                                conf.as_dict(),
                                reason="; ".join(unmet)
                                + " (set demonstrate_failures: true to run it in guard zones)",
                            )
                        )
                        continue
                    runs.append(conf)
                    if v.compiled:
                        insts[(name, dtype, tile, f)] = None
        if runs:
            plan.runs[name] = runs
    plan.instantiations = list(insts)
    return plan


def check_device_memory(plan: Plan, gib: float, where: str) -> None:
    """Refuses, before any job runs, a configuration whose matrices cannot fit in GPU memory."""
    limit = gib * 2**30
    problems = {}
    for conf in (c for runs in plan.runs.values() for c in runs):
        need = arith.device_bytes_needed(conf.m, conf.n, conf.k, conf.dtype, conf.pad)
        if need > limit:
            key = "sizes" if conf.m == conf.n == conf.k else "shapes"
            val = conf.m if key == "sizes" else [conf.m, conf.n, conf.k]
            problems[(key, str(val), conf.dtype)] = (
                f"config key '{key}': {val} needs {need / 2**30:.1f} GiB of GPU memory in "
                f"{conf.dtype} (A, B, C and the float64 verification), more than the "
                f"{gib:.1f} GiB {where}; largest square size that fits: "
                f"{largest_square(limit, conf.dtype)}"
            )
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems.values()))


def largest_square(limit_bytes: float, dtype: str) -> int:
    lo, hi = 1, 1_000_000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if arith.device_bytes_needed(mid, mid, mid, dtype) <= limit_bytes:
            lo = mid
        else:
            hi = mid - 1
    return lo


def detect_gpus() -> list[dict]:
    """GPUs visible through nvidia-smi: index, name, compute capability, memory (GiB)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        out = subprocess.run(
            [
                smi,
                "--query-gpu=index,name,compute_cap,memory.total,uuid",
                "--format=csv,noheader,nounits",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return []
    gpus = []
    for line in out.strip().splitlines():
        idx, name, cap, mem, uuid = (x.strip() for x in line.split(","))
        gpus.append(
            dict(
                index=int(idx), name=name, compute_cap=cap, memory_gib=float(mem) / 1024, uuid=uuid
            )
        )
    return gpus


def resolve_arch(cfg: dict, gpus: list[dict]) -> str:
    if cfg["arch"] != "auto":
        return cfg["arch"]
    if not gpus:
        raise ConfigError(
            "config key 'arch': 'auto' reads the architecture off the GPU, but nvidia-smi sees "
            "none here; name it, e.g. --config arch=sm_90 (H100/H200) or arch=sm_80 (A100)"
        )
    caps = {g["compute_cap"] for g in gpus}
    if len(caps) > 1:
        raise ConfigError(
            f"config key 'arch': GPUs of several architectures {sorted(caps)}; name one"
        )
    return "sm_" + caps.pop().replace(".", "")


def resolve_memory(cfg: dict, gpus: list[dict]) -> tuple[float, str]:
    if cfg["gpu_memory_gib"] is not None:
        return float(cfg["gpu_memory_gib"]), "set by gpu_memory_gib"
    if gpus:
        g = min(gpus, key=lambda g: g["memory_gib"])
        return g["memory_gib"], f"of the {g['name']}"
    return LARGEST_GPU_GIB, "of the largest current GPU (no GPU visible here)"


def profile_plan(cfg: dict, registry: dict[str, Variant]) -> tuple[list[Configuration], list[dict]]:
    """The configurations of the profile: section (one profiled kernel launch each), and those
    refused with their reason."""
    p = cfg["profile"]
    runs, refused = [], []
    if not p["enabled"]:
        return runs, refused
    for name, dtype, size in itertools.product(p["variants"], p["dtypes"], p["sizes"]):
        v = registry[name]
        if dtype not in v.dtypes:
            refused.append(
                dict(variant=name, dtype=dtype, reason=f"supports {', '.join(v.dtypes)} only")
            )
            continue
        tiles = [t for t in p["tiles"] if t in v.tiles] if v.tiles else [0]
        factors = [f for f in p["coarsen"] if f in v.coarsen] if len(v.coarsen) > 1 else [1]
        for tile, f in itertools.product(tiles, factors):
            unmet = v.unmet(size, size, size, tile, f)
            if unmet and v.unsafe_when_unmet:
                refused.append(dict(variant=name, m=size, tile=tile, reason="; ".join(unmet)))
                continue
            runs.append(
                Configuration(
                    variant=name,
                    tile=tile,
                    coarsen=f,
                    dtype=dtype,
                    m=size,
                    n=size,
                    k=size,
                    accumulate=False,
                    memory="pinned",
                    distribution="int09",
                    seed=cfg["seed"],
                )
            )
    return runs, refused
