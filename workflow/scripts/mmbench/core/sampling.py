"""How a configuration is sampled: the settings of the timing (config `sampling:`) and the
timing strategies' names, declared once (measure/timing.py implements each)."""

from __future__ import annotations

from dataclasses import dataclass

# name -> what it does (the config schema's allowed values of sampling.strategy)
STRATEGY_NAMES = {
    "passes": "one timed pass after another, host work (inputs reset, NVML read) between them",
}


@dataclass
class Sampling:
    warmup: int = 1
    min_samples: int = 5
    max_samples: int = 100
    min_time_s: float = 0.2
    max_time_s: float = 5.0
    stop: str = "count"  # "count": min_samples and min_time_s; "noise": the kernel's noise
    max_noise: float = 0.005  # "noise": relative standard deviation of the mean
    noise_min_samples: int = 3
    strategy: str = "passes"  # how the passes are timed: STRATEGIES
