"""mmbench: a reproducible Snakemake pipeline for CUDA matrix-multiplication experiments.

Data flow (one job per module; the README's layout section lists them all):
    config -> registry -> plan -> compile (nvcc, in the workflow) -> jobs/worker -> runner
    (placement, launch, timing, oracle, device -> row) -> tables -> summary, catalogue
    (figures, report_tables)
"""

__version__ = "0.1.0"
