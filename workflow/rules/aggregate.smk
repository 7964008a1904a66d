# Per-variant tables -> the tidy tables of results/tables/, and the summary printed at the end.


rule timings_table:
    input:
        expand(R + "/runs/{variant}.csv", variant=list(PLAN.runs)),
    output:
        R + "/tables/timings.csv",
    log:
        R + "/logs/aggregate/timings.log",
    conda:
        ENV
    params:
        kind="timings",
    script:
        "../scripts/concat_tables.py"


rule resources_table:
    input:
        planned_ptxas_reports,
    output:
        R + "/tables/resources.csv",
    log:
        R + "/logs/aggregate/resources.log",
    conda:
        ENV
    script:
        "../scripts/resources_table.py"


rule refused_table:
    output:
        R + "/tables/refused.csv",
    log:
        R + "/logs/aggregate/refused.log",
    conda:
        ENV
    params:
        refused=PLAN.refused,
    script:
        "../scripts/refused_table.py"


rule summary:
    input:
        timings=R + "/tables/timings.csv",
        refused=R + "/tables/refused.csv",
    output:
        txt=R + "/tables/summary.txt",
        md=R + "/tables/summary.md",
    log:
        R + "/logs/aggregate/summary.log",
    conda:
        ENV
    script:
        "../scripts/summary.py"
