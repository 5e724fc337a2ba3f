"""Numbers printed in the papers, for comparison columns in the report (never copied into our results).

Keys are (dataset, method) with our dataset and registry names; values are percentages as printed.
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
}
