"""Figures and tables. Matplotlib runs on the non-interactive Agg backend."""

import matplotlib

matplotlib.use("Agg")
