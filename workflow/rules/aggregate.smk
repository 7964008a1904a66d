# Per-variant tables -> the tidy tables of results/tables/, and the summary printed at the end.


checkpoint timings_table:
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


rule resources_table:
    input:
        planned_ptxas_reports,
    output:
        f"{R}/tables/resources.csv",
    log:
        f"{R}/logs/aggregate/resources.log",
    benchmark:
        f"{R}/benchmarks/aggregate/resources.tsv"
    conda:
        "../envs/tables.yaml"
    params:
        registry=REGISTRY_FILE,
    script:
        "../scripts/resources_table.py"


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


rule summary:
    input:
        unpack(this_run),
        timings=f"{R}/tables/timings.csv",
        refused=f"{R}/tables/refused.csv",
        manifests=manifests(),
    output:
        txt=f"{R}/tables/summary.txt",
        md=f"{R}/tables/summary.md",
    log:
        f"{R}/logs/aggregate/summary.log",
    benchmark:
        f"{R}/benchmarks/aggregate/summary.tsv"
    conda:
        "../envs/compare.yaml"
    params:
        # the results folder (its archive/ holds earlier kernel sources' rows)
        results=lambda w, output: str(Path(output.txt).parent.parent),
        criterion=config["compare"]["criterion"],
        tolerance=config["compare"]["tolerance"],
    script:
        "../scripts/summary.py"
