"""The burst load (core/sampling.BURST): what one call costs on a fresh GPU.

Timed passes one after another, each host-to-device copy, kernel and device-to-host copy in its
segments (PassTimer), host work between passes (inputs reset, NVML read), until the stopping
rule says enough; the passes take the placements in turn.  Then, for a kernel shorter than
sampling.batch_min_ms with a warm cache, batched samples: each times `batch_size()` launches
queued behind a blocking kernel (Batcher), so the launches run back to back whatever the host's
launch cost; the launch's time is the batch's over its count.  The single-launch samples stay
the row's kernel_ms (their median); compare uses whichever kind is quieter.  A batch starts
with one untimed launch where there are several places, so its timed launches find their
operands in L2 as a single place's do.  The telemetry watches the passes; NVML's clock is read
after every sample; the clock probe runs after them all.

The next batch is not queued while one runs: tried, it hid the host's launches but made the
batches themselves slower, the launches queued by the host while the GPU ran the batch before
(lab: code-choices, "queued ahead").
"""

from __future__ import annotations

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
            totals: list[float] = []
            stop = stopping_rule(s)
            while not stop.done():
                site = sites[len(totals) % len(sites)]
                batcher = site.batcher or k.batcher
                ms = batcher.run(site.launch, count, warm=len(sites) > 1)
                totals.append(ms)
                stop.add(ms)
                out.batch.append(ms / count)
                obs.during("batch")
        obs.after_all(self.load)
        out.observed(obs.results())
        out.placements = min(len(sites), max(len(out.kernel), len(out.batch)))
        return out
