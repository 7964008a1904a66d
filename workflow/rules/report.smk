# Figures (PNG for the report, PDF for papers), the reports' tables (CSV, Markdown, HTML, LaTeX)
# of the output catalogue (mmbench/report/catalogue.py) and the summary, from the tidy tables
# alone: they render without a GPU, also from a results folder copied back from a cluster
# (render_only=true).  Those that read the profile tables alone are drawn by one job as
# soon as those exist (while the GPU still measures), the rest by one job at the end, which
# gathers both into the run's figures/ and report/ folders.


rule render_profiles:
    """The figures and tables that read the profile tables alone, drawn in one process into
    a folder the render job gathers from."""
    input:
        **render.profile_inputs(R, EARLY_FIGURES, EARLY_TABLES),
    output:
        drawn=directory(f"{R}/render/profiles"),
    log:
        f"{R}/logs/render_profiles.log",
    benchmark:
        f"{R}/benchmarks/render_profiles.tsv"
    conda:
        "../envs/plots.yaml"
    threads: 4
    params:
        figures=EARLY_FIGURES,
        tables=EARLY_TABLES,
        gpu_model=config["gpu_model"],
    script:
        "../scripts/render.py"


rule render:
    """Every figure and report table the experiment asks for that its data can make (those
    of render_profiles linked in); those it cannot, with why, in report/figures_left_out.txt;
    the summary.
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


rule crate:
    """The run's provenance as a Workflow Run RO-Crate (mmbench/report/crate.py): the results
    folder described by ro-crate-metadata.json at its top (the workflow at its commit, the
    config, the GPUs, every cubin that ran, every output with its schema), made after every
    other output of the run.
    """
    input:
        RUN_OUTPUTS,
        timings=f"{R}/tables/timings.csv",
        manifests=manifests(),
    output:
        metadata=f"{R}/{crate.METADATA}",
        own=directory(f"{R}/{crate.OWN}"),
    # no benchmark: its file would be written after the crate has listed the run's files
    log:
        f"{R}/logs/crate.log",
    conda:
        "../envs/plots.yaml"
    params:
        config=config,
        name=f"mmbench: {EXPERIMENT_LABEL}",
        workflow_dir=workflow.basedir,
        snakemake_version=SNAKEMAKE_VERSION,
    script:
        "../scripts/crate.py"


# seconds of work on small tables: on the machine running Snakemake, not queued on a cluster
localrules:
    render,
    render_profiles,
    crate,
