"""Co-embeddings of the two sets of a relation (Wu, Mu, Liatsis & Goulermas 2017): the proposed model
(:mod:`.coembed`) and its baselines CA (:mod:`.ca`), ACAS (:mod:`.acas`), CODE (:mod:`.code`) and MKPE (:mod:`.mkpe`)."""
