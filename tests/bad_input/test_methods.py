"""Bad input, class "methods" (issue 41, point 2 and point 3's HTML escaping): a method is refused before any job
when its inputs make the result meaningless, and every text from a configuration that reaches a page is escaped.

Point 2: prototypes Υ whose dimension a COVA method embeds in (``means`` on high-dimensional data, ``given`` rows of
too many coordinates) are refused by the configuration check when the configuration fixes that dimension, else by
the estimator before it fits; an estimator returning more columns than its declared ``n_components`` is refused.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from cova.config import ConfigError, validate_config
from cova.methods import CovaE1, CovaE2, CovaP1, Embedder

#: one small run of COVA-E1 on a generated data set of known columns, independent of the shipped configurations
CONFIG = {"seed": 0,
          "datasets": {"wide": {"loader": "places_shaped",
                                "params": {"n_classes": 3, "n_per_class": 10, "n_features": 40}}},
          "inputs": {"means": {"weights": {"kind": "euclidean_max"}, "confidence": {"kind": "eq12"},
                               "prototypes": {"kind": "means"}}},
          "methods": {"e1": {"method": "cova_e1"}, "pca": {"method": "pca"}},
          "runs": [{"dataset": "wide", "inputs": "means", "methods": ["e1"]}]}


def config(**inputs: dict) -> dict:
    """A copy of :data:`CONFIG` whose inputs block ``means`` is updated with ``inputs``."""
    c = copy.deepcopy(CONFIG)
    c["inputs"]["means"].update(inputs)
    return c


def refused(c: dict) -> str:
    with pytest.raises(ConfigError) as err:
        validate_config(c)
    return str(err.value)


# ---------------------------------------------------------------------------------------------------------------
# Point 2: prototypes of the wrong dimension, refused before any job


def test_means_prototypes_of_wide_data_are_refused_naming_the_key_and_the_way_out():
    msg = refused(config())
    assert "config key runs[0]" in msg and "method entry 'e1' (cova_e1)" in msg
    assert "inputs.means.prototypes.kind 'means'" in msg and "n_features = 40" in msg and "k = 40" in msg
    assert "1 to 3 columns" in msg and "features: {kind: pca, n_components: 2}" in msg


def test_means_prototypes_on_pca_features_follow_their_n_components():
    msg = refused(config(features={"kind": "pca", "n_components": 5}))
    assert "inputs.means.prototypes.kind 'means' on inputs.means.features.n_components" in msg and "k = 5" in msg
    validate_config(config(features={"kind": "pca", "n_components": 2}))


def test_means_prototypes_in_raw_space_ignore_the_features():
    """``space: raw`` builds the means from the dataset's own columns, whatever the features block."""
    msg = refused(config(features={"kind": "pca", "n_components": 2}, prototypes={"kind": "means", "space": "raw"}))
    assert "k = 40" in msg


def test_given_prototypes_of_four_coordinates_are_refused():
    rows = [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]]
    msg = refused(config(prototypes={"kind": "given", "given": rows}))
    assert "inputs.means.prototypes.given" in msg and "k = 4" in msg
    validate_config(config(prototypes={"kind": "given", "given": [r[:3] for r in rows]}))


def test_a_generic_file_with_listed_feature_columns_counts_them(tmp_path):
    path = tmp_path / "wide.csv"
    cols = [f"f{j}" for j in range(6)]
    path.write_text("label," + ",".join(cols) + "\n" + "".join(f"{i % 3}," + ",".join("0.5" for _ in cols) + "\n"
                                                             for i in range(12)))
    c = copy.deepcopy(CONFIG)
    c["datasets"] = {"wide": {"loader": "generic", "params": {"path": str(path), "label": "label", "features": cols}}}
    msg = refused(c)
    assert "the 6 columns of datasets.wide.params.features" in msg and "k = 6" in msg


def test_wide_means_prototypes_are_accepted_when_no_method_reads_them():
    """DOSNES's ``ptsne_raw`` block builds 50-column means that its t-SNE runs never read: not refused."""
    c = copy.deepcopy(CONFIG)
    c["runs"][0]["methods"] = ["pca"]
    validate_config(c)


def test_a_grid_entry_of_a_prototype_method_is_refused_too():
    c = copy.deepcopy(CONFIG)
    c["methods"]["e1"]["grid"] = {"alpha": [0.1, 0.9]}
    assert "method entry 'e1' (cova_e1)" in refused(c)


# ---------------------------------------------------------------------------------------------------------------
# Point 2 where the configuration cannot know the dimension: the estimator refuses before fitting


def wide_data(d: int = 12, l: int = 30) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = np.arange(l) % 3
    return rng.normal(size=(l, d)) + y[:, None], y


@pytest.mark.parametrize("cls", [CovaE1, CovaE2, CovaP1])
def test_cova_estimators_refuse_prototypes_of_many_columns(cls):
    X, y = wide_data()
    block = {"weights": {"kind": "euclidean_max", "n_neighbors": 5}, "confidence": {"kind": "eq12"},
             "prototypes": {"kind": "means"}}
    with pytest.raises(ValueError, match=r"the inputs' prototypes \(prototypes kind 'means'\) has k = 12 columns"):
        cls().fit(X, y, inputs=block)


def test_cova_e1_on_three_column_means_still_runs():
    """The bound is the display's (1 to 3 columns), not a refusal of ``means`` as such (COVA Fig. 1)."""
    X, y = wide_data(d=3)
    block = {"weights": {"kind": "euclidean_max", "n_neighbors": 5}, "confidence": {"kind": "eq12"},
             "prototypes": {"kind": "means"}}
    assert CovaE1().fit(X, y, inputs=block).embedding_.shape == (30, 3)


class _TooWide(Embedder):
    """An estimator that declares 2 components and returns 3 (the defect the guard catches)."""

    def __init__(self, n_components: int = 2):
        self.n_components = n_components

    def _fit(self, inputs):
        self.embedding_ = np.zeros((inputs.n_samples, self.n_components + 1))
        return self


def test_an_embedding_wider_than_its_n_components_is_refused():
    X, _ = wide_data(d=4)
    with pytest.raises(ValueError, match=r"_TooWide returned an embedding of 3 columns, more than its "
                                         r"n_components = 2"):
        _TooWide().fit(X)


# ---------------------------------------------------------------------------------------------------------------
# Point 3: every text from a configuration that reaches a page is escaped (experiment pages, scores pages, the
# study page, the scorecard, DOSNES's interactive sphere page)

#: what a shared configuration could put in a title, caption, note or name to run a script in the reader's browser
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>'\"<!--"


def assert_escaped(text: str, scripts: int = 1) -> None:
    """No hostile markup survives; the text is still shown (escaped); only the page's own ``scripts`` run."""
    assert "<script>alert" not in text and "<img src=x" not in text and "<!--" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert text.count("<script") == scripts


def experiment_spec(tmp_path) -> dict:
    return {"name": "e" + HOSTILE, "title": "T" + HOSTILE, "caption": "C" + HOSTILE, "notes": "N" + HOSTILE,
            "paper": "cova", "reference": None, "claims": [],
            "runs": [{"dataset": "d" + HOSTILE, "inputs": "i" + HOSTILE, "entry": "m" + HOSTILE,
                      "group": "g" + HOSTILE, "method": "pca", "scores": str(tmp_path / "run" / "scores.json")}]}


def test_experiment_page_escapes_title_caption_notes_and_names(tmp_path):
    import pandas as pd

    from cova.experiments.page import write_tables

    out = {"csv": str(tmp_path / "e.csv"), "html": str(tmp_path / "e.html"), "png": str(tmp_path / "e.png")}
    table = pd.DataFrame([{"dataset": "d" + HOSTILE, "method_entry": "m" + HOSTILE, "S_n": 0.5}])
    write_tables(experiment_spec(tmp_path), table, out)
    text = (tmp_path / "e.html").read_text()
    assert_escaped(text)
    for shown in ("T&lt;script&gt;", "C&lt;script&gt;", "N&lt;script&gt;", "d&lt;script&gt;", "m&lt;script&gt;"):
        assert shown in text


def test_scores_page_escapes_title_note_and_cells(tmp_path):
    import pandas as pd

    from cova.viz.tables import write_scores_html

    table = pd.DataFrame([{"dataset": "d" + HOSTILE, "method_entry": "m" + HOSTILE, "method": "pca",
                           "inputs": "i" + HOSTILE, "inputs_id": "x", "params_id": "p", "n_samples": 9,
                           "n_cohorts": 2, "status": "ok" + HOSTILE, HOSTILE: 1.0}])
    write_scores_html(table, tmp_path / "s.html", title="S" + HOSTILE, note="n" + HOSTILE)
    assert_escaped((tmp_path / "s.html").read_text())


def test_study_page_escapes_names_titles_and_grid_values(tmp_path):
    from cova.experiments.study_page import write_study_page

    run = {"dataset": "d" + HOSTILE, "entry": "m" + HOSTILE, "group": "m", "method": "pca", "inputs": "i",
           "grid": {"alpha": HOSTILE}, "scores": str(tmp_path / "scores.json"),
           "scatter": str(tmp_path / ("s" + "'><script>x</script>.png"))}
    spec = {"name": "st" + HOSTILE, "datasets": ["d" + HOSTILE], "runs": [run], "exports": [],
            "experiments": [{"name": "x" + HOSTILE, "protocol": "compare", "title": "T" + HOSTILE,
                             "html": str(tmp_path / "x.html"), "png": str(tmp_path / "x.png")}]}
    (tmp_path / "scores.json").write_text('{"status": "ok", "n_samples": 3, "S_n": 0.5}')
    write_study_page(spec, str(tmp_path / "study.html"), str(tmp_path / "study.csv"))
    assert_escaped((tmp_path / "study.html").read_text(), scripts=0)


def test_scorecard_escapes_the_about_line(tmp_path):
    from cova.experiments.scorecard import write_scorecard

    write_scorecard([], tmp_path / "card.csv", tmp_path / "card.html", about="A" + HOSTILE)
    assert_escaped((tmp_path / "card.html").read_text(), scripts=0)


def test_sphere_page_keeps_names_inside_its_script():
    """Names go into the page's script as JSON: a name holding ``</script>`` or ``<!--`` must not end it."""
    from cova.viz.sphere_page import SphereView, sphere_page

    view = SphereView(title="v" + HOSTILE, Z=np.eye(3), labels=np.array([0, 1, 1]),
                      label_names=["a" + HOSTILE, "b"], names=[HOSTILE, "</script>", "<!--"])
    text = sphere_page([view], "P" + HOSTILE)
    assert_escaped(text, scripts=2)  # the sorting script of every page and the sphere's own
    assert "</script>" not in text.split("const VIEWS=", 1)[1].split(";", 1)[0]
