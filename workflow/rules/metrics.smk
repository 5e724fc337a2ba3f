# Scores of each embedding, their aggregate table, and one scatter plot per embedding.


rule score:
    input:
        data="data/processed/{dataset}.npz",
        inputs="results/{dataset}/{inputs_id}/inputs.npz",
        embedding="results/{dataset}/{inputs_id}/{method}/{params_id}/embedding.npz",
    output:
        "results/{dataset}/{inputs_id}/{method}/{params_id}/scores.json",
    params:
        metrics=as_json(PLAN.metrics),
        ids=lambda wc: as_json(
            {
                "dataset": wc.dataset,
                "inputs": PLAN.inputs_name(wc.inputs_id),
                "inputs_id": wc.inputs_id,
                "method": wc.method,
                "method_entry": PLAN.method_job(wc.method, wc.params_id).entry,
                "params_id": wc.params_id,
            }
        ),
    log:
        "results/logs/score/{dataset}/{inputs_id}/{method}/{params_id}.log",
    conda:
        ENV
    threads: method_resource("threads", 1)
    resources:
        mem_mb=4000,
        runtime=60,
    shell:
        "python -m cova --threads {threads} score --dataset {input.data} --inputs {input.inputs}"
        " --embedding {input.embedding} --metrics {params.metrics:q} --ids {params.ids:q} --out {output} 2> {log}"


rule scatter:
    input:
        data="data/processed/{dataset}.npz",
        inputs="results/{dataset}/{inputs_id}/inputs.npz",
        embedding="results/{dataset}/{inputs_id}/{method}/{params_id}/embedding.npz",
        scores="results/{dataset}/{inputs_id}/{method}/{params_id}/scores.json",
    output:
        report(
            "results/{dataset}/{inputs_id}/{method}/{params_id}/scatter.png",
            caption="../report/scatter.rst",
            category="Embeddings",
            subcategory="{dataset}",
            labels={"dataset": "{dataset}", "inputs": "{inputs_id}", "method": "{method}", "run": "{params_id}"},
        ),
    params:
        title=lambda wc: f"{wc.dataset}: {PLAN.method_job(wc.method, wc.params_id).entry} ({wc.method})",
    log:
        "results/logs/scatter/{dataset}/{inputs_id}/{method}/{params_id}.log",
    conda:
        ENV
    resources:
        mem_mb=2000,
        runtime=10,
    shell:
        "python -m cova --threads {threads} scatter --dataset {input.data} --inputs {input.inputs}"
        " --embedding {input.embedding} --scores {input.scores} --title {params.title:q} --out {output} 2> {log}"


rule scores_table:
    input:
        PLAN.run_files("scores.json"),
    output:
        csv=report(
            "results/tables/scores.csv",
            caption="../report/scores.rst",
            category="Tables",
            labels={"table": "all scores (CSV)"},
        ),
        html=report(
            "results/tables/scores.html",
            caption="../report/scores.rst",
            category="Tables",
            labels={"table": "all scores"},
        ),
    log:
        "results/logs/tables/scores.log",
    conda:
        ENV
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "python -m cova --threads {threads} table --scores {input} --csv {output.csv} --html {output.html} 2> {log}"
