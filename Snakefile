# CUDA matrix multiplication, reproducibly: compile every kernel variant of the course reports,
# run each over the configured grid on the GPU, verify every result, and tabulate.
#
#   snakemake --cores 1                                        # the default experiment
#   snakemake --cores 1 --config sizes=[8000,10000,12000]      # seed 003's table (E4b)
#
# Data flow, one rule file per stage:
#   config -> compile (nvcc, ptxas report) -> run (CuPy, one job per variant)
#          -> profile (ncu / nsys / nvprof, ceilings) -> aggregate


configfile: workflow.source_path("config/config.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/compile.smk"
include: "workflow/rules/run.smk"
include: "workflow/rules/profile.smk"
include: "workflow/rules/aggregate.smk"


rule all:
    default_target: True
    input:
        "results/tables/timings.csv",
        "results/tables/resources.csv",
        "results/tables/summary.txt",
        profile_targets(),


onsuccess:
    print_summary()
