"""Which builds a paired comparison measures side by side (rule pair_variant, measure/paired.py):
for each variant, instantiation slug -> the cubin of the baseline build of that instantiation.

The baseline build is named by config `baseline`:

* `itself`: every variant against its own build (an A/A test: both sides are the same cubin,
  or the same library call, so every verdict that is not SAME is the comparison's own error);
* `previous`: each variant's previous kernel source, whose cubins the archive keeps
  (archive/<variant>/<source hash>/cubins/<arch>/<instance>.cubin, measure.py), for the variants
  and instantiations whose cubins are there (the others are compared as runs made apart);
* `{variant: V, params: {NAME: value}}`: V's instantiations with those parameter values in place
  of this run's (two parameter sets: the same cubins compile_kernel builds);
* `{variant: V, source: FILE}`: V compiled from FILE instead of its registry source, with the
  same parameters (two sources: rule compile_baseline_source builds them under
  <results>/pairs/build/); with `registry: REGISTRY_FILE` as well, FILE gets the -D flags that
  registry gives V's instantiation (a kernel file from an older tree, whose registry entry
  passed other derived facts than this one's).
"""

from __future__ import annotations

from pathlib import Path

from mmbench.core.archive import archived, previous_entry
from mmbench.core.registry import RegistryError, Variant, load_registry, slug
from mmbench.plan.config import ConfigError


def build_form(baseline) -> str:
    """'none', 'itself', 'previous', 'folder', 'params' or 'source': what config `baseline`
    names."""
    if not baseline:
        return "none"
    if isinstance(baseline, dict):
        return "source" if "source" in baseline else "params"
    return baseline if baseline in ("itself", "previous") else "folder"


def check_build(baseline: dict, registry: dict[str, Variant], variants) -> None:
    """A baseline build names a variant of this run, and either a source file that exists or
    parameter values the variant has (before any GPU time)."""
    name = baseline.get("variant")
    if name not in registry:
        raise ConfigError(
            f"config key 'baseline': variant {name!r} is not in the registry; valid: "
            f"{', '.join(sorted(registry))}"
        )
    if name not in variants:
        raise ConfigError(
            f"config key 'baseline': variant {name!r} is not measured in this run (variants: "
            f"{', '.join(variants)}); add it to `variants`"
        )
    if ("source" in baseline) == ("params" in baseline):
        raise ConfigError(
            "config key 'baseline': a baseline build gives either `source` (a kernel file) or "
            f"`params` (parameter values), not {'both' if 'source' in baseline else 'neither'}; "
            f"e.g. baseline={{variant: {name}, params: {{TILE: 16}}}}"
        )
    v = registry[name]
    if "registry" in baseline and "source" not in baseline:
        raise ConfigError(
            "config key 'baseline': `registry` gives the -D flags of a baseline `source`; "
            f"name the kernel file too, e.g. baseline={{variant: {name}, source: "
            f"OLD/kernels/{v.source}, registry: OLD/kernels/registry.yaml}}"
        )
    if "source" in baseline:
        src = Path(baseline["source"])
        if v.backend != "cubin":
            raise ConfigError(
                f"config key 'baseline': {name} is not compiled by nvcc from a kernel file of "
                f"ours (backend {v.backend}): a baseline source is built as nvcc builds a rung"
            )
        if not src.is_file():
            raise ConfigError(
                f"config key 'baseline': source {str(src)!r} is not a file; give the kernel "
                f"file of the baseline build of {name} (e.g. a copy of kernels/{v.source})"
            )
        if "registry" in baseline:
            other = baseline_registry(baseline["registry"])
            if name not in other:
                raise ConfigError(
                    f"config key 'baseline': registry {baseline['registry']!r} has no variant "
                    f"{name!r}; valid: {', '.join(sorted(other))}"
                )
        return
    known = {k for params in v.by_slug.values() for k in params}
    for key, value in baseline["params"].items():
        if key not in known:
            raise ConfigError(
                f"config key 'baseline': {name} has no parameter {key!r}; valid: "
                f"{', '.join(sorted(known))}"
            )
        values = sorted({p[key] for p in v.by_slug.values() if key in p}, key=str)
        same = [x for x in values if str(x) == str(value)]  # 7 and "7" name one value
        if same:
            baseline["params"][key] = same[0]
        else:
            raise ConfigError(
                f"config key 'baseline': {name}'s {key} has no value {value}; valid: "
                f"{', '.join(map(str, values))}"
            )


def baseline_registry(path) -> dict[str, Variant]:
    """The registry a baseline `source` is built with (config `baseline`'s `registry`)."""
    if not Path(path).is_file():
        raise ConfigError(
            f"config key 'baseline': registry {str(path)!r} is not a file; give the registry.yaml "
            "of the tree the baseline source comes from"
        )
    try:
        return load_registry(path)
    except (RegistryError, OSError, ValueError) as err:
        raise ConfigError(f"config key 'baseline': registry {str(path)!r}: {err}") from None


def baseline_defines(
    baseline: dict, registry: dict[str, Variant], name: str, instance: str
) -> dict:
    """What nvcc is given for the baseline source's build of one instantiation (-D each): this
    registry's parameters and derived facts, or those of the baseline's own `registry`."""
    params = registry[name].instance(instance)
    if "registry" not in baseline:
        return registry[name].defines(params)
    other = baseline_registry(baseline["registry"])[name]
    if slug(params) not in other.by_slug:
        raise ConfigError(
            f"config key 'baseline': registry {baseline['registry']!r} has no instantiation "
            f"{slug(params)} of {name}; valid: {', '.join(sorted(other.by_slug))}"
        )
    return other.defines(params)


def baseline_cubins(
    baseline, variant: Variant, instances: list[str], arch: str, results: str,
    current_source: str, cubin_path,
) -> dict[str, str]:  # fmt: skip
    """This run's instantiations of `variant` -> their baseline build's cubin ({} where the
    variant has no baseline build)."""
    form = build_form(baseline)
    if form == "itself":  # a library call has no cubin: "" (its own call)
        return {i: cubin_path(arch, variant.name, i, variant.build_ext) if variant.compiled else ""
                for i in instances}  # fmt: skip
    if form == "previous":
        return previous_cubins(Path(results), variant.name, instances, arch, current_source)
    if form not in ("params", "source") or baseline["variant"] != variant.name:
        return {}
    if form == "source":
        return {i: f"{results}/pairs/build/{arch}/{variant.name}/{i}.cubin" for i in instances}
    out = {}
    for i in instances:
        params = dict(variant.instance(i)) | baseline["params"]
        other = slug(params)
        if other not in variant.by_slug:
            raise ConfigError(
                f"config key 'baseline': {variant.name} has no instantiation {other} (this run's "
                f"{i} with {baseline['params']}); valid: {', '.join(sorted(variant.by_slug))}"
            )
        if other == i:
            raise ConfigError(
                f"config key 'baseline': {variant.name}'s {i} with {baseline['params']} is "
                f"itself: name parameter values other than this run's"
            )
        out[i] = cubin_path(arch, variant.name, other)
    return out


def previous_cubins(results: Path, variant: str, instances: list[str], arch: str,
                    current_source: str) -> dict[str, str]:  # fmt: skip
    """The archived cubins of the variant's previous source: the entry the comparison takes its
    rows from (core/archive.previous_entry), for the instantiations it holds ({} where that
    entry kept no cubins: an archive written before cubins were kept)."""
    entry = previous_entry(archived(results, variant).get(variant, []), current_source)
    if entry is None:
        return {}
    folder = entry.parent / "cubins" / arch
    return {i: str(folder / f"{i}.cubin") for i in instances if (folder / f"{i}.cubin").exists()}


def paired_builds(exp, variant: str, arch: str, source_sha: str, cubin_path) -> dict[str, str]:
    """Instantiation slug -> the baseline build's cubin, for a variant this experiment measures
    side by side with a baseline build (the module's header); {} for the others (no baseline,
    rendering only, a variant not measured, baseline=previous with compare.paired off, a
    library call against anything but itself).  `source_sha`: the variant's source and headers
    hashed (the previous source is the one before it)."""
    cfg, baseline = exp.config, exp.baseline
    if exp.render_only or not baseline or variant not in exp.plan.runs:
        return {}
    if baseline == "previous" and not cfg["compare"]["paired"]:
        return {}
    v = exp.registry[variant]
    if v.backend != "cubin" and baseline != "itself":
        return {}
    instances = sorted({c.instance for c in exp.plan.runs[variant]})
    return baseline_cubins(baseline, v, instances, arch, exp.results, source_sha, cubin_path)
