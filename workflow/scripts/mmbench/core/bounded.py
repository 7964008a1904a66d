"""Input read within stated bounds, so that a hostile or broken file costs a clear message, not
minutes of CPU, gigabytes of output or a RecursionError traceback.

YAML's anchors and aliases let a few hundred bytes stand for a billion values (an "alias bomb":
PyYAML loads it at once, as shared references, but whatever walks it afterwards, a schema
validator, a merge, a message quoting it, walks every copy); deep nesting overflows the parser's
recursion.  Every YAML file the project reads (config files, presets, the registry, a profile)
goes through `load_yaml`, and the config Snakemake hands the workflow through `check_size`:

- a file larger than MAX_YAML_BYTES is refused before it is parsed;
- a document nested deeper than MAX_DEPTH, or holding more than MAX_VALUES values once its
  aliases are counted at every place they stand, is refused naming where it goes past.

Tables have their own bound (core/schemas.read_table: MAX_TABLE_BYTES).
"""

from __future__ import annotations

from pathlib import Path

import yaml

# what any config file, preset or registry of this project holds, many times over
MAX_YAML_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 32
MAX_VALUES = 200_000
# libyaml's parser where PyYAML was built with it (about seven times faster than the pure-Python
# one, which every Snakemake invocation pays for through the registry and the config files):
# the same safe constructor; libyaml itself stops past 1000 levels of nesting
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class TooLarge(ValueError):
    """Input past the stated bounds; the message names it, the bound and what to do."""


def check_size(value, where: str, max_values: int = MAX_VALUES, max_depth: int = MAX_DEPTH):
    """`value` (loaded YAML or JSON) when it is within the bounds; TooLarge naming the first
    place past them otherwise.  Walked without recursion, each alias counted where it stands,
    stopping at the first value past the bound (so a bomb costs no more than the bound)."""
    stack = [(value, where, 0)]
    seen = 0
    while stack:
        node, at, depth = stack.pop()
        seen += 1
        if seen > max_values:
            raise TooLarge(
                f"{where} holds more than {max_values:,} values once its YAML aliases (*name) "
                f"are counted where they stand (past it at {at}): an alias that repeats an "
                "alias many times over (a YAML bomb); write the values out, or fewer of them"
            )
        if depth > max_depth:
            raise TooLarge(
                f"{where} is nested more than {max_depth} levels deep (at {at}); no key of this "
                "project's files nests that far: the file is damaged or not one of ours"
            )
        if isinstance(node, dict):
            stack.extend((v, f"{at}.{k}", depth + 1) for k, v in node.items())
        elif isinstance(node, (list, tuple)):
            stack.extend((v, f"{at}[{i}]", depth + 1) for i, v in enumerate(node))
    return value


def load_yaml(source: str | Path, what: str | None = None, loader=SAFE_LOADER, text=None):
    """The YAML document at `source` (or `text`, named `source`), loaded safely within the
    bounds above: TooLarge naming it where it is past them; yaml.YAMLError as PyYAML raises it
    for a document that is no YAML."""
    name = what or str(source)
    if text is None:
        path = Path(source)
        size = path.stat().st_size
        if size > MAX_YAML_BYTES:
            raise TooLarge(
                f"{name} is {size:,} bytes, past the {MAX_YAML_BYTES:,} a YAML file of this "
                "project may be: not one of ours, or damaged"
            )
        text = path.read_text()
    elif len(text) > MAX_YAML_BYTES:
        raise TooLarge(f"{name} is {len(text):,} characters, past the {MAX_YAML_BYTES:,} allowed")
    try:
        loaded = yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader or its subclass
    except (yaml.YAMLError, RecursionError) as err:
        # too deep for the parser: libyaml's own limit (a YAMLError), or Python's recursion
        if isinstance(err, yaml.YAMLError) and "maximum nesting depth" not in str(err):
            _python_parsers_words(text, err)
        raise TooLarge(
            f"{name} is nested too deeply for the YAML parser (more than {MAX_DEPTH} levels is "
            "never one of this project's files): damaged or not one of ours"
        ) from None
    return check_size(loaded, name)


def _python_parsers_words(text: str, err: yaml.YAMLError):
    """Raises the error PyYAML's own parser gives for `text` where it gives one: libyaml's
    words are vaguer ("did not find expected ','" where PyYAML says what it found instead),
    and a message about a user's file is read more often than it is made.  `err` otherwise."""
    if isinstance(err, yaml.MarkedYAMLError):
        try:
            yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506
        except RecursionError:
            pass
    raise err
