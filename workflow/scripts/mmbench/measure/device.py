"""The device a job measures on: its deviceQuery facts (E4c, the run manifest), the provenance
recorded on every row (GPU, UUID, driver, runtime, CuPy, host), and NVML's clocks, temperature,
power and throttle reasons sampled after each timed pass."""

from __future__ import annotations

import logging
import os
import platform

log = logging.getLogger("mmbench.measure.device")

# NVML clock-event reasons that mean the GPU ran below its clocks: SW power cap, HW slowdown,
# SW thermal, HW thermal, HW power brake (idle, application-clock and sync-boost are not).
THROTTLE_MASK = 0x4 | 0x8 | 0x20 | 0x40 | 0x80

# cudaDeviceAttr values (driver_types.h; stable across CUDA versions)
DEVICE_ATTRIBUTES = {
    "max_threads_per_block": 1,
    "shared_memory_per_block_bytes": 8,
    "constant_memory_bytes": 9,
    "warp_size": 10,
    "registers_per_block": 12,
    "sm_clock_khz": 13,
    "multiprocessors": 16,
    "can_map_host_memory": 19,
    "ecc_enabled": 32,
    "memory_clock_khz": 36,
    "memory_bus_width_bits": 37,
    "l2_cache_bytes": 38,
    "max_threads_per_multiprocessor": 39,
    "async_engines": 40,
    "unified_addressing": 41,
    "managed_memory": 83,
    "concurrent_managed_access": 89,
    "shared_memory_per_block_optin_bytes": 97,
}


def device_properties(cp) -> dict:
    """The facts of seed 003's deviceQuery dump, for the run manifest (E4c)."""
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"]
    out = dict(
        name=name.decode() if isinstance(name, bytes) else name,
        compute_capability=f"{props['major']}.{props['minor']}",
        total_memory_bytes=int(props["totalGlobalMem"]),
    )
    for key, attr in DEVICE_ATTRIBUTES.items():
        try:
            out[key] = int(cp.cuda.runtime.deviceGetAttribute(attr, dev.id))
        except Exception:  # noqa: BLE001 - an attribute this runtime no longer reports
            out[key] = None
    if out.get("memory_clock_khz") and out.get("memory_bus_width_bits"):
        # DDR: two transfers per clock
        out["peak_memory_bandwidth_gbs"] = round(
            2 * out["memory_clock_khz"] * 1e3 * out["memory_bus_width_bits"] / 8 / 1e9, 1
        )
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByPciBusId(dev.pci_bus_id.encode())
        out["max_sm_clock_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)
        out["max_memory_clock_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM)
        out["power_limit_w"] = pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000
    except Exception:  # noqa: BLE001 - NVML is optional
        pass
    return out


def device_facts(cp) -> dict:
    """Provenance recorded on every row."""
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    drv = cp.cuda.runtime.driverGetVersion()
    rt = cp.cuda.runtime.runtimeGetVersion()
    name = props["name"]
    nvml = Nvml.open(dev.pci_bus_id)
    facts = dict(
        gpu_name=name.decode() if isinstance(name, bytes) else name,
        gpu_uuid=nvml.uuid or cuda_uuid(props.get("uuid", b"")),
        gpu_index=dev.id,
        gpu_pci_bus_id=dev.pci_bus_id,
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES", ""),
        compute_capability=f"{props['major']}.{props['minor']}",
        driver_version=nvml.driver or f"{drv // 1000}.{drv % 1000 // 10}",
        cuda_runtime=f"{rt // 1000}.{rt % 1000 // 10}",
        cupy_version=cp.__version__,
        hostname=platform.node(),
    )
    return facts


def cuda_uuid(raw) -> str:
    """GPU-xxxxxxxx-... from cudaDeviceProp.uuid; '' when CuPy cut it short (it stops the 16
    bytes at the first zero byte: NVML's UUID is used first for that reason)."""
    h = raw.hex() if isinstance(raw, bytes) else ""
    return f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}" if len(h) == 32 else ""


class Nvml:
    """SM and memory clocks, temperature, power and throttling through NVML (nvidia-ml-py)."""

    def __init__(self, handle=None, driver: str = "", uuid: str = "", pynvml=None):
        self.handle, self.driver, self.uuid, self.nv = handle, driver, uuid, pynvml

    @classmethod
    def open(cls, pci_bus_id: str) -> Nvml:
        """The NVML device of the CUDA device with this PCI bus id (CUDA and NVML number
        devices differently under CUDA_VISIBLE_DEVICES; the bus id is the same)."""
        try:
            import pynvml

            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id.encode())
            uuid = pynvml.nvmlDeviceGetUUID(handle)
            uuid = uuid.decode() if isinstance(uuid, bytes) else uuid
            driver = pynvml.nvmlSystemGetDriverVersion()
            driver = driver.decode() if isinstance(driver, bytes) else driver
            return cls(handle, driver, uuid, pynvml)
        except Exception as err:  # noqa: BLE001 - NVML is optional: the columns stay empty
            log.warning("NVML unavailable (%s): no clocks, temperature or power recorded", err)
            return cls()

    def sample(self) -> dict | None:
        if self.handle is None:
            return None
        nv, h = self.nv, self.handle
        reasons_fn = (
            getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
            or nv.nvmlDeviceGetCurrentClocksThrottleReasons
        )
        return dict(
            sm=nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
            mem=nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
            temp=nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
            power=nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
            reasons=int(reasons_fn(h)),
        )


def clock_columns(samples: list[dict]) -> dict:
    """Row columns from the NVML samples of the timed passes: median clocks, temperature and
    power, and how many samples NVML flagged as throttled (power cap, thermal, HW slowdown)."""
    if not samples:
        return {}
    import numpy as np

    return dict(
        sm_clock_mhz=float(np.median([x["sm"] for x in samples])),
        mem_clock_mhz=float(np.median([x["mem"] for x in samples])),
        temperature_c=float(np.median([x["temp"] for x in samples])),
        power_w=float(np.median([x["power"] for x in samples])),
        throttled_samples=sum(bool(x["reasons"] & THROTTLE_MASK) for x in samples),
        throttle_reasons=hex(int(np.bitwise_or.reduce([x["reasons"] for x in samples]))),
    )
