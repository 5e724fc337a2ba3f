# Paper figures and tables (results/paper/{paper}/...). Only the experiments configured under `paper:` exist.
# Report categories: one per paper, named as the paper names itself (cova.experiments.report_text).

from cova.experiments.report_text import experiment_facts, paper_category, study_category

FIG1 = config.get("paper", {}).get("cova", {}).get("fig1")


EXPERIMENT_NAMES = "|".join(re.escape(n) for n in PLAN.experiments) or "(?!)"


if FIG1:

    rule cova_fig1:
        input:
            data=PLAN.dataset_path(FIG1["dataset"]),
            inputs=PLAN.inputs_file(FIG1["dataset"], FIG1["inputs"]),
            cova=PLAN.run_file(FIG1["dataset"], FIG1["inputs"], FIG1["cova"], "embedding.npz"),
            cova_scores=PLAN.run_file(FIG1["dataset"], FIG1["inputs"], FIG1["cova"], "scores.json"),
            tsne=PLAN.run_file(FIG1["dataset"], FIG1["inputs"], FIG1["tsne"], "embedding.npz"),
            tsne_scores=PLAN.run_file(FIG1["dataset"], FIG1["inputs"], FIG1["tsne"], "scores.json"),
        output:
            report(
                "results/paper/cova/fig1.png",
                caption="../report/cova_fig1.rst",
                category=paper_category("cova"),
                labels={"figure": "Fig. 1"},
            ),
        log:
            "results/logs/paper/cova_fig1.log",
        benchmark:
            "results/benchmarks/jobs/cova_fig1.tsv"
        conda:
            ENV
        resources:
            mem_mb=2000,
            runtime=10,
        shell:
            "python -m cova --threads {threads} fig1 --dataset {input.data} --inputs {input.inputs}"
            " --cova {input.cova} --tsne {input.tsne} --out {output} 2> {log}"


rule experiment:
    input:
        lambda wc: PLAN.experiment_inputs(wc.name),
    output:
        png=report(
            "results/paper/{paper}/{name}.png",
            caption="../report/experiment.rst",
            category=lambda wc: paper_category(wc.paper),
            labels={"figure": "{name}"},
        ),
        csv="results/paper/{paper}/{name}.csv",
        svg="results/paper/{paper}/{name}.svg",
        html=report(
            "results/paper/{paper}/{name}.html",
            caption="../report/experiment.rst",
            category=lambda wc: paper_category(wc.paper),
            labels={"table": "{name}"},
        ),
    log:
        "results/logs/paper/{paper}/{name}.log",
    benchmark:
        "results/benchmarks/jobs/experiment/{paper}/{name}.tsv"
    wildcard_constraints:
        paper="cova|nerv|dosnes|coembedding|featmap",
        name=EXPERIMENT_NAMES,
    conda:
        ENV
    threads: lambda wc: PLAN.experiment_resources(wc.name).get("threads", 1)
    resources:
        mem_mb=lambda wc: PLAN.experiment_resources(wc.name).get("mem_mb", 4000),
        runtime=lambda wc: PLAN.experiment_resources(wc.name).get("runtime", 20),
    params:
        spec=lambda wc: json_arg(PLAN.experiment_spec(wc.name)),
        about=lambda wc: experiment_facts(PLAN.experiment_spec(wc.name), PLAN.config["datasets"]),
    shell:
        "python -m cova --threads {threads} experiment --spec @{params.spec} --png {output.png} --csv {output.csv}"
        " --html {output.html} --svg {output.svg} 2> {log}"


rule paper_gaps:
    input:
        [e["csv"] for e in PLAN.reference_experiments().values()],
    output:
        csv="results/tables/paper_gaps.csv",
        html=report(
            "results/tables/paper_gaps.html",
            caption="../report/paper_gaps.rst",
            category="Tables",
            labels={"table": "paper vs ours: flagged numbers and causes"},
        ),
    log:
        "results/logs/tables/paper_gaps.log",
    benchmark:
        "results/benchmarks/jobs/paper_gaps.tsv"
    conda:
        ENV
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        experiments=lambda wc: json_arg(PLAN.reference_experiments()),
    shell:
        "python -m cova --threads {threads} gaps --experiments @{params.experiments} --csv {output.csv}"
        " --html {output.html} 2> {log}"


rule claims:
    output:
        "results/paper/claims.json",
    log:
        "results/logs/paper/claims.log",
    benchmark:
        "results/benchmarks/jobs/claims.tsv"
    params:
        # the claims' digest, not the claims: a change reruns the rule without printing every claim (sorted: the
        # order of the experiments in a config file changes no claim)
        digest=digest(sorted(PLAN.claims(), key=lambda c: c["id"])),
    run:
        write_json(output[0], PLAN.claims())


rule scorecard:
    input:
        claims=rules.claims.output[0],
        tables=PLAN.claim_tables(),
    output:
        csv=SCORECARD_OUTPUTS["csv"],
        html=report(
            SCORECARD_OUTPUTS["html"],
            caption="../report/scorecard.rst",
            category="Scorecard",
            labels={"table": "every claim of the papers and its verdict"},
        ),
    log:
        "results/logs/paper/scorecard.log",
    benchmark:
        "results/benchmarks/jobs/scorecard.tsv"
    conda:
        ENV
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        about=f"Configuration: {config_files()}.",
    shell:
        "python -m cova --threads {threads} scorecard --claims {input.claims} --csv {output.csv}"
        " --html {output.html} --about {params.about:q} 2> {log}"


# The committed record of the paper-scale run (docs/reproduction.md): only from the full config.yaml, so that a
# smaller configuration never overwrites it. `snakemake --cores 2 docs/reproduction.md`
if not workflow.overwrite_configfiles:

    rule reproduction_record:
        input:
            rules.scorecard.output.csv,
        output:
            "docs/reproduction.md",
        log:
            "results/logs/paper/reproduction_record.log",
        conda:
            ENV
        resources:
            mem_mb=500,
            runtime=5,
        params:
            jobs="results/benchmarks/jobs",
            repo=workflow.basedir,
            date=lambda wc: time.strftime("%Y-%m-%d"),
        shell:
            "python -m cova record --scorecard {input} --out {output} --repo {params.repo:q}"
            " --jobs {params.jobs} --date {params.date} --config config.yaml 2> {log}"
