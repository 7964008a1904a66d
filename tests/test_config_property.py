"""Property-based test of the configuration check (Hypothesis): any configuration given on the
command line is either refused with a message that names one of its keys, or plans and gives a
DAG that dry-runs."""

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from snakemake.cli import parse_config

from mmbench.core.registry import load_registry
from mmbench.plan import plan
from mmbench.plan.config import ConfigError, idle_shorthands, validate

from .conftest import snakemake

REGISTRY = load_registry()
VARIANTS = [*REGISTRY, "warp_tiled"]


def _list(values, max_size=3):
    return st.lists(st.sampled_from(values), min_size=0, max_size=max_size, unique=True).map(
        lambda xs: "[" + ",".join(map(str, xs)) + "]"
    )


ENTRIES = {
    "sizes": _list([1, 31, 64, 641, 0, -5, "x"]),
    "shapes": st.lists(
        st.lists(st.sampled_from([1, 37, 100, 0]), min_size=1, max_size=4), max_size=2
    ).map(lambda xs: str(xs).replace(" ", "")),
    "tiles": _list([8, 16, 32, 64, 0]),
    "coarsen": _list([1, 2, 4, 8, 3]),
    "dtypes": _list(["float32", "float64", "int32", "half"]),
    "variants": _list(VARIANTS),
    "memory": _list(["pageable", "pinned", "managed", "mapped", "pinnned"]),
    "accumulate": _list(["true", "false", "maybe"]),
    "distribution": st.sampled_from(["int09", "uniform", "normal"]),
    "arch": st.sampled_from(["sm_90", "sm_80", "sm_91", "90", "volta"]),
    "sampling": st.sampled_from(
        ["{min_samples: 2}", "{min_samples:0}", "{max_samples: 1, min_samples: 5}", "{x: 1}"]
    ),
}
CONFIGS = st.dictionaries(st.sampled_from(sorted(ENTRIES)), st.none(), max_size=5).flatmap(
    lambda keys: st.fixed_dictionaries({k: ENTRIES[k] for k in keys})
)


def _check(entries: dict):
    """None where the configuration is valid (and its plan is made), else the message."""
    raw = parse_config([f"{k}={v}" for k, v in entries.items()])
    try:
        cfg = validate(raw, REGISTRY)
        idle = idle_shorthands(raw, cfg, REGISTRY)  # what planning refuses besides (experiment)
        if idle:
            raise ConfigError("\n".join(idle))
        arch = cfg["arch"] if cfg["arch"] != "auto" else "sm_90"
        planned = plan.expand(cfg, REGISTRY, arch)
        plan.check_device_memory(planned, 80.0, "of the test GPU")
        # as the Snakefile does: a plan that measures nothing is refused (variants=[mma_f64]
        # with the default dtypes, float32, which it lacks)
        plan.check_something_to_measure(cfg, planned)
    except ConfigError as err:
        return str(err)
    return None


def _named_keys(message: str) -> set[str]:
    return {re.split(r"[.\[]", k)[0] for k in re.findall(r"config key '([^']+)'", message)}


@pytest.mark.slow  # 300 configurations checked: 20 s on a 2-core machine
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CONFIGS)
def test_every_configuration_is_refused_naming_a_key_or_plans(entries):
    message = _check(entries)
    if message is not None and message.startswith("this configuration measures nothing"):
        # refused as a whole, each variant named with why it has nothing to run (a default may
        # be the cause: no key of the entries need be named)
        assert re.search(r"\n  \S+: nothing to run \(.+\)", message), message
    elif message is not None:
        named = _named_keys(message)
        assert named, message
        assert named <= set(entries) | {"sizes"}, (entries, message)


@pytest.mark.slow
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])  # fmt: skip
@given(CONFIGS)
def test_valid_random_configurations_dry_run(entries):
    """The valid ones give a DAG that Snakemake dry-runs (the real workflow, no GPU needed).
    Invalid draws are rejected (assume), so the test cannot pass without a dry run: hypothesis
    fails it as unsatisfiable if no draw is valid."""
    assume(_check(entries) is None)
    args = [f"{k}={v}" for k, v in entries.items()]
    if "arch" not in entries:
        args.append("arch=sm_90")
    out = snakemake("-n", "--cores", "1", "--config", *args)
    assert out.returncode == 0, (entries, out.stderr[-2000:])
