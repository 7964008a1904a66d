"""What one worker process keeps from one measurement job to the next (served.py: a local run's
one worker measures every variant in turn).

Each measurement job is one variant's configurations; the inputs of a group (same shape,
element type, distribution, seed: oracle.group_key) and their float64 reference on the device
are the same for every variant that runs it.  A worker that serves one job draws and builds them
once per group; a worker that serves the run keeps them here, with the host buffers the
placements fill, so the second variant of a shape starts with its reference and its pinned
buffers in place.  The reference depends on the inputs only, never on the kernel, so sharing it
changes no check: each configuration is still verified against it twice.

Device memory is the limit: the kept references (8 bytes an element, twice where the inputs have
negative elements) take at most a quarter of the device's memory, and a group about to be
measured makes room for its own operands first (make_room), the least recently used going
first.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from dataclasses import dataclass, field

from mmbench.measure.device import Nvml, device_facts
from mmbench.measure.oracle import InputStore
from mmbench.measure.placement import HostBuffers

log = logging.getLogger("mmbench.measure.session")

# the share of the device's memory the kept references may take
KEPT_SHARE = 0.25


@dataclass
class Session:
    """A worker's state across jobs: host buffers, and references by group (LRU)."""

    # False: a worker that serves one job keeps no reference past its group
    keeps: bool = True
    # where the run's processes share the inputs they draw (oracle.InputStore; the run's is
    # service/input_cache.py): given by whoever runs the measurement, none by default
    store: InputStore | None = None
    buffers: HostBuffers = field(default_factory=HostBuffers)
    references: OrderedDict = field(default_factory=OrderedDict)
    built: int = 0  # references built by this process
    reused: int = 0  # references a later job took from an earlier one
    # what every runner of this process would otherwise read again: the device's facts (by
    # device and visible devices) and its NVML handle (by PCI bus id)
    facts: dict = field(default_factory=dict)
    nvml_handles: dict = field(default_factory=dict)

    def device_facts(self, cp) -> dict:
        """The current device's provenance facts (measure/device.device_facts), read once per
        device of this process (0.14 s, 0.43 s under Nsight Compute); a copy each time."""
        key = (cp.cuda.Device().id, os.environ.get("CUDA_VISIBLE_DEVICES", ""))
        if key not in self.facts:  # NVML opened once for the facts and the runners' reads
            self.facts[key] = device_facts(cp, self.nvml(cp.cuda.Device().pci_bus_id))
        return dict(self.facts[key])

    def nvml(self, pci_bus_id: str) -> Nvml:
        """The NVML device of this PCI bus id (measure/device.Nvml), opened once."""
        if pci_bus_id not in self.nvml_handles:
            self.nvml_handles[pci_bus_id] = Nvml.open(pci_bus_id)
        return self.nvml_handles[pci_bus_id]

    def reference(self, key: tuple):
        """The kept reference of this group (marked most recently used), or None."""
        ref = self.references.get(key)
        if ref is not None:
            self.references.move_to_end(key)
        return ref

    def keep(self, cp, key: tuple, ref) -> None:
        """Keeps a group's reference for later jobs, within KEPT_SHARE of the device memory
        (the least recently used first out; one larger than the share is not kept)."""
        self.built += 1
        if not self.keeps:
            return
        limit = KEPT_SHARE * cp.cuda.runtime.memGetInfo()[1]
        size = device_bytes(ref)
        if size > limit:
            return
        self.references[key] = ref
        self.references.move_to_end(key)
        while sum(device_bytes(r) for r in self.references.values()) > limit:
            self.references.popitem(last=False)

    def make_room(self, cp, need: int, keep_key: tuple | None = None) -> None:
        """Drops kept references (least recently used first, never keep_key's) until `need`
        bytes are free on the device, counting what CuPy's pool holds free."""
        pool = cp.get_default_memory_pool()
        while True:
            pool.free_all_blocks()
            free = cp.cuda.runtime.memGetInfo()[0]
            others = [k for k in self.references if k != keep_key]
            if free >= need or not others:
                return
            log.info(
                "device memory: %.1f GB free, %.1f GB wanted; a kept reference goes",
                free / 1e9, need / 1e9,
            )  # fmt: skip
            del self.references[others[0]]

    def clear(self) -> None:
        self.references.clear()


def device_bytes(ref) -> int:
    """The device memory a reference holds: its product, and its bound where that is apart."""
    size = ref.ref.nbytes
    if ref.bound is not ref.ref:
        size += ref.bound.nbytes
    return size
