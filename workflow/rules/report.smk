# Figures (PNG for the report, PDF for papers) and the reports' tables (CSV, Markdown, HTML,
# LaTeX) of the output catalogue (mmbench/report/catalogue.py), from the tidy tables alone: they render without a GPU, also from a results folder
# copied back from a cluster (render_only=true).


rule figure:
    input:
        unpack(figure_inputs),
    output:
        png=report(
            f"{R}/figures/{{figure}}.png",
            caption="../report/output.rst",
            category=EXPERIMENT_LABEL,
            subcategory="Figures",
            labels=lambda w: {"figure": w.figure},
        ),
        pdf=f"{R}/figures/{{figure}}.pdf",
    log:
        f"{R}/logs/figures/{{figure}}.log",
    benchmark:
        f"{R}/benchmarks/figures/{{figure}}.tsv"
    conda:
        "../envs/plots.yaml"
    params:
        experiment=lambda w: FIGURE_CATALOGUE[w.figure].experiment,
        caption=lambda w: caption(FIGURE_CATALOGUE[w.figure]),
        gpu_model=config["gpu_model"],
    script:
        "../scripts/render_figure.py"


rule table:
    input:
        unpack(table_inputs),
    output:
        html=report(
            f"{R}/report/{{table}}.html",
            caption="../report/output.rst",
            category=EXPERIMENT_LABEL,
            subcategory="Tables",
            labels=lambda w: {"table": w.table},
        ),
        csv=f"{R}/report/{{table}}.csv",
        md=f"{R}/report/{{table}}.md",
        tex=f"{R}/report/{{table}}.tex",
    log:
        f"{R}/logs/report/{{table}}.log",
    benchmark:
        f"{R}/benchmarks/report/{{table}}.tsv"
    conda:
        "../envs/plots.yaml"
    params:
        experiment=lambda w: TABLE_CATALOGUE[w.table].experiment,
        caption=lambda w: caption(TABLE_CATALOGUE[w.table]),
        gpu_model=config["gpu_model"],
    script:
        "../scripts/render_table.py"


if RENDER_HERE:

    # without a conda environment per rule (no --sdm conda), each figure and table is drawn in
    # Snakemake's own process: the same outputs, log, benchmark and caption, without a new
    # Python process importing pandas and matplotlib for each (mmbench/report/render.py)
    ruleorder: figure_here > figure
    ruleorder: table_here > table

    rule figure_here:
        input:
            unpack(figure_inputs),
        output:
            png=report(
                f"{R}/figures/{{figure}}.png",
                caption="../report/output.rst",
                category=EXPERIMENT_LABEL,
                subcategory="Figures",
                labels=lambda w: {"figure": w.figure},
            ),
            pdf=f"{R}/figures/{{figure}}.pdf",
        log:
            f"{R}/logs/figures/{{figure}}.log",
        benchmark:
            f"{R}/benchmarks/figures/{{figure}}.tsv"
        params:
            experiment=lambda w: FIGURE_CATALOGUE[w.figure].experiment,
            caption=lambda w: caption(FIGURE_CATALOGUE[w.figure]),
            gpu_model=config["gpu_model"],
        run:
            render_here(
                "figure",
                wildcards.figure,
                input,
                output.png,
                params.gpu_model,
                log[0],
            )

    rule table_here:
        input:
            unpack(table_inputs),
        output:
            html=report(
                f"{R}/report/{{table}}.html",
                caption="../report/output.rst",
                category=EXPERIMENT_LABEL,
                subcategory="Tables",
                labels=lambda w: {"table": w.table},
            ),
            csv=f"{R}/report/{{table}}.csv",
            md=f"{R}/report/{{table}}.md",
            tex=f"{R}/report/{{table}}.tex",
        log:
            f"{R}/logs/report/{{table}}.log",
        benchmark:
            f"{R}/benchmarks/report/{{table}}.tsv"
        params:
            experiment=lambda w: TABLE_CATALOGUE[w.table].experiment,
            caption=lambda w: caption(TABLE_CATALOGUE[w.table]),
            gpu_model=config["gpu_model"],
        run:
            render_here(
                "table",
                wildcards.table,
                input,
                output.html,
                params.gpu_model,
                log[0],
            )

    localrules:
        figure_here,
        table_here,


rule figures_left_out:
    """One line per figure or table of this experiment that its data cannot make, and why."""
    output:
        html=report(
            f"{R}/report/figures_left_out.html",
            caption="../report/output.rst",
            category=EXPERIMENT_LABEL,
            subcategory="Figures",
            labels={"figure": "left out"},
        ),
        txt=f"{R}/report/figures_left_out.txt",
    log:
        f"{R}/logs/figures/figures_left_out.log",
    benchmark:
        f"{R}/benchmarks/figures/figures_left_out.tsv"
    conda:
        "../envs/plots.yaml"
    params:
        left=lambda w: outputs_with_data()[2],
        caption="Figures and tables this experiment asks for that its data cannot make, and why.",
    script:
        "../scripts/figures_left_out.py"


if not RENDER_ONLY and RENDER_HERE:

    # after the last measurement: in Snakemake's own process (common.smk script_here)
    rule summary:
        input:
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
        run:
            script_here("summary.py", input, output, params, log)

elif not RENDER_ONLY:

    rule summary:
        input:
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
            "../envs/tables.yaml"
        script:
            "../scripts/summary.py"

else:

    rule summary_of_copied_run:
        """render_only: the summary made again from the copied timings table, as read and
        checked now (the copied summary.txt is never printed: it may describe another table).
        """
        input:
            unpack(copied_summary_inputs),
        output:
            txt=f"{R}/report/summary.txt",
            md=f"{R}/report/summary.md",
        log:
            f"{R}/logs/report/summary.log",
        conda:
            "../envs/tables.yaml"
        script:
            "../scripts/summary.py"


# seconds of work on small tables: on the machine running Snakemake, not queued on a cluster
localrules:
    figure,
    table,
    figures_left_out,


if not RENDER_ONLY:

    localrules:
        summary,

else:

    localrules:
        summary_of_copied_run,
