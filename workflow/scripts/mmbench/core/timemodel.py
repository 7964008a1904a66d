"""Which instantiation of a rung to run at a product: a time model calibrated by the tune preset.

A launch's work is a list of units (whole output tiles, and the shares of split ones), dealt out
in turn to its workers (the persistent kernels' clusters, or a grid kernel's blocks that fit the
GPU at once; stream-K: the whole tiles so, and even shares of the others' k-tiles).  The kernel
takes as long as its busiest worker, whose time is its k-tiles at the instantiation's own rate,
a cost for each unit it starts (the prologue and the epilogue's stores), more for a split one,
and its partial sums' traffic; blocks that share a multiprocessor (a grid kernel's, or a
persistent kernel of more than one block a multiprocessor, ws_f64's BLOCKS) share its time, so
the k-tiles of the busiest multiprocessor (its blocks' together) cost too:

    time = fixed + per_ktile x k-tiles + per_sm_ktile x k-tiles of the busiest multiprocessor
           + per_unit x whole units + per_split x split units
           + per_byte x bytes of partial sums moved (its split units' own, written, and the
             shares of the last tile it finishes, read back)

A block alone on its multiprocessor pays per_ktile + per_sm_ktile a k-tile; B blocks side by
side, per_ktile + B x per_sm_ktile each.  The first five costs are an instantiation's own (its
tile, its pipeline depth, its cluster); the cost per byte is one figure for every instantiation
of a rung.  All are fitted together to the instantiations' times at the tune preset's shapes,
each time weighted by its inverse (so that a small product counts as much as a large one), none
negative (SciPy's non-negative least squares).  A grid kernel's workers are the blocks a
multiprocessor holds at once times the multiprocessors: the occupancy its runs recorded (the
shape fact WAVE, the blocks at a time, which the launch works out from the cubin), or where
they recorded none, the count (1 to MOST_BLOCKS_PER_SM) that fits its times best.  The
model sees the schedule the registry's shape facts choose at each product (its split of k, the
whole tiles before a split tail: core/schedule.py), so a tile that leaves most multiprocessors
idle, or a split whose shares are shallow, costs what the launch will cost.

`calibrate` turns the tune preset's timings into one row per instantiation (CALIBRATION_COLUMNS:
the calibration table holds these, not one row per tuning shape); `choose` reads them, and for
a stream-K rung chooses its grid too (`worker_choices`: the entry's rule, or fewer workers, as
many as the tiles or a whole number a tile, where a split costs more than it saves).
lab/benchmarks/choice_model.py sets the choice against the nearest tuning shape's on recorded
runs, each shape held out in turn."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from mmbench.core.schedule import MOST_SPLITS, cdiv

# a calibration row: the GPU model's multiprocessors, the instantiation, its costs in
# microseconds (Costs) and the blocks a multiprocessor holds (grid kernels; 1 for the persistent
# ones), the launches it was fitted at (MxNxK, and MxNxK@W at a grid of W workers; space-
# separated; SAME_PRODUCTS_AS below) and how well its rung's fit fits
COST_COLUMNS = ["fixed_us", "ktile_us", "sm_ktile_us", "unit_us", "split_us", "byte_us"]
CALIBRATION_COLUMNS = [
    "gpu_name", "sms", "variant", "dtype", "instance", *COST_COLUMNS,
    "blocks_per_sm", "shapes", "fitted_at", "worst_fit",
]  # fmt: skip
MOST_BLOCKS_PER_SM = 4
# a `fitted_at` that begins "=INSTANCE" takes the products (the launches without "@W") of the
# row of that instantiation of the same GPU model and variant: a kept table writes each rung's
# list of products once (compact_fitted), and reading it gives every row its own (expand_fitted)
SAME_PRODUCTS_AS = "="


@dataclass(frozen=True)
class Work:
    """A launch's units and workers: the first `head` of `tiles` units are whole tiles of
    `ktiles` k-tiles; each of the other tiles is `splits` units (split_range's shares); unit u
    goes to worker u % workers.  Stream-K (`sharers` > 0): the tiles past the head are not
    split a whole number of ways; their k-tiles, laid end to end, are cut into `sharers` even
    shares, one for each of the first workers (kernels/stream_k.cuh).  `sms`: the
    multiprocessors the workers are dealt over where several share one (a grid kernel's blocks,
    or a persistent kernel's BLOCKS), worker j on multiprocessor j % sms (as the GPU deals a
    grid's blocks); 0 where each worker has its own."""

    tiles: int
    head: int
    splits: int
    ktiles: int
    workers: int
    sharers: int = 0
    sms: int = 0

    def busiest(self) -> tuple[int, int, int]:
        """(k-tiles, whole units, split units) of the worker with the most k-tiles (the most
        units on a tie); stream-K's split units are the busiest worker's segments (the tiles
        its share touches)."""
        return self.loads()[:3]

    def busiest_sm(self) -> int:
        """The k-tiles of the multiprocessor with the most, its workers' together (the
        busiest worker's where each worker has its own multiprocessor)."""
        return self.loads()[3]

    def loads(self) -> tuple[int, int, int, int]:
        """busiest() and busiest_sm() together, from one dealing of the units."""
        kt, units, split = self._per_worker()
        return (*self._busiest(kt, units, split), self._busiest_sm(kt))

    @staticmethod
    def _busiest(kt, units, split) -> tuple[int, int, int]:
        if len(kt) == 0:
            return 0, 0, 0
        import numpy as np

        # the first worker with the most k-tiles and, among those, the most units
        tied = np.flatnonzero(kt == kt.max())
        top = tied[np.argmax(units[tied])]
        return int(kt[top]), int(units[top] - split[top]), int(split[top])

    def _busiest_sm(self, kt) -> int:
        import numpy as np

        if len(kt) == 0:
            return 0
        if not self.sms or self.sms >= len(kt):
            return int(kt.max())
        return int(np.bincount(np.arange(len(kt)) % self.sms, weights=kt).max())

    def _per_worker(self):
        """Per worker: its k-tiles, its units and its split units (stream-K: its whole tiles
        and segments, the segments counted as split units)."""
        import numpy as np

        w = max(1, self.workers)
        if self.sharers:
            whole = np.bincount(np.arange(self.head) % w, minlength=w)
            kt = whole * self.ktiles
            rest = (self.tiles - self.head) * self.ktiles
            i = np.arange(self.sharers)
            start, end = i * rest // self.sharers, (i + 1) * rest // self.sharers
            seg = np.zeros(w, dtype=np.int64)
            seg[: self.sharers] = np.where(
                end > start, (end - 1) // max(1, self.ktiles) - start // max(1, self.ktiles) + 1, 0
            )
            kt[: self.sharers] += end - start
            return kt, whole + seg, seg
        split_units = (self.tiles - self.head) * self.splits
        units = self.head + split_units
        if units == 0:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        depth = np.full(units, self.ktiles, dtype=np.int64)
        if split_units:
            s = np.arange(split_units) % self.splits
            share = (s + 1) * self.ktiles // self.splits - s * self.ktiles // self.splits
            depth[self.head :] = share
        owner = np.arange(units) % w
        ktiles = np.bincount(owner, weights=depth, minlength=w)
        count = np.bincount(owner, minlength=w)
        split = np.bincount(owner[self.head :], minlength=w)
        return ktiles, count, split


def _facts(text) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"\b([A-Z_]+)=(\d+)", str(text or ""))}


def _persistent(variant) -> bool:
    """A persistent kernel sizes its grid by the GPU (its workers are its blocks); a grid
    kernel launches a block per unit and the GPU runs as many at once as fit."""
    return any(re.search(r"\bsms\b|\bWAVE\b|\bCLUSTERS\b", str(e)) for e in variant.grid)


def work_of(facts: dict, names: dict, grid_blocks: int, persistent: bool, slots: int,
            per_sm: int = 1) -> Work:  # fmt: skip
    """The Work of a launch from its shape facts (TILES, SPLITS, and HEAD, or SPLIT_ROWS and
    COLS where a grid kernel splits whole rows of blocks; neither: all tiles split; stream-K:
    HEAD and WORKERS, the tiles a sharer's tile is shared among taken as its splits), the
    variant's names (BK, CLUSTER, k) and its grid; `slots`: a grid kernel's blocks at once,
    `per_sm` of them on each multiprocessor."""
    cluster = int(names.get("CLUSTER", 1))
    tiles = facts["TILES"] // cluster
    ktiles = cdiv(int(names["k"]), int(names["BK"]))
    # BLOCKS: a persistent kernel's blocks on each multiprocessor (ws_f64, streamk_f64)
    blocks = int(names.get("BLOCKS", 1))
    sms = int(names.get("sms", 0)) if persistent and blocks > 1 else 0
    if "WORKERS" in facts:  # stream-K: its clusters, the whole tiles and the sharing workers
        sharers = facts["WORKERS"] if tiles > facts["HEAD"] else 0
        share = (tiles - facts["HEAD"]) * ktiles // max(1, sharers)
        ways = min(sharers, cdiv(ktiles, max(1, share)) + 1) if sharers else 1
        workers = max(1, grid_blocks // cluster)
        return Work(tiles, facts["HEAD"], max(1, ways), ktiles, workers, sharers, sms=sms)
    splits = max(1, facts.get("SPLITS", 1))
    if splits == 1:
        head = tiles
    elif "HEAD" in facts:
        head = facts["HEAD"]
    elif "SPLIT_ROWS" in facts and "COLS" in names:
        head = facts["SPLIT_ROWS"] * int(names["COLS"])
    else:
        head = 0
    if persistent:
        return Work(tiles, head, splits, ktiles, max(1, grid_blocks // cluster), sms=sms)
    sms = slots // per_sm if per_sm > 1 else 0
    return Work(tiles, head, splits, ktiles, max(1, min(grid_blocks, slots)), sms=sms)


def launch_work(variant, params: dict, m: int, n: int, k: int, sms: int, blocks_per_sm: int = 1,
                workers: int = 0):  # fmt: skip
    """The Work the registry's launch of `params` at m x n x k does on `sms` multiprocessors
    (a grid kernel holding `blocks_per_sm` blocks on each; `workers`: a stream-K grid chosen,
    0 the entry's own)."""
    return _launch(variant, params, m, n, k, sms, blocks_per_sm, workers)[0]


def _launch(variant, params, m, n, k, sms, blocks_per_sm, workers=0):
    names = variant.names(params, m=m, n=n, k=k, sms=sms, blocks_per_sm=blocks_per_sm,
                          workers=workers)  # fmt: skip
    facts = {name: names[name] for name, _ in variant.shape_facts}
    grid, _ = variant._grid_and_block(names)
    persistent = _persistent(variant)
    work = work_of(facts, names, math.prod(grid), persistent, sms * blocks_per_sm, blocks_per_sm)
    return work, names


def recorded_work(variant, params: dict, row, sms: int, blocks_per_sm: int) -> Work:
    """The Work a recorded timing row ran: its own launch facts and grid (the split policy of
    the sources it ran, which may not be today's), the variant's names for BK and CLUSTER."""
    m, n, k = int(row["m"]), int(row["n"]), int(row["k"])
    names = variant.names(params, m=m, n=n, k=k, sms=sms, blocks_per_sm=blocks_per_sm)
    grid = math.prod(int(x) for x in str(row["grid"]).split("x"))
    return work_of(_facts(row["launch_facts"]) or {"TILES": grid}, names, grid,
                   _persistent(variant), sms * blocks_per_sm, blocks_per_sm)  # fmt: skip


@dataclass(frozen=True)
class Load:
    """What the busiest worker does: its k-tiles, its whole units, its split units, and the
    bytes of partial sums it moves (each split unit's own written, and the S shares of the last
    tile it finishes read back: split_k.cuh); and the busiest multiprocessor's k-tiles."""

    ktiles: int
    whole: int
    split: int
    partial_bytes: int
    sm_ktiles: int = 0


def load_of(work: Work, tile_bytes: int) -> Load:
    kt, whole, split, sm_kt = work.loads()
    moved = (split + work.splits) * tile_bytes if split else 0
    return Load(kt, whole, split, moved, sm_kt)


def tile_bytes_of(variant, params: dict, names: dict | None = None) -> int:
    """The bytes of one tile's partial sums (BM x BN accumulators: float, double for FP64);
    `names`: the variant's names for `params`, where already worked out."""
    names = names or variant.names(params)
    acc = 8 if params.get("dtype") == "float64" else 4
    return int(names["BM"]) * int(names["BN"]) * acc


@dataclass(frozen=True)
class Costs:
    """An instantiation's costs in microseconds: fixed, per k-tile, per whole unit and per
    split unit of the busiest worker, and per byte of partial sums it moves (one figure for
    every instantiation of a rung); a grid kernel's blocks per multiprocessor; per k-tile of
    the busiest multiprocessor."""

    fixed_us: float
    ktile_us: float
    unit_us: float
    split_us: float
    byte_us: float
    blocks_per_sm: int
    sm_ktile_us: float = 0.0

    def own(self) -> tuple[float, ...]:
        """The instantiation's own costs, in the order of what they multiply (_terms)."""
        return self.fixed_us, self.ktile_us, self.sm_ktile_us, self.unit_us, self.split_us

    def time_us(self, load: Load) -> float:
        own = sum(c * x for c, x in zip(self.own(), _terms(load), strict=True))
        return own + self.byte_us * load.partial_bytes

    @classmethod
    def of(cls, costs: dict, blocks_per_sm: int) -> Costs:
        """From a calibration row's costs (COST_COLUMNS, by name)."""
        return cls(**{c: float(costs[c]) for c in COST_COLUMNS}, blocks_per_sm=int(blocks_per_sm))


def _blocks_per_sm(variant, params: dict, rows, sms: int) -> int:
    """A grid kernel's blocks per multiprocessor: the one its rows recorded (WAVE, the blocks at
    a time, over the multiprocessors: the same in every row), or where they recorded none, the
    count from 1 to MOST_BLOCKS_PER_SM whose busiest worker's and multiprocessor's k-tiles and
    units explain its times best (a persistent kernel: 1)."""
    import numpy as np
    from scipy.optimize import nnls

    if _persistent(variant):
        return 1
    waves = {_facts(r["launch_facts"]).get("WAVE") for r in rows}
    if len(waves) == 1 and None not in waves and next(iter(waves)) >= sms:
        return next(iter(waves)) // sms
    t = np.asarray([float(r["kernel_ms"]) for r in rows]) * 1e3
    best, best_err = 1, math.inf
    for o in range(1, MOST_BLOCKS_PER_SM + 1):
        a = np.asarray([_terms(load_of(recorded_work(variant, params, r, sms, o), 0))
                        for r in rows]) / t[:, None]  # fmt: skip
        coef, _ = nnls(a, np.ones(len(t)))
        err = float(np.max(np.abs(a @ coef - 1.0)))
        if err < best_err - 1e-12:
            best, best_err = o, err
    return best


def _terms(ld: Load) -> tuple:
    """What an instantiation's own costs multiply: fixed, k-tiles, the multiprocessor's
    k-tiles, whole units, split units."""
    return 1.0, ld.ktiles, ld.sm_ktiles, ld.whole, ld.split


def fit_rung(variant, runs: dict[str, list], sms: int) -> tuple[dict[str, Costs], float]:
    """Each instantiation's Costs from its timing rows (runs: instance -> rows with m, n, k,
    grid, launch_facts and kernel_ms), fitted together: five costs of each instantiation's own
    and the cost per byte of partial sums shared by all, none negative, minimising the squared
    relative error (SciPy's nnls); and the worst relative error of the fit."""
    import numpy as np
    from scipy.optimize import nnls

    names = sorted(runs)
    own = 5
    cols, t, blocks = [], [], {}
    for j, inst in enumerate(names):
        params = variant.instance(inst)
        o = blocks[inst] = _blocks_per_sm(variant, params, runs[inst], sms)
        tb = tile_bytes_of(variant, params)
        for r in runs[inst]:
            ld = load_of(recorded_work(variant, params, r, sms, o), tb)
            row = np.zeros(own * len(names) + 1)
            row[own * j : own * (j + 1)] = _terms(ld)
            row[-1] = ld.partial_bytes
            cols.append(row)
            t.append(float(r["kernel_ms"]) * 1e3)
    tt = np.asarray(t)
    a = np.asarray(cols) / tt[:, None]
    coef, _ = nnls(a, np.ones(len(tt)))
    worst = float(np.max(np.abs(a @ coef - 1.0)))
    out = {}
    for j, inst in enumerate(names):
        fixed, ktile, sm_ktile, unit, split = map(float, coef[own * j : own * (j + 1)])
        out[inst] = Costs(fixed_us=fixed, ktile_us=ktile, sm_ktile_us=sm_ktile, unit_us=unit,
                          split_us=split, byte_us=float(coef[-1]), blocks_per_sm=blocks[inst])  # fmt: skip
    return out, worst


def calibrate(timings, registry, sms: dict[str, int] | None = None):
    """CALIBRATION_COLUMNS rows from a tune run's timings: per GPU model, variant and element
    type, each instantiation that passed verification at three or more shapes (and that the
    registry still builds), its costs fitted
    with the others' (fit_rung) on its fastest kernel time at each shape (bursts and sustained
    alike).  `sms`: multiprocessors per GPU model (default: sms_of the timings)."""
    import pandas as pd

    needed = {"grid", "launch_facts", "kernel_ms", "instance", "verification", "backend"}
    if timings.empty or not needed <= set(timings.columns):
        return pd.DataFrame(columns=CALIBRATION_COLUMNS)
    sms = sms_of(timings, registry) if sms is None else sms
    d = timings[(timings.verification == "PASS") & (timings.backend == "cubin")]
    d = d[d.variant.isin(list(registry))]
    out = []
    for (gpu, name, dtype), part in d.groupby(["gpu_name", "variant", "dtype"], sort=True):
        v = registry[name]
        if not v.shape_facts or gpu not in sms:
            continue
        # a launch: an instantiation at a product and grid (the row's `workers`, where it has one)
        launch = ["instance", "m", "n", "k", *(["workers"] if "workers" in part else [])]
        firsts = part.sort_values("kernel_ms").drop_duplicates(launch)
        runs = {inst: [r for _, r in rows.iterrows()]
                for inst, rows in firsts.groupby("instance")
                if len(rows) >= 3 and inst in v.by_slug and not v.rejected(v.by_slug[inst])}  # fmt: skip
        if not runs:
            continue
        costs, worst = fit_rung(v, runs, sms[gpu])
        for inst, c in costs.items():
            out.append(dict(
                gpu_name=gpu, sms=sms[gpu], variant=name, dtype=dtype, instance=inst,
                fixed_us=round(c.fixed_us, 4), ktile_us=round(c.ktile_us, 6),
                sm_ktile_us=round(c.sm_ktile_us, 6), unit_us=round(c.unit_us, 4), split_us=round(c.split_us, 4),
                byte_us=round(c.byte_us, 9), blocks_per_sm=c.blocks_per_sm,
                shapes=len(runs[inst]),
                fitted_at=" ".join(sorted(fitted_launch(r) for r in runs[inst])),
                worst_fit=round(worst, 4),
            ))  # fmt: skip
    return pd.DataFrame(out, columns=CALIBRATION_COLUMNS)


def compact_fitted(table):
    """The calibration rows with each `fitted_at` whose products (the launches without a grid)
    are those of an earlier row of the same GPU model and variant written as "=INSTANCE" of
    that row, then its own launches at a grid: the same table, each list of products written
    once.  expand_fitted undoes it."""
    out = table.copy()
    first: dict[tuple, str] = {}  # (GPU model, variant, products) -> the first row's instance
    cells = []
    for r in out.itertuples(index=False):
        launches = r.fitted_at.split() if isinstance(r.fitted_at, str) else []
        products = " ".join(x for x in launches if "@" not in x)
        grids = [x for x in launches if "@" in x]
        key = (r.gpu_name, r.variant, products)
        if key in first and products:
            cells.append(" ".join([SAME_PRODUCTS_AS + first[key], *grids]))
        else:
            first.setdefault(key, r.instance)
            cells.append(r.fitted_at)
    out["fitted_at"] = cells
    return out


def expand_fitted(table):
    """The calibration rows with every `fitted_at` of compact_fitted's "=INSTANCE" form spelled
    out (that row's products, then the row's own launches at a grid); a ValueError naming the
    row's line (the header is line 1) where no row of that instantiation (same GPU model and
    variant) spells its products."""
    if (
        "fitted_at" not in table
        or not table.fitted_at.astype(str).str.startswith(SAME_PRODUCTS_AS).any()
    ):
        return table
    spelled = {}
    for r in table.itertuples(index=False):
        if not str(r.fitted_at).startswith(SAME_PRODUCTS_AS):
            spelled[(r.gpu_name, r.variant, r.instance)] = [
                x for x in str(r.fitted_at).split() if "@" not in x
            ]
    cells = []
    for i, r in enumerate(table.itertuples(index=False)):
        launches = str(r.fitted_at).split()
        if not launches or not launches[0].startswith(SAME_PRODUCTS_AS):
            cells.append(r.fitted_at)
            continue
        ref = launches[0][len(SAME_PRODUCTS_AS) :]
        if (r.gpu_name, r.variant, ref) not in spelled:
            raise ValueError(
                f"line {i + 2} ({r.gpu_name}, {r.instance}): fitted_at {launches[0]!r} names no "
                f"row of {r.variant} on that GPU model that spells its products"
            )
        cells.append(" ".join(sorted([*spelled[(r.gpu_name, r.variant, ref)], *launches[1:]])))
    out = table.copy()
    out["fitted_at"] = cells
    return out


def fitted_launch(row) -> str:
    """A timing row's launch as a calibration row's `fitted_at` names it: MxNxK, and @W where
    it ran a stream-K grid of W workers the plan chose (config stream_k_grids, or the model)."""
    workers = int(row["workers"]) if "workers" in row and row["workers"] == row["workers"] else 0
    return f"{row['m']}x{row['n']}x{row['k']}" + (f"@{workers}" if workers else "")


def predict_ms(variant, params: dict, costs: Costs, m: int, n: int, k: int, sms: int,
               workers: int = 0) -> float:  # fmt: skip
    """The model's time for the registry's launch of `params` at m x n x k (with `workers`
    stream-K workers where not 0: worker_choices)."""
    work, names = _launch(variant, params, m, n, k, sms, costs.blocks_per_sm, workers)
    return costs.time_us(load_of(work, tile_bytes_of(variant, params, names))) / 1e3


def recorded_us(variant, params: dict, costs: Costs, row, sms: int) -> float:
    """The model's time in µs for the launch a recorded timing row ran (recorded_work), at
    `costs` (an instantiation's, with its blocks per multiprocessor)."""
    work = recorded_work(variant, params, row, sms, costs.blocks_per_sm)
    return costs.time_us(load_of(work, tile_bytes_of(variant, params)))


def worker_choices(variant, params: dict, m: int, n: int, k: int, sms: int,
                   blocks_per_sm: int = 1) -> list[int]:  # fmt: skip
    """The stream-K grids the model weighs at m x n x k for a variant whose launch reads
    `workers` (Variant.uses_workers): 0, the entry's own rule (a worker a slot, the tiles'
    k-loops shared evenly among them), then, where the tiles are fewer than the rule's
    workers, each whole number of workers per tile below it: as many workers as tiles runs
    every tile whole in one wave (no partial sums), s workers a tile splits each tile's k-loop
    s ways (one segment a worker; s at most MOST_SPLITS and the tile's k-tiles).  The kernel
    works its whole tiles and shares out from whatever grid it is given
    (kernels/stream_k.cuh), so every choice computes the same product."""
    if not variant.uses_workers:
        return [0]
    return [0, *_fewer_workers(launch_work(variant, params, m, n, k, sms, blocks_per_sm))]


def _fewer_workers(rule: Work) -> list[int]:
    """worker_choices past the entry's own grid, from that grid's Work."""
    tiles = rule.tiles
    if tiles <= 0 or rule.ktiles <= 0:
        return []
    most = min(rule.ktiles, MOST_SPLITS)  # split-K's bound on the ways a tile splits
    return [tiles * s for s in range(1, most + 1) if tiles * s < rule.workers]


def split_counts_seen(variant, row: dict) -> frozenset[int]:
    """The busiest worker's split units (stream-K: its shares' segments) at each launch a
    calibration row was fitted at (its `fitted_at`: m, n, k and the grid's workers).  The fit
    tells a split unit's cost from the fixed cost only as far as these counts vary (at a
    stream-K rule's two segments at every small product it may put that cost in either), so
    choose() prices another grid that splits tiles only where its busiest worker's count is one
    of them."""
    shapes = tuple((*map(int, s[:3]), int(s[3]) if len(s) > 3 else 0)
                   for s in row.get("fitted_at") or ())  # fmt: skip
    params = tuple(row["params"].items())
    return _split_counts(variant, params, int(row["sms"]), int(row["blocks_per_sm"]), shapes)


# split_counts_seen's, per registry entry (a Variant, equal only to the same entry), row and
# shapes
_SEEN: dict[tuple, frozenset[int]] = {}


def _split_counts(variant, params: tuple, sms: int, blocks: int, shapes: tuple) -> frozenset:
    key = (variant, params, sms, blocks, shapes)
    if key not in _SEEN:
        _SEEN[key] = frozenset(launch_work(variant, dict(params), m, n, k, sms, blocks, w)
                               .busiest()[2] for m, n, k, w in shapes)  # fmt: skip
    return _SEEN[key]


def choose(variant, rows: list[dict], dtype: str, m: int, n: int, k: int,
           grids: bool = True) -> dict | None:  # fmt: skip
    """Of the calibrated rows of element type `dtype` (tuning.calibrated: params, costs,
    blocks_per_sm, sms), the one whose predicted time at m x n x k is least, with the stream-K
    grid (`workers`: worker_choices; 0 where the entry's own rule is as fast, or the variant
    has no choice) it is least with, passing over those whose instantiation cannot launch at
    the product (the registry's requirements); a tie goes to the earlier row, and to the
    entry's own grid.  Another grid that splits tiles is weighed only where its busiest
    worker's split units are a count the row's fit saw (split_counts_seen); the grid of whole
    tiles (no split unit) always is: a fit that never saw one prices it by the fixed and
    k-tile costs, which overstate it where the fit put the fix-up's cost in the fixed cost
    (lab entry "A fit at the rule's grids prices the whole-tile grid high").  `grids` False
    weighs the entry's own grid alone (to score the choice on runs that ran only that).  None
    where there is none."""
    best, best_ms = None, math.inf
    for r in rows:
        if r["dtype"] != dtype or variant.unmet(r["params"], m, n, k):
            continue
        costs = Costs.of(r["costs"], r["blocks_per_sm"])
        rule, names = _launch(variant, r["params"], m, n, k, r["sms"], costs.blocks_per_sm)
        tile_bytes = tile_bytes_of(variant, r["params"], names)
        fewer = _fewer_workers(rule) if grids and variant.uses_workers else []
        seen = split_counts_seen(variant, r) if fewer else frozenset()
        for w in [0, *fewer]:
            work = rule
            if w:
                work = _launch(variant, r["params"], m, n, k, r["sms"], costs.blocks_per_sm, w)[0]
                split = work.busiest()[2]
                if split and split not in seen:  # a split count the fit never saw: not priced
                    continue
            ms = costs.time_us(load_of(work, tile_bytes)) / 1e3
            if ms < best_ms - 1e-12:
                best, best_ms = {**r, "workers": w}, ms
    return best


def sms_of(timings, registry) -> dict[str, int]:
    """Multiprocessors per GPU model, as its timing rows show them: the widest grid that a
    persistent kernel (_persistent: its grid sized by the GPU) launched with one block per
    multiprocessor and no cluster.  Such a grid is the multiprocessors wherever the product has
    work for them all; a grid kernel's (a block per tile) is not bounded by them.  BLOCKS and
    CLUSTER are read from each row's instantiation (the registry's), so that a table cut to a
    few columns (lab/keep_calibration.py keeps no parameter columns) tells the same."""
    out: dict[str, int] = {}
    persistent = {name for name, v in registry.items() if _persistent(v)}
    one = timings[timings.variant.isin(persistent)]

    def single(variant: str, instance: str) -> bool:  # one block a multiprocessor, no cluster
        params = registry[variant].by_slug.get(instance) or {}
        return all(int(params.get(p, 1)) == 1 for p in ("CLUSTER", "BLOCKS"))

    # .loc: a run with no persistent rows gives an empty mask, which [] would read as no columns
    one = one.loc[[single(v, i) for v, i in zip(one.variant, one.instance, strict=True)]]
    for gpu, part in one.groupby("gpu_name"):
        widths = [int(str(g).split("x")[0]) for g in part.grid if str(g)[:1].isdigit()]
        if widths:
            out[gpu] = max(widths)
    return out
