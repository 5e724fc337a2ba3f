"""The co-embedding paper's figures (Wu, Mu, Liatsis & Goulermas): maps of row and column objects, measures against
the embedding dimension or the number of selected words, and the time against the data size."""
