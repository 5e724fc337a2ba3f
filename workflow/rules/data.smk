# Datasets: one standard .npz per configured dataset (cova.datasets.load).


rule dataset:
    output:
        "data/processed/{dataset}.npz",
    params:
        loader=lambda wc: PLAN.dataset(wc.dataset)["loader"],
        loader_params=lambda wc: as_json(PLAN.dataset(wc.dataset).get("params", {})),
    log:
        "results/logs/dataset/{dataset}.log",
    conda:
        ENV
    resources:
        mem_mb=2000,
        runtime=30,
    shell:
        "python -m cova dataset --name {wildcards.dataset} --loader {params.loader}"
        " --params {params.loader_params:q} --out {output} 2> {log}"
