"""Config coercion and every invalid value of the main-job issue, before any job runs."""

import pytest
import yaml
from snakemake.cli import parse_config

from mmbench.core.registry import load_registry
from mmbench.plan import plan
from mmbench.plan.config import ConfigError, coerce, load_schema, validate
from mmbench.report.catalogue import names

from .conftest import ROOT


def cli(*entries):
    """Exactly what `snakemake --config ...` hands to the workflow."""
    return parse_config(list(entries))


def test_command_line_sizes_arrive_as_strings_and_are_coerced(registry):
    raw = cli("sizes=[8000,10000,12000]")
    assert raw["sizes"] == ["8000", "10000", "12000"]  # the reason coercion exists
    cfg = validate(raw, registry)
    assert cfg["sizes"] == [8000, 10000, 12000]
    assert cfg["tiles"] == [16, 32] and cfg["dtypes"] == ["float32"]  # defaults from the schema
    assert cfg["sampling"]["min_samples"] == 5


def test_other_command_line_types(registry):
    cfg = validate(
        cli(
            "tiles=[8]",
            "demonstrate_failures=true",
            "accumulate=[false,true]",
            "gpu_memory_gib=80",
            "shapes=[[100,70,30]]",
            "dtypes=float64",
            "sizes=640",
        ),
        registry,
    )
    assert cfg["tiles"] == [8]
    assert cfg["demonstrate_failures"] is True
    assert cfg["accumulate"] == [False, True]
    assert cfg["gpu_memory_gib"] == 80
    assert cfg["shapes"] == [[100, 70, 30]]
    assert cfg["dtypes"] == ["float64"]
    assert cfg["sizes"] == [640]


def test_nested_sampling_values_are_coerced():
    schema = load_schema()
    out = coerce({"sampling": {"min_samples": "3", "min_time_s": "0.5"}}, schema)
    assert out == {"sampling": {"min_samples": 3, "min_time_s": 0.5}}


@pytest.mark.parametrize(
    "entry,key,fragment",
    [
        (
            "variants=[naive_guarded,warp_tiled]",
            "variants[1]",
            "'warp_tiled' is not valid (did you mean warptile or warptile_db?); valid values: naive_",
        ),
        (
            "dtypes=[float8]",
            "dtypes[0]",
            "'float8' is not valid (did you mean float8_e4m3?); valid values: float32, float64, "
            "int32, bfloat16, float16, float8_e4m3",
        ),
        ("tiles=[0]", "tiles[0]", "0 is out of range"),
        ("tiles=[16,64]", "tiles[1]", "64 is not valid for naive_unguarded"),
        ("tiles=[16,64]", "tiles[1]", "valid values: 8, 16, 32"),
        (
            "params={coarsened:{COARSEN:[3]}}",
            "params.coarsened.COARSEN[0]",
            "3 is not valid; valid values: 2, 4, 8",
        ),
        ("params={coarsened:{BM:[64]}}", "params.coarsened.BM", "has no parameter BM"),
        ("params={warp_tiled:{BM:[64]}}", "params", "'warp_tiled' is not valid"),
        ("sizes=[-5]", "sizes[0]", "-5 is out of range"),
        ("sizes=[100,abc]", "sizes[1]", "'abc' is not of type integer"),
        ("sizes=[]", "sizes", "the list is empty"),
        ("size_ranges=[[300,100,1]]", "size_ranges[0]", "ends before it starts"),
        ("memory=[]", "memory", "the list is empty"),
        ("memory=[pinnned]", "memory[0]", "'pinnned' is not valid (did you mean pinned?); valid"),
        ("arch=volta", "arch", "'volta' is not valid; valid: auto, or sm_ and the GPU's"),
        ("demonstrate_failures=yes", "demonstrate_failures", "valid values: true, false"),
        ("params=blocktile_1d:{BM:[64]}", "params", "needs a space after each colon"),
        ("coarsen=[1]", "coarsen[0]", "1 is not valid for coarsened; valid values: 2, 4, 8"),
        ("size=[10]", "(top level)", "'size' was unexpected"),
    ],
)
def test_invalid_values_name_key_value_and_valid_ones(registry, entry, key, fragment):
    with pytest.raises(ConfigError) as err:
        validate(cli(entry), registry)
    msg = str(err.value)
    assert f"config key '{key}'" in msg
    assert fragment in msg


@pytest.mark.parametrize(
    "entry,suggested",
    [
        # by hand: a usual shorthand; the start of longer names (and the end of one, after _);
        # one letter too many; the start of a longer name (float8_e4m3, not float32); none close
        # enough
        ("dtypes=[bf16]", "'bf16' is not valid (did you mean bfloat16?)"),
        ("variants=[tiled]", "(did you mean tiled_unguarded or tiled_guarded or tma_tiled?)"),
        ("load=[sustain]", "'sustain' is not valid (did you mean sustained?)"),
        ("variants=[cublass]", "'cublass' is not valid (did you mean cublas?)"),
        ("dtypes=[float8]", "'float8' is not valid (did you mean float8_e4m3?)"),
        ("dtypes=[complex64]", "'complex64' is not valid; valid values:"),
        # an unknown key: the keys it is close to (the start of two; one letter missing)
        ("size=[8000]", "'size': did you mean sizes or size_ranges?; known keys:"),
        ("variant=[cublas]", "'variant': did you mean variants?; known keys:"),
    ],
)
def test_a_value_close_to_valid_ones_names_them(registry, entry, suggested):
    with pytest.raises(ConfigError) as err:
        validate(cli(entry), registry)
    assert suggested in str(err.value)


def test_report_names_are_checked_against_the_catalogue(registry):
    """The Snakefile passes the catalogue's names (catalogue.names()) to validate."""
    with pytest.raises(ConfigError) as err:
        validate(cli("report={figures: [roofline, rooflin]}"), registry, outputs=names())
    assert "config key 'report.figures[1]'" in str(err.value)
    assert "'rooflin' is not valid" in str(err.value) and "time_vs_n" in str(err.value)


def test_several_problems_are_reported_at_once(registry):
    with pytest.raises(ConfigError) as err:
        validate(cli("tiles=[0]", "dtypes=[half]"), registry)
    assert "tiles[0]" in str(err.value) and "dtypes[0]" in str(err.value)


def test_semantic_checks(registry):
    with pytest.raises(ConfigError, match="'uniform'.*int32"):
        validate(cli("distribution=uniform", "dtypes=[float32,int32]"), registry)
    with pytest.raises(
        ConfigError, match="coarsen\\[1\\]': 3 is not valid for coarsened; valid values: 2, 4, 8"
    ):
        validate(cli("coarsen=[2,3]"), registry)
    with pytest.raises(ConfigError, match="max_samples"):
        validate({"sampling": {"min_samples": 10, "max_samples": 2}}, registry)


def test_size_that_cannot_fit_in_gpu_memory_is_refused(registry):
    cfg = validate(cli("sizes=[1024,100000]"), registry)
    p = plan.expand(cfg, registry, "sm_90")
    with pytest.raises(ConfigError) as err:
        plan.check_device_memory(p, 80.0, "of the H100")
    msg = str(err.value)
    assert "config key 'sizes': 100000 needs" in msg and "80.0 GiB of the H100" in msg
    assert "largest square size that fits: " in msg
    fits = int(msg.rsplit("fits: ", 1)[1].split()[0])
    assert 20000 < fits < 100000
    plan.check_device_memory(
        plan.expand(validate(cli("sizes=[1024]"), registry), registry, "sm_90"), 80.0, ""
    )


def test_arch_auto_without_gpu_asks_for_a_name(registry):
    cfg = validate({}, registry)
    with pytest.raises(ConfigError, match="arch=sm_90"):
        plan.resolve_arch(cfg, [])
    assert plan.resolve_arch(cfg, [{"compute_cap": "9.0"}]) == "sm_90"
    assert plan.resolve_arch(validate(cli("arch=sm_80"), registry), []) == "sm_80"
    assert plan.resolve_memory(cfg, [])[0] == plan.LARGEST_GPU_GIB


def test_inputs_and_loads_take_one_value_or_a_list_and_are_checked(registry):
    """`distribution=normal` (a string from the command line or a file) is a list of one; a
    load outside burst/sustained names the valid ones; a sustained load with a cold cache is
    refused before any GPU time (back to back, L2 cannot be flushed before each launch)."""
    base = {"arch": "sm_90"}
    cfg = validate(base | parse_config(["distribution=normal", "load=[burst,sustained]"]), registry)
    assert cfg["distribution"] == ["normal"] and cfg["load"] == ["burst", "sustained"]
    assert validate(base, registry)["load"] == ["burst"]
    with pytest.raises(ConfigError, match=r"config key 'load\[0\]'.*burst.*sustained"):
        validate(base | {"load": ["steady"]}, registry)
    with pytest.raises(ConfigError, match="sustained runs each kernel back to back"):
        validate(base | {"load": ["sustained"], "cache": ["cold"]}, registry)
    with pytest.raises(ConfigError, match="flushed runs each kernel back to back"):
        validate(base | {"load": ["flushed"], "cache": ["cold"]}, registry)
    p = plan.expand(validate(base | {"distribution": ["int09", "normal"], "load": ["burst",
                    "sustained"], "variants": ["cublas"], "sizes": [64]}, registry), registry)  # fmt: skip
    got = {(c.distribution, c.load) for c in p.runs["cublas"]}
    assert got == {(d, x) for d in ("int09", "normal") for x in ("burst", "sustained")}


def test_sustained_sizes_settle_only_the_sizes_named(registry):
    """sustained_sizes: the odd sizes are measured in bursts only, the named square sizes under
    both loads; a size that is not a square size of the run, or a sustained-only load that
    would leave a product unmeasured, is refused with the valid values."""
    base = {"arch": "sm_90", "variants": ["cublas"], "sizes": [31, 4096], "shapes": [[9, 8, 7]]}
    cfg = validate(base | cli("load=[burst,sustained]", "sustained_sizes=[4096]"), registry)
    runs = plan.expand(cfg, registry).runs["cublas"]
    got = sorted({(c.m, c.n, c.k, c.load) for c in runs})
    assert got == [(9, 8, 7, "burst"), (31, 31, 31, "burst"), (4096, 4096, 4096, "burst"),
                   (4096, 4096, 4096, "sustained")]  # fmt: skip
    unset = plan.expand(validate(base | {"load": ["burst", "sustained"]}, registry), registry)
    assert len({(c.m, c.load) for c in unset.runs["cublas"]}) == 6  # empty: all, both loads
    with pytest.raises(
        ConfigError, match=r"'sustained_sizes': 4097 is not a square size.*31, 4096"
    ):
        validate(base | {"load": ["burst", "sustained"], "sustained_sizes": [4097]}, registry)
    with pytest.raises(ConfigError, match=r"leaves \[\[31, 31, 31\], \[9, 8, 7\]\] with no load"):
        validate(base | {"load": ["sustained"], "sustained_sizes": [4096]}, registry)
    # a burst-only run ignores it (the ladder preset with --config load=[burst])
    burst = plan.expand(validate(base | {"sustained_sizes": [4096]}, registry), registry)
    assert {c.load for c in burst.runs["cublas"]} == {"burst"}
    # the flushed load (mamf-finder's MSMF) keeps to the same sizes: 4096 under all three
    three = cli("load=[burst,sustained,flushed]", "sustained_sizes=[4096]")
    runs = plan.expand(validate(base | three, registry), registry).runs["cublas"]
    got = sorted({(c.m, c.load) for c in runs})
    assert got == [(9, "burst"), (31, "burst"), (4096, "burst"), (4096, "flushed"),
                   (4096, "sustained")]  # fmt: skip


def test_params_for_a_variant_not_run_is_an_error():
    with pytest.raises(ConfigError, match=r"'params.warptile_db': warptile_db is not run"):
        validate(
            dict(variants=["warptile"], params={"warptile_db": {"BM": [128]}}, arch="sm_90"),
            load_registry(),
        )


def test_a_long_size_range_is_refused_in_one_line():
    from mmbench.plan.config import validate

    with pytest.raises(ConfigError) as err:
        validate({"sizes": [], "size_ranges": [[1, 100000, 1]], "arch": "sm_90"}, load_registry())
    assert "give 100000 problem shapes" in str(err.value)
    assert len(str(err.value).splitlines()) < 5


def test_the_schemas_defaults_are_config_yamls_values():
    """A default is stated in the schema and in config/config.yaml (whose values a run merges
    under the user's): the two agree for every key both name (the schema's report.tables had
    7 tables where config.yaml has 9)."""
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    differ, compared = [], 0

    def walk(node, values, path):
        nonlocal compared
        for key, sub in (node.get("properties") or {}).items():
            if not isinstance(values, dict) or key not in values:
                continue
            if "default" in sub and sub["default"] != {}:
                compared += 1
                if sub["default"] != values[key]:
                    differ.append((".".join(path + [key]), sub["default"], values[key]))
            walk(sub, values[key], path + [key])

    walk(schema, config, [])
    assert compared >= 20 and not differ, differ


# -- what a new user hit (issue "third round", point 8): each refusal says what is valid --------


@pytest.mark.parametrize(
    "entries, expected",
    [
        (["tiles=[0]"], "config key 'tiles[0]': 0 is out of range; valid: an integer >= 1"),
        (["experiment=../x"],
         "config key 'experiment': '../x' is not valid; valid: letters, digits, _ and - only"),
        (["params={tiled_guarded: {tile: [16]}}"],
         "config key 'params.tiled_guarded': 'tile' is not a parameter of tiled_guarded; its "
         "parameters: dtype, TILE"),
        (["params={tiled_guarded: {TILE: [16]}"],
         "config key 'params': '{tiled_guarded: {TILE: [16]}' is not a mapping: its brackets do "
         "not pair up (2 '{' and 1 '}')"),
        (["sampling={min_samples: [2}"], "its brackets do not pair up (1 '[' and 0 ']')"),
    ],
)  # fmt: skip
def test_a_refusal_says_what_is_valid(registry, entries, expected):
    with pytest.raises(ConfigError) as err:
        validate(cli(*entries), registry)
    assert expected in str(err.value)


def test_a_shorthand_that_chooses_nothing_in_this_run_is_refused(registry):
    from mmbench.plan.config import idle_shorthands

    given = cli("variants=[cublas]", "tiles=[64]")
    cfg = validate(given, registry)
    problems = idle_shorthands(given, cfg, registry)
    assert problems == [
        "config key 'tiles': [64] chooses the TILE of no variant of this run (variants = "
        "['cublas'], none has TILE); drop tiles, or run a variant that has one, e.g. coarsened, "
        "matadd_column, matadd_element, matadd_row"
    ]
    # the default tiles, not given by the user, are no problem
    assert idle_shorthands(cli("variants=[cublas]"), validate(cli("variants=[cublas]"), registry),
                           registry) == []  # fmt: skip


@pytest.mark.parametrize(
    "entries,expected",
    [
        (["transfer=[copy2d]"],
         "config key 'transfer': ['copy2d'] changes nothing in this run: it chooses how padded "
         "pageable or pinned matrices reach the device, and leading_pad = [0] pads no matrix; "
         "drop transfer, or give leading_pad a pad > 0 and memory pageable or pinned"),
        (["transfer=[copy2d]", "memory=[managed]", "leading_pad=[16]"],
         "config key 'transfer': ['copy2d'] changes nothing in this run: it chooses how padded "
         "pageable or pinned matrices reach the device, and memory = ['managed'] holds neither "
         "pageable nor pinned (managed and mapped matrices are used in place, strided); drop "
         "transfer, or give leading_pad a pad > 0 and memory pageable or pinned"),
        (["sizes=[4096]", "sustained_sizes=[4096]"],
         "config key 'sustained_sizes': [4096] chooses the sizes of the sustained or flushed "
         "load, which this run does not measure (load = ['burst']); add sustained or flushed to "
         "load, or drop sustained_sizes"),
    ],
)  # fmt: skip
def test_a_setting_another_makes_idle_is_refused_naming_both(registry, entries, expected):
    """Issue "what a new user hit", item 2: each was accepted and changed nothing (copy2d with
    managed memory became strided)."""
    from mmbench.plan.config import idle_shorthands

    given = cli(*entries)
    assert idle_shorthands(given, validate(given, registry), registry) == [expected]
    # where it applies, the same setting is taken
    fine = cli("transfer=[copy2d]", "leading_pad=[16]", "memory=[pinned, managed]",
               "load=[burst, sustained]", "sizes=[4096]", "sustained_sizes=[4096]")  # fmt: skip
    assert idle_shorthands(fine, validate(fine, registry), registry) == []


def _out_of_range(node: dict):
    """A value the schema `node` refuses, made from its own declared bounds (below a minimum,
    above a maximum, outside an enum, past a pattern, of a type it does not take), or None
    where it declares nothing to go past."""
    types = node.get("type")
    types = types if isinstance(types, list) else [types]
    if "enum" in node:
        return "no_such_value"
    if "oneOf" in node or "anyOf" in node:
        return 3.5  # baseline: a name or a mapping, never a fraction
    if "boolean" in types:
        return "maybe"
    if "integer" in types or "number" in types:
        if "minimum" in node:
            return node["minimum"] - 1
        if "exclusiveMinimum" in node:
            return node["exclusiveMinimum"]
        if "maximum" in node:
            return node["maximum"] + 1
        return "many"
    if "string" in types:
        return "not valid!" if "pattern" in node else 42
    if "array" in types:
        item = _out_of_range(node.get("items", {})) if isinstance(node.get("items"), dict) else None
        return [item] if item is not None else "not a list"
    if "object" in types:
        return {"no_such_key": 1} if node.get("additionalProperties") is False else 7
    return None


def _every_key(node: dict, path=()):
    for key, sub in node.get("properties", {}).items():
        yield (*path, key), sub
        if "properties" in sub:
            yield from _every_key(sub, (*path, key))


SCHEMA = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())


@pytest.mark.parametrize(
    "path,node", list(_every_key(SCHEMA)), ids=[".".join(p) for p, _ in _every_key(SCHEMA)]
)
def test_every_config_key_out_of_range_gets_a_message_naming_it(registry, path, node):
    """Every key of the config schema, top-level and nested, given a value past its own
    declared bounds: a ConfigError naming that key (issue "what a new user hit", item 3:
    gpu_memory_gib=0 ended in a TypeError), never another exception."""
    value = _out_of_range(node)
    assert value is not None, f"{path}: the schema declares no bound to go past"
    given = value
    for key in reversed(path):
        given = {key: given}
    defaults = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    from mmbench.plan.config import merge

    with pytest.raises(ConfigError) as err:
        validate(merge(defaults, given), registry, outputs=names())
    assert f"config key '{'.'.join(path)}" in str(err.value), str(err.value)
