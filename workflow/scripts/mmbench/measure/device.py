"""The device a job measures on: its deviceQuery facts (E4c, the run manifest), the provenance
recorded on every row (GPU, UUID, driver, runtime, CuPy, host), and NVML's reads of clocks,
temperature, power, clock-event reasons and energy (measure/telemetry.py reads them during the
timed window)."""

from __future__ import annotations

import logging
import os
import platform

log = logging.getLogger("mmbench.measure.device")

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


def device_facts(cp, nvml: Nvml | None = None) -> dict:
    """Provenance recorded on every row; `nvml`: the device's NVML, where it is open already
    (measure/session.py), else opened here."""
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    drv = cp.cuda.runtime.driverGetVersion()
    rt = cp.cuda.runtime.runtimeGetVersion()
    name = props["name"]
    nvml = Nvml.open(dev.pci_bus_id) if nvml is None else nvml
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

    def sm_clock(self) -> float | None:
        """The SM clock now (read after each timed sample: compare's cycles = time x clock)."""
        if self.handle is None:
            return None
        return float(self.nv.nvmlDeviceGetClockInfo(self.handle, self.nv.NVML_CLOCK_SM))

    def read(self, with_energy: bool = False) -> dict:
        """One telemetry read (measure/telemetry.py): clocks, temperature, instantaneous power
        (NVML_FI_DEV_POWER_INSTANT; the 1 s average where the driver lacks it), clock-event
        reasons and, when asked (it costs about 4 ms), the total-energy counter in mJ."""
        nv, h = self.nv, self.handle
        reasons_fn = (
            getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
            or nv.nvmlDeviceGetCurrentClocksThrottleReasons
        )
        return dict(
            sm=nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
            mem=nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
            temp=nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
            power=self._power(),
            reasons=int(reasons_fn(h)),
            energy=self._energy() if with_energy else float("nan"),
        )

    def _power(self) -> float:
        """Instantaneous board power in W; the 1 s average where the field is missing; NaN where
        the GPU reports no power at all (clocks are still read)."""
        nv, h = self.nv, self.handle
        field = getattr(nv, "NVML_FI_DEV_POWER_INSTANT", None)
        try:
            if field is not None:
                value = nv.nvmlDeviceGetFieldValues(h, [field])[0]
                if value.nvmlReturn == 0:
                    return value.value.uiVal / 1000.0
            return nv.nvmlDeviceGetPowerUsage(h) / 1000.0
        except Exception:  # noqa: BLE001 - NVMLError_NotSupported on some boards
            return float("nan")

    def _energy(self) -> float:
        """The total-energy counter in mJ (NaN where the GPU has none: no energy columns)."""
        try:
            return float(self.nv.nvmlDeviceGetTotalEnergyConsumption(self.handle))
        except Exception:  # noqa: BLE001 - NVMLError_NotSupported before Volta
            return float("nan")

    def max_sm_clock(self) -> float:
        if self.handle is None:
            return float("nan")
        return float(self.nv.nvmlDeviceGetMaxClockInfo(self.handle, self.nv.NVML_CLOCK_SM))

    def clock_step_mhz(self, default: float) -> float:
        """The smallest step of the GPU's SM clock table (15 MHz on an H100)."""
        try:
            nv, h = self.nv, self.handle
            mem = nv.nvmlDeviceGetSupportedMemoryClocks(h)[0]
            table = sorted(set(nv.nvmlDeviceGetSupportedGraphicsClocks(h, mem)))
            steps = [b - a for a, b in zip(table, table[1:], strict=False) if b > a]
            return float(min(steps)) if steps else default
        except Exception:  # noqa: BLE001 - the table is optional
            return default
