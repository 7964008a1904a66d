# One measurement job per variant: every instantiation (element type and parameter values),
# size and memory mode of that variant in one process (so hundreds of small configurations do
# not pay hundreds of process and CUDA-context start-ups), while an edited kernel file reruns
# only its variant. Besides its table, the job keeps every configuration's timed samples
# (compare.smk judges two runs on them) and a copy of all three files under
# archive/<variant>/<source hash>/, so the rows of an edited kernel's earlier source are kept
# (baseline=previous).


rule measure_variant:
    input:
        unpack(variant_cubins),
    output:
        table=f"{R}/runs/{{variant}}.csv",
        samples=f"{R}/runs/{{variant}}.samples.json.gz",
        manifest=f"{R}/runs/{{variant}}.manifest.json",
    log:
        f"{R}/logs/measure/{{variant}}.log",
    benchmark:
        f"{R}/benchmarks/measure/{{variant}}.tsv"
    priority: GPU_PRIORITY["measure"]
    conda:
        "../envs/gpu.yaml"
    threads: gpu_job_threads
    resources:
        gpu=1,
    params:
        configurations=lambda w: [c.as_dict() for c in PLAN.runs[w.variant]],
        instantiations=variant_cubins,
        sources=variant_sources,
        # the registry's launch spec (grid, block, cluster, shared memory, arguments, reach):
        # an edit re-measures the variant, as an edited kernel source does
        launch=lambda w: REGISTRY[w.variant].launch_sha(),
        sampling=config["sampling"],
        freivalds_vectors=config["freivalds_vectors"],
        repo=str(REPO),
        registry=REGISTRY_FILE,
        serve=SERVE_WORKER,
    script:
        "../scripts/measure.py"


# Two builds of one variant measured side by side, for a paired comparison (compare.smk judges
# them): this run's and the baseline build's (baseline=previous, itself, or {variant: ...}).
rule pair_variant:
    """Two builds of one variant side by side, in one worker process on one GPU
    (mmbench/measure/paired.py): this run's and the baseline build's (plan/pairs.py).
    """
    input:
        unpack(pair_inputs),
    output:
        table=f"{R}/pairs/{{variant}}.csv",
        samples=f"{R}/pairs/{{variant}}.samples.json.gz",
    log:
        f"{R}/logs/pairs/{{variant}}.log",
    benchmark:
        f"{R}/benchmarks/pairs/{{variant}}.tsv"
    priority: GPU_PRIORITY["measure"]
    conda:
        "../envs/gpu.yaml"
    threads: gpu_job_threads
    resources:
        gpu=1,
    params:
        configurations=pair_configurations,
        instantiations=pair_cubins,
        baseline=lambda w: paired_builds(w.variant),
        sources=variant_sources,
        launch=lambda w: REGISTRY[w.variant].launch_sha(),
        sampling=config["sampling"],
        pairing=config["compare"]["pairs"],
        freivalds_vectors=config["freivalds_vectors"],
        registry=REGISTRY_FILE,
        baseline_registry=baseline_registry_file,
        serve=SERVE_WORKER,
    script:
        "../scripts/measure_pairs.py"
