# nvcc builds one cubin per instantiation (a variant and one value of each of its compile-time
# parameters, named by their slug) for the GPU's architecture, and keeps ptxas's resource report
# (registers, shared memory, spills).


rule compile_kernel:
    input:
        src=kernel_source,
        headers=kernel_headers,
    output:
        cubin="results/build/{arch}/{variant}/{instance}.cubin",
        ptxas="results/build/{arch}/{variant}/{instance}.ptxas.txt",
    log:
        "results/logs/compile/{arch}/{variant}/{instance}.log",
    conda:
        ENV
    params:
        nvcc=nvcc,
    shell:
        "{params.nvcc} > {log} 2>&1 && cp {log} {output.ptxas}"


rule compile_all:
    """Every instantiation the registry can build, whatever the config asks (CI runs this for
    sm_80 and sm_90)."""
    input:
        [
            cubin_path(ARCH, v, instance_slug(params))
            for v, params in mmplan.all_instantiations(REGISTRY, ARCH)
        ],
    output:
        f"results/build/{ARCH}/all_cubins.txt",
    log:
        f"results/logs/compile/{ARCH}/all_cubins.log",
    conda:
        ENV
    shell:
        "ls {input} > {output} 2> {log}"
