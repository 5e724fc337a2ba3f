"""The stochastic-neighbour family: SNE and exact t-SNE (:mod:`.sne`), the openTSNE t-SNE (:mod:`.tsne`), NSE and
Laplacian eigenmaps (:mod:`.nse`), their supervised variants (:mod:`.supervised`) and MRE, SNE with several
relations (:mod:`.mre`)."""
