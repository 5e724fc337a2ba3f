"""The command line (cova.cli): the version, the help of every step option, @FILE arguments (what the Snakemake
rules pass, docs/workflow.md) and the score step's run directory."""

from __future__ import annotations

import argparse
import json
from importlib.metadata import version

import numpy as np
import pytest

from cova.cli import STEPS, build_parser, main
from cova.datasets import Dataset
from cova.embedding import Embedding


def test_version_is_the_installed_package_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.split() == ["cova", version("cova")]


def test_every_option_of_every_step_has_help():
    parser = build_parser()
    steps = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(steps.choices) == set(STEPS)
    for name, sub in steps.choices.items():
        options = [a for a in sub._actions if a.option_strings and a.dest != "help"]
        assert options, name
        missing = [a.option_strings[0] for a in options if not (a.help or "").strip()]
        assert not missing, f"cova {name}: options without help: {missing}"
        # the help names every option, as `cova <step> --help` prints it
        text = sub.format_help()
        assert all(a.option_strings[0] in text for a in options)


def test_arguments_from_files_give_the_same_step(tmp_path):
    """A JSON option read from @FILE (one argument per line) is the inline JSON; list options read one per line."""
    params = {"n_samples": 60, "random_state": 3}
    (tmp_path / "params.txt").write_text(json.dumps(params) + "\n")
    assert main(["dataset", "--name", "s", "--loader", "sinusoid", "--params", json.dumps(params),
                 "--out", str(tmp_path / "inline.npz")]) == 0
    assert main(["dataset", "--name", "s", "--loader", "sinusoid", "--params", f"@{tmp_path / 'params.txt'}",
                 "--out", str(tmp_path / "file.npz")]) == 0
    inline, from_file = Dataset.load(tmp_path / "inline.npz"), Dataset.load(tmp_path / "file.npz")
    assert inline.X.shape == (60, from_file.X.shape[1]) and np.array_equal(inline.X, from_file.X)
    (tmp_path / "list.txt").write_text(f"{tmp_path / 'inline.npz'}\n{tmp_path / 'file.npz'}\n")
    args = build_parser().parse_args(["datasets-table", "--datasets", f"@{tmp_path / 'list.txt'}", "--info", "[]",
                                      "--csv", "a.csv", "--html", "a.html"])
    assert args.datasets == [str(tmp_path / "inline.npz"), str(tmp_path / "file.npz")]


def test_score_reads_and_writes_the_files_of_a_run_directory(tmp_path):
    assert main(["dataset", "--name", "s", "--loader", "sinusoid", "--params", '{"n_samples": 80}',
                 "--out", str(tmp_path / "d.npz")]) == 0
    spec = {"weights": {"kind": "euclidean_max", "n_neighbors": 10}, "prototypes": {"kind": "means"},
            "confidence": {"kind": "eq12", "lambda_p": 0.01, "source": "eq9"}}
    assert main(["inputs", "--dataset", str(tmp_path / "d.npz"), "--spec", json.dumps(spec),
                 "--out", str(tmp_path / "i.npz")]) == 0
    run = tmp_path / "run"
    run.mkdir()
    assert main(["embed", "--dataset", str(tmp_path / "d.npz"), "--inputs", str(tmp_path / "i.npz"), "--method",
                 "pca", "--out", str(run / "embedding.npz")]) == 0
    ids = {"dataset": "s", "method": "pca", "method_entry": "pca"}
    assert main(["score", "--dataset", str(tmp_path / "d.npz"), "--inputs", str(tmp_path / "i.npz"),
                 "--run", str(run), "--ids", json.dumps(ids)]) == 0
    assert sorted(p.name for p in run.iterdir()) == ["embedding.npz", "per_point.npz", "scatter.png", "scores.json"]
    record = json.loads((run / "scores.json").read_text())
    assert record["n_samples"] == Embedding.load(run / "embedding.npz").Z.shape[0] == 80
    assert {k: record[k] for k in ids} == ids
    with pytest.raises(SystemExit, match="--run RUN"):
        main(["score", "--dataset", str(tmp_path / "d.npz"), "--inputs", str(tmp_path / "i.npz")])
