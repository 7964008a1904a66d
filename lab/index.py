"""The lab notebook's index: one line per entry of lab/entries/, newest first, written into
lab/README.md between its index markers.

    python lab/index.py          # rewrite the index
    python lab/index.py --check  # exit 1 where the index is not the entries' (lab/checks)"""

from __future__ import annotations

import re
import sys
from pathlib import Path

LAB = Path(__file__).resolve().parent
BEGIN, END = "<!-- index:begin -->", "<!-- index:end -->"


def field(text: str, name: str) -> str:
    m = re.search(rf"^- {name}: (.*)$", text, re.MULTILINE)
    return m.group(1).strip() if m else ""


def lines() -> list[str]:
    rows = []
    for path in sorted((LAB / "entries").glob("*.md")):
        text = path.read_text()
        title = text.splitlines()[0].lstrip("# ").strip()
        gpu = re.sub(r"\s*\(GPU-[^)]*\)", "", field(text, "GPU"))
        rows.append(
            (
                field(text, "date"),
                f"| {field(text, 'date')} | [{title}](entries/{path.name}) | {gpu} |",
            )
        )
    rows.sort(key=lambda r: r[0], reverse=True)
    return ["| date | entry | GPU |", "|---|---|---|", *(r for _, r in rows)]


def rewritten(readme: str) -> str:
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + "\n" + "\n".join(lines()) + "\n" + END + tail


def main(argv: list[str]) -> int:
    readme = LAB / "README.md"
    text = readme.read_text()
    new = rewritten(text)
    if "--check" in argv:
        if new != text:
            print("lab/README.md's index is not the entries': run python lab/index.py")
            return 1
        return 0
    readme.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
