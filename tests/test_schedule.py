"""The host's side of a launch that splits k (core/schedule.py): the policies by hand count,
and the facts the registry works out with them against those a real run recorded."""

from __future__ import annotations

import pandas as pd
import pytest

from mmbench.core.schedule import few_tiles_splits, most_splits, tail_split_ways, tail_tiles

from .conftest import DATA


def test_few_tiles_split_as_many_ways_as_fit_beside_them():
    """128 x 4096 x 4096 in 128 x 256 tiles: 16 tiles on 132 multiprocessors, 132 // 16 = 8
    ways fit, and k allows 4096 // 256 = 16: 8.  One tile (1 x 33 x 5000): 132 fit, k allows
    19, at most 16: 16.  k = 300 allows one split of 256 or more: 1.  132 tiles fill the GPU: 1."""
    assert few_tiles_splits(16, 132, 4096) == 8
    assert few_tiles_splits(1, 132, 5000) == 16
    assert few_tiles_splits(16, 132, 300) == 1
    assert few_tiles_splits(132, 132, 8192) == 1
    # skinny_simt's shares of at least 4 slabs of 16 (64): 30 x 169 x 470 is one tile of 32 x
    # 256, 470 // 64 = 7 ways; 19 x 4635 x 6086 is 10 tiles of 32 x 512 on 264 blocks at a
    # time: 26 fit, 95 allowed by k, at most 16
    assert few_tiles_splits(1, 264, 470, 64) == 7
    assert few_tiles_splits(10, 264, 6086, 64) == 16


def test_only_the_last_waves_tiles_split_and_only_in_a_short_launch():
    """3001^2 in 256 x 256 tiles is 12 x 12 = 144... on the recorded run 288 tiles of 256 x 128:
    two whole waves of 132 are 264, so 24 are past them, split 132 // 24 = 5 ways (k = 3001
    allows 11).  1000 tiles (fewer than 8 waves, 1056): 1000 - 7 x 132 = 76 past them, 132 // 76
    = 1 way.  2000 tiles (more than 8 waves): none split.  No tail: 1 way."""
    assert tail_tiles(288, 132) == 24 and tail_split_ways(24, 132, 3001) == 5
    assert tail_tiles(1000, 132) == 76 and tail_split_ways(76, 132, 4096) == 1
    assert tail_tiles(2000, 132) == 0
    assert tail_split_ways(0, 132, 4096) == 1
    assert tail_tiles(32, 132) == 32 and tail_split_ways(32, 132, 4096) == 4


def test_a_tile_splits_into_shares_at_least_256_deep_and_at_most_16():
    """k = 3001 holds 11 whole shares of 256 (2816); k = 255 none; k = 8192 holds 32, past the
    16 the workspace has room for."""
    assert most_splits(3001) == 11
    assert most_splits(255) == 0
    assert most_splits(8192) == 16


@pytest.mark.parametrize("table", ["h100-sweep/results/sweep/tables/timings.csv.xz"])
def test_the_registry_works_out_the_facts_a_recorded_run_launched_with(registry, table):
    """Every row of the recorded sweep (an H100, 132 multiprocessors) whose launch split k or
    could have, of the persistent rungs (warptile_db's waves read the occupancy calculator on
    the cubin, which the row does not record: test_registry counts its splits by hand): each
    fact its launch_facts recorded (TILES, WAVE, TAIL, SPLITS, HEAD), worked out again from the
    registry's shape facts, which call into core/schedule.py."""
    t = pd.read_csv(DATA / table)
    rows = t[t["launch_facts"].astype(str).str.contains("SPLITS=")]
    rows = rows[[not registry[x].uses_occupancy for x in rows["variant"]]]
    assert set(rows["variant"]) == {"persistent_bf16", "deep_bf16", "persistent_tf32", "ws_f64"}
    checked = 0
    for _, r in rows.iterrows():
        v = registry[r["variant"]]
        facts = v.shape_facts_of(v.instance(r["instance"]), int(r["m"]), int(r["n"]), int(r["k"]),
                                 sms=132)  # fmt: skip
        recorded = dict(x.split("=") for x in r["launch_facts"].split())
        for name, value in recorded.items():
            assert facts[name] == int(value), (r["variant"], r["m"], r["n"], r["k"], name)
            checked += 1
    assert checked >= 250, checked
