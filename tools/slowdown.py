"""A deliberate slowdown of tiled_guarded for the edit-loop check (lab/gpu.sh compare): a
second pass over each shared-memory tile into a second accumulator, which the result then adds
and subtracts (exact for the finite inputs of the int09 distribution, so the kernel still
verifies). Usage: python3 tools/slowdown.py kernels/05_tiled_guarded.cu"""

import sys
from pathlib import Path

path = Path(sys.argv[1])
src = path.read_text()
loop = "        for (int k = 0; k < TILE; ++k) tmp += sA[ty][k] * sB[k][tx];\n"
assert loop in src, f"{path}: the inner loop is not where tools/slowdown.py expects it"
src = src.replace("    elem_t tmp = 0;\n", "    elem_t tmp = 0, extra = 0;\n", 1)
src = src.replace(
    loop,
    loop
    + "#pragma unroll\n"
    + "        for (int k = 0; k < TILE; ++k) extra += sA[(ty + 1) % TILE][k] * sB[k][(tx + 1) % TILE];\n",
)
src = src.replace(
    "store_result(C, (long long)row * ldc + col, tmp, accumulate)",
    "store_result(C, (long long)row * ldc + col, tmp + extra - extra, accumulate)",
)
path.write_text(src)
print(f"{path}: slowed down (second pass over each tile)")
