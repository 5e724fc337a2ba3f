"""Our correspondence analysis (co-embedding paper Eqs. 6-7) against prince's CA: prince's principal coordinates
are √N times ours (N the table's total), up to the sign of each component."""

from __future__ import annotations

import numpy as np
import pytest

from cova.methods.coembed.ca import correspondence_analysis

prince = pytest.importorskip("prince")
pd = pytest.importorskip("pandas")


def count_table(m: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    R = rng.poisson(rng.gamma(2.0, 1.0, (m, 1)) * rng.gamma(2.0, 1.0, (1, n))).astype(float)
    R[:, 0] += 1.0  # no empty row
    R[0] += 1.0     # no empty column
    return R


def align_signs(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    return theirs * np.sign((ours * theirs).sum(axis=0))


@pytest.mark.parametrize("m, n, k, seed", [(12, 7, 3, 0), (300, 25, 4, 1)])
def test_principal_coordinates_match_prince(m, n, k, seed):
    R = count_table(m, n, seed)
    table = pd.DataFrame(R, index=[f"r{i}" for i in range(m)], columns=[f"c{j}" for j in range(n)])
    ca = prince.CA(n_components=k, engine="scipy").fit(table)
    F = ca.row_coordinates(table).to_numpy()
    G = ca.column_coordinates(table).to_numpy()
    Zx, Zy, theta = correspondence_analysis(R, k, solver="dense")
    root_n = np.sqrt(R.sum())
    np.testing.assert_allclose(theta, np.sqrt(ca.eigenvalues_), atol=1e-10)
    signs = np.sign((Zx * F).sum(axis=0))
    np.testing.assert_allclose(root_n * Zx, F * signs, atol=1e-8)
    np.testing.assert_allclose(root_n * Zy, G * signs, atol=1e-8)
    np.testing.assert_allclose(root_n * Zy, align_signs(Zy, G), atol=1e-8)
