"""The work units of a launch that splits k, as the host works them out: how many output tiles
run whole and how many ways each of the others splits along k.  The registry's `shape_facts`
call these functions by name (core/expressions.py); the device's side of the same split, which
k-tiles a unit sums and which unit adds the partial sums, is kernels/split_k.cuh and the
persistent skeleton's Schedule (kernels/persistent.cuh).

Three policies, one per kind of kernel:

- `few_tiles_splits`: every tile split where the tiles are fewer than the blocks (or clusters)
  that run at once: as many ways as fit beside the tiles (the persistent bfloat16 rungs);
- `tail_tiles` and `tail_split_ways`: only the tiles past the last whole wave split, where the
  tiles fill fewer than `FULL_WAVES` waves (the persistent TF32 and FP64 rungs);
- `tail_splits`: the ways that end a launch soonest by a model of its last wave (warptile_db's
  rows of tiles, which are not persistent), at most `most_splits` of them;
- `stream_k_grid`, `stream_k_head` and `stream_k_workers`: stream-K's workers (its grid), its
  whole tiles and the workers that share the others' k-loops evenly (kernels/stream_k.cuh,
  whose rule the last two repeat for the host).

A split is at least `LEAST_DEPTH` deep along k and there are at most `MOST_SPLITS` of a tile."""

from __future__ import annotations

# ways a tile splits at most (the workspace holds that many partial sums)
MOST_SPLITS = 16
# k of a split at least: shorter ones cost more in partial sums than they add
LEAST_DEPTH = 256
# a launch of this many waves or more splits nothing: its last wave is short beside them
FULL_WAVES = 8


def cdiv(a: int, b: int) -> int:
    """Ceiling division of non-negative integers."""
    return -(-a // b)


def few_tiles_splits(tiles: int, slots: int, k: int, least: int = LEAST_DEPTH) -> int:
    """The ways each of `tiles` tiles splits along k on `slots` blocks (or clusters) at a time:
    as many as fit beside the tiles (slots // tiles), each at least `least` deep (LEAST_DEPTH;
    a kernel whose partial sums are few per k-step, skinny_simt, passes less), at most
    MOST_SPLITS; 1 where the tiles fill the slots."""
    return max(1, min(MOST_SPLITS, slots // max(1, tiles), k // max(1, least)))


def tail_tiles(tiles: int, wave: int) -> int:
    """The tiles past the last whole wave of `wave` blocks (or clusters), where the tiles fill
    fewer than FULL_WAVES waves (all of them where they fill none); 0 otherwise."""
    return tiles % wave if tiles < FULL_WAVES * wave else 0


def most_splits(k: int) -> int:
    """The most ways a tile of depth k may split: each at least LEAST_DEPTH deep, at most
    MOST_SPLITS (tail_split_ways' bound, and tail_splits' `most`)."""
    return min(MOST_SPLITS, k // LEAST_DEPTH)


def tail_split_ways(tail: int, wave: int, k: int) -> int:
    """The ways each of `tail` tiles (tail_tiles) splits along k: as many as fit in a wave
    beside them, at most most_splits(k); 1 where there is no tail."""
    if tail <= 0:
        return 1
    return max(1, min(wave // tail, most_splits(k)))


def tail_splits(head: int, tail: int, wave: int, ktiles: int, most: int, cost: int) -> int:
    """The ways s (1 to `most`, at most 64) to split each of `tail` tiles of `ktiles` k-tiles,
    run after `head` whole tiles on `wave` blocks at a time, that end the launch soonest
    (`last_wave_end`); the fewest splits where several end as soon, 1 where there is no tail."""
    if tail <= 0 or wave <= 0 or ktiles <= 0:
        return 1
    ends = {s: last_wave_end(head, tail, wave, ktiles, s, cost)
            for s in range(1, min(64, max(1, most)) + 1)}  # fmt: skip
    return min(ends, key=lambda s: (ends[s], s))


def last_wave_end(head: int, tail: int, wave: int, ktiles: int, splits: int, cost: int) -> int:
    """When a launch of `head` whole tiles then `tail` tiles split `splits` ways along their
    `ktiles` k-tiles ends, in k-tiles' time, on `wave` blocks at a time that each take the next
    unit as they come free (the hardware's order): a whole tile takes ktiles + cost (a unit's
    fixed cost, its first loads and its stores), a split unit cdiv(ktiles, splits) + cost.  The
    head fills whole rounds and `head % wave` blocks of one more (free at t1), the other
    blocks are free at t0; the units go to the blocks as they free, so the launch ends at the
    first time by which the blocks can have run them all."""
    whole, unit, units = ktiles + cost, cdiv(ktiles, splits) + cost, tail * splits
    rounds, rest = divmod(head, wave)
    t0, t1 = rounds * whole, (rounds + 1) * whole

    def capacity(t: int) -> int:
        return (wave - rest) * ((t - t0) // unit) + rest * max(0, (t - t1) // unit)

    enough = cdiv(units, wave) + cdiv(whole, unit) + 1  # unit ends past t1 that surely suffice
    times = [t0 + j * unit for j in range(1, enough + 1)] + [t1 + j * unit for j in range(enough)]
    end = min(t for t in times if capacity(t) >= units)
    return max(end, t1 if rest else t0)


def stream_k_grid(tiles: int, ktiles: int, bk: int, slots: int, chosen: int = 0) -> int:
    """Stream-K's workers (blocks, or clusters), the launch's grid: one a slot (the
    multiprocessors, or the blocks or clusters they hold at once), no more than the tiles where
    they are more, nor than the shares of LEAST_DEPTH of k that the tiles' `ktiles` k-tiles,
    each `bk` deep, make where they are fewer; at least one.  `chosen` (the launch's `workers`:
    the calibrated model's choice, core/timemodel.py `worker_choices`), where not 0, is the
    grid instead, at most `slots`: the kernel works its whole tiles and shares out from
    whatever grid it is given."""
    if chosen > 0:
        return min(chosen, max(1, slots))
    return max(1, min(slots, max(tiles, tiles * ktiles * bk // LEAST_DEPTH)))


def stream_k_head(tiles: int, ktiles: int, workers: int) -> int:
    """Stream-K's whole tiles (kernels/stream_k.cuh, the same rule): all of them where they fill
    the workers an exact number of times (or have no k-tiles); otherwise all but the last whole
    wave and the part-wave after it, which are shared (a share is then between one and two
    tiles' k-loops); none where they fill no wave."""
    waves, rest = divmod(tiles, workers)
    if rest == 0 or ktiles == 0:
        return tiles
    return (waves - 1) * workers if waves > 0 else 0


def stream_k_workers(tiles: int, ktiles: int, head: int, grid_workers: int, bk: int) -> int:
    """The workers that share the tiles past `head`, their k-tiles `bk` deep: all of the grid's,
    or fewer where the shares would be shallower than LEAST_DEPTH (at least one where there is
    anything to share)."""
    iterations = (tiles - head) * ktiles
    least = max(1, LEAST_DEPTH // bk)
    most = max(iterations // least, int(iterations > 0))  # one share where any k-tile is left
    return min(most, grid_workers)


# what the registry's expressions may call
FUNCTIONS = {
    "few_tiles_splits": few_tiles_splits,
    "tail_tiles": tail_tiles,
    "tail_split_ways": tail_split_ways,
    "most_splits": most_splits,
    "tail_splits": tail_splits,
    "stream_k_grid": stream_k_grid,
    "stream_k_head": stream_k_head,
    "stream_k_workers": stream_k_workers,
}
