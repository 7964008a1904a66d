#!/usr/bin/env bash
# The wheels a GPU machine call carries (lab/README.md, "GPU machine"): the project's
# dependencies and its gpu extra, read from pyproject.toml, built into ./.whl by the machine's
# wheels.sh (which leaves out what the machine has), and NVIDIA's nvidia-cutlass wheel (CUTLASS's
# headers), which wheels.sh's filter of nvidia packages would leave out.  Run from the root:
#   lab/wheels.sh [WHEELS_SH]        default ../shared/gpu-machine/wheels.sh
set -euo pipefail
script=${1:-../shared/gpu-machine/wheels.sh}
mapfile -t reqs < <(python3 - <<'PY'
import tomllib
p = tomllib.load(open("pyproject.toml", "rb"))["project"]
for r in p["dependencies"] + p["optional-dependencies"]["gpu"]:
    # the machine has these (its README): snakemake comes first in wheels.sh, cutlass below
    if not r.startswith(("snakemake", "nvidia-cutlass", "cupy", "nvidia-cuda-cupti", "scipy")):
        print(r)
PY
)
"$script" "${reqs[@]}"
cutlass=$(python3 -c 'import tomllib; print(next(r for r in tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"] if r.startswith("nvidia-cutlass")))')
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl "$cutlass" 2>&1 |
  grep -v 'is ignored' || true
echo "$(ls .whl | wc -l) wheels, $(du -sh .whl | cut -f1) in .whl"
