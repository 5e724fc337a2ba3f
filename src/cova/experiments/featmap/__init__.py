"""featMAP (Yang, Sun, Gong & Yu 2022): the renderers of Table 1, Figs. 1 and 4-7 and Supp. Figs. 8-10."""
