# Per-variant tables -> the tidy tables of results/tables/, and the summary printed at the end.


rule timings_table:
    input:
        expand("results/runs/{variant}.csv", variant=list(PLAN.runs)),
    output:
        "results/tables/timings.csv",
    log:
        "results/logs/aggregate/timings.log",
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
        "results/tables/resources.csv",
    log:
        "results/logs/aggregate/resources.log",
    conda:
        ENV
    script:
        "../scripts/resources_table.py"


rule refused_table:
    output:
        "results/tables/refused.csv",
    log:
        "results/logs/aggregate/refused.log",
    conda:
        ENV
    params:
        refused=PLAN.refused,
    script:
        "../scripts/refused_table.py"


rule summary:
    input:
        timings="results/tables/timings.csv",
        refused="results/tables/refused.csv",
    output:
        txt="results/tables/summary.txt",
        md="results/tables/summary.md",
    log:
        "results/logs/aggregate/summary.log",
    conda:
        ENV
    script:
        "../scripts/summary.py"
