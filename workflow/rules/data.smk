# Raw files (mirror directory first, then the canonical URL; sha256-verified) and one standard .npz per dataset.


rule fetch:
    output:
        "data/raw/{raw}/manifest.json",
    log:
        "results/logs/fetch/{raw}.log",
    benchmark:
        "results/benchmarks/jobs/fetch/{raw}.tsv"
    conda:
        ENV
    resources:
        mem_mb=1000,
        runtime=120,
    params:
        spec=lambda wc: json_arg(PLAN.fetch_spec(wc.raw)),
        mirrors=lambda wc: json_arg(PLAN.mirrors),
    shell:
        "python -m cova --threads {threads} fetch --spec @{params.spec} --mirrors @{params.mirrors}"
        " --dest data/raw/{wildcards.raw} 2> {log}"


rule dataset:
    input:
        lambda wc: PLAN.dataset_inputs(wc.dataset),
    output:
        "data/processed/{dataset}.npz",
    log:
        "results/logs/dataset/{dataset}.log",
    benchmark:
        "results/benchmarks/jobs/dataset/{dataset}.tsv"
    conda:
        ENV
    resources:
        mem_mb=8000,
        runtime=30,
    params:
        loader=lambda wc: PLAN.dataset(wc.dataset)["loader"],
        loader_params=lambda wc: json_arg(PLAN.loader_params(wc.dataset)),
        raw=lambda wc: PLAN.raw_dir_arg(wc.dataset),
    shell:
        "python -m cova --threads {threads} dataset --name {wildcards.dataset} --loader {params.loader}"
        " --params @{params.loader_params} {params.raw} --out {output} 2> {log}"


rule datasets_table:
    input:
        [PLAN.dataset_path(name) for name, _, _ in PLAN.datasets_info()],
    output:
        csv="results/tables/datasets.csv",
        html=report(
            "results/tables/datasets.html",
            caption="../report/datasets.rst",
            category="Tables",
            labels={"table": "datasets"},
        ),
    log:
        "results/logs/tables/datasets.log",
    benchmark:
        "results/benchmarks/jobs/datasets_table.tsv"
    conda:
        ENV
    resources:
        mem_mb=8000,
        runtime=10,
    params:
        datasets=lambda wc, input: args_file(*input),
        info=lambda wc: json_arg(PLAN.datasets_info()),
    shell:
        "python -m cova --threads {threads} datasets-table --datasets @{params.datasets} --info @{params.info}"
        " --csv {output.csv} --html {output.html} 2> {log}"
