"""A model of pingpong_bf16's ring (kernels/24_pingpong_bf16.cu), to check its synchronisation
where no GPU is: one block, a producer and two consumers taking the block's work units in turn,
mbarriers that wait by phase parity as PTX's `mbarrier.try_wait.parity` does (true once the
phase of that parity has completed, i.e. while the current phase has the other parity), copies
that land after a random delay, and a random interleaving of the three.  Every consumer read
must find its own k-tile in the stage, and the run must end.

    python tools/ring_model.py [--runs 3000] [--no-order]

--no-order leaves out the order barrier between the consumers' k-loops: a consumer may then wait
on a stage whose `full` barrier is two phases behind, and its parity wait takes the older phase
for the awaited one (stale data, or a deadlock): the model finds that within a few runs.
"""

from __future__ import annotations

import argparse
import random
import sys


class Barrier:
    """An mbarrier: `count` arrivals and the expected bytes complete a phase."""

    def __init__(self, count: int):
        self.count, self.pending, self.completed, self.tx = count, count, 0, 0

    def arrive(self, expect: int = 0) -> None:
        self.tx += expect
        self.pending -= 1
        self._complete()

    def landed(self, nbytes: int) -> None:
        self.tx -= nbytes
        self._complete()

    def _complete(self) -> None:
        if self.pending == 0 and self.tx == 0:
            self.completed += 1
            self.pending = self.count

    def try_wait(self, parity: int) -> bool:
        return (self.completed & 1) != parity


def run(units: list[int], stages: int, seed: int, order: bool = True) -> list[str]:
    """Problems of one run: `units` the k-tiles of each of the block's units, in order."""
    rnd = random.Random(seed)
    full = [Barrier(1) for _ in range(stages)]
    empty = [Barrier(1) for _ in range(stages)]
    done = [Barrier(1), Barrier(1)]  # the kernel's order[c] (128 arrivals there, one here)
    data: list = [None] * stages
    copies: list[list] = []  # [delay, stage, (unit, k-tile)]
    problems: list[str] = []

    def producer():
        it = 0
        for u, n in enumerate(units):
            for kt in range(n):
                s = it % stages
                if it >= stages:
                    while not empty[s].try_wait(((it // stages) + 1) & 1):
                        yield
                full[s].arrive(expect=1)
                copies.append([rnd.randint(0, 5), s, (u, kt)])
                it += 1
                yield

    def consumer(c: int):
        it = 0
        for turn, n in enumerate(units):
            if turn % 2 != c:
                it += n
                continue
            if order and turn > 0:
                while not done[1 - c].try_wait(((turn - 1) // 2) & 1):
                    yield
            previous = None
            for kt in range(n):
                s = it % stages
                while not full[s].try_wait((it // stages) & 1):
                    yield
                if data[s] != (turn, kt):
                    problems.append(f"consumer {c} read {data[s]} for {(turn, kt)} in stage {s}")
                yield  # the wgmmas read the stage; the previous k-tile's are done: release it
                if previous is not None:
                    empty[previous].arrive()
                previous, it = s, it + 1
            if order:
                done[c].arrive()
            yield
            if previous is not None:
                empty[previous].arrive()
            for _ in range(rnd.randint(0, 8)):  # the epilogue
                yield

    alive = [producer(), consumer(0), consumer(1)]
    for _ in range(200_000):
        if not alive:
            return problems
        for copy in list(copies):  # the copy engine
            copy[0] -= 1
            if copy[0] < 0:
                data[copy[1]] = copy[2]
                full[copy[1]].landed(1)
                copies.remove(copy)
        thread = rnd.choice(alive)
        try:
            next(thread)
        except StopIteration:
            alive.remove(thread)
    return problems + ["deadlock: the run did not end"]


def trials(runs: int, order: bool = True) -> list[tuple[int, list[str]]]:
    """(seed, problems) of every run that had some: random units (1 to 7, 1 to 16 k-tiles) and
    rings of 2 to 6 stages."""
    bad = []
    for seed in range(runs):
        rnd = random.Random(seed)
        stages = rnd.choice([2, 3, 4, 6])
        units = [rnd.choice([1, 2, 3, 5, 8, 16]) for _ in range(rnd.randint(1, 7))]
        problems = run(units, stages, seed, order)
        if problems:
            bad.append((seed, problems))
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3000)
    ap.add_argument("--no-order", action="store_true")
    args = ap.parse_args()
    bad = trials(args.runs, order=not args.no_order)
    for seed, problems in bad[:3]:
        print(f"seed {seed}: {problems[0]}")
    print(f"{len(bad)} of {args.runs} runs with problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
