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
    benchmark:
        "results/benchmarks/compile/{arch}/{variant}/{instance}.tsv"
    conda:
        "../envs/compile.yaml"
    params:
        nvcc=nvcc,
        sources=sources_sha,
    shell:
        # on failure, the compiler's first error lines go to the console too
        "{params.nvcc} > {log} 2>&1 && cp {log} {output.ptxas} || "
        "{{ echo 'nvcc failed for {wildcards.variant} {wildcards.instance}:' >&2; "
        "grep -m 5 -E 'error|fatal' {log} >&2; exit 1; }}"


rule compile_all:
    """Every instantiation the registry can build, whatever the config asks (CI runs this for
    sm_80 and sm_90)."""
    input:
        lambda w: [
            cubin_path(arch(), v, slug(params))
            for v, params in mmplan.all_instantiations(REGISTRY, arch())
        ],
    output:
        f"results/build/{ARCH}/all_cubins.txt",
    log:
        f"results/logs/compile/{ARCH}/all_cubins.log",
    conda:
        "../envs/compile.yaml"
    shell:
        "ls {input} > {output} 2> {log}"
