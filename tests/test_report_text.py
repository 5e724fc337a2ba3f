"""What the report says about a run (cova.experiments.report_text): category names and an experiment's caption
facts, derived from its plan."""

from __future__ import annotations

import pytest
from docutils.core import publish_parts

from cova.experiments.report_text import (
    PAPER_NAMES,
    data_origin,
    experiment_facts,
    paper_category,
    rst_text,
    study_category,
)


def test_categories_are_the_papers_names_and_never_hold_a_colon():
    assert [paper_category(p) for p in PAPER_NAMES] == ["COVA", "NeRV", "DOSNES", "Co-embeddings", "featMAP"]
    assert study_category("my_cells") == "Study my_cells"
    assert not any(":" in paper_category(p) for p in PAPER_NAMES)
    with pytest.raises(ValueError, match="paper 'tsne' has no report category; papers: \\['coembedding'"):
        paper_category("tsne")
    with pytest.raises(ValueError, match="cannot hold ':'"):
        study_category("a:b")


def test_rst_text_renders_literally():
    text = "S_n of *all*   runs | `paper_*` columns\\"
    body = publish_parts(rst_text(text), writer_name="html", settings_overrides={"report_level": 1})["body"]
    assert "S_n of *all* runs | `paper_*` columns\\" in body.replace("&lt;", "<")
    assert "system-message" not in body


def test_data_origin_names_substitutes_and_fallbacks():
    assert data_origin(["b", "a"], ["a", "b"], None) == ("paper's", ["a", "b"])
    assert data_origin(["a", "c"], ["a"], None) == ("substitute", ["a", "c"])
    assert data_origin(["places2"], ["places2"], {"places2": "stand_in"}) == (
        "substitute", ["stand_in (fallback for places2)"])
    assert data_origin([], ["a"], None) == ("substitute", [])


def test_experiment_facts_state_what_ran():
    spec = {"name": "fig9", "paper": "nerv", "title": "Fig. 9 on *digits*", "reference": "nerv_fig9",
            "paper_data": ["faces"], "fallbacks": {"places2": "coil20"},
            "runs": [{"dataset": "faces", "method": "nerv"}, {"dataset": "digits", "method": "tnerv"},
                     {"dataset": "digits", "method": "nerv"}, {"dataset": "coil20", "method": "nerv"}]}
    datasets = {"faces": {"description": "the paper's faces"}, "digits": {"description": "8x8 digit_images"},
                "coil20": {}}
    facts = experiment_facts(spec, datasets)
    assert facts["paper"] == "NeRV" and facts["title"] == r"Fig. 9 on \*digits\*"
    assert facts["n_runs"] == 4 and facts["methods"] == "``nerv``, ``tnerv``" and facts["compares"]
    assert facts["data"] == ["``faces``: the paper's faces (the paper's data)",
                             r"``digits``: 8x8 digit\_images (substitute)",
                             "``coil20`` (fallback for ``places2``, whose file was not supplied)"]
    plain = experiment_facts({**spec, "paper_data": None, "reference": None, "fallbacks": None}, datasets)
    assert not plain["compares"] and plain["data"][2] == "``coil20``"
