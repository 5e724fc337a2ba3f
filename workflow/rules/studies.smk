# Studies (config key `studies`): a user's data sets through the papers' protocols. Each protocol is an experiment
# rendered into results/studies/{study}/{name}.*; the study page collects them with every run's scores and scatter.

STUDY_NAMES = "|".join(re.escape(n) for n in PLAN.studies) or "(?!)"
STUDY_EXPERIMENTS = "|".join(re.escape(n) for n in PLAN.experiments if "study" in PLAN.experiments[n]) or "(?!)"


use rule experiment as study_experiment with:
    output:
        png=report(
            "results/studies/{study}/{name}.png",
            caption="../report/study_experiment.rst",
            category=lambda wc: study_category(wc.study),
            labels={"figure": "{name}"},
        ),
        csv="results/studies/{study}/{name}.csv",
        svg="results/studies/{study}/{name}.svg",
        html=report(
            "results/studies/{study}/{name}.html",
            caption="../report/study_experiment.rst",
            category=lambda wc: study_category(wc.study),
            labels={"table": "{name}"},
        ),
    log:
        "results/logs/studies/{study}/{name}.log",
    benchmark:
        "results/benchmarks/jobs/experiment/studies/{study}/{name}.tsv"
    wildcard_constraints:
        study=STUDY_NAMES,
        name=STUDY_EXPERIMENTS,


rule study:
    input:
        lambda wc: PLAN.study_inputs(wc.study),
    output:
        html=report(
            "results/studies/{study}/index.html",
            caption="../report/study.rst",
            category=lambda wc: study_category(wc.study),
            labels={"page": "overview"},
        ),
        csv="results/studies/{study}/scores.csv",
    log:
        "results/logs/studies/{study}/index.log",
    benchmark:
        "results/benchmarks/jobs/study/{study}.tsv"
    wildcard_constraints:
        study=STUDY_NAMES,
    conda:
        ENV
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        spec=lambda wc: json_arg(PLAN.study_spec(wc.study)),
    shell:
        "python -m cova study --spec @{params.spec} --html {output.html} --csv {output.csv} 2> {log}"
