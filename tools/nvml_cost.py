"""How long one NVML reading takes on this GPU: the telemetry read without and with the
energy counter (Nvml.read, measure/telemetry.py), the clock read after each timed sample
(Nvml.sm_clock) and each NVML call they make."""

import statistics
import time

import cupy as cp
import pynvml as p

from mmbench.measure.device import Nvml

nv = Nvml.open(cp.cuda.Device().pci_bus_id)
for label, read in [
    ("Nvml.read()", lambda: nv.read()),
    ("Nvml.read(with_energy=True)", lambda: nv.read(with_energy=True)),
    ("Nvml.sm_clock()", nv.sm_clock),
]:
    t = []
    for _ in range(300):
        s = time.perf_counter()
        read()
        t.append((time.perf_counter() - s) * 1e3)
    print(f"{label}: median {statistics.median(t):.3f} ms, p90 {sorted(t)[270]:.3f} ms")
h = nv.handle
for name, fn in [
    ("clock sm", lambda: p.nvmlDeviceGetClockInfo(h, p.NVML_CLOCK_SM)),
    ("clock mem", lambda: p.nvmlDeviceGetClockInfo(h, p.NVML_CLOCK_MEM)),
    ("temp", lambda: p.nvmlDeviceGetTemperature(h, p.NVML_TEMPERATURE_GPU)),
    ("power (1 s average)", lambda: p.nvmlDeviceGetPowerUsage(h)),
    ("power (instantaneous)", lambda: p.nvmlDeviceGetFieldValues(h, [p.NVML_FI_DEV_POWER_INSTANT])),
    ("energy counter", lambda: p.nvmlDeviceGetTotalEnergyConsumption(h)),
    ("reasons", lambda: p.nvmlDeviceGetCurrentClocksEventReasons(h)),
]:
    t = []
    for _ in range(200):
        s = time.perf_counter()
        fn()
        t.append((time.perf_counter() - s) * 1e3)
    print(f"  {name}: median {statistics.median(t):.3f} ms")
