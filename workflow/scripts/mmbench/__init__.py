"""mmbench: a reproducible Snakemake pipeline for CUDA matrix-multiplication experiments.

Data flow (one module per stage):
    config  -> registry/plan  -> (nvcc, in the workflow) -> runner -> verify -> tables -> summary
"""

__version__ = "0.1.0"
