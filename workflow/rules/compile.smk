# nvcc builds one cubin per instantiation (variant x dtype x tile x coarsening factor) for the
# GPU's architecture, and keeps ptxas's resource report (registers, shared memory, spills).


rule compile_kernel:
    input:
        src=kernel_source,
        headers=kernel_headers,
    output:
        cubin="results/build/{arch}/{variant}/{dtype}_t{tile}_f{coarsen}.cubin",
        ptxas="results/build/{arch}/{variant}/{dtype}_t{tile}_f{coarsen}.ptxas.txt",
    log:
        "results/logs/compile/{arch}/{variant}/{dtype}_t{tile}_f{coarsen}.log",
    conda:
        ENV
    params:
        nvcc=lambda w, input, output: shlex.join(
            nvcc_command(input.src, output.cubin, w.arch, w.dtype, w.tile, w.coarsen)
        ),
    shell:
        "{params.nvcc} > {log} 2>&1 && cp {log} {output.ptxas}"


rule compile_all:
    """Every instantiation the registry can build, whatever the config asks (CI runs this for
    sm_80 and sm_90)."""
    input:
        [cubin_path(ARCH, *inst) for inst in mmplan.all_instantiations(REGISTRY)],
    output:
        f"results/build/{ARCH}/all_cubins.txt",
    log:
        f"results/logs/compile/{ARCH}/all_cubins.log",
    conda:
        ENV
    shell:
        "ls {input} > {output} 2> {log}"
