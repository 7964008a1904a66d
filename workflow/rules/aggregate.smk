# Per-variant tables -> the tidy tables of results/tables/ (mmbench/core/tables.py): the
# timings of every measurement job, and the configurations the plan refused.


# the timings table comes after the last measurement, when only drawing is left: in Snakemake's
# own process where no rule has an environment of its own (common.smk script_here)
TIMINGS_TABLE = dict(
    tables=expand(f"{R}/runs/{{variant}}.csv", variant=list(PLAN.runs)),
    manifests=expand(f"{R}/runs/{{variant}}.manifest.json", variant=list(PLAN.runs)),
)

if RENDER_HERE:

    checkpoint timings_table:
        input:
            **TIMINGS_TABLE,
        output:
            f"{R}/tables/timings.csv",
        log:
            f"{R}/logs/aggregate/timings.log",
        benchmark:
            f"{R}/benchmarks/aggregate/timings.tsv"
        params:
            kind="timings",
        run:
            script_here("concat_tables.py", input, output, params, log)

else:

    checkpoint timings_table:
        input:
            **TIMINGS_TABLE,
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
