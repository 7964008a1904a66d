"""How long one NVML reading takes on this GPU (Nvml.sample and each call it makes)."""

import statistics
import time

import cupy as cp
import pynvml as p

from mmbench.measure.device import Nvml

nv = Nvml.open(cp.cuda.Device().pci_bus_id)
t = []
for _ in range(300):
    s = time.perf_counter()
    nv.sample()
    t.append((time.perf_counter() - s) * 1e3)
print(f"Nvml.sample(): median {statistics.median(t):.3f} ms, p90 {sorted(t)[270]:.3f} ms")
h = nv.handle
for name, fn in [
    ("clock sm", lambda: p.nvmlDeviceGetClockInfo(h, p.NVML_CLOCK_SM)),
    ("clock mem", lambda: p.nvmlDeviceGetClockInfo(h, p.NVML_CLOCK_MEM)),
    ("temp", lambda: p.nvmlDeviceGetTemperature(h, p.NVML_TEMPERATURE_GPU)),
    ("power", lambda: p.nvmlDeviceGetPowerUsage(h)),
    ("reasons", lambda: p.nvmlDeviceGetCurrentClocksEventReasons(h)),
]:
    t = []
    for _ in range(200):
        s = time.perf_counter()
        fn()
        t.append((time.perf_counter() - s) * 1e3)
    print(f"  {name}: median {statistics.median(t):.3f} ms")
