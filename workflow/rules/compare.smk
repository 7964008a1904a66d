# Compare this run with a baseline (config baseline=<results folder> or baseline=previous):
# per configuration both medians, their ratio and nvbench's verdict on the two sample sets
# (mmbench/compare/compare.py). `snakemake --cores 1 compare --config baseline=...` writes the table,
# the figure and a report table, prints the summary, and with compare.fail_on=slower exits
# non-zero when any configuration is SLOWER or REGRESSED (PASS before, FAIL or ERROR now), or
# missing from this run (unless compare.allow_missing).


rule compare_table:
    input:
        unpack(this_run),
        pairs=this_pairs,
        margins=config["compare"]["margins"] or [],
    output:
        csv=f"{R}/tables/compare.csv",
        header=f"{R}/tables/compare.json",
        txt=f"{R}/tables/compare.txt",
        html=report(
            f"{R}/compare/compare.html",
            caption="../report/output.rst",
            category=EXPERIMENT_LABEL,
            subcategory="Comparison with the baseline",
            labels={"table": "compare"},
        ),
    log:
        f"{R}/logs/compare/table.log",
    benchmark:
        f"{R}/benchmarks/compare/table.tsv"
    conda:
        "../envs/compare.yaml"
    params:
        baseline=BASELINE,
        # the results folder (its archive/ holds earlier kernel sources' rows)
        results=lambda w, output: str(Path(output.csv).parent.parent),
        criterion=config["compare"]["criterion"],
        tolerance=config["compare"]["tolerance"],
        threshold=config["compare"]["threshold"],
        margins=config["compare"]["margins"],
        caption=(
            "Each configuration of this run against the baseline: both kernel medians, their "
            "ratio and the verdict of nvbench's robust comparison on the two sets of timed "
            "samples (FASTER or SLOWER only with a clear gap between the [min, q3] intervals "
            "that the SM clock does not explain), with compare.tolerance as the smallest change "
            "reported: SAME also where the change interval lies within it, FASTER or SLOWER only "
            "where it lies wholly beyond; UNSURE where the evidence is not clear."
        ),
    script:
        "../scripts/compare_runs.py"


rule compare_figure:
    input:
        f"{R}/tables/compare.csv",
        header=f"{R}/tables/compare.json",
    output:
        png=report(
            f"{R}/compare/compare.png",
            caption="../report/output.rst",
            category=EXPERIMENT_LABEL,
            subcategory="Comparison with the baseline",
            labels={"figure": "compare"},
        ),
        pdf=f"{R}/compare/compare.pdf",
    log:
        f"{R}/logs/compare/figure.log",
    benchmark:
        f"{R}/benchmarks/compare/figure.tsv"
    conda:
        "../envs/plots.yaml"
    params:
        caption=(
            "This run's kernel median over the baseline's, per configuration, grouped by "
            "variant; the dark band is nvbench's clear-gap threshold, the light one the "
            "tolerance (compare.tolerance), colours are the verdicts."
        ),
    script:
        "../scripts/compare_figure.py"


rule compare:
    """Target: the comparison's table and figure, its summary on the console, and the exit
    code that compare.fail_on asks for."""
    input:
        csv=f"{R}/tables/compare.csv",
        txt=f"{R}/tables/compare.txt",
        html=f"{R}/compare/compare.html",
        png=f"{R}/compare/compare.png",
    log:
        f"{R}/logs/compare/gate.log",
    conda:
        "../envs/compare.yaml"
    params:
        fail_on=config["compare"]["fail_on"],
        allow_missing=config["compare"]["allow_missing"],
    script:
        "../scripts/compare_gate.py"


# the edit loop's parameters: the results folder (its archive/ holds earlier kernel sources'
# rows) and nvbench's criterion
SINCE_PREVIOUS = dict(
    results=lambda w, output: str(Path(output[0]).parent.parent),
    criterion=config["compare"]["criterion"],
    tolerance=config["compare"]["tolerance"],
)

if not RENDER_ONLY:

    rule since_previous:
        """The edit loop: each re-measured kernel against its previous source's measurement
        (archive/<variant>/<source hash>/), before -> after, printed with the summary; empty
        where no variant has an earlier source."""
        input:
            unpack(this_run),
        output:
            f"{R}/tables/since_previous.txt",
        log:
            f"{R}/logs/compare/since_previous.log",
        benchmark:
            f"{R}/benchmarks/compare/since_previous.tsv"
        conda:
            "../envs/compare.yaml"
        params:
            **SINCE_PREVIOUS,
        script:
            "../scripts/since_previous.py"


# seconds of work on small tables: on the machine running Snakemake, not queued on a cluster
localrules:
    compare_table,
    compare_figure,
    compare,


if not RENDER_ONLY:

    localrules:
        since_previous,
