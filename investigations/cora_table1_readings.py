"""COVA Table 1, unsupervised t-SNE cell (paper: S_s 39.1, S_n 60.1): which reading of the setting moves ours?

Independent of the pipeline's methods: openTSNE (perplexity 30, seed 0, one thread) on PCA-30 of four readings of
"the word vectors" (raw binary, L2-normalised rows, tf-idf, uncentred truncated SVD), then S_s and S_n measured in
that 30-d space under both κ̄ readings of Eq. G.2 (one κ̄ = ⌊0.9·min n_j⌋ for all classes, as the text says, and
κ̄_j = ⌊0.9·n_j⌋ per class) and S_n(κ̄) alone. S_n is also recomputed by brute force here (within-class ranks by a
stable sort, ties to the lower index; distances in Gram form, so rounding may swap near-ties: agreement to 0.01
points) as a check of ``cova.metrics.cohort.s_n``.

    python investigations/cora_table1_readings.py [--raw ../shared/datasets/cora] [--csv results/investigations/cora_table1_readings.csv]

Prints one row per reading (about a minute on 2 cores) and writes the CSV.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import openTSNE
import pandas as pd
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.preprocessing import normalize

from cova.datasets.cora import cora
from cova.metrics.cohort import s_n_readings, s_s


def s_n_curve(X: np.ndarray, Z: np.ndarray, y: np.ndarray, kappa_max: int) -> np.ndarray:
    """S_n(κ) of Eq. G.2 for κ = 1..kappa_max by brute force, for the check."""
    total = np.zeros(kappa_max)
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        orders = []
        for P in (X[idx], Z[idx]):
            g = P @ P.T
            sq = np.diag(g)
            D = sq[:, None] + sq[None] - 2 * g
            np.fill_diagonal(D, np.inf)
            orders.append(np.argsort(D, axis=1, kind="stable")[:, :kappa_max])
        for ox, oz in zip(*orders):
            rx = np.full(len(idx), kappa_max)
            rx[ox] = np.arange(kappa_max)
            rz = np.full(len(idx), kappa_max)
            rz[oz] = np.arange(kappa_max)
            both = np.maximum(rx, rz)
            total += np.cumsum(np.bincount(both[both < kappa_max], minlength=kappa_max))
    return total / (len(y) * np.arange(1, kappa_max + 1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--raw", default="../shared/datasets/cora")
    p.add_argument("--csv", default="results/investigations/cora_table1_readings.csv")
    a = p.parse_args()
    data = cora(a.raw)
    words, y = data.X.astype(float), data.labels
    spaces = {
        "PCA-30 of the binary words (the pipeline's)": PCA(30, random_state=0).fit_transform(words),
        "PCA-30 of L2-normalised words": PCA(30, random_state=0).fit_transform(normalize(words)),
        "PCA-30 of tf-idf words": PCA(30, random_state=0).fit_transform(
            TfidfTransformer().fit_transform(words).toarray()),
        "truncated SVD-30 (uncentred)": TruncatedSVD(30, random_state=0).fit_transform(words),
    }
    kbar = int(0.9 * np.bincount(y).min())
    rows = []
    for name, X in spaces.items():
        Z = np.asarray(openTSNE.TSNE(perplexity=30, random_state=0, n_jobs=1, verbose=False).fit(X))
        s_n, s_n_per_class = s_n_readings(X, Z, y)
        curve = s_n_curve(X, Z, y, kbar)
        if not np.isclose(curve.mean(), s_n, atol=1e-4):  # Gram-form distances here: near-ties may swap
            raise AssertionError(f"{name}: brute-force S_n {curve.mean()} differs from s_n {s_n}")
        rows.append({"input space": name, "S_s": 100 * s_s(Z, y), "S_n (one κ̄, the text)": 100 * s_n,
                     "S_n (κ̄ per class)": 100 * s_n_per_class, "S_n(κ̄) alone": 100 * curve[-1]})
        print(f"{name}: done", flush=True)
    table = pd.DataFrame(rows).round(1)
    print(table.to_string(index=False))
    Path(a.csv).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(a.csv, index=False)
    print(f"paper: S_s 39.1, S_n 60.1; wrote {a.csv}")


if __name__ == "__main__":
    main()
