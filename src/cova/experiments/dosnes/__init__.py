"""DOSNES (Lu, Yang & Corander 2016): the t-SNE and sphere figures (Figs. 1-4) and our measures."""
