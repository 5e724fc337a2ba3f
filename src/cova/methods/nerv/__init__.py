"""The NeRV family (Venna et al. 2010 and its supervised extension): NeRV and t-NeRV (:mod:`.nerv`), SNeRV with
the learning metric of a class posterior (:mod:`.snerv`), and the local MDS family LMDS, CCA and CDA
(:mod:`.lmds`), which the NeRV paper compares and which share its mean-scaled input distances."""
