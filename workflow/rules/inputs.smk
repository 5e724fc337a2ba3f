# Method inputs: kNN weight graph W, cohort confidences R, prototypes (cova.inputs.build_inputs).


rule inputs:
    input:
        rules.dataset.output,
    output:
        "results/{dataset}/{inputs_id}/inputs.npz",
    log:
        "results/logs/inputs/{dataset}/{inputs_id}.log",
    benchmark:
        "results/benchmarks/jobs/inputs/{dataset}/{inputs_id}.tsv"
    conda:
        ENV
    threads: inputs_resource("threads", 1)
    resources:
        mem_mb=inputs_resource("mem_mb", 4000),
        runtime=inputs_resource("runtime", 60),
    params:
        spec=lambda wc: json_arg(PLAN.inputs_spec(wc.inputs_id)),
        seed=PLAN.seed,
    shell:
        "python -m cova --threads {threads} inputs --dataset {input} --spec @{params.spec} --seed {params.seed}"
        " --out {output} 2> {log}"
