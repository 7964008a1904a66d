"""The stream-K schedule (kernels/stream_k.cuh) built for the host with the real nvcc and run
here: its shares cover every k-tile once, evenly, with at most two partial segments a worker;
and the host's facts (core/schedule.py) agree with the header's."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from mmbench.core.schedule import stream_k_grid, stream_k_head, stream_k_workers

from .conftest import ROOT

pytestmark = pytest.mark.skipif(not shutil.which("nvcc"), reason="nvcc is not installed here")


@pytest.fixture(scope="module")
def check(tmp_path_factory):
    out = tmp_path_factory.mktemp("stream_k") / "stream_k_check"
    subprocess.run(["nvcc", "-std=c++17", "-O2", f"-I{ROOT / 'kernels'}", "-o", str(out),
                    str(ROOT / "tests" / "stream_k_check.cu")], check=True)  # fmt: skip
    return out


def test_every_k_tile_in_one_segment_and_the_shares_even(check):
    out = subprocess.run([str(check)], capture_output=True, text=True)
    cases, bad = out.stdout.split()[-4], out.stdout.split()[-2]
    assert out.returncode == 0 and bad == "0", out.stdout[-2000:]
    assert int(cases) >= 10000


def test_the_head_by_hand():
    """1000 tiles on 132 workers: 7 whole waves and 76 more; the first 6 waves (792 tiles) run
    whole, the last whole wave and the 76 (208 tiles, 1.58 a worker) are shared.  264 tiles
    fill two waves exactly: all whole.  16 tiles fill none: all shared, by 132 workers where they
    have 132 shares of 256 or more (16 tiles of 32 k-tiles 64 deep: 128 shares of 4 k-tiles),
    fewer where not (16 tiles of 4 k-tiles: 16 workers; 1 tile of 2: one, alone)."""
    assert stream_k_head(1000, 64, 132) == 792
    assert stream_k_head(264, 64, 132) == 264
    assert stream_k_head(16, 64, 132) == 0
    assert stream_k_head(16, 0, 132) == 16  # k = 0: nothing to share, every tile stores zeros
    assert stream_k_workers(16, 64, 0, 132, 64) == 132
    assert stream_k_workers(16, 32, 0, 132, 64) == 128
    assert stream_k_workers(16, 4, 0, 132, 64) == 16
    assert stream_k_workers(1, 2, 0, 132, 64) == 1
    assert stream_k_workers(16, 0, 16, 132, 64) == 0


def test_the_grid_by_hand():
    """4096^3 in 128 x 128 tiles (1024 tiles of 64 k-tiles 64 deep): more tiles than the 132
    multiprocessors, so 132.  18 x 152 x 2881 in FP64 tiles of 64 x 128: 1 x 2 tiles of
    cdiv(2881, 16) = 181 k-tiles 16 deep make 5792 // 256 = 22 whole shares of 256 of k, fewer
    than the 264 blocks of two a multiprocessor: 22.  One tile of 2 k-tiles 64 deep: 128 of k, no
    whole share, one worker.  No tiles at all: still one."""
    assert stream_k_grid(1024, 64, 64, 132) == 132
    assert stream_k_grid(2, 181, 16, 264) == 22
    assert stream_k_grid(1, 2, 64, 132) == 1
    assert stream_k_grid(0, 0, 64, 132) == 1
    assert stream_k_grid(200, 1, 64, 132) == 132  # more tiles than slots, however shallow


def test_a_chosen_grid_by_hand():
    """The model's choice (`workers`), where given, is the grid, at most the slots: 115 tiles
    of 47 k-tiles on 115 workers fill one wave exactly, so every tile runs whole and nobody
    shares; on 230 (two a tile) none is whole and all 230 share; 200 asked of 132 slots is
    132."""
    assert stream_k_grid(115, 47, 128, 132, 115) == 115
    assert stream_k_grid(1024, 64, 64, 132, 200) == 132
    assert stream_k_grid(4, 91, 32, 132, 28) == 28
    assert stream_k_head(115, 47, 115) == 115
    assert stream_k_workers(115, 47, 115, 115, 128) == 0
    assert stream_k_head(115, 47, 230) == 0
    assert stream_k_workers(115, 47, 0, 230, 128) == 230


def test_the_host_and_the_header_agree(check):
    """200 random launches: the whole tiles and the sharing workers as core/schedule.py works them out
    and as kernels/stream_k.cuh does."""
    rng = random.Random(76)
    cases = [(rng.randint(1, 5000), rng.randint(0, 600), rng.choice([1, 66, 78, 114, 132, 264]),
              rng.choice([8, 16, 32, 64, 128])) for _ in range(200)]  # fmt: skip
    out = subprocess.run([str(check), *(str(x) for c in cases for x in c)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    header = [tuple(map(int, line.split())) for line in out.stdout.splitlines()]
    host = [(h := stream_k_head(t, k, g), stream_k_workers(t, k, h, g, b)) for t, k, g, b in cases]
    assert header == host
