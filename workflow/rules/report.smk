# Figures (PNG for the report, PDF for papers), the reports' tables (CSV, Markdown, HTML, LaTeX)
# of the output catalogue (mmbench/report/catalogue.py) and the summary, from the tidy tables
# alone, in one job: they render without a GPU, also from a results folder copied back from a
# cluster (render_only=true).


rule render:
    """Every figure and report table the experiment asks for that its data can make, drawn in
    one process; those it cannot, with why, in report/figures_left_out.txt; the summary.
    """
    input:
        unpack(render_inputs),
    output:
        **RENDER_SUMMARY,
        figures=report(
            directory(f"{R}/figures"),
            patterns=["{name}.png"],
            caption="../report/figure.rst",
            category=EXPERIMENT_LABEL,
            subcategory="Figures",
            labels={"figure": "{name}"},
        ),
        report=report(
            directory(f"{R}/report"),
            patterns=["{name}.html"],
            caption="../report/table.rst",
            category=EXPERIMENT_LABEL,
            subcategory="Tables",
            labels={"table": "{name}"},
        ),
    log:
        f"{R}/logs/render.log",
    benchmark:
        f"{R}/benchmarks/render.tsv"
    conda:
        "../envs/plots.yaml"
    threads: 4
    params:
        figures=RENDER_FIGURES,
        tables=RENDER_TABLES,
        # each output's experiment label and caption, for the report's captions
        notes=RENDER_NOTES,
        gpu_model=config["gpu_model"],
    script:
        "../scripts/render.py"


# seconds of work on small tables: on the machine running Snakemake, not queued on a cluster
localrules:
    render,
