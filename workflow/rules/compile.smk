# nvcc builds one cubin per instantiation (a variant and one value of each of its compile-time
# parameters, named by their slug) for the GPU's architecture, and keeps ptxas's resource report
# (registers, shared memory, spills), gathered into tables/resources.csv.


# the variants built as shared libraries (registry `backend: shared`), those Triton lowers
# (`backend: triton`) and the others, each built by its own rule (their ptxas reports and
# digests have the same names)
SHARED_VARIANTS = "|".join(v.name for v in REGISTRY.values() if v.shared) or "(?!)"
TRITON_VARIANTS = (
    "|".join(v.name for v in REGISTRY.values() if v.backend == "triton") or "(?!)"
)
CUBIN_VARIANTS = "|".join(v.name for v in REGISTRY.values() if v.backend == "cubin")


rule compile_kernel:
    input:
        src=kernel_source,
        headers=kernel_headers,
        # raised when the cubin is found changed since its build (common.smk build_ticket)
        rebuild=build_ticket,
    output:
        cubin="results/build/{arch}/{variant}/{instance}.cubin",
        ptxas="results/build/{arch}/{variant}/{instance}.ptxas.txt",
        # the cubin's sha256 as built: a cubin changed since is built again (common.smk)
        sha="results/build/{arch}/{variant}/{instance}.sha256",
    log:
        "results/logs/compile/{arch}/{variant}/{instance}.log",
    benchmark:
        "results/benchmarks/compile/{arch}/{variant}/{instance}.tsv"
    wildcard_constraints:
        variant=CUBIN_VARIANTS,
    conda:
        "../envs/compile.yaml"
    params:
        # the variant's own architecture where it declares one (sm_90a)
        arch=lambda w: REGISTRY[w.variant].arch or w.arch,
        # its parameters and the registry's derived facts, each -D<NAME>=<value>
        params=lambda w: REGISTRY[w.variant].defines(
            REGISTRY[w.variant].instance(w.instance)
        ),
        what=lambda w: f"{w.variant} {w.instance}",
        sources=sources_sha,
        # the entry points the measurement loads: each one checked in ptxas's report
        entries=lambda w: list(REGISTRY[w.variant].entry_points),
    script:
        # no value reaches a shell: nvcc runs on the bare file name in the kernel's folder
        "../scripts/compile_kernel.py"


# a variant built as a shared library (registry `backend: shared`, e.g. CUTLASS's GEMM), from its
# source and the installed header libraries it names (`libraries`), compiled as compile_kernel
# compiles a cubin; its C entry points checked among what it exports
rule compile_library:
    input:
        src=kernel_source,
        headers=kernel_headers,
        rebuild=build_ticket,
    output:
        library="results/build/{arch}/{variant}/{instance}.so",
        ptxas="results/build/{arch}/{variant}/{instance}.ptxas.txt",
        sha="results/build/{arch}/{variant}/{instance}.sha256",
    log:
        "results/logs/compile/{arch}/{variant}/{instance}.log",
    benchmark:
        "results/benchmarks/compile/{arch}/{variant}/{instance}.tsv"
    wildcard_constraints:
        variant=SHARED_VARIANTS,
    conda:
        "../envs/compile.yaml"
    params:
        arch=lambda w: REGISTRY[w.variant].arch or w.arch,
        params=lambda w: REGISTRY[w.variant].defines(
            REGISTRY[w.variant].instance(w.instance)
        ),
        what=lambda w: f"{w.variant} {w.instance}",
        sources=sources_sha,
        entries=lambda w: list(REGISTRY[w.variant].entry_points),
        shared=True,
        libraries=lambda w: list(REGISTRY[w.variant].libraries),
    script:
        "../scripts/compile_kernel.py"


# a Triton kernel (registry `backend: triton`): Triton's compiler lowers the file's function
# to PTX for the instantiation, ptxas assembles it into a cubin that names itself; Triton's
# launch facts (dynamic shared memory, warps, scratch) beside it (mmbench/plan/triton_build.py)
rule compile_triton:
    input:
        src=kernel_source,
        rebuild=build_ticket,
    output:
        cubin="results/build/{arch}/{variant}/{instance}.cubin",
        ptxas="results/build/{arch}/{variant}/{instance}.ptxas.txt",
        sha="results/build/{arch}/{variant}/{instance}.sha256",
        launch="results/build/{arch}/{variant}/{instance}.triton.json",
    log:
        "results/logs/compile/{arch}/{variant}/{instance}.log",
    benchmark:
        "results/benchmarks/compile/{arch}/{variant}/{instance}.tsv"
    wildcard_constraints:
        variant=TRITON_VARIANTS,
    conda:
        "../envs/triton.yaml"
    params:
        arch=lambda w: REGISTRY[w.variant].arch or w.arch,
        params=lambda w: REGISTRY[w.variant].defines(
            REGISTRY[w.variant].instance(w.instance)
        ),
        what=lambda w: f"{w.variant} {w.instance}",
        sources=sources_sha,
        symbol=lambda w: REGISTRY[w.variant].symbol,
    script:
        "../scripts/compile_triton.py"


rule compile_baseline_source:
    """A baseline build from another kernel file (baseline={variant: V, source: FILE}),
    compiled as compile_kernel compiles V (or with the -D flags of the baseline's own
    `registry`), its includes found beside it or in kernels/.
    """
    input:
        src=baseline_source,
    output:
        cubin=f"{R}/pairs/build/{{arch}}/{{variant}}/{{instance}}.cubin",
        sha=f"{R}/pairs/build/{{arch}}/{{variant}}/{{instance}}.sha256",
    log:
        f"{R}/logs/compile/baseline/{{arch}}/{{variant}}/{{instance}}.log",
    conda:
        "../envs/compile.yaml"
    params:
        arch=lambda w: REGISTRY[w.variant].arch or w.arch,
        params=baseline_defines,
        what=lambda w: f"{w.variant} {w.instance} (baseline source)",
        headers=str(KERNELS),
        name=lambda w: REGISTRY[w.variant].source,
        # the pair job loads the variant's entry points from the baseline's cubin too
        entries=lambda w: list(REGISTRY[w.variant].entry_points),
    script:
        "../scripts/compile_kernel.py"


rule compile:
    """Every instantiation the registry can build of the config's variants (all their parameter
    values, whatever tiles or params choose): a new or edited kernel built alone, e.g.
    `snakemake --cores 2 compile --config variants=[my_kernel] arch=sm_90`."""
    input:
        lambda w: buildable_cubins(config["variants"]),


rule compile_all:
    """Every instantiation the registry can build, whatever the config asks (CI runs this for
    sm_80 and sm_90)."""
    input:
        lambda w: buildable_cubins(),
    output:
        f"results/build/{ARCH}/all_cubins.txt",
    log:
        f"results/logs/compile/{ARCH}/all_cubins.log",
    conda:
        "../envs/compile.yaml"
    shell:
        # every path quoted (:q): no value reaches the shell unquoted
        "ls {input:q} > {output:q} 2> {log:q}"


rule resources_table:
    input:
        planned_ptxas_reports,
    output:
        f"{R}/tables/resources.csv",
    log:
        f"{R}/logs/aggregate/resources.log",
    benchmark:
        f"{R}/benchmarks/aggregate/resources.tsv"
    conda:
        "../envs/tables.yaml"
    params:
        registry=REGISTRY_FILE,
    script:
        "../scripts/resources_table.py"


# seconds of work on small tables: on the machine running Snakemake, not queued on a cluster (nvcc runs are
# grouped into cluster jobs: profiles/slurm)
localrules:
    compile,
    compile_all,
    resources_table,
