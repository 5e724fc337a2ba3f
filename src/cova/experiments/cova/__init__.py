"""Renderers of the COVA paper's figures and tables: Fig. 1, Tables 1-2, the Cora (Sec. 4.3, H.3) and image-cohort
(Sec. 4.2, H.2) experiments."""
