"""The t-SNE optimisation schedule of :func:`cova.manifolds.optimize.momentum_gradient_descent`, declared once:
the reference defaults (van der Maaten & Hinton 2008, Sec. 3.4, and their ``tsne.m``) and the rule of
``learning_rate="auto"``; the values each setting accepts are
:data:`cova.methods.base.TSNE_SCHEDULE_CONSTRAINTS` (an estimators' table: the constraint building blocks import
scikit-learn, which a score job does not load).

Every estimator that runs this loop with t-SNE's schedule (SNE, exact t-SNE, supervised SNE, DOSNES, t-SNE on an
affinity graph) merges those constraints into its ``_parameter_constraints`` and takes its defaults from
:data:`TSNE_SCHEDULE`; what differs between them (learning rate, early exaggeration) is set by each. The openTSNE and scikit-learn wrappers pass their own libraries' schedules on (their ``max_iter`` means
other things) and are not declared here."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TSNE_SCHEDULE", "TsneSchedule", "tsne_learning_rate"]

@dataclass(frozen=True)
class TsneSchedule:
    """The settings of the reference schedule that every t-SNE-schedule estimator shares."""

    max_iter: int = 1000
    momentum: float = 0.5
    final_momentum: float = 0.8
    momentum_switch_iter: int = 250
    min_gain: float = 0.01


#: The reference schedule: 1000 iterations, momentum 0.5 before iteration 250 and 0.8 from it, delta-bar-delta
#: gains floored at 0.01.
TSNE_SCHEDULE = TsneSchedule()

def tsne_learning_rate(n: int, exaggeration: float = 1.0, *, floor: float = 50.0,
                       gradient_factor: float = 4.0) -> float:
    """The learning rate ``"auto"`` stands for: ``max(n / (gradient_factor · α), floor)`` for n points and early
    exaggeration α (1 when there is none).

    This is the rule η = n / α of Belkina et al. (2019), which openTSNE applies to a gradient without the factor 4 of
    t-SNE's Eq. 5; for the gradients here, which include it, ``gradient_factor`` = 4 gives scikit-learn's
    ``max(n / α / 4, 50)`` (exact t-SNE, DOSNES and t-SNE on a graph with ``floor`` = 50; COVA-E2/E3's momentum
    optimiser with α = 1 and no floor, ``floor`` = 0: η = l / 4). The cohort prototype generator keeps openTSNE's form
    with α = 12 (``gradient_factor`` = 1) and ``floor`` = 10 for a handful of points
    (:func:`cova.cohorts.prototypes.tsne_prototypes`)."""
    return max(n / (gradient_factor * float(exaggeration)), floor)
