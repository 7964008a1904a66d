"""When a configuration has enough timed samples: the stopping rules, written as nvbench writes
its stopping criterion (each sample is added as it is timed, then the rule is asked whether it
is done).  `sampling.stop` names the rule (STOPPING_RULES)."""

from __future__ import annotations

import math

import numpy as np

from mmbench.core.sampling import Sampling


def noise(samples_ms: list[float]) -> float:
    """Relative standard deviation of the mean: s / sqrt(n) / mean (inf below 2 samples)."""
    n = len(samples_ms)
    if n < 2:
        return math.inf
    mean = sum(samples_ms) / n
    return float(np.std(samples_ms, ddof=1)) / math.sqrt(n) / mean if mean > 0 else math.inf


class StoppingRule:
    """When a configuration has enough timed samples, as nvbench's stopping criterion is written:
    each sample is added as it is timed, then the rule is asked whether it is done.  Every rule
    stops at max_samples, and at max_time once it has at least 3 samples (a slow kernel);
    between those, the subclass's own test (Sampling.stop names it: STOPPING_RULES)."""

    def __init__(self, s: Sampling):
        self.s = s
        self.samples_ms: list[float] = []  # what each timed sample took, the copies included
        self.kernel_ms: list[float] | None = None  # the kernel alone, where it is timed apart

    def add(self, sample_ms: float, kernel_ms: float | None = None) -> None:
        self.samples_ms.append(sample_ms)
        if kernel_ms is not None:
            if self.kernel_ms is None:
                self.kernel_ms = []
            self.kernel_ms.append(kernel_ms)

    def done(self) -> bool:
        s, n = self.s, len(self.samples_ms)
        total_s = sum(self.samples_ms) / 1e3
        if n >= s.max_samples or self.enough(n, total_s):
            return True
        return n >= min(3, s.min_samples) and total_s >= s.max_time_s

    def enough(self, n: int, total_s: float) -> bool:
        raise NotImplementedError


class CountRule(StoppingRule):
    """`count` (the default): at least min_samples and min_time of GPU time."""

    def enough(self, n: int, total_s: float) -> bool:
        return n >= self.s.min_samples and total_s >= self.s.min_time_s


class NoiseRule(StoppingRule):
    """`noise` (nvbench's criterion): at least noise_min_samples, then stop as soon as the
    relative standard deviation of the mean kernel time is at most max_noise, so a long, steady
    kernel stops after a few samples and a noisy one keeps sampling; unlike nvbench (min time
    0.5 s) it asks no minimum GPU time, which is what saves samples on long kernels."""

    def enough(self, n: int, total_s: float) -> bool:
        watched = self.samples_ms if self.kernel_ms is None else self.kernel_ms
        return n >= self.s.noise_min_samples and noise(watched) <= self.s.max_noise


STOPPING_RULES = {"count": CountRule, "noise": NoiseRule}


def stopping_rule(s: Sampling) -> StoppingRule:
    return STOPPING_RULES[s.stop](s)


def enough(samples_ms: list[float], s: Sampling, kernel_ms: list[float] | None = None) -> bool:
    """The stopping rule asked about samples already taken (global and kernel-only ones)."""
    rule = stopping_rule(s)
    rule.samples_ms = list(samples_ms)
    rule.kernel_ms = None if kernel_ms is None else list(kernel_ms)
    return rule.done()
