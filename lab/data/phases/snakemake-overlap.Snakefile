# a stand-in of the pipeline's job kinds, for the phases benchmark's log reader
workflow.register_resource("gpu", 1)
rule all:
    input: "out/timings.csv"
rule compile_kernel:
    output: "out/{v}.cubin"
    shell: "sleep 2; touch {output}"
rule measure_variant:
    input: "out/{v}.cubin"
    output: "out/{v}.csv"
    threads: 0
    resources: gpu=1
    priority: 20
    shell: "sleep 3; touch {output}"
rule timings_table:
    input: expand("out/{v}.csv", v=["a", "b", "c"])
    output: "out/timings.csv"
    shell: "sleep 2; touch {output}"
