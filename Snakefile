# CUDA matrix multiplication, reproducibly: compile every kernel variant of the course reports,
# run each over the configured grid on the GPU, verify every result, and tabulate.
#
#   snakemake --cores 1                                        # the default experiment
#   snakemake --cores 1 --config sizes=[8000,10000,12000]      # seed 003's table (E4b)
#
# Data flow, one rule file per stage:
#   config -> compile (nvcc, ptxas report) -> run (CuPy, one job per variant)
#          -> profile (ncu / nsys / nvprof, ceilings) -> aggregate -> report (figures, tables,
#          the summary) -> compare (the previous source of an edited kernel; a baseline run:
#          `snakemake --cores 1 compare --config baseline=DIR`)


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"


if not RENDER_ONLY:

    include: "workflow/rules/compile.smk"
    include: "workflow/rules/run.smk"
    include: "workflow/rules/profile.smk"
    include: "workflow/rules/aggregate.smk"


include: "workflow/rules/report.smk"
include: "workflow/rules/compare.smk"


rule all:
    default_target: True
    input:
        (
            [f"{R}/report/summary.txt"]
            if RENDER_ONLY
            else [
                f"{R}/tables/resources.csv",
                f"{R}/tables/summary.txt",
                f"{R}/tables/since_previous.txt",
            ]
        ),
        profile_targets(),
        report_targets(),
        profile_figure_targets,
        timing_targets,
        output_targets,
        # baseline=...: the comparison with it, in the report too
        [f"{R}/report/compare.html", f"{R}/figures/compare.png"] if BASELINE else [],


onstart:
    check_before_jobs(workflow)


onsuccess:
    print_summary()
    clear_inputs_cache()


onerror:
    clear_inputs_cache()
    say_if_stopped_by_user(log)
