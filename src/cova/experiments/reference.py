"""Numbers printed in the papers, for comparison columns in the report (never copied into our results).

Keys are (dataset, method) or (dataset, method, λ) with our dataset and registry names (λ: the `lam` grid
value of supervised baselines); values are percentages as printed.
"""

from __future__ import annotations

from typing import Any

REFERENCE: dict[str, dict[str, Any]] = {
    "cova_table_h2": {
        "source": "COVA Table H.2 (manual prototypes; ours: ring prototypes, spec §7)",
        "rows": {
            ("sinusoid", "cova_e1"): {"s_n": 70.1, "s_c": 99.4, "s_s": 99.4},
            ("sinusoid", "cova_e2"): {"s_n": 51.7, "s_c": 99.8, "s_s": 99.9},
            ("sinusoid", "cova_e3"): {"s_n": 59.3, "s_c": 99.0, "s_s": 99.3},
            ("sinusoid", "cova_e4"): {"s_n": 53.1, "s_c": 98.1, "s_s": 98.1},
            ("sinusoid", "cova_p1"): {"s_n": 94.2, "s_c": 94.4, "s_s": 94.3},
            ("sinusoid", "cova_p4"): {"s_n": 94.3, "s_c": 94.4, "s_s": 94.0},
            ("sinusoid", "eigen_cova"): {"s_n": 85.1, "s_c": 94.8, "s_s": 94.4},
            ("compound", "cova_e1"): {"s_n": 39.0, "s_c": 99.4, "s_s": 99.6},
            ("compound", "cova_e2"): {"s_n": 25.0, "s_c": 75.4, "s_s": 80.5},
            ("compound", "cova_e3"): {"s_n": 32.1, "s_c": 99.2, "s_s": 99.3},
            ("compound", "cova_e4"): {"s_n": 26.7, "s_c": 69.9, "s_s": 88.5},
            ("compound", "cova_p1"): {"s_n": 58.9, "s_c": 89.2, "s_s": 88.1},
            ("compound", "cova_p4"): {"s_n": 65.2, "s_c": 65.6, "s_s": 77.8},
            ("compound", "eigen_cova"): {"s_n": 41.9, "s_c": 96.3, "s_s": 96.7},
        },
    },
    "cova_table1": {
        "source": "COVA Table 1 (Cora; PCA-30, perplexity 30; supervised: intra-class distances shrunk by λ; "
                  "λ = 1 is the unsupervised method)",
        "rows": {
            ("cora", "supervised_sne", 1.0): {"s_s": 41.4, "s_n": 58.8},
            ("cora", "supervised_nse", 1.0): {"s_s": 36.7, "s_n": 59.0},
            ("cora", "supervised_tsne", 1.0): {"s_s": 39.1, "s_n": 60.1},
            ("cora", "supervised_sne", 0.7): {"s_s": 87.4, "s_n": 59.3},
            ("cora", "supervised_sne", 0.5): {"s_s": 97.5, "s_n": 59.3},
            ("cora", "supervised_sne", 0.1): {"s_s": 100.0, "s_n": 59.1},
            ("cora", "supervised_nse", 0.7): {"s_s": 65.6, "s_n": 57.6},
            ("cora", "supervised_nse", 0.5): {"s_s": 85.4, "s_n": 55.1},
            ("cora", "supervised_nse", 0.1): {"s_s": 94.7, "s_n": 53.1},
            ("cora", "supervised_tsne", 0.7): {"s_s": 88.7, "s_n": 61.1},
            ("cora", "supervised_tsne", 0.5): {"s_s": 99.7, "s_n": 60.1},
            ("cora", "supervised_tsne", 0.1): {"s_s": 100.0, "s_n": 59.5},
        },
    },
    "cova_table3": {
        "source": "COVA Table 3 (3-D synthetic sets, unsupervised, 30 effective neighbours)",
        "rows": {
            ("swiss_roll", "sne"): {"s_n": 84.3}, ("swiss_roll", "tsne"): {"s_n": 86.5},
            ("swiss_roll", "lle"): {"s_n": 42.0},
            ("cylinder1", "sne"): {"s_n": 79.8}, ("cylinder1", "tsne"): {"s_n": 74.9},
            ("cylinder1", "lle"): {"s_n": 94.0},
            ("cylinder2", "sne"): {"s_n": 77.4}, ("cylinder2", "tsne"): {"s_n": 79.4},
            ("cylinder2", "lle"): {"s_n": 87.6},
        },
    },
    "cova_table4": {
        "source": "COVA Table 4 (Cylinder2, supervised, λ = 0.1)",
        "rows": {
            ("cylinder2", "supervised_sne", 0.1): {"s_n": 87.8},
            ("cylinder2", "supervised_tsne", 0.1): {"s_n": 87.7},
        },
    },
}
