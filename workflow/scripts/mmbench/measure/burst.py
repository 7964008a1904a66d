"""The burst load (core/sampling.BURST): what one call costs on a fresh GPU.

Timed passes one after another, each host-to-device copy, kernel and device-to-host copy in its
segments (PassTimer), host work between passes (inputs reset, NVML read), until the stopping
rule says enough; the passes take the placements in turn.  Then, for a kernel shorter than
sampling.batch_min_ms with a warm cache, batched samples: each times `batch_size()` launches
queued behind a blocking kernel (Batcher), so the launches run back to back whatever the host's
launch cost, the next one queued while one runs (batches()); the launch's time is the batch's
over its count.  The single-launch samples stay the row's kernel_ms (their median); compare
uses whichever kind is quieter.  A batch starts with one untimed launch where there are several
places, so its timed launches find their operands in L2 as a single place's do.  The telemetry
watches the passes; NVML's clock is read after every sample; the clock probe runs after them
all.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from mmbench.core.sampling import BURST, Sampling, batch_size
from mmbench.measure.samples import Samples
from mmbench.measure.sites import Kernel
from mmbench.measure.stopping import stopping_rule


class Burst:
    load = BURST

    def measure(self, k: Kernel, s: Sampling) -> Samples:
        sites, obs = k.sites(), k.observers
        out = Samples(load=self.load)
        obs.before_start(k.in_pass_kernel, self.load)
        stop = stopping_rule(s)  # the noise rule watches the kernel times it is given
        try:
            while not stop.done():
                h2d, kernel, d2h = sites[len(out.kernel) % len(sites)].one_pass()
                obs.during("pass")
                out.kernel.append(kernel)
                out.h2d.append(h2d)
                out.d2h.append(d2h)
                out.glob.append(h2d + kernel + d2h)
                stop.add(out.glob[-1], kernel)
        finally:
            obs.after_finish()
        count = batch_size(float(np.median(out.kernel)), s) if out.kernel else 1
        if count > 1 and k.launch is not None and k.batcher is not None:
            out.batch_size = count
            out.batch = batches(k, count, float(np.median(out.kernel)) * count, s)
        obs.after_all(self.load)
        out.observed(obs.results())
        out.placements = min(len(sites), max(len(out.kernel), len(out.batch)))
        return out


def batches(k: Kernel, count: int, guess_ms: float, s: Sampling) -> list[float]:
    """The batched samples, until the stopping rule says enough: each the launch's time in a
    batch of `count` (the batch's over its count), the placements in turn.  While one batch
    runs, the next is queued and released behind it, where the rule would still want it given
    the batch in flight as long as the last one (`guess_ms` before the first): the host's
    launches (36-51 of about 17 us each for a microsecond kernel, as long as the batch's GPU
    time) are queued while the GPU works, and the GPU runs the batches one after another, the
    next one's blocking kernel already released.  A batch queued ahead is waited for and kept
    like any other: where its predecessor came out longer than the last (the count rule's
    min_time, the noise rule), the rule gets one sample more than it asked, never past
    max_samples, which it counts ahead exactly."""
    sites, obs = k.sites(), k.observers
    stop = stopping_rule(s)
    out: list[float] = []
    flight: deque = deque()  # (start, end, batcher) of the batches queued and released

    def put() -> None:
        site = sites[(len(out) + len(flight)) % len(sites)]
        batcher = site.batcher or k.batcher
        # after the batch before, which may be on another placement's stream
        after = flight[-1][1] if flight and len(sites) > 1 else None
        start, end = batcher.queue(site.launch, count, warm=len(sites) > 1, after=after)
        flight.append((start, end, batcher))

    while flight or not stop.done():
        if not flight:
            put()
        last = out[-1] * count if out else guess_ms
        if len(flight) == 1 and not stop.done_after([last]):
            put()  # the rule will want it whatever the one in flight measures
        start, end, batcher = flight.popleft()
        end.synchronize()
        batcher.check()
        ms = batcher.cp.cuda.get_elapsed_time(start, end)
        stop.add(ms)
        out.append(ms / count)
        obs.during("batch")
    return out
