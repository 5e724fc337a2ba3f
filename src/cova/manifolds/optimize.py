"""The two solvers of the package, each taking the manifold as a parameter (:mod:`cova.manifolds.base`):

- :func:`riemannian_gradient_descent`: Riemannian gradient descent with Armijo backtracking (COVA Table F.1,
  Eq. 19), and :func:`sgd_batches`, its sample-batch variant (Table F.2);
- :func:`momentum_gradient_descent`: the fixed-step momentum + delta-bar-delta gains scheme of t-SNE
  (van der Maaten & Hinton 2008, Sec. 3.4; Jacobs 1988), one gradient evaluation per iteration, with an optional
  early-exaggeration phase.

COVA-E2–E4 run on :class:`~.noncompact_stiefel.NoncompactStiefel`, P1–P4 on :class:`~.stiefel.Stiefel`, SNE,
t-SNE and the prototype generators on :class:`~.euclidean.Euclidean` with re-centring. The paper's "standard line
search" is taken to be Armijo backtracking.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from ..errors import UserError
from ..progress import Progress, ticking
from .base import FunctionManifold, Manifold, accepts_keyword

log = logging.getLogger("cova")

FunAndGrad = Callable[[np.ndarray], tuple[float, np.ndarray]]
Retraction = Callable[..., np.ndarray]
Projection = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: Gains rules of :func:`momentum_gradient_descent`.
GAINS_RULES: tuple[str, ...] = ("reference", "offset", "sign")


@dataclass
class OptimizeResult:
    """Outcome of :func:`riemannian_gradient_descent`, :func:`momentum_gradient_descent` or :func:`sgd_batches`.

    ``history`` holds f at x0 and after every accepted step (non-increasing within one objective; Armijo) or at
    the log points (momentum); ``grad_norm`` is the Frobenius norm of the Riemannian gradient at ``x``;
    ``converged`` is True when it fell to ``gtol`` times the initial norm; ``step`` is the last accepted step size
    γ (Armijo) or the learning rate (momentum); ``message`` says why it stopped.
    """

    x: np.ndarray
    fun: float
    n_iter: int
    grad_norm: float
    history: list[float] = field(default_factory=list)
    converged: bool = False
    message: str = ""
    step: float = 1.0


def euclidean_projection(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Identity tangent projection (noncompact Stiefel / open subsets of R^{l×k})."""
    return g


def _manifold(manifold: Manifold | None, retract: Retraction | None, project: Projection | None) -> Manifold:
    """The manifold a solver runs on: ``manifold``, or one built from a ``retract``/``project`` pair."""
    if manifold is not None:
        if retract is not None or project is not None:
            raise UserError("pass either manifold or retract/project, not both")
        return manifold
    if retract is None:
        raise UserError("a manifold (or a retract function) is required")
    return FunctionManifold(retract, project)


def _final_rank_check(manifold: Manifold, x: np.ndarray) -> tuple[np.ndarray, bool]:
    """``retract(x, 0, check_rank=True)`` after a run that stopped on an unchecked step: returns the (possibly
    rank-lifted) iterate and whether it changed."""
    fixed = manifold.retract(x, np.zeros_like(x), check_rank=True)
    if np.array_equal(fixed, x):
        return x, False
    log.warning("final rank check lifted singular values of the iterate")
    return fixed, True


def riemannian_gradient_descent(fun_and_grad: FunAndGrad, x0: np.ndarray, *, manifold: Manifold | None = None,
                                retract: Retraction | None = None, project: Projection | None = None,
                                max_iter: int = 1000, gtol: float = 1e-6, rank_check_every: int = 10,
                                c1: float = 1e-4, step0: float = 1.0, min_step: float = 1e-20,
                                callback: Callable[[int, np.ndarray, float, float], Any] | None = None,
                                verbose: bool = False, log_every: int = 100,
                                progress: Progress | None = None) -> OptimizeResult:
    """Minimise f on a manifold by x_{i+1} = R_{x_i}(−γ·grad f(x_i)) (COVA Table F.1 / Eq. 19).

    Parameters
    ----------
    fun_and_grad : x -> (f(x), Euclidean gradient).
    x0 : starting point (copied).
    manifold : the :class:`~cova.manifolds.base.Manifold` (tangent projection and retraction). If its
        retraction has a rank check (``has_rank_check``, the noncompact Stiefel manifold), it is asked for only
        when ``(i+1) % rank_check_every == 0`` or at the last iteration ``i = max_iter − 1`` (N_c of Table F.1).
    retract, project : instead of ``manifold``, a retraction ``retract(x, ξ[, check_rank])`` and a tangent
        projection (default the identity).
    max_iter : N, the maximum number of steps.
    gtol : stop when ‖grad‖ ≤ gtol·‖grad_0‖ (the Riemannian gradient in the manifold's norm, Frobenius for the
        embedded metric, relative to the initial one).
    rank_check_every : N_c ≥ 1.
    c1, step0, min_step : Armijo line search. The first trial step is ``step0`` (γ_0 = 1); later iterations
        start from 2·γ_prev; γ is halved until ``f(x_new) ≤ f(x) − c1·γ·‖grad‖²`` (manifold norm); if γ drops below
        ``min_step`` the run stops. f is evaluated at the retracted point, i.e. the point actually kept, so the
        history is non-increasing.
    callback : ``callback(iteration, x, f, grad_norm)`` after every accepted step; a truthy return stops.
    verbose, log_every : log f and the gradient norm on the "cova" logger every ``log_every`` iterations (INFO
        when verbose, DEBUG otherwise).
    progress : the :class:`~cova.progress.Progress` to tick once per accepted step (a caller's, e.g.
        :func:`sgd_batches`'); by default its own, which logs the progress lines with the elapsed time.

    When the run stops early after a step whose rank was not checked, one final ``retract(x, 0,
    check_rank=True)`` guarantees a full-rank result (it changes x only if x lost rank).
    """
    manifold = _manifold(manifold, retract, project)
    if rank_check_every < 1:
        raise UserError(f"rank_check_every must be >= 1, got {rank_check_every}")
    if max_iter < 0:
        raise UserError(f"max_iter must be >= 0, got {max_iter}")
    has_rank_check = manifold.has_rank_check
    level = logging.INFO if verbose else logging.DEBUG

    x = np.array(x0, dtype=float, copy=True)
    f, g = fun_and_grad(x)
    f = float(f)
    if not np.isfinite(f):
        raise UserError("the objective is not finite at x0")
    progress, own_progress = ticking(progress, "Riemannian gradient descent", max_iter)
    rg = manifold.project(x, g)
    gn = manifold.norm(x, rg)
    gn0 = gn
    history = [f]
    step = step0
    message = f"maximum number of iterations ({max_iter}) reached"
    rank_checked = True  # x0 is the caller's responsibility
    n_iter = 0
    for i in range(max_iter):
        if gn <= gtol * gn0:
            message = "gradient tolerance reached"
            break
        check = (i + 1) % rank_check_every == 0 or i == max_iter - 1
        gamma = step0 if i == 0 else 2.0 * step
        decrease = c1 * gn * gn
        while True:
            x_new = manifold.retract(x, -gamma * rg, check_rank=check)
            f_new, g_new = fun_and_grad(x_new)
            f_new = float(f_new)
            if np.isfinite(f_new) and f_new <= f - gamma * decrease:
                break
            gamma *= 0.5
            if gamma < min_step:
                x_new = None
                break
        if x_new is None:
            message = f"line search failed (step < {min_step:g})"
            break
        x, f, step = x_new, f_new, gamma
        rank_checked = check or not has_rank_check
        rg = manifold.project(x, g_new)
        gn = manifold.norm(x, rg)
        history.append(f)
        n_iter = i + 1
        progress.tick(f=f, grad=gn)
        if log_every and n_iter % log_every == 0:
            log.log(level, "iteration %d: f = %.10g, |grad| = %.3e (%.3e relative), step = %.3e",
                    n_iter, f, gn, gn / gn0 if gn0 > 0 else 0.0, step)
        if callback is not None and callback(n_iter, x, f, gn):
            message = "stopped by callback"
            break
    if has_rank_check and not rank_checked:
        x, lifted = _final_rank_check(manifold, x)
        if lifted:
            f, g = fun_and_grad(x)
            f = float(f)
            rg = manifold.project(x, g)
            gn = manifold.norm(x, rg)
            history.append(f)
    converged = gn <= gtol * gn0
    log.log(level, "gradient descent stopped after %d iterations: %s; f = %.10g, |grad| = %.3e",
            n_iter, message, f, gn)
    if own_progress:
        progress.done(message, f=f)
    return OptimizeResult(x=x, fun=f, n_iter=n_iter, grad_norm=gn, history=history, converged=converged,
                          message=message, step=step)


def update_gains(gains: np.ndarray, grad: np.ndarray, update: np.ndarray, rule: str, min_gain: float) -> np.ndarray:
    """One delta-bar-delta step of the per-coordinate gains (Jacobs 1988), in one of three variants.

    ``"reference"`` (van der Maaten's reference t-SNE code): +0.2 where ``grad > 0`` and ``update > 0`` disagree,
    ×0.8 where they agree, then floored at ``min_gain``. ``"offset"`` (openTSNE): +0.2 where sign(update) ≠
    sign(grad), 0.8·gains + ``min_gain`` elsewhere. They differ on the first iteration (update = 0: the reference
    rule shrinks the gains of negative gradient coordinates, the offset rule grows every gain) and in the floor.
    ``"sign"`` (van der Maaten's MATLAB ``tsne_p.m``, which the DOSNES authors' code copies): +0.2 where sign(update)
    ≠ sign(grad) (so every gain grows on the first iteration), ×0.8 where they agree, then floored at ``min_gain``.
    """
    if rule == "reference":
        same = (grad > 0) == (update > 0)
        gains = np.where(same, gains * 0.8, gains + 0.2)
        np.maximum(gains, min_gain, out=gains)
        return gains
    if rule == "offset":
        flipped = np.sign(update) != np.sign(grad)
        return np.where(flipped, gains + 0.2, gains * 0.8 + min_gain)
    if rule == "sign":
        flipped = np.sign(update) != np.sign(grad)
        gains = np.where(flipped, gains + 0.2, gains * 0.8)
        np.maximum(gains, min_gain, out=gains)
        return gains
    raise UserError(f"gains must be one of {list(GAINS_RULES)}, got {rule!r}")


def clip_rows(u: np.ndarray, max_norm: float) -> np.ndarray:
    """``u`` with every row whose Euclidean norm exceeds ``max_norm`` scaled down to that norm (a 1-D ``u`` is one
    row per entry); the other rows are left bit-identical."""
    u2 = u.reshape(u.shape[0], -1)
    norms = np.sqrt(np.einsum("ij,ij->i", u2, u2))
    long = norms > max_norm
    if not np.any(long):
        return u
    u2 = u2.copy()
    u2[long] *= (max_norm / norms[long])[:, None]
    return u2.reshape(u.shape)


def momentum_gradient_descent(fun_and_grad: FunAndGrad, x0: np.ndarray, *, manifold: Manifold | None = None,
                              retract: Retraction | None = None, project: Projection | None = None,
                              max_iter: int = 1000, gtol: float | None = 1e-6, rank_check_every: int = 10,
                              learning_rate: float = 1.0, momentum: tuple[float, float] = (0.5, 0.8),
                              momentum_switch_iter: int = 250, min_gain: float = 0.01,
                              gains: Literal["reference", "offset", "sign"] = "offset",
                              exaggerated_grad: Callable[[np.ndarray], np.ndarray] | None = None,
                              exaggeration_iter: int = 0, max_step_norm: float | None = None,
                              callback: Callable[[int, np.ndarray, float, float], Any] | None = None,
                              verbose: bool = False, log_every: int = 100,
                              progress: Progress | None = None) -> OptimizeResult:
    """Minimise f on a manifold with t-SNE's fixed-step scheme (van der Maaten & Hinton 2008, Sec. 3.4).

    With the Riemannian gradient g_i = P_{x_i}(∇f(x_i)) and u the last update:

        gains ← :func:`update_gains` (rule ``gains``),   u ← μ_i·u − η·gains∘g_i,
        x_{i+1} = R_{x_i}(u),   u ← P_{x_{i+1}}(u) (projection as vector transport),

    μ_i = ``momentum[0]`` for the first ``momentum_switch_iter`` iterations and ``momentum[1]`` after, η =
    ``learning_rate``. With ``max_step_norm`` every row of u (one point's update) longer than it is scaled down to
    that length before the retraction (openTSNE's ``max_step_norm``: it keeps a point whose gradient is large, e.g.
    a hub of the kNN graph, from shooting off, which would also widen the FFT repulsion's grid); ``None``: no clip. For the first ``exaggeration_iter`` iterations the gradient comes from
    ``exaggerated_grad(x)`` instead (t-SNE's early exaggeration, "lying about P"; its values are not reported).

    There is no line search, so f may rise between iterations; f is evaluated only where it is reported: at x0,
    every ``log_every`` iterations after the exaggeration phase (``log_every=0``: never) and at the end. If
    ``fun_and_grad`` accepts a ``need_value`` keyword it gets ``need_value=False`` at the other iterations and may
    return NaN as the value then (the gradient must be exact). The rank check and the final rank check are as in
    :func:`riemannian_gradient_descent`; ``gtol`` is checked every iteration on the Riemannian gradient (``None``:
    never stop early); ``callback`` receives f = NaN at iterations where f was not evaluated. The run stops with a
    message if the gradient becomes non-finite. ``progress`` is ticked once per iteration with the gradient norm
    (and f where it was evaluated), as in :func:`riemannian_gradient_descent`.

    Returns an :class:`OptimizeResult` whose ``history`` holds f at x0, at the log points and at the final x,
    ``fun`` f at the final x, and ``step`` the learning rate.
    """
    manifold = _manifold(manifold, retract, project)
    if rank_check_every < 1:
        raise UserError(f"rank_check_every must be >= 1, got {rank_check_every}")
    if max_iter < 0:
        raise UserError(f"max_iter must be >= 0, got {max_iter}")
    if not learning_rate > 0:
        raise UserError(f"learning_rate must be > 0, got {learning_rate}")
    if gains not in GAINS_RULES:
        raise UserError(f"gains must be one of {list(GAINS_RULES)}, got {gains!r}")
    if max_step_norm is not None and not max_step_norm > 0:
        raise UserError(f"max_step_norm must be > 0 or None, got {max_step_norm}")
    has_rank_check = manifold.has_rank_check
    has_need_value = accepts_keyword(fun_and_grad, "need_value")
    n_exaggerated = int(exaggeration_iter) if exaggerated_grad is not None else 0
    level = logging.INFO if verbose else logging.DEBUG

    def value_and_grad(x: np.ndarray, need_value: bool) -> tuple[float, np.ndarray]:
        if has_need_value:
            f, g = fun_and_grad(x, need_value=need_value)
        else:
            f, g = fun_and_grad(x)
        return float(f), g

    def evaluate(x: np.ndarray, iteration: int, need_value: bool) -> tuple[float, np.ndarray]:
        """f (or NaN) and the Riemannian gradient that iteration ``iteration`` steps along."""
        if iteration < n_exaggerated:
            assert exaggerated_grad is not None
            f = value_and_grad(x, True)[0] if need_value else float("nan")
            return f, manifold.project(x, exaggerated_grad(x))
        f, g = value_and_grad(x, need_value)
        return f, manifold.project(x, g)

    # BLAS held to one thread for the run: the loop's own BLAS calls are tiny (the gradient norm, the l×k SVD of a
    # rank check), and after each one OpenBLAS's idle threads spin and take the cores from the compiled gradient
    # kernels and openTSNE's FFT repulsion (which ran 1.6× slower; benchmarks/versus.py measures the effect).
    with threadpool_limits(limits=1, user_api="blas"):
        x = np.array(x0, dtype=float, copy=True)
        f, rg = evaluate(x, 0, True)
        if not np.isfinite(f):
            raise UserError("the objective is not finite at x0")
        gn = gn0 = float(np.linalg.norm(rg))
        progress, own_progress = ticking(progress, "momentum gradient descent", max_iter)
        history = [f]
        have_value = True  # f belongs to the current x
        update = np.zeros_like(x)
        gain = np.ones_like(x)
        message = f"maximum number of iterations ({max_iter}) reached"
        rank_checked = True
        n_iter = 0
        for i in range(max_iter):
            if gtol is not None and gn <= gtol * gn0:
                message = "gradient tolerance reached"
                break
            mu = momentum[0] if i < momentum_switch_iter else momentum[1]
            gain = update_gains(gain, rg, update, gains, min_gain)
            update = mu * update - learning_rate * gain * rg
            if max_step_norm is not None:
                update = clip_rows(update, max_step_norm)
            check = (i + 1) % rank_check_every == 0 or i == max_iter - 1
            x = manifold.retract(x, update, check_rank=check)
            rank_checked = check or not has_rank_check
            update = manifold.project(x, update)
            n_iter = i + 1
            need_value = bool(log_every) and n_iter % log_every == 0 and n_iter >= n_exaggerated
            f, rg = evaluate(x, n_iter, need_value)
            have_value = need_value
            gn = float(np.linalg.norm(rg))
            if not np.isfinite(gn):
                message = "the gradient became non-finite (learning rate too large?)"
                break
            progress.tick(**({"f": f} if need_value else {}), grad=gn)
            if need_value:
                history.append(f)
                log.log(level, "iteration %d: f = %.10g, |grad| = %.3e (%.3e relative), momentum = %.2f",
                        n_iter, f, gn, gn / gn0 if gn0 > 0 else 0.0, mu)
            if callback is not None and callback(n_iter, x, f if need_value else float("nan"), gn):
                message = "stopped by callback"
                break
        if has_rank_check and not rank_checked:
            x, lifted = _final_rank_check(manifold, x)
            if lifted:
                have_value = False
        if not have_value:
            f, g = value_and_grad(x, True)
            rg = manifold.project(x, g)
            gn = float(np.linalg.norm(rg))
            history.append(f)
        converged = bool(gtol is not None and gn <= gtol * gn0)
        log.log(level, "momentum gradient descent stopped after %d iterations: %s; f = %.10g, |grad| = %.3e",
                n_iter, message, f, gn)
        if own_progress:
            progress.done(message, f=f)
        return OptimizeResult(x=x, fun=f, n_iter=n_iter, grad_norm=gn, history=history, converged=converged,
                              message=message, step=float(learning_rate))


def sgd_batches(make_batch_problem: Callable[[np.ndarray], FunAndGrad], x0: np.ndarray, n_samples: int, *,
                batch_size: int = 1000, inner_iter: int = 20, cycles: int = 10,
                random_state: int | np.random.Generator | None = 0, **gd_kwargs: Any) -> OptimizeResult:
    """SGD over sample batches (COVA Table F.2).

    ``for cycle in 1..cycles: shuffle; for each batch I of consecutive indices: inner_iter Armijo steps of
    riemannian_gradient_descent on make_batch_problem(I); carry x to the next batch``.

    - The shuffle uses ``np.random.default_rng(random_state)``; the permutation is cut into
      ``ceil(n/batch_size)`` consecutive pieces of near-equal size (``np.array_split``), so no batch exceeds
      ``batch_size`` and no tiny remainder batch occurs. Each batch's indices are passed sorted.
    - The last accepted step size of one batch is the first trial step of the next.
    - When ``n_samples ≤ batch_size`` this is exactly full-batch GD: one call of
      :func:`riemannian_gradient_descent` on ``make_batch_problem(arange(n))`` with ``inner_iter·cycles`` steps.
    - ``gd_kwargs`` go to :func:`riemannian_gradient_descent` (manifold, gtol, ...); gtol is relative to
      each batch's initial gradient.

    Returns the last batch's result with ``n_iter`` summed over batches and ``history`` the concatenation of the
    batch histories (values of different batch objectives are not comparable across batch boundaries).
    """
    if batch_size < 1 or inner_iter < 0 or cycles < 0:
        raise UserError("batch_size must be >= 1 and inner_iter, cycles >= 0")
    if n_samples <= batch_size:
        return riemannian_gradient_descent(make_batch_problem(np.arange(n_samples)), x0,
                                           max_iter=inner_iter * cycles, **gd_kwargs)
    rng = np.random.default_rng(random_state)
    n_batches = math.ceil(n_samples / batch_size)
    step = gd_kwargs.pop("step0", 1.0)
    x = np.array(x0, dtype=float, copy=True)
    history: list[float] = []
    n_iter = 0
    result: OptimizeResult | None = None
    progress = Progress(f"SGD, {cycles} cycles of {n_batches} batches", cycles * n_batches * inner_iter).start()
    for cycle in range(cycles):
        perm = rng.permutation(n_samples)
        for batch in np.array_split(perm, n_batches):
            result = riemannian_gradient_descent(make_batch_problem(np.sort(batch)), x, max_iter=inner_iter,
                                                 step0=step, progress=progress, **gd_kwargs)
            x, step = result.x, result.step
            history.extend(result.history)
            n_iter += result.n_iter
        log.debug("SGD cycle %d/%d done: last batch f = %.10g", cycle + 1, cycles, result.fun)
    progress.done()
    if result is None:
        f, g = make_batch_problem(np.arange(n_samples))(x)
        return OptimizeResult(x=x, fun=float(f), n_iter=0, grad_norm=float("nan"), history=[float(f)],
                              converged=False, message="no cycles", step=step)
    result.n_iter = n_iter
    result.history = history
    result.message = f"{cycles} SGD cycles of {n_batches} batches; last batch: {result.message}"
    return result


def batch_inputs(W: sp.spmatrix, R: np.ndarray, indices: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """The batch sub-problem inputs of Table F.2: ``W_II`` and ``R_I``, each renormalised to unit sum.

    The KL forms assume unit sums. Raises ValueError if either sub-matrix sums to zero
    (e.g. a batch without any edge of W).
    """
    idx = np.asarray(indices)
    W_II = sp.csr_matrix(W)[idx][:, idx].tocsr()
    W_II.eliminate_zeros()
    W_II.sort_indices()
    R_I = np.asarray(R, dtype=float)[idx]
    w_sum, r_sum = float(W_II.sum()), float(R_I.sum())
    if w_sum <= 0:
        raise UserError("the batch has no edge of W (W_II sums to 0); use larger batches")
    if r_sum <= 0:
        raise UserError("the batch has no confidence mass (R_I sums to 0); use larger batches")
    return (W_II / w_sum).tocsr(), R_I / r_sum
