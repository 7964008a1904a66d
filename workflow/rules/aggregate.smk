# Per-variant tables -> the tidy tables of results/tables/ (mmbench/core/tables.py): the
# timings of every measurement job, and the configurations the plan refused.


rule timings_table:
    input:
        tables=expand(f"{R}/runs/{{variant}}.csv", variant=list(PLAN.runs)),
        manifests=expand(f"{R}/runs/{{variant}}.manifest.json", variant=list(PLAN.runs)),
    output:
        f"{R}/tables/timings.csv",
    log:
        f"{R}/logs/aggregate/timings.log",
    benchmark:
        f"{R}/benchmarks/aggregate/timings.tsv"
    conda:
        "../envs/tables.yaml"
    params:
        kind="timings",
    script:
        "../scripts/concat_tables.py"


rule refused_table:
    output:
        f"{R}/tables/refused.csv",
    log:
        f"{R}/logs/aggregate/refused.log",
    benchmark:
        f"{R}/benchmarks/aggregate/refused.tsv"
    conda:
        "../envs/tables.yaml"
    params:
        refused=PLAN.refused,
    script:
        "../scripts/refused_table.py"


# seconds of work on small tables: on the machine running Snakemake, not queued on a cluster
localrules:
    timings_table,
    refused_table,
