# One embedding per (dataset, inputs, method, parameters).


rule embed:
    input:
        data="data/processed/{dataset}.npz",
        inputs="results/{dataset}/{inputs_id}/inputs.npz",
    output:
        "results/{dataset}/{inputs_id}/{method}/{params_id}/embedding.npz",
    params:
        method_params=lambda wc: as_json(PLAN.method_job(wc.method, wc.params_id).params),
        seed=PLAN.seed,
    log:
        "results/logs/embed/{dataset}/{inputs_id}/{method}/{params_id}.log",
    benchmark:
        "results/benchmarks/jobs/embed/{dataset}/{inputs_id}/{method}/{params_id}.tsv"
    conda:
        ENV
    threads: method_resource("threads", 1)
    resources:
        mem_mb=method_resource("mem_mb", 4000),
        runtime=method_resource("runtime", 120),
    shell:
        "python -m cova --threads {threads} embed --dataset {input.data} --inputs {input.inputs}"
        " --method {wildcards.method} --params {params.method_params:q} --seed {params.seed} --out {output} 2> {log}"
