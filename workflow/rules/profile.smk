# Profiler metrics (config `profile:`): one job per configuration under Nsight Compute and
# Nsight Systems, the device's measured ceilings, and the roofline table.


rule profile_ncu:
    """Nsight Compute on every configuration of the profile section in one run of the
    profiler, and each one's event-timed run (profile_batch.py): their rows, by configuration,
    for profile_kernel.
    """
    input:
        profile_cubins,
    output:
        f"{R}/profile/ncu_batch.json",
    log:
        f"{R}/logs/profile/ncu_batch.log",
    benchmark:
        f"{R}/benchmarks/profile/ncu_batch.tsv"
    priority: GPU_PRIORITY["profile"]
    conda:
        "../envs/gpu.yaml"
    threads: gpu_job_threads
    resources:
        gpu=1,
    params:
        entries=lambda w: ncu_batch_entries(),
        metric_set=config["profile"]["metric_set"],
        ncu=config["profile"]["ncu"],
        cupti=mmplan.cupti_wanted(config),
        serve=SERVE_WORKER,
    script:
        "../scripts/profile_batch.py"


rule profile_kernel:
    input:
        cubin=profile_cubin,
        # the configuration's Nsight Compute rows from the batch, where it has them
        ncu_batch=ncu_batch_table,
    output:
        table=f"{R}/profile/{{variant}}/{{instance}}_{{m}}x{{n}}x{{k}}.csv",
        # the profilers' own files: spec, event timing, Nsight Compute report, raw pages, logs
        reports=directory(f"{R}/profile/{{variant}}/{{instance}}_{{m}}x{{n}}x{{k}}"),
    log:
        f"{R}/logs/profile/{{variant}}/{{instance}}_{{m}}x{{n}}x{{k}}.log",
    benchmark:
        f"{R}/benchmarks/profile/{{variant}}/{{instance}}_{{m}}x{{n}}x{{k}}.tsv"
    priority: GPU_PRIORITY["profile"]
    conda:
        "../envs/gpu.yaml"
    threads: gpu_job_threads
    resources:
        # none where the batch gives it everything (a local run, no Nsight Systems): it takes
        # the batch's rows, and holds the GPU's lock (service/gpus.py) where it must run more
        gpu=profile_job_gpus,
    params:
        spec=profile_spec,
        tools={k: config["profile"][k] for k in ("ncu", "nsys")}
        | {"cupti": mmplan.cupti_wanted(config)},
        serve=SERVE_WORKER,
    script:
        "../scripts/profile_kernel.py"


rule metrics_table:
    input:
        profile_outputs,
    output:
        f"{R}/tables/metrics.csv",
    log:
        f"{R}/logs/aggregate/metrics.log",
    benchmark:
        f"{R}/benchmarks/aggregate/metrics.tsv"
    conda:
        "../envs/tables.yaml"
    script:
        "../scripts/concat_tables.py"


rule compile_microbench:
    input:
        src=str(KERNELS / "microbench" / "peak.cu"),
        rebuild=build_ticket,
    output:
        cubin="results/build/{arch}/microbench/peak.cubin",
        sha="results/build/{arch}/microbench/peak.sha256",
    log:
        "results/logs/compile/{arch}/microbench/peak.log",
    benchmark:
        "results/benchmarks/compile/{arch}/microbench/peak.tsv"
    conda:
        "../envs/compile.yaml"
    params:
        arch=lambda w: w.arch,
        params={},
        what="the ceilings microbenchmark",
    script:
        # no path reaches a shell (the checkout's path may hold spaces or shell syntax)
        "../scripts/compile_kernel.py"


rule device_ceilings:
    input:
        cubin=lambda w: f"results/build/{arch()}/microbench/peak.cubin",
    output:
        f"{R}/tables/ceilings.csv",
    log:
        f"{R}/logs/profile/ceilings.log",
    benchmark:
        f"{R}/benchmarks/profile/ceilings.tsv"
    priority: GPU_PRIORITY["ceilings"]
    conda:
        "../envs/gpu.yaml"
    threads: gpu_job_threads
    resources:
        gpu=1,
    script:
        "../scripts/ceilings_table.py"


rule roofline_table:
    input:
        metrics=f"{R}/tables/metrics.csv",
        ceilings=f"{R}/tables/ceilings.csv",
    output:
        f"{R}/tables/roofline.csv",
    log:
        f"{R}/logs/aggregate/roofline.log",
    benchmark:
        f"{R}/benchmarks/aggregate/roofline.tsv"
    conda:
        "../envs/tables.yaml"
    script:
        "../scripts/roofline_table.py"


rule nvprof_metrics_table:
    input:
        f"{R}/tables/metrics.csv",
    output:
        csv=f"{R}/tables/nvprof_metrics.csv",
        md=f"{R}/tables/nvprof_metrics.txt",
    log:
        f"{R}/logs/aggregate/nvprof_metrics.log",
    benchmark:
        f"{R}/benchmarks/aggregate/nvprof_metrics.tsv"
    conda:
        "../envs/tables.yaml"
    script:
        "../scripts/nvprof_metrics_table.py"


# seconds of work on small tables: on the machine running Snakemake, not queued on a cluster
localrules:
    metrics_table,
    roofline_table,
    nvprof_metrics_table,
