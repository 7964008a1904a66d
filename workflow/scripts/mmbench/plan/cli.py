"""`mmbench`: Snakemake with its command line checked first.

Snakemake reads `--configfile` and `--config` before the workflow's own validator runs, and says
what it finds wrong there in its own words: "Config file is not valid JSON or YAML" (no file, no
line), a traceback for a config file that is not there, "Unparsable value: '10000]'" where the
shell split `sizes=[8000, 10000]` at its space, "must start with a valid identifier" for
`sampling.min_samples=10`.  `mmbench ARGS` checks those arguments, names each problem with the
file, the line and the right form, and otherwise runs `python -m snakemake ARGS` unchanged (the
workflow then checks every key and value: plan/config.py).

    mmbench --cores 1 --config sizes=[8000,10000,12000]
    mmbench margins RESULTS_A RESULTS_B --out margins.csv   # compare.margins from repeated runs
    mmbench manifests RESULTS     # a copied run's manifests, rebuilt from its rows
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from pathlib import Path

import yaml

from mmbench.core.bounded import TooLarge, load_yaml
from mmbench.plan.slurm import slurm_unreachable, submits

CONFIGFILE_FLAGS = ("--configfile", "--configfiles")
CONFIG_FLAGS = ("--config", "-C")
KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _values(argv: list[str], flags: tuple[str, ...]) -> list[str]:
    """The values given to any of `flags` (each flag takes every argument up to the next
    option, as Snakemake's parser does; --flag=value too)."""
    out, taking = [], False
    for arg in argv:
        if arg.startswith("-"):
            name, eq, value = arg.partition("=")
            taking = name in flags
            if taking and eq:
                out.append(value)
            continue
        if taking:
            out.append(arg)
    return out


def configfile_problems(paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        path = Path(p)
        if not path.is_file():
            # names compared without their common .yaml (which alone makes any two look alike)
            near = difflib.get_close_matches(
                path.stem, sorted(f.stem for f in path.parent.glob("*.yaml")), n=6
            )
            named = [str(path.parent / (n + path.suffix)) for n in sorted(near)]
            hint = (
                f"; did you mean {' or '.join([', '.join(named[:-1]), named[-1]] if len(named) > 1 else named)}?"
                if near
                else ""
            )
            presets = sorted(f.stem for f in Path("config/presets").glob("*.yaml"))
            out.append(
                f"--configfile {p}: no such file{hint}"
                + (f" (presets: {', '.join(presets)})" if presets and not near else "")
            )
            continue
        try:
            loaded = load_yaml(path, p)
        except TooLarge as err:
            out.append(f"--configfile {err}")
            continue
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f"{p}:{mark.line + 1}:{mark.column + 1}" if mark else p
            what = getattr(err, "problem", None) or str(err).splitlines()[0]
            context = getattr(err, "context", None)
            started = getattr(err, "context_mark", None)
            if context and started is not None:
                context += f" that starts at line {started.line + 1}"
            out.append(
                f"--configfile {where}: not valid YAML: {what}"
                + (f" ({context})" if context else "")
                + "; a config file holds key: value lines, lists as [a, b]"
            )
            continue
        if loaded is None:  # Snakemake takes an empty file as no config and runs the defaults
            out.append(
                f"--configfile {p}: the file is empty; a config file holds key: value lines "
                "(e.g. sizes: [1024, 2048]; config/config.yaml lists every key)"
            )
        elif not isinstance(loaded, dict):
            out.append(f"--configfile {p}: holds a {type(loaded).__name__}, not key: value lines")
    return out


def config_problems(entries: list[str]) -> list[str]:
    out = []
    i = 0
    while i < len(entries):
        entry = entries[i]
        key, eq, value = entry.partition("=")
        if not eq:
            out.append(
                f"--config {entry}: not NAME=value; every entry is one argument, e.g. "
                "sizes=[1024,2048] (a target written after --config is read as an entry: "
                "name targets before --config)"
            )
        elif "." in key and KEY.match(key.split(".")[0]):
            head, _, rest = key.partition(".")
            out.append(
                f"--config {entry}: a key inside a section is written as a mapping: "
                f"'{head}={{{rest}: {value}}}' (quoted, with a space after the colon)"
            )
        elif not KEY.match(key):
            out.append(f"--config {entry}: {key!r} is not a config key (letters, digits and _)")
        elif value.count("[") > value.count("]") or value.count("{") > value.count("}"):
            # the shell split one value at its spaces: the pieces follow as entries of their own
            pieces = [entry]
            while (
                i + 1 < len(entries)
                and "=" not in entries[i + 1].split("[")[0].split("{")[0]
                and _open(" ".join(pieces))
            ):
                i += 1
                pieces.append(entries[i])
            whole = " ".join(pieces)
            if len(pieces) > 1 and _open(whole):
                out.append(
                    f"--config {whole}: the shell split this value at its spaces, and its "
                    f"brackets do not pair up ({_counts(whole)}); close every one and quote the "
                    f"entry, '{whole.partition('=')[0]}=...'"
                )
            elif len(pieces) > 1:
                out.append(
                    f"--config {whole}: the shell split this value at its spaces; quote the "
                    f"entry, '{whole}'" + _unspaced(whole)
                )
            else:
                out.append(
                    f"--config {entry}: its brackets do not pair up ({_counts(entry)}); close "
                    "every one"
                )
        i += 1
    return out


def _counts(text: str) -> str:
    return ", ".join(
        f"{text.count(o)} '{o}' and {text.count(c)} '{c}'"
        for o, c in (("[", "]"), ("{", "}"))
        if text.count(o) != text.count(c)
    )


def _unspaced(entry: str) -> str:
    """', or write it without spaces, X' where X means the same to YAML ('' where it does not:
    {min_samples:10} reads as the one key 'min_samples:10')."""
    value = entry.partition("=")[2]
    try:
        same = yaml.safe_load(value) == yaml.safe_load(value.replace(" ", ""))
    except yaml.YAMLError:
        same = False
    return f", or write it without spaces, {entry.replace(' ', '')}" if same else ""


def _open(text: str) -> bool:
    return text.count("[") > text.count("]") or text.count("{") > text.count("}")


def attached_config(argv: list[str]) -> list[str]:
    """`--config=K=V A=B`: Snakemake's parser gives the flag only the value attached to it, and
    reads the NAME=value arguments after it as targets ("no rule to produce sizes=[...]")."""
    out = []
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if name not in CONFIG_FLAGS or not eq:
            continue
        after = []
        for nxt in argv[i + 1 :]:
            if nxt.startswith("-") or "=" not in nxt:
                break
            after.append(nxt)
        if after:
            out.append(
                f"{arg} {' '.join(after)}: with '=' the flag takes only {value!r}, and Snakemake "
                f"reads {', '.join(after)} as target(s); write {name} {value} {' '.join(after)} "
                "(a space after the flag, not '=')"
            )
    return out


def missing_executor(argv: list[str]) -> str | None:
    """The executor plugin a command line's profile or --executor asks for where it is not
    installed (Snakemake's parser then says only "invalid choice: 'slurm'")."""
    import importlib.util

    from mmbench.plan.slurm import executor

    name = str(executor(argv) or "")
    if name in ("", "local", "dryrun", "touch"):
        return None
    module = f"snakemake_executor_plugin_{name.replace('-', '_')}"
    if importlib.util.find_spec(module) is not None:
        return None
    extra = (
        "pip install -e '.[slurm]' (the slurm extra; docs/cluster.md)"
        if name == "slurm"
        else f"pip install snakemake-executor-plugin-{name}"
    )
    return (
        f"the executor {name!r} (from --executor or the profile's config.yaml) needs Snakemake's "
        f"executor plugin {module}, which is not installed here: {extra}"
    )


def problems(argv: list[str]) -> list[str]:
    return (
        configfile_problems(_values(argv, CONFIGFILE_FLAGS))
        + config_problems(_values(argv, CONFIG_FLAGS))
        + attached_config(argv)
    )


# where Snakemake looks for the workflow when no --snakefile is given (its own list)
SNAKEFILES = ("Snakefile", "snakefile", "workflow/Snakefile", "workflow/snakefile")


def no_workflow_here(argv: list[str], cwd: Path) -> str | None:
    """Why Snakemake would find no workflow to run (no --snakefile, and none of its file names
    in this folder), with the way forward: the checkout this package belongs to, where known."""
    if any(a in ("-s", "--snakefile") or a.startswith("--snakefile=") for a in argv):
        return None
    if any((cwd / name).is_file() for name in SNAKEFILES) or "--help" in argv or "-h" in argv:
        return None
    from mmbench.core.paths import PACKAGE

    checkout = PACKAGE.parents[2]
    snakefile = checkout / "workflow" / "Snakefile"
    way = (
        f"run it in the checkout, `cd {checkout}`, or name its workflow: "
        f"--snakefile {snakefile} (results then go to this folder)"
        if snakefile.is_file()
        else "run it in a checkout of mmbench (the folder holding workflow/Snakefile), or name "
        "that workflow with --snakefile PATH/workflow/Snakefile"
    )
    return f"no workflow in {cwd} (no Snakefile): mmbench runs the workflow of its checkout; {way}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["margins"]:  # the compare command's margins, from repeated runs
        os.execv(sys.executable, [sys.executable, "-m", "mmbench.compare.margins", *argv[1:]])
    if argv[:1] == ["manifests"]:  # a results folder's run manifests, rebuilt from its rows
        os.execv(sys.executable, [sys.executable, "-m", "mmbench.core.manifests", *argv[1:]])
    missing = no_workflow_here(argv, Path.cwd())
    if missing:
        print(f"mmbench: {missing}", file=sys.stderr)
        return 2
    why = problems(argv)
    if why:
        print("mmbench: the command line is not what Snakemake can read:", file=sys.stderr)
        for line in why:
            print(f"  {line}", file=sys.stderr)
        return 2
    if submits(argv):  # SLURM asked before Snakemake loads its plugin and plans (seconds)
        why_not = slurm_unreachable()
        if why_not:
            print(f"mmbench: {why_not}", file=sys.stderr)
            return 1
    plugin = missing_executor(argv)  # after SLURM's own answer: the cause to mend first
    if plugin:
        print(f"mmbench: {plugin}", file=sys.stderr)
        return 2
    os.execv(sys.executable, [sys.executable, "-m", "snakemake", *argv])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
