#!/usr/bin/env bash
# Planted inputs (issue "Nothing lost, nothing planted"): a second local user makes this user's
# inputs cache folder first (/dev/shm/mmbench-inputs-<uid>) and plants all-zero arrays under
# the names of the default experiment's groups; the default experiment then runs: its jobs say
# the folder is not used, draw their own inputs and verify.  Then the GPU tests of the shared
# inputs and the served worker.
# Usage (repository root, wheels installed, as root so that useradd works): lab/gpu.sh planted OUT
set -uo pipefail
out=$1
mkdir -p "$out"
victim=$(id -u)
cache=/dev/shm/mmbench-inputs-$victim
rm -rf "$cache" results .snakemake
id mallory >/dev/null 2>&1 || useradd --no-create-home mallory || { echo "useradd failed"; exit 1; }
runuser -u mallory -- mkdir -m 0755 "$cache"
# the names the default experiment's groups are kept under (input_cache.key), all zeros
python3 - "$cache" <<'PY' > "$out/planted.txt"
import sys
import numpy as np
from mmbench.core.registry import load_registry
from mmbench.service import input_cache
from mmbench.plan import plan as mmplan
from mmbench.plan.config import validate
import yaml
cfg = validate(yaml.safe_load(open("config/config.yaml")), load_registry())
p = mmplan.expand(cfg, load_registry(), "sm_90")
seen = set()
for confs in p.runs.values():
    for c in confs:
        k = input_cache.key(c)
        if k in seen:
            continue
        seen.add(k)
        print(f"{sys.argv[1]}/{k}.a.npy {c.m}x{c.k} {c.dtype}")
        print(f"{sys.argv[1]}/{k}.b.npy {c.k}x{c.n} {c.dtype}")
PY
while read -r path shape dtype; do
  runuser -u mallory -- python3 -c "
import numpy as np, sys
m, k = map(int, sys.argv[2].split('x'))
size = {'float32': 4, 'float64': 8, 'int32': 4, 'bfloat16': 2, 'float16': 2}.get(sys.argv[3], 4)
np.save(sys.argv[1], np.zeros((m, k), f'u{size}'))" "$path" "$shape" "$dtype"
done < "$out/planted.txt"
echo "planted $(wc -l < "$out/planted.txt") arrays in $cache, owned by $(stat -c %U "$cache")"
unset MMBENCH_INPUTS_CACHE
start=$(date +%s)
snakemake --cores 1 > "$out/default.log" 2>&1
echo "default experiment: exit $? after $(($(date +%s) - start)) s"
grep -rh "inputs cache" results/logs "$out/default.log" 2>/dev/null | sort | uniq -c | head -5
python3 -c "
import pandas as pd
t = pd.read_csv('results/tables/timings.csv')
print(len(t), 'configurations:', t.verification.value_counts().to_dict())"
echo "still mallory's: $(stat -c %U "$cache"), files: $(ls "$cache" | wc -l)"
python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu.py -k "served or worker or shared or cache or inputs" 2>&1 | tail -5
cp results/tables/timings.csv "$out/" 2>/dev/null
rm -rf "$cache"
