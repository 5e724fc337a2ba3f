# Results back to users' tools (python -m cova export): per run a table (CSV, parquet) of its row ids, cohorts,
# coordinates and per-row outputs; per dataset one AnnData .h5ad with every run of the plan in obsm. Not part of
# `all`: build them with `snakemake export` (or a list of datasets' export_targets).


rule export_run:
    input:
        data=rules.dataset.output[0],
        inputs=rules.inputs.output[0],
        embedding=rules.embed.output[0],
    output:
        csv="results/{dataset}/{inputs_id}/{method}/{params_id}/embedding.csv",
        parquet="results/{dataset}/{inputs_id}/{method}/{params_id}/embedding.parquet",
    log:
        "results/logs/export/{dataset}/{inputs_id}/{method}/{params_id}.log",
    conda:
        ENV
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        name=lambda wc: PLAN.method_job(wc.method, wc.params_id).entry,
    shell:
        "python -m cova export --dataset {input.data} --inputs {input.inputs} --embedding {input.embedding}"
        " --name {params.name:q} --out {output.csv} {output.parquet} 2> {log}"


rule export_h5ad:
    input:
        data=rules.dataset.output[0],
        inputs=lambda wc: [PLAN.inputs_file(wc.dataset, inputs) for inputs, _, _ in export_runs(wc.dataset)],
        embeddings=lambda wc: [
            PLAN.run_file(wc.dataset, inputs, entry, "embedding.npz") for inputs, entry, _ in export_runs(wc.dataset)
        ],
    output:
        PLAN.export_h5ad("{dataset}"),
    log:
        "results/logs/export/{dataset}.log",
    conda:
        ENV
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        inputs=lambda wc, input: args_file(*input.inputs),
        embeddings=lambda wc, input: args_file(*input.embeddings),
        names=lambda wc: args_file(*[name for _, _, name in export_runs(wc.dataset)]),
    shell:
        "python -m cova export --dataset {input.data} --inputs @{params.inputs} --embedding @{params.embeddings}"
        " --name @{params.names} --out {output} 2> {log}"


rule export:
    input:
        export_targets(list(config["datasets"])),
