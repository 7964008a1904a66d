# One measurement job per variant: every dtype, size, tile, coarsening factor and memory mode of
# that variant in one process (so hundreds of small configurations do not pay hundreds of
# process and CUDA-context start-ups), while an edited kernel file reruns only its variant.


rule measure_variant:
    input:
        cubins=variant_cubins,
    output:
        table=f"{R}/runs/{{variant}}.csv",
        manifest=f"{R}/runs/{{variant}}.manifest.json",
    log:
        f"{R}/logs/measure/{{variant}}.log",
    benchmark:
        f"{R}/benchmarks/measure/{{variant}}.tsv"
    conda:
        ENV
    resources:
        gpu=1,
    params:
        configurations=lambda w: [c.as_dict() for c in PLAN.runs[w.variant]],
        instantiations=lambda w: [
            [dtype, tile, f, cubin_path(ARCH, v, dtype, tile, f)]
            for v, dtype, tile, f in PLAN.instantiations
            if v == w.variant
        ],
        sources=variant_sources,
        sampling=config["sampling"],
        freivalds_vectors=config["freivalds_vectors"],
        repo=workflow.basedir,
        registry=str(KERNELS / "registry.yaml"),
    script:
        "../scripts/measure.py"
