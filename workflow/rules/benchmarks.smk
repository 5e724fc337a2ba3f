# Performance and scaling benchmark (issue #8). Not part of `all`: run it with
#   snakemake benchmarks --cores 2 --configfile config/demo.yaml
# (≈ 25-40 min on 2 cores; needs Fashion-MNIST in data/raw/fashion_mnist or /usr/share/datasets/fashion-mnist,
# otherwise synthetic blobs of the same shape). E2/E3 use the FFT repulsion at every n (method default "auto" would
# be exact, O(n²), up to 5,000 samples) and the momentum optimiser (one gradient per iteration, as openTSNE; "auto"
# would use Armijo up to 5,000 samples). A quick run outside Snakemake:
#   python benchmarks/scaling.py --sizes 1000,5000 --out results/benchmarks/quick.csv


rule benchmarks:
    output:
        csv="results/benchmarks/scaling.csv",
        png="results/benchmarks/scaling.png",
    log:
        "results/logs/benchmarks/scaling.log",
    params:
        sizes="1000,5000,10000,20000,70000",
        caps="p1=20000,umap=20000",
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=8000,
        runtime=120,
    shell:
        "python benchmarks/scaling.py --sizes {params.sizes} --max-n {params.caps} --repulsion fft --optimizer momentum --threads {threads}"
        " --step-timeout 900 --cache {resources.tmpdir}/cova-benchmark-cache --out {output.csv} > {log} 2>&1"
