"""Candidate edits of tiled_guarded (kernels/05_tiled_guarded.cu) for the paired comparison's
check "an edit of a real kernel that changes its time by 2-3%" (lab/gpu/paired.sh edits,
previous): each a small change a student might make, whose effect is measured, not assumed.

    python3 lab/gpu/edits.py --list
    python3 lab/gpu/edits.py EDIT ORIGINAL.cu EDITED.cu
"""

import sys
from pathlib import Path

INNER = "#pragma unroll\n        for (int k = 0; k < TILE; ++k)"
EDITS = {
    # 32-bit index arithmetic in the loads (the 64-bit products guard against overflow)
    "i32": [
        ("A[(long long)row * lda + ka]", "A[row * lda + ka]"),
        ("B[(long long)kb * ldb + col]", "B[kb * ldb + col]"),
    ],
    # the inner product over the tile unrolled 8 or 4 steps at a time instead of fully
    "unroll8": [(INNER, INNER.replace("unroll", "unroll 8"))],
    "unroll4": [(INNER, INNER.replace("unroll", "unroll 4"))],
}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--list"]:
        print(" ".join(EDITS))
        return 0
    name, original, edited = argv
    text = Path(original).read_text()
    for old, new in EDITS[name]:
        if text.count(old) != 1:
            sys.exit(f"edit {name}: {old!r} is not in {original} exactly once")
        text = text.replace(old, new)
    Path(edited).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
