# Scores of each embedding with its scatter plot (one job: one process start per run), the aggregate table, and
# the time table of every job (from the benchmark files).


rule score:
    input:
        data=rules.dataset.output[0],
        inputs=rules.inputs.output[0],
        embedding=rules.embed.output[0],
    output:
        scores="results/{dataset}/{inputs_id}/{method}/{params_id}/scores.json",
        # Not in the HTML report: one scatter per run made the CI report 19.8 MB, half of it these plots
        # (docs/decisions.md, 'The HTML report'); the experiments' figures and the study pages show the runs.
        scatter="results/{dataset}/{inputs_id}/{method}/{params_id}/scatter.png",
        per_point="results/{dataset}/{inputs_id}/{method}/{params_id}/per_point.npz",
    log:
        "results/logs/score/{dataset}/{inputs_id}/{method}/{params_id}.log",
    benchmark:
        "results/benchmarks/jobs/score/{dataset}/{inputs_id}/{method}/{params_id}.tsv"
    conda:
        ENV
    threads: method_resource("threads", 1)
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        run=lambda wc, output: os.path.dirname(output.scores),
        metrics=lambda wc: json_arg(PLAN.run_metrics(wc.dataset, wc.inputs_id, wc.method, wc.params_id)),
        ids=lambda wc: json_arg(
            {
                "dataset": wc.dataset,
                "inputs": PLAN.inputs_name(wc.inputs_id),
                "inputs_id": wc.inputs_id,
                "method": wc.method,
                "method_entry": PLAN.method_job(wc.method, wc.params_id).entry,
                "params_id": wc.params_id,
            }
        ),
    shell:
        "python -m cova --threads {threads} score --dataset {input.data} --inputs {input.inputs} --run {params.run}"
        " --metrics @{params.metrics} --ids @{params.ids} 2> {log}"


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
    benchmark:
        "results/benchmarks/jobs/scores_table.tsv"
    conda:
        ENV
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scores=lambda wc, input: args_file(*input),
    shell:
        "python -m cova --threads {threads} table --scores @{params.scores} --csv {output.csv} --html {output.html} 2> {log}"


rule timing_plan:
    output:
        "results/benchmarks/plan.json",
    log:
        "results/logs/tables/timing_plan.log",
    benchmark:
        "results/benchmarks/jobs/timing_plan.tsv"
    params:
        plan=PLAN.timing_plan(),
    run:
        write_json(output[0], params.plan)


rule timings:
    input:
        targets=PLAN.all_targets(timings=False),
        plan=rules.timing_plan.output[0],
    output:
        csv="results/tables/timings.csv",
        html=report(
            "results/tables/timings.html",
            caption="../report/timings.rst",
            category="Performance",
            labels={"table": "time per rule and per experiment"},
        ),
        png=report(
            "results/tables/timings.png",
            caption="../report/timings.rst",
            category="Performance",
            labels={"figure": "time per rule and per experiment"},
        ),
    log:
        "results/logs/tables/timings.log",
    benchmark:
        "results/benchmarks/jobs/timings.tsv"
    conda:
        ENV
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "python -m cova --threads {threads} timings --jobs results/benchmarks/jobs --plan {input.plan} --csv {output.csv}"
        " --html {output.html} --png {output.png} 2> {log}"
