# One embedding per (dataset, inputs, method, parameters); SNeRV and PE read a class posterior fitted once per
# (dataset, inputs, mixture settings).


rule posterior:
    input:
        data=rules.dataset.output[0],
        inputs=rules.inputs.output[0],
    output:
        "results/{dataset}/{inputs_id}/class_posterior/{posterior_id}.npz",
    log:
        "results/logs/posterior/{dataset}/{inputs_id}/{posterior_id}.log",
    benchmark:
        "results/benchmarks/jobs/posterior/{dataset}/{inputs_id}/{posterior_id}.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        settings=lambda wc: json_arg(PLAN.posterior_settings[wc.posterior_id]),
    shell:
        "python -m cova --threads {threads} posterior --dataset {input.data} --inputs {input.inputs}"
        " --settings @{params.settings} --out {output} 2> {log}"


rule embed:
    input:
        data=rules.dataset.output[0],
        inputs=rules.inputs.output[0],
        posterior=posterior_input,
    output:
        "results/{dataset}/{inputs_id}/{method}/{params_id}/embedding.npz",
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
    params:
        method_params=lambda wc: json_arg(PLAN.method_job(wc.method, wc.params_id).params),
        seed=PLAN.seed,
        posterior=lambda wc, input: f"--posterior {input.posterior}" if input.posterior else "",
    shell:
        "python -m cova --threads {threads} embed --dataset {input.data} --inputs {input.inputs}"
        " --method {wildcards.method} --params @{params.method_params} --seed {params.seed} {params.posterior}"
        " --out {output} 2> {log}"
