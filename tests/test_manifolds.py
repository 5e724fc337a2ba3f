"""Manifolds and optimisers: Stiefel geometry (COVA Eqs. 16–18, B.17), noncompact retraction (Table F.1),
Riemannian gradient descent with Armijo line search (Table F.1), SGD batches (Table F.2), the sphere and the
momentum loop."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp

from cova.manifolds import (
    GeneralizedStiefel,
    batch_inputs,
    noncompact_stiefel,
    riemannian_gradient_descent,
    sgd_batches,
    stiefel,
)
from cova.objectives import o_dist_c, o_dist_l, o_kl_c, o_kl_l, objective_on_projection

K_TILDE, K = 12, 2
RETRACTIONS = {"qr": stiefel.retract_qr, "polar": stiefel.retract_polar}


def orth_err(U):
    return np.linalg.norm(U.T @ U - np.eye(U.shape[1]))


@pytest.fixture
def point_and_vector():
    rng = np.random.default_rng(0)
    return stiefel.random_point(K_TILDE, K, rng), rng.normal(size=(K_TILDE, K))


# --------------------------------------------------------------------------------------------------------
# Stiefel geometry (Eqs. 16–18)
# --------------------------------------------------------------------------------------------------------

def test_random_point_is_on_the_manifold():
    U = stiefel.random_point(K_TILDE, K, 1)
    assert U.shape == (K_TILDE, K) and orth_err(U) <= 1e-12
    np.testing.assert_array_equal(U, stiefel.random_point(K_TILDE, K, 1))
    with pytest.raises(ValueError):
        stiefel.random_point(2, 3)


def test_tangent_projection(point_and_vector):
    U, xi = point_and_vector
    P = stiefel.project_tangent(U, xi)
    assert np.linalg.norm(U.T @ P + P.T @ U) <= 1e-12
    assert np.linalg.norm(stiefel.project_tangent(U, P) - P) <= 1e-12
    # the Eq. 16 form (I − UUᵀ)ξ + U skew(Uᵀξ) is the same map
    A = U.T @ xi
    np.testing.assert_allclose(P, (np.eye(K_TILDE) - U @ U.T) @ xi + U @ (A - A.T) / 2, atol=1e-14)


@pytest.mark.parametrize("name", ["qr", "polar"])
def test_retraction_properties(point_and_vector, name):
    retract = RETRACTIONS[name]
    U, xi = point_and_vector
    xi = stiefel.project_tangent(U, xi)
    for t in (0.1, 0.5, 2.0):
        assert orth_err(retract(U, t * xi)) <= 1e-12
    assert np.abs(retract(U, np.zeros_like(U)) - U).max() <= 1e-12
    h = 1e-6
    derivative = (retract(U, h * xi) - retract(U, -h * xi)) / (2 * h)
    assert np.abs(derivative - xi).max() <= 1e-6


@pytest.mark.parametrize("name", ["qr", "polar"])
def test_retraction_at_zero_with_negative_qr_diagonal(point_and_vector, name):
    U = -point_and_vector[0]
    raw_q = np.linalg.qr(U)[0]
    assert np.abs(raw_q - U).max() > 1e-3  # the raw Householder QR flips columns: R_U(0) = U needs the sign fix
    assert np.abs(RETRACTIONS[name](U, np.zeros_like(U)) - U).max() <= 1e-12


def test_polar_equals_closed_form_and_printed_eq18_exponent_fails(point_and_vector):
    """(U + ξ)(I + ξᵀξ)^{−1/2} = A Bᵀ is orthonormal; Eq. 18's printed exponent +1/2 is not."""
    U, xi = point_and_vector
    xi = 0.5 * stiefel.project_tangent(U, xi)
    w, V = np.linalg.eigh(np.eye(K) + xi.T @ xi)
    corrected = (U + xi) @ (V * w ** -0.5) @ V.T
    printed = (U + xi) @ (V * w ** 0.5) @ V.T
    np.testing.assert_allclose(stiefel.retract_polar(U, xi), corrected, atol=1e-12)
    assert orth_err(corrected) <= 1e-12
    assert orth_err(printed) > 0.5


# --------------------------------------------------------------------------------------------------------
# noncompact Stiefel (Table F.1)
# --------------------------------------------------------------------------------------------------------

def test_noncompact_retraction_repairs_rank():
    rng = np.random.default_rng(2)
    Z = np.outer(rng.normal(size=50), [1.0, -2.0])
    assert np.linalg.matrix_rank(Z) == 1
    out = noncompact_stiefel.retract(Z, np.zeros_like(Z))
    assert np.linalg.matrix_rank(out) == 2
    assert np.linalg.norm(out - Z) <= 1e-6
    np.testing.assert_array_equal(noncompact_stiefel.retract(Z, np.zeros_like(Z), check_rank=False), Z)


def test_noncompact_retraction_is_plain_sum_at_full_rank():
    rng = np.random.default_rng(3)
    Z, xi = rng.normal(size=(30, 2)), rng.normal(size=(30, 2))
    np.testing.assert_array_equal(noncompact_stiefel.retract(Z, xi), Z + xi)
    assert noncompact_stiefel.project_tangent(Z, xi) is xi


# --------------------------------------------------------------------------------------------------------
# Riemannian gradient descent (Table F.1)
# --------------------------------------------------------------------------------------------------------

PAIRS = {"E2": (o_kl_c, o_kl_l), "E3": (o_dist_c, o_kl_l), "E4": (o_kl_c, o_dist_l)}


def embedding_problem(inp, model, alpha=0.5):
    cohort, local = PAIRS[model]

    def fun_and_grad(Z):
        fc, gc = cohort(Z, inp.R, inp.prototypes)
        fl, gl = local(Z, inp.W)
        return alpha * fc + (1 - alpha) * fl, alpha * gc + (1 - alpha) * gl
    return fun_and_grad


def prototype_init(inp, seed=0):
    return inp.prototypes[inp.labels] + 1e-3 * np.random.default_rng(seed).normal(size=(len(inp.labels), 2))


@pytest.mark.parametrize("model", ["E2", "E3", "E4"])
def test_gd_on_embedding_models_is_monotone(toy_inputs, model):
    fg = embedding_problem(toy_inputs, model)
    Z0 = prototype_init(toy_inputs)
    g0 = np.linalg.norm(fg(Z0)[1])
    res = riemannian_gradient_descent(fg, Z0, retract=noncompact_stiefel.retract, max_iter=300)
    assert len(res.history) == res.n_iter + 1 and res.n_iter > 10
    assert np.all(np.diff(res.history) <= 0)
    assert res.history[-1] < res.history[0]
    assert res.fun == res.history[-1] == fg(res.x)[0]
    assert res.grad_norm <= 1e-2 * g0
    assert np.linalg.matrix_rank(res.x) == 2


def test_rank_check_runs_every_nc_iterations_and_at_the_last(toy_inputs):
    fg = embedding_problem(toy_inputs, "E3")
    calls: list[tuple[int, bool]] = []
    done = [0]

    def spy(Z, xi, *, check_rank=True):
        calls.append((done[0], check_rank))
        return noncompact_stiefel.retract(Z, xi, check_rank=check_rank)

    def count(i, x, f, g):
        done[0] = i

    res = riemannian_gradient_descent(fg, prototype_init(toy_inputs), retract=spy, max_iter=25, gtol=0.0,
                                      rank_check_every=10, callback=count)
    assert res.n_iter == 25
    checked = {it for it, flag in calls if flag}
    unchecked = {it for it, flag in calls if not flag}
    assert checked == {9, 19, 24} and not checked & unchecked


def test_gd_stops_at_gtol_and_rejects_bad_settings(toy_inputs):
    fg = embedding_problem(toy_inputs, "E4")
    res = riemannian_gradient_descent(fg, prototype_init(toy_inputs), retract=noncompact_stiefel.retract,
                                      gtol=1e-2, max_iter=1000)
    assert res.converged and res.n_iter < 1000 and "gradient" in res.message
    with pytest.raises(ValueError):
        riemannian_gradient_descent(fg, prototype_init(toy_inputs), retract=noncompact_stiefel.retract,
                                    rank_check_every=0)


@pytest.mark.parametrize("name", ["qr", "polar"])
def test_stiefel_gd_finds_smallest_eigenvalues(name):
    rng = np.random.default_rng(4)
    V = np.linalg.qr(rng.normal(size=(K_TILDE, K_TILDE)))[0]
    eigenvalues = np.concatenate([[1.0, 1.5], np.linspace(3.0, 10.0, K_TILDE - 2)])
    A = (V * eigenvalues) @ V.T

    def fg(U):
        AU = A @ U
        return float(np.sum(U * AU)), 2 * AU

    res = riemannian_gradient_descent(fg, stiefel.random_point(K_TILDE, K, 5), retract=RETRACTIONS[name],
                                      project=stiefel.project_tangent, gtol=1e-10, max_iter=2000)
    assert abs(res.fun - 2.5) <= 1e-8
    assert orth_err(res.x) <= 1e-12
    assert np.all(np.diff(res.history) <= 0)


# --------------------------------------------------------------------------------------------------------
# Generalised Stiefel manifold {ZᵀBZ = I} (COVA Appendix C, M₂)
# --------------------------------------------------------------------------------------------------------
@pytest.fixture
def gstiefel():
    rng = np.random.default_rng(7)
    b = rng.uniform(0.2, 3.0, K_TILDE)
    M = GeneralizedStiefel(b)
    return M, M.point(rng.normal(size=(K_TILDE, K))), rng


def b_orth_err(M, Z):
    return np.linalg.norm(Z.T @ (M.b[:, None] * Z) - np.eye(Z.shape[1]))


def test_generalized_stiefel_point_retraction_and_tangent_space(gstiefel):
    M, Z, rng = gstiefel
    assert b_orth_err(M, Z) <= 1e-12
    G = rng.normal(size=Z.shape)
    xi = M.project(Z, G)
    B = M.b[:, None]
    assert np.linalg.norm(Z.T @ (B * xi) + xi.T @ (B * Z)) <= 1e-12  # tangent: ZᵀBξ + ξᵀBZ = 0
    assert b_orth_err(M, M.retract(Z, xi)) <= 1e-12
    np.testing.assert_allclose(M.retract(Z, np.zeros_like(Z)), Z, atol=1e-13)
    # first order: R_Z(tξ) = Z + tξ + O(t²)
    errors = [np.linalg.norm(M.retract(Z, t * xi) - (Z + t * xi)) for t in (1e-2, 1e-3)]
    assert errors[1] <= errors[0] / 50


def test_generalized_stiefel_gradient_is_the_b_metric_riesz_representer(gstiefel):
    """⟨grad f, η⟩_B = ⟨G, η⟩ for every tangent η, and the Armijo decrease ⟨G, grad f⟩ = ‖grad f‖²_B."""
    M, Z, rng = gstiefel
    G = rng.normal(size=Z.shape)
    rg = M.project(Z, G)
    eta = M.project(Z, rng.normal(size=Z.shape))
    assert abs(np.sum(M.b[:, None] * rg * eta) - np.sum(G * eta)) <= 1e-12
    assert abs(np.sum(G * rg) - M.norm(Z, rg) ** 2) <= 1e-12
    # and the directional derivative along a tangent curve matches ⟨G, η⟩ (f = tr(ZᵀAZ), G = 2AZ)
    A = rng.normal(size=(K_TILDE, K_TILDE))
    A = A + A.T
    f = lambda X: float(np.sum(X * (A @ X)))  # noqa: E731
    h = 1e-6
    numeric = (f(M.retract(Z, h * eta)) - f(M.retract(Z, -h * eta))) / (2 * h)
    assert abs(numeric - np.sum(2 * A @ Z * eta)) <= 1e-6


def test_gd_on_the_generalized_stiefel_manifold_finds_the_smallest_generalized_eigenvalues(gstiefel):
    """min tr(ZᵀAZ) over ZᵀBZ = I is the sum of the k smallest eigenvalues of A v = λ B v (a closed form)."""
    M, Z0, rng = gstiefel
    A = rng.normal(size=(K_TILDE, K_TILDE))
    A = A @ A.T + np.eye(K_TILDE)

    def fg(Z):
        AZ = A @ Z
        return float(np.sum(Z * AZ)), 2 * AZ

    res = riemannian_gradient_descent(fg, Z0, manifold=M, gtol=1e-10, max_iter=5000)
    expected = scipy.linalg.eigh(A, np.diag(M.b), eigvals_only=True)[:K].sum()
    assert abs(res.fun - expected) <= 1e-8 * expected
    assert b_orth_err(M, res.x) <= 1e-12 and np.all(np.diff(res.history) <= 0)


def test_generalized_stiefel_refuses_a_b_that_is_not_positive():
    with pytest.raises(ValueError, match="positive"):
        GeneralizedStiefel(np.array([1.0, 0.0, 2.0]))
    with pytest.raises(ValueError, match="rank-deficient"):
        GeneralizedStiefel(np.ones(4)).point(np.ones((4, 2)))


# --------------------------------------------------------------------------------------------------------
# SGD batches (Table F.2)
# --------------------------------------------------------------------------------------------------------

def projection_problem(inp, F, alpha=0.5):
    """make_batch_problem for COVA-P3 (dist C + KL L) on U ∈ St(k̃, 2)."""
    seen: list[np.ndarray] = []

    def make(indices):
        seen.append(indices)
        W_I, R_I = batch_inputs(inp.W, inp.R, indices)
        F_I = F[indices]

        def fun_and_grad(U):
            fc, gc = objective_on_projection(o_dist_c, F_I, U, R_I, inp.prototypes)
            fl, gl = objective_on_projection(o_kl_l, F_I, U, W_I)
            return alpha * fc + (1 - alpha) * fl, alpha * gc + (1 - alpha) * gl
        return fun_and_grad
    return make, seen


@pytest.fixture
def features(toy_inputs):
    rng = np.random.default_rng(8)
    X = toy_inputs.X
    D2 = ((X[:, None, :] - X[rng.choice(40, K_TILDE, replace=False)][None]) ** 2).sum(-1)
    return 3.0 * np.exp(-D2 / (2 * np.median(D2)))


STIEFEL_GD = dict(retract=stiefel.retract_qr, project=stiefel.project_tangent)


def test_batch_inputs(toy_inputs):
    idx = np.array([0, 3, 5, 8, 11, 17, 20, 21, 30, 39])
    W_I, R_I = batch_inputs(toy_inputs.W, toy_inputs.R, idx)
    assert sp.issparse(W_I) and W_I.sum() == pytest.approx(1.0) and R_I.sum() == pytest.approx(1.0)
    sub = toy_inputs.W.toarray()[np.ix_(idx, idx)]
    np.testing.assert_allclose(W_I.toarray(), sub / sub.sum(), rtol=1e-14)
    np.testing.assert_allclose(R_I, toy_inputs.R[idx] / toy_inputs.R[idx].sum(), rtol=1e-14)
    with pytest.raises(ValueError, match="edge"):
        batch_inputs(sp.csr_matrix((40, 40)), toy_inputs.R, idx)


def test_sgd_single_batch_equals_full_batch_gd(toy_inputs, features):
    make, seen = projection_problem(toy_inputs, features)
    U0 = stiefel.random_point(K_TILDE, K, 9)
    sgd = sgd_batches(make, U0, 40, batch_size=1000, inner_iter=5, cycles=6, gtol=0.0, **STIEFEL_GD)
    np.testing.assert_array_equal(seen[0], np.arange(40))
    full = riemannian_gradient_descent(make(np.arange(40)), U0, max_iter=30, gtol=0.0, **STIEFEL_GD)
    np.testing.assert_array_equal(sgd.x, full.x)
    assert sgd.history == full.history and sgd.n_iter == 30
    assert np.all(np.diff(full.history) <= 0)  # non-increasing for a full-batch P-model
    assert orth_err(full.x) <= 1e-12


def test_sgd_batches_cover_every_sample_and_are_deterministic(toy_inputs, features):
    U0 = stiefel.random_point(K_TILDE, K, 9)
    make, seen = projection_problem(toy_inputs, features)
    res = sgd_batches(make, U0, 40, batch_size=15, inner_iter=3, cycles=2, random_state=1, **STIEFEL_GD)
    assert len(seen) == 6  # ceil(40/15) = 3 batches per cycle
    for cycle in (seen[:3], seen[3:]):
        assert all(len(b) <= 15 and np.all(np.diff(b) > 0) for b in cycle)
        np.testing.assert_array_equal(np.sort(np.concatenate(cycle)), np.arange(40))
    assert not np.array_equal(seen[0], seen[3])  # reshuffled each cycle
    assert orth_err(res.x) <= 1e-12 and res.n_iter <= 18
    again = sgd_batches(projection_problem(toy_inputs, features)[0], U0, 40, batch_size=15, inner_iter=3,
                        cycles=2, random_state=1, **STIEFEL_GD)
    np.testing.assert_array_equal(res.x, again.x)
    assert res.history == again.history
    other = sgd_batches(projection_problem(toy_inputs, features)[0], U0, 40, batch_size=15, inner_iter=3,
                        cycles=2, random_state=2, **STIEFEL_GD)
    assert not np.array_equal(res.x, other.x)


# --------------------------------------------------------------------------------------------------------
# manifold objects: sphere, Euclidean, and the solvers taking the manifold as a parameter
# --------------------------------------------------------------------------------------------------------

def test_sphere_projection_is_idempotent_and_orthogonal_to_the_rows():
    from cova.manifolds import Sphere

    rng = np.random.default_rng(0)
    M = Sphere(radius=2.5)
    x = M.random_point(30, 3, rng)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 2.5, rtol=1e-14)
    g = rng.normal(size=x.shape)
    u = M.project(x, g)
    np.testing.assert_allclose(np.einsum("ij,ij->i", u, x), 0.0, atol=1e-12)
    np.testing.assert_allclose(M.project(x, u), u, atol=1e-13)
    # the removed part is radial: g − P(g) is parallel to x row-wise
    r = g - u
    np.testing.assert_allclose(r[:, 0, None] * x - x[:, 0, None] * r, 0.0, atol=1e-12)


def test_sphere_retraction():
    from cova.manifolds import Sphere

    rng = np.random.default_rng(1)
    M = Sphere(radius=3.0)
    x = M.random_point(20, 2, rng)
    np.testing.assert_allclose(M.retract(x, np.zeros_like(x)), x, rtol=1e-14, atol=1e-14)
    u = M.project(x, rng.normal(size=x.shape))
    y = M.retract(x, u)
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), 3.0, rtol=1e-14)
    h = 1e-6  # first-order agreement with the tangent vector: dR_x(tu)/dt at t = 0 is u
    np.testing.assert_allclose((M.retract(x, h * u) - M.retract(x, -h * u)) / (2 * h), u, atol=1e-7)
    with pytest.raises(ValueError, match="radius"):
        Sphere(radius=0.0)


def test_riemannian_descent_on_the_sphere_finds_the_nearest_points():
    """min ½‖x − c‖² with rows of x on the unit sphere: the solution is c with its rows normalised."""
    from cova.manifolds import Sphere

    rng = np.random.default_rng(2)
    c = rng.normal(size=(15, 3))
    M = Sphere()
    res = riemannian_gradient_descent(lambda x: (0.5 * float(np.sum((x - c) ** 2)), x - c), M.random_point(15, 3, 3),
                                      manifold=M, gtol=1e-10, max_iter=500)
    np.testing.assert_allclose(res.x, c / np.linalg.norm(c, axis=1, keepdims=True), atol=1e-8)


def test_euclidean_recentred_retraction():
    from cova.manifolds import Euclidean

    rng = np.random.default_rng(3)
    x, u = rng.normal(size=(10, 2)), rng.normal(size=(10, 2))
    np.testing.assert_array_equal(Euclidean().retract(x, u), x + u)
    y = Euclidean(centre=True).retract(x, u)
    np.testing.assert_allclose(y.mean(axis=0), 0.0, atol=1e-15)
    np.testing.assert_allclose(y, x + u - (x + u).mean(axis=0), atol=1e-15)
    assert Euclidean(centre=True).project(x, u) is u


def test_solvers_accept_a_manifold_object_or_functions_alike():
    from cova.manifolds import NoncompactStiefel, Stiefel

    rng = np.random.default_rng(4)
    A = rng.normal(size=(K_TILDE, K_TILDE))
    A = A + A.T

    def fg(U):
        return float(np.trace(U.T @ A @ U)), 2.0 * A @ U

    U0 = stiefel.random_point(K_TILDE, K, 5)
    a = riemannian_gradient_descent(fg, U0, manifold=Stiefel("polar"), max_iter=40)
    b = riemannian_gradient_descent(fg, U0, retract=stiefel.retract_polar, project=stiefel.project_tangent, max_iter=40)
    np.testing.assert_array_equal(a.x, b.x)
    Z0 = rng.normal(size=(30, 2))
    c = rng.normal(size=(30, 2))

    def quad(Z):
        return 0.5 * float(np.sum((Z - c) ** 2)), Z - c

    a = riemannian_gradient_descent(quad, Z0, manifold=NoncompactStiefel(), max_iter=20)
    b = riemannian_gradient_descent(quad, Z0, retract=noncompact_stiefel.retract, max_iter=20)
    np.testing.assert_array_equal(a.x, b.x)
    with pytest.raises(ValueError, match="either"):
        riemannian_gradient_descent(quad, Z0, manifold=NoncompactStiefel(), retract=noncompact_stiefel.retract)


def test_gains_rules():
    """The reference rule (t-SNE's code) floors ×0.8 / +0.2 on the test grad > 0 vs update > 0; the offset rule
    (openTSNE) adds min_gain instead of flooring and compares signs."""
    from cova.manifolds import update_gains

    gains = np.array([1.0, 1.0, 0.011, 0.011])
    grad = np.array([1.0, -1.0, -1.0, 1.0])
    update = np.array([0.0, 0.0, -1.0, -1.0])
    np.testing.assert_allclose(update_gains(gains.copy(), grad, update, "reference", 0.01), [1.2, 0.8, 0.01, 0.211])
    np.testing.assert_allclose(update_gains(gains.copy(), grad, update, "offset", 0.01),
                               [1.2, 1.2, 0.011 * 0.8 + 0.01, 0.211])
    with pytest.raises(ValueError, match="gains"):
        update_gains(gains, grad, update, "other", 0.01)


def test_momentum_exaggeration_phase_uses_the_other_gradient():
    from cova.manifolds import Euclidean, momentum_gradient_descent

    c = np.arange(8.0).reshape(4, 2)
    seen = []

    def fun(x, need_value=True):
        return 0.5 * float(np.sum((x - c) ** 2)), x - c

    def exaggerated(x):
        seen.append(1)
        return 4.0 * (x - c)

    res = momentum_gradient_descent(fun, np.zeros((4, 2)), manifold=Euclidean(), max_iter=30, gtol=None,
                                    learning_rate=0.05, exaggerated_grad=exaggerated, exaggeration_iter=10,
                                    gains="reference", log_every=0)
    assert len(seen) == 10 and res.n_iter == 30
    assert res.history[0] == fun(np.zeros((4, 2)))[0] and res.fun == fun(res.x)[0]
