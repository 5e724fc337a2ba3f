"""Accelerated O_KL^(L) repulsion (FFT interpolation, Barnes–Hut) against the exact back end.

The approximations come from openTSNE's compiled kernels (``cova.objectives.local``); these tests pin their
accuracy at the defaults on 2,000 points and check that E2/E3 embeddings made with them score like the exact ones.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cova.objectives import AUTO_EXACT_MAX_SAMPLES, REPULSION_METHODS, kl_repulsion, o_kl_l, resolve_repulsion_method
from cova.objectives import local as local_mod

ROOT = Path(__file__).resolve().parents[1]


def rel_err(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def ring(c=10, rho=3.0):
    angles = 2 * np.pi * np.arange(c) / c
    return rho * np.column_stack([np.cos(angles), np.sin(angles)])


@pytest.fixture(scope="module")
def layouts():
    """Three 2,000-point layouts at COVA's scale: the E2/E3 start (cohorts on ring prototypes plus 1e-3·ρ noise),
    cohorts spread around the prototypes, and an isotropic Gaussian cloud."""
    from conftest import random_graph

    rng = np.random.default_rng(0)
    l = 2000
    labels = rng.integers(0, 10, l)
    P = ring()
    W = random_graph(l, 15, rng)
    return W, {
        "init": P[labels] + rng.normal(0.0, 3e-3, (l, 2)),
        "cohorts": P[labels] + rng.normal(0.0, 0.7, (l, 2)),
        "cloud": rng.normal(0.0, 3.0, (l, 2)),
    }


@pytest.mark.parametrize("name", ["init", "cohorts", "cloud"])
def test_fft_matches_exact_at_default_accuracy(layouts, name):
    W, Zs = layouts
    Z = Zs[name]
    s0, r0 = kl_repulsion(Z, "exact")
    s1, r1 = kl_repulsion(Z, "fft")
    assert abs(s1 - s0) / s0 < 1e-4
    assert rel_err(r1, r0) < 1e-2
    v0, g0 = o_kl_l(Z, W, method="exact")
    v1, g1 = o_kl_l(Z, W, method="fft")
    assert abs(v1 - v0) / abs(v0) < 1e-4
    assert rel_err(g1, g0) < 1e-2


def test_exact_repulsion_on_chosen_rows_is_those_rows_of_the_whole():
    """``rows=`` (the reference of benchmarks/fft_grid.py at 10^6 points) gives the rows of the full result, and
    ΣQ over those rows only; with every row, in any order, the full ΣQ."""
    from cova.objectives.kl import _repulsion_exact

    rng = np.random.default_rng(3)
    Z = rng.normal(0.0, 2.0, (300, 2))
    s_all, r_all = _repulsion_exact(Z)
    rows = rng.choice(300, 40, replace=False)
    s_rows, r_rows = _repulsion_exact(Z, rows=rows, block_size=7)
    d2 = ((Z[rows, None, :] - Z[None, :, :]) ** 2).sum(-1)
    q = 1.0 / (1.0 + d2)
    q[np.arange(40), rows] = 0.0
    assert np.allclose(r_rows, r_all[rows], rtol=1e-12, atol=1e-12)
    assert s_rows == pytest.approx(q.sum(), rel=1e-12)
    s_perm, r_perm = _repulsion_exact(Z, rows=rng.permutation(300), block_size=11)
    assert s_perm == pytest.approx(s_all, rel=1e-12)


@pytest.mark.parametrize("name", ["init", "cohorts", "cloud"])
def test_barnes_hut_matches_exact(layouts, name):
    """θ = 0.5 (the default) is within a few percent; θ = 0.25 within 1e-2."""
    W, Zs = layouts
    Z = Zs[name]
    v0, g0 = o_kl_l(Z, W, method="exact")
    v5, g5 = o_kl_l(Z, W, method="bh")
    v25, g25 = o_kl_l(Z, W, method="bh", theta=0.25)
    assert abs(v5 - v0) / abs(v0) < 1e-2
    assert rel_err(g5, g0) < 5e-2
    assert rel_err(g25, g0) < 1e-2
    assert rel_err(g25, g0) <= rel_err(g5, g0) + 1e-12


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fft_default_grid_on_a_spread_layout(seed):
    """A map that has spread out as a t-SNE map does after its early exaggeration (10 clusters of widths 2-10 over
    ≈ 170 units, so the grid has more than the 50 minimum intervals): at the defaults (openTSNE's grid, 1-unit
    intervals of 3 points) the repulsion is within 5 % of the exact one and ΣQ within 1 %, and a grid twice as fine
    is more accurate (the error is the grid's, not a bias of the kernel)."""
    from cova.objectives.kl import _repulsion_fft

    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, 2000)
    Z = (rng.uniform(-80.0, 80.0, (10, 2))[labels]
         + rng.normal(0.0, 1.0, (2000, 2)) * rng.uniform(2.0, 10.0, 10)[labels, None])
    s0, r0 = kl_repulsion(Z, "exact")
    s1, r1 = kl_repulsion(Z, "fft")
    assert abs(s1 - s0) / s0 < 1e-2
    assert rel_err(r1, r0) < 5e-2
    s2, r2 = _repulsion_fft(Z, ints_in_interval=0.5)
    assert abs(s2 - s0) < abs(s1 - s0)
    assert rel_err(r2, r0) < rel_err(r1, r0) / 2


def test_fft_one_dimensional_matches_exact():
    Z = np.random.default_rng(3).normal(0.0, 3.0, (1500, 1))
    s0, r0 = kl_repulsion(Z, "exact")
    s1, r1 = kl_repulsion(Z, "fft")
    assert abs(s1 - s0) / s0 < 1e-4
    assert rel_err(r1, r0) < 1e-2


def test_fft_refuses_three_dimensions():
    with pytest.raises(ValueError, match="k = 3"):
        kl_repulsion(np.zeros((10, 3)), "fft")


def test_auto_resolution():
    n = AUTO_EXACT_MAX_SAMPLES
    assert resolve_repulsion_method("auto", n, 2) == "exact"
    assert resolve_repulsion_method("auto", n + 1, 2) == "fft"
    assert resolve_repulsion_method("auto", n + 1, 1) == "fft"
    assert resolve_repulsion_method("auto", n + 1, 3) == "octree"
    assert resolve_repulsion_method("auto", n + 1, 4) == "exact"
    assert resolve_repulsion_method("bh", 10, 2) == "bh"
    with pytest.raises(ValueError, match="available"):
        resolve_repulsion_method("fast", 10, 2)
    assert set(REPULSION_METHODS) == {"exact", "fft", "bh", "octree"}


def test_auto_uses_fft_above_threshold_and_drops_foreign_options(monkeypatch):
    calls = []
    fft = REPULSION_METHODS["fft"]

    def spy(Z, **options):
        calls.append(options)
        return fft(Z, **options)

    monkeypatch.setitem(local_mod.REPULSION_METHODS, "fft", spy)
    Z = np.random.default_rng(1).normal(size=(AUTO_EXACT_MAX_SAMPLES + 1, 2))
    kl_repulsion(Z, "auto", block_size=100)  # an exact-only option: dropped when FFT is chosen
    assert calls == [{}]
    with pytest.raises(TypeError):
        kl_repulsion(Z, "fft", block_size=100)  # but not silently ignored when asked for explicitly


def test_models_default_to_auto_and_reject_unknown_backends(toy_inputs):
    from cova.methods import CovaE2, CovaE3, CovaP3

    for cls in (CovaE2, CovaE3, CovaP3):
        assert cls().kl_method == "auto"
    with pytest.raises(ValueError, match="'kl_method' parameter .* must be a str among .*'bh'.*Got 'fast'"):
        CovaE3(max_iter=2, kl_method="fast").fit(toy_inputs)


@pytest.fixture(scope="module")
def digit_inputs():
    from cova.datasets import load
    from cova.inputs import build_inputs

    ds = load("digits", n_per_class=100)
    return build_inputs(ds, {"weights": {"kind": "gaussian_perplexity", "perplexity": 30},
                             "confidence": {"kind": "eq12", "source": "eq9", "lambda_p": 0.01},
                             "prototypes": {"kind": "ring", "rho": 3}})


@pytest.mark.parametrize("model", ["e2", "e3"])
def test_accelerated_embeddings_score_like_exact(digit_inputs, model):
    """On 1,000 digits: every score within 2 points of the exact run (same seed and init)."""
    from cova.methods import CovaE2, CovaE3
    from cova.metrics.summary import compute_scores

    cls = {"e2": CovaE2, "e3": CovaE3}[model]
    inp = digit_inputs
    scores = {}
    for method in ("exact", "fft"):
        est = cls(alpha=0.5, max_iter=40, kl_method=method, random_state=0).fit(inp)
        assert est.n_iter_ >= 20
        scores[method] = compute_scores(inp.X, est.embedding_, inp.labels, inp.prototypes, est.prototypes_)
    for key in scores["exact"]:
        assert abs(scores["fft"][key] - scores["exact"][key]) < 0.02, (key, scores)


def test_benchmark_script_quick_run(tmp_path):
    """The scaling benchmark runs end to end on a tiny synthetic problem and writes its CSV and plot."""
    out = tmp_path / "bench.csv"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "scaling.py"), "--dataset", "synthetic",
                           "--sizes", "300", "--methods", "e1", "--iters", "5", "--no-warmup",
                           "--out", str(out), "--cache", str(tmp_path / "cache")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = out.read_text()
    assert text.startswith("step,n,status,seconds")
    rows = [line.split(",") for line in text.strip().splitlines()[1:]]
    assert [(r[0], r[1], r[2]) for r in rows] == [("inputs", "300", "ok"), ("e1", "300", "ok")]
    assert all(float(r[3]) > 0 for r in rows)
    assert out.with_suffix(".png").stat().st_size > 1000
    assert "| e1 | 300 | ok |" in proc.stdout


# ---------------------------------------------------------------------------------------------------------------
# momentum optimiser (one gradient evaluation per iteration, t-SNE style)
# ---------------------------------------------------------------------------------------------------------------

def test_momentum_optimizer_decreases_a_quadratic_with_one_evaluation_per_iteration():
    """On f(x) = ½‖x − c‖² the momentum/gains scheme converges, calls f once per iteration (plus the final
    value), and asks for the value only at log points."""
    from cova.manifolds import momentum_gradient_descent, noncompact_stiefel

    rng = np.random.default_rng(0)
    c = rng.normal(size=(50, 2))
    calls = {"grad": 0, "value": 0}

    def fun(x, need_value=True):
        calls["grad"] += 1
        calls["value"] += need_value
        return (0.5 * float(np.sum((x - c) ** 2)) if need_value else float("nan")), x - c

    x0 = rng.normal(size=(50, 2))
    res = momentum_gradient_descent(fun, x0, retract=noncompact_stiefel.retract, max_iter=60, gtol=0.0,
                                    learning_rate=0.2, momentum_switch_iter=15, log_every=20)
    assert res.n_iter == 60
    assert calls["grad"] == 61 and calls["value"] == 1 + 3  # x0, iterations 20/40/60
    assert len(res.history) == 4 and np.isfinite(res.fun)
    assert res.fun < 1e-3 * res.history[0]


def test_momentum_optimizer_clips_each_point_step_to_max_step_norm():
    """``max_step_norm`` bounds every row's move per iteration (openTSNE's clip); rows whose update is shorter move
    exactly as without it, and the clipped run still converges on f(x) = ½‖x − c‖²."""
    from cova.manifolds import momentum_gradient_descent, noncompact_stiefel
    from cova.manifolds.optimize import clip_rows

    rng = np.random.default_rng(1)
    c = rng.normal(size=(40, 2))
    c[:3] *= 50.0  # three far targets: their first steps are long

    def run(max_step_norm):
        moves = []
        prev = [x0]

        def track(i, x, f, g):
            moves.append(np.linalg.norm(x - prev[0], axis=1))
            prev[0] = x.copy()

        res = momentum_gradient_descent(lambda x: (0.5 * float(np.sum((x - c) ** 2)), x - c), x0,
                                        retract=noncompact_stiefel.retract, max_iter=200, gtol=0.0, learning_rate=0.5,
                                        momentum_switch_iter=20, max_step_norm=max_step_norm, callback=track)
        return res, np.array(moves)

    x0 = rng.normal(size=(40, 2))
    free, free_moves = run(None)
    clipped, moves = run(2.0)
    assert free_moves[:, :3].max() > 10.0  # the case the clip is for
    assert moves.max() <= 2.0 + 1e-12
    assert clipped.fun < 1e-3 * clipped.history[0]
    u = np.array([[3.0, 4.0], [0.3, 0.4]])
    assert np.allclose(clip_rows(u, 1.0), [[0.6, 0.8], [0.3, 0.4]])
    assert np.array_equal(clip_rows(u, 10.0), u)
    with pytest.raises(ValueError, match="max_step_norm"):
        momentum_gradient_descent(lambda x: (0.0, x), x0, retract=noncompact_stiefel.retract, max_step_norm=0.0)


@pytest.mark.parametrize("model", ["e2", "e3"])
def test_momentum_mode_matches_armijo_scores(digit_inputs, model):
    """1,000 digits, 100 iterations: the momentum optimiser lowers f as far as Armijo (within 0.5 %) and every
    score is within 2 points of the Armijo run; it evaluates the gradient once per iteration."""
    from cova.methods import CovaE2, CovaE3
    from cova.methods.cova import manifold as cova_mod
    from cova.metrics.summary import compute_scores

    cls = {"e2": CovaE2, "e3": CovaE3}[model]
    inp = digit_inputs
    runs = {}
    for opt in ("armijo", "momentum"):
        original = cova_mod.cova_objective
        count = [0]

        def counting(*a, **kw):
            count[0] += 1
            return original(*a, **kw)

        cova_mod.cova_objective = counting
        try:
            est = cls(alpha=0.5, max_iter=100, gtol=0.0, optimizer=opt, random_state=0).fit(inp)
        finally:
            cova_mod.cova_objective = original
        assert est.optimizer_ == opt
        runs[opt] = (est, count[0],
                     compute_scores(inp.X, est.embedding_, inp.labels, inp.prototypes, est.prototypes_))
    est_m, evals_m, scores_m = runs["momentum"]
    est_a, evals_a, scores_a = runs["armijo"]
    assert evals_m == 101 and evals_a > 150  # one per iteration + the final value vs. the line search's ≈ 1.9
    assert est_m.n_iter_ == 100
    assert est_m.objective_ < est_m.objective_history_[0] - 0.05
    assert est_m.objective_ <= est_a.objective_ * 1.005
    for key in scores_a:
        assert abs(scores_m[key] - scores_a[key]) < 0.02, (key, scores_a, scores_m)


def test_optimizer_option_is_used_and_resolved(toy_inputs, monkeypatch):
    """``optimizer`` reaches the optimiser (a run with the mode ignored fails here); ``auto`` is Armijo at the
    paper's sizes, momentum above 5,000 samples for E2/E3 and always Armijo for E4; unknown names fail."""
    from cova.methods import CovaE2, CovaE3, CovaE4
    from cova.methods.cova import manifold as cova_mod

    used = []
    real_m, real_a = cova_mod.momentum_gradient_descent, cova_mod.riemannian_gradient_descent
    monkeypatch.setattr(cova_mod, "momentum_gradient_descent",
                        lambda *a, **kw: used.append(("momentum", kw["learning_rate"])) or real_m(*a, **kw))
    monkeypatch.setattr(cova_mod, "riemannian_gradient_descent",
                        lambda *a, **kw: used.append(("armijo", None)) or real_a(*a, **kw))
    l = toy_inputs.W.shape[0]
    CovaE3(max_iter=3, optimizer="momentum").fit(toy_inputs)
    CovaE3(max_iter=3, optimizer="momentum", learning_rate=7.0).fit(toy_inputs)
    CovaE2(max_iter=3).fit(toy_inputs)
    assert used == [("momentum", l / 4), ("momentum", 7.0), ("armijo", None)]
    assert CovaE2()._resolve_optimizer(5000) == "armijo"
    assert CovaE2()._resolve_optimizer(5001) == "momentum" == CovaE3()._resolve_optimizer(70000)
    assert CovaE4()._resolve_optimizer(70000) == "armijo"
    assert CovaE3(optimizer="armijo")._resolve_optimizer(70000) == "armijo"
    with pytest.raises(ValueError, match="optimizer"):
        CovaE2(max_iter=2, optimizer="adam").fit(toy_inputs)


def test_momentum_iterates_in_the_locality_order_and_returns_the_input_order(toy_inputs, monkeypatch):
    """The momentum optimiser runs with the rows in W's locality order (not the identity on these inputs) and
    returns the map in the input's order: the same map, to rounding, as with the identity order."""
    from cova.methods import CovaE3
    from cova.methods.cova import manifold as cova_mod

    orders = []
    real = cova_mod.locality_order
    monkeypatch.setattr(cova_mod, "locality_order", lambda W: orders.append(real(W)) or orders[-1])
    params = dict(max_iter=30, optimizer="momentum", init="random", random_state=3)
    ordered = CovaE3(**params).fit(toy_inputs).embedding_
    assert not np.array_equal(orders[0], np.arange(toy_inputs.W.shape[0]))
    monkeypatch.setattr(cova_mod, "locality_order", lambda W: np.arange(W.shape[0]))
    plain = CovaE3(**params).fit(toy_inputs).embedding_
    np.testing.assert_allclose(ordered, plain, rtol=1e-9, atol=1e-12)


def test_gradient_without_value_is_identical(layouts):
    """``need_value=False`` skips the per-edge logarithms but returns the very same gradient."""
    W, Zs = layouts
    for method in ("exact", "fft"):
        v, g = o_kl_l(Zs["cohorts"], W, method=method)
        v2, g2 = o_kl_l(Zs["cohorts"], W, method=method, need_value=False)
        assert np.isnan(v2) and np.isfinite(v)
        np.testing.assert_allclose(g2, g, rtol=1e-12, atol=1e-15)


def test_scale_benchmark_table_per_iteration_ratios_targets_and_slopes():
    """benchmarks/scale.py's summary: iterative steps are compared per iteration, ratios of the medians against
    the issue's targets, featMAP fails its target on memory, and the log–log slope of the median times."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import scale
    finally:
        sys.path.pop(0)

    def rec(pair, n, step, seconds, peak=100.0):
        return {"pair": pair, "n": n, "step": step, "seconds": seconds, "peak_rss_mb": peak, "status": "ok"}

    records = [rec("inputs:tsne_affinity", 1000, "inputs", 8.0), rec("inputs:tsne_affinity", 1000, "tsne_affinity", 10.0),
               rec("inputs:tsne_affinity", 1000, "inputs", 12.0), rec("inputs:tsne_affinity", 1000, "tsne_affinity", 10.0),
               rec("e2:tsne", 1000, "e2", 3.0), rec("e2:tsne", 1000, "tsne", 2.0),
               rec("e2:tsne", 4000, "e2", 12.0), rec("e2:tsne", 4000, "tsne", 16.0),
               rec("featmap:umap_threads", 1_000_000, "featmap", 10.0, peak=20_000.0),
               rec("featmap:umap_threads", 1_000_000, "umap_threads", 10.0)]
    pairs = [("inputs", "tsne_affinity"), ("e2", "tsne"), ("featmap", "umap_threads")]
    rows = {(r["ours"], r["n"]): r for r in scale.summary_rows(records, pairs, iters=100)}
    assert rows[("inputs", 1000)]["ratio"] == pytest.approx(1.0) and rows[("inputs", 1000)]["met"] == "yes"
    assert rows[("e2", 1000)]["unit"] == "s / iteration" and rows[("e2", 1000)]["ours_median"] == pytest.approx(0.03)
    assert rows[("e2", 1000)]["ratio"] == pytest.approx(1.5) and rows[("e2", 1000)]["met"] == "no"
    assert rows[("e2", 4000)]["met"] == "yes"
    assert rows[("featmap", 1_000_000)]["met"] == "no (memory)"
    (step, lo, hi, slope, ref), = [s for s in scale.slopes(records, ["e2"])]
    assert (lo, hi) == (1000, 4000) and slope == pytest.approx(1.0)
    assert ref == pytest.approx(np.log(4000 * np.log(4000) / (1000 * np.log(1000))) / np.log(4))
