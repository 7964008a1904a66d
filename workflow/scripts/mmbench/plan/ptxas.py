"""Parser for the resource report that `nvcc -Xptxas -v` prints (registers, shared memory,
spills, stack) for each kernel entry point."""

from __future__ import annotations

import re

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_BARRIERS = re.compile(r"used (\d+) barriers")
_CMEM = re.compile(r"(\d+) bytes cmem\[0\]")

FIELDS = (
    "function",
    "arch",
    "registers",
    "shared_bytes",
    "stack_bytes",
    "spill_store_bytes",
    "spill_load_bytes",
    "barriers",
    "cmem0_bytes",
)


def parse_ptxas(text: str) -> list[dict]:
    """One dict per entry function found in a ptxas -v report, with the FIELDS keys."""
    records: list[dict] = []
    cur: dict | None = None
    for line in text.splitlines():
        if m := _ENTRY.search(line):
            cur = dict.fromkeys(FIELDS, 0)
            cur.update(function=m.group(1), arch=m.group(2))
            records.append(cur)
            continue
        if cur is None:
            continue
        if m := _PROPS.search(line):
            cur["stack_bytes"], cur["spill_store_bytes"], cur["spill_load_bytes"] = map(
                int, m.groups()
            )
        if m := _USED.search(line):
            cur["registers"] = int(m.group(1))
            if s := _SMEM.search(line):
                cur["shared_bytes"] = int(s.group(1))
            if b := _BARRIERS.search(line):
                cur["barriers"] = int(b.group(1))
            if c := _CMEM.search(line):
                cur["cmem0_bytes"] = int(c.group(1))
    return records
