"""Baselines of the COVA and NeRV comparisons that are no family of their own: scikit-learn and library wrappers
(:mod:`.sklearn_baselines`, :mod:`.library_baselines`), the semidefinite MVU family (:mod:`.mvu`), LLC, LDMGI, MMA,
MCML, PE, deep embedding and supervised Isomap."""
