# Performance and scaling benchmark. Not part of `all`: run it with
#   snakemake benchmarks --cores 2
# (config `benchmarks:`; the full sizes take ≈ 15 min on an idle 2-core machine; needs Fashion-MNIST in data/raw/fashion_mnist or
# /usr/share/datasets/fashion-mnist, otherwise synthetic blobs of the same shape). E2/E3 use the FFT repulsion at every
# n (method default "auto" would be exact, O(n²), up to 5,000 samples) and the momentum optimiser (one gradient per
# iteration, as openTSNE; "auto" would use Armijo up to 5,000 samples). DOSNES uses Barnes–Hut at every n (the 3-D
# counterpart of "fft"); its ratio_tsne is its time per iteration over openTSNE's. The plot goes into the HTML report:
#   snakemake all benchmarks --report results/report.html
# A quick run outside Snakemake:
#   python benchmarks/scaling.py --sizes 1000,5000 --out results/benchmarks/quick.csv

BENCH = {
    "sizes": [1000, 5000, 10000, 20000, 70000],
    "steps": ["all"],
    "max_n": {},
    "iters": 100,
    "trustworthiness_n": 10000,
    **config.get("benchmarks", {}),
}


rule benchmark_scaling:
    output:
        csv="results/benchmarks/scaling.csv",
        png=report(
            "results/benchmarks/scaling.png",
            caption="../report/benchmarks.rst",
            category="Performance",
            labels={"figure": "time against n"},
        ),
    log:
        "results/logs/benchmarks/scaling.log",
    benchmark:
        "results/benchmarks/jobs/benchmark_scaling.tsv"
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=8000,
        runtime=120,
    params:
        sizes=",".join(str(n) for n in BENCH["sizes"]),
        steps=",".join(BENCH["steps"]),
        caps=",".join(f"{k}={v}" for k, v in BENCH["max_n"].items()),
        iters=BENCH["iters"],
    shell:
        "python benchmarks/scaling.py --sizes {params.sizes} --methods {params.steps} --max-n '{params.caps}'"
        " --iters {params.iters} --repulsion fft --optimizer momentum --threads {threads} --step-timeout 900"
        " --cache {resources.tmpdir}/cova-benchmark-cache --out {output.csv} > {log} 2>&1"


rule benchmark_trustworthiness:
    output:
        "results/benchmarks/trustworthiness.csv",
    log:
        "results/logs/benchmarks/trustworthiness.log",
    benchmark:
        "results/benchmarks/jobs/benchmark_trustworthiness.tsv"
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        n=BENCH["trustworthiness_n"],
    shell:
        "python benchmarks/trustworthiness.py --data s_curve --n {params.n} --out {output} > {log} 2>&1"


rule benchmarks:
    input:
        rules.benchmark_scaling.output.csv,
        rules.benchmark_trustworthiness.output,
