"""Snakemake job: the figures and tables this run's data cannot make, one line each with the
reason."""

import html
import sys

from mmbench.core.tables import atomic_write_text


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    lines = [f"{kind} {name} not made: {why}" for kind, name, why in sm.params.left]
    atomic_write_text(sm.output.txt, "\n".join(lines) + "\n")
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    atomic_write_text(
        sm.output.html,
        "<html><head><meta charset='utf-8'><title>Outputs left out</title></head>"
        f"<body><h3>Figures and tables left out</h3><ul>{items}</ul></body></html>",
    )


main(snakemake)  # noqa: F821
