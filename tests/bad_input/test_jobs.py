"""Bad input, class "at job time": what only a job can find out. A refusal meant for the user reaches the job's log
as one message naming the dataset, inputs and method entry of the job (never a traceback), while a bug keeps its
traceback; features whose distances overflow are named as such where W is built; a read-only output folder is
refused before any job; the job server's temporary folder is not left behind."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cova import cli, jobserver
from cova.affinity.fuzzy import fuzzy_graph
from cova.affinity.weights import build_weights
from cova.datasets import Dataset
from cova.io import OUTPUT_FOLDERS, FileError, require_writable

INPUTS = {"weights": {"kind": "euclidean_max", "n_neighbors": 5}, "confidence": {"kind": "eq12"},
          "prototypes": {"kind": "means"}}


@pytest.fixture
def run(tmp_path):
    """A processed dataset of 20 samples and its inputs, at the workflow's paths under ``tmp_path``."""
    rng = np.random.default_rng(0)
    data = tmp_path / "data" / "processed" / "d.npz"
    Dataset(X=rng.normal(size=(20, 3)), labels=np.arange(20) % 2, label_names=["a", "b"],
            meta={"source": "test"}).save(data)
    inputs = tmp_path / "results" / "d" / "means-0123abcd" / "inputs.npz"
    assert cli.main(["inputs", "--dataset", str(data), "--spec", json.dumps(INPUTS), "--out", str(inputs)]) == 0
    return tmp_path, data, inputs


def refusal(caplog, argv: list[str]) -> str:
    """The one error record of a refused step (status 1), with no traceback anywhere in the log."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="cova"):
        assert cli.main(argv) == 1
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None
    message = errors[0].getMessage()
    assert "\n" not in message and "Traceback" not in caplog.text
    return message


def embed(run, method: str, entry: str, params: dict) -> list[str]:
    root, data, inputs = run
    out = root / "results" / "d" / "means-0123abcd" / method / f"{entry}-89abcdef" / "embedding.npz"
    return ["embed", "--dataset", str(data), "--inputs", str(inputs), "--method", method, "--params",
            json.dumps(params), "--out", str(out)]


# ------------------------------------------------------------------------------------ refusals in a job
def test_a_parameter_that_does_not_fit_the_data_names_the_method_entry(run, caplog):
    message = refusal(caplog, embed(run, "umap", "u-k50", {"n_neighbors": 50}))
    assert message.startswith('method entry u-k50 (method umap, params {"n_neighbors": 50}) on dataset d (')
    assert ("with inputs means refused: UMAP parameter n_neighbors (a method entry's params.n_neighbors): 50 is not "
            "allowed: the inputs' X has 20 rows") in message and message.endswith("allowed: at most 19")
    assert not list((run[0] / "results" / "d" / "means-0123abcd").glob("umap/*/embedding.npz"))


def test_a_declared_constraint_checked_by_scikit_learn_is_a_refusal(run, caplog):
    message = refusal(caplog, embed(run, "tsne", "t", {"perplexity": -1}))
    assert message.startswith("method entry t (method tsne")
    assert "The 'perplexity' parameter of TSNE must be a float in the range (0.0, inf). Got -1" in message


def test_a_dataset_refusal_names_its_config_key(tmp_path, caplog):
    path = tmp_path / "q.csv"
    path.write_text("x,y,label\n" + "".join(f"{i},{i % 3},{'ab'[i % 2]}\n" for i in range(10)))
    message = refusal(caplog, ["dataset", "--name", "q", "--loader", "generic", "--params",
                               json.dumps({"path": str(path), "labels": "label"}),
                               "--out", str(tmp_path / "q.npz")])
    assert message.startswith("config key datasets.q (loader generic) refused: ")
    assert "'labels'" in message and not (tmp_path / "q.npz").exists()


def test_a_bug_keeps_its_traceback(run, monkeypatch):
    import cova.inputs

    def broken(*args, **kwargs):  # a ValueError raised inside numpy: a bug of ours, not the user's input
        return np.reshape(np.zeros(3), (2, 2))

    monkeypatch.setattr(cova.inputs, "build_inputs", broken)
    _, data, inputs = run
    with pytest.raises(ValueError, match="cannot reshape"):
        cli.main(["inputs", "--dataset", str(data), "--spec", json.dumps(INPUTS), "--out", str(inputs)])


def test_the_rule_tells_our_refusals_from_implicit_errors():
    from cova.constraints import OptionError

    def caught(call, *args):
        try:
            call(*args)
        except ValueError as err:
            return err
        raise AssertionError("no ValueError")

    assert cli.is_refusal(caught(cli._positive_int, "x")) is False  # int("x") inside our code: the interpreter's
    assert cli.is_refusal(caught(np.reshape, np.zeros(3), (2, 2))) is False  # inside numpy
    assert cli.is_refusal(caught(build_weights, np.zeros((3, 2)), "nope")) is True  # our validation: a UserError
    assert cli.is_refusal(OptionError("methods.x.params.k", "3 is not allowed")) is True
    assert cli.is_refusal(ValueError("a plain ValueError, whoever raised it")) is False


def test_every_validation_raise_of_the_package_is_a_refusal():
    """No ``raise ValueError(...)`` is left in the package: a validation message is a UserError, so a job ends with
    it as one line; a plain ValueError would end with a traceback."""
    import pathlib
    import re

    root = pathlib.Path(cli.__file__).parent
    plain = [f"{p.relative_to(root)}:{i}" for p in sorted(root.rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"raise ValueError\b", line)]
    assert plain == []


# ------------------------------------------------------------------------------------ overflowing weights
def test_overflowing_csv_values_are_named_in_the_inputs_job(tmp_path, caplog):
    rng = np.random.default_rng(1)
    path = tmp_path / "big.csv"
    path.write_text("x,y,z,label\n" + "".join(f"{a * 1e200},{b * 1e200},{c},{'ab'[i % 2]}\n"
                                              for i, (a, b, c) in enumerate(rng.normal(size=(30, 3)))))
    data = tmp_path / "data" / "processed" / "big.npz"
    assert cli.main(["dataset", "--name", "big", "--loader", "generic", "--params",
                     json.dumps({"path": str(path), "label": "label"}), "--out", str(data)]) == 0
    out = tmp_path / "results" / "big" / "means-0123abcd" / "inputs.npz"
    message = refusal(caplog, ["inputs", "--dataset", str(data), "--spec", json.dumps(INPUTS), "--out", str(out)])
    assert message.startswith(f"config key inputs.means on dataset big ({data}) refused: X has values too large "
                              "for its squared distances in float64")
    assert "column 0 (2 of 3 columns above" in message and "weights W built from it would be NaN" in message
    assert "rescale or standardise the features" in message and not out.exists()


@pytest.mark.parametrize("kind, options", [("gaussian_perplexity", {"perplexity": 5}),
                                           ("euclidean_max", {"n_neighbors": 5}),
                                           ("cosine_knn", {"n_neighbors": 5})])
def test_every_weight_kind_refuses_distances_out_of_float64(kind, options):
    X = np.random.default_rng(2).normal(size=(30, 3))
    W = build_weights(X, kind, **options)
    assert np.all(np.isfinite(W.data)) and np.isclose(W.sum(), 1.0)
    with pytest.raises(ValueError, match=r"values too large .* would be NaN; rescale or standardise"):
        build_weights(X * 1e170, kind, **options)
    with pytest.raises(ValueError, match=r"differences too small .* underflows .* rescale or standardise"):
        build_weights(X * 1e-170, kind, **options)


@pytest.mark.parametrize("scale", [1e20, 1e-20])
def test_a_perplexity_bandwidth_out_of_reach_is_refused_not_silently_wrong(scale):
    X = np.random.default_rng(3).normal(size=(60, 3))
    reference = build_weights(X, "gaussian_perplexity", perplexity=5)
    assert np.allclose(build_weights(X * 1e6, "gaussian_perplexity", perplexity=5).toarray(), reference.toarray(),
                       atol=1e-6)  # the calibration is scale-free inside its range
    with pytest.raises(ValueError, match=r"Gaussian bandwidth of \d+ of 60 rows .* cannot be calibrated to "
                                         r"perplexity 5: .* would be silently wrong; rescale"):
        build_weights(X * scale, "gaussian_perplexity", perplexity=5)


def test_fuzzy_graph_refuses_distances_beyond_float32():
    X = np.random.default_rng(4).normal(size=(30, 3))
    assert np.all(np.isfinite(fuzzy_graph(X, 5).P.data))
    with pytest.raises(ValueError, match=r"above the float32 range .* weights P would be NaN; rescale"):
        fuzzy_graph(X * 1e50, 5)


# ------------------------------------------------------------------------------------ read-only output folders
def test_missing_output_folders_are_created(tmp_path):
    require_writable(OUTPUT_FOLDERS, tmp_path)
    assert all((tmp_path / folder).is_dir() for folder in OUTPUT_FOLDERS)


def test_a_folder_without_write_permission_is_named(tmp_path, monkeypatch):
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: Path(p).name != "results" and real(p, mode))
    with pytest.raises(FileError, match=rf"^the output folder {tmp_path / 'results'} cannot be written by this "
                                        r"user \(no write permission\); make it writable \(e\.g\. chmod -R u\+w"):
        require_writable(OUTPUT_FOLDERS, tmp_path)


def test_a_read_only_file_system_is_named(tmp_path, monkeypatch):
    class ReadOnly:
        f_flag = os.ST_RDONLY

    monkeypatch.setattr(os, "access", lambda p, mode: False)
    monkeypatch.setattr(os, "statvfs", lambda p: ReadOnly())
    with pytest.raises(FileError, match=rf"^the output folder {tmp_path / 'results'} is on a read-only file system; "
                                        r"run from a copy of the project on a writable disk"):
        require_writable(OUTPUT_FOLDERS, tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway; the check itself is tested "
                                              "above with os.access patched")
def test_snakemake_refuses_a_read_only_results_folder_in_one_line(tmp_path):
    from test_workflow import ENV, SNAKEMAKE, make_workdir

    workdir = make_workdir(tmp_path / "w")
    (workdir / "results").mkdir()
    (workdir / "results").chmod(0o555)
    try:
        proc = subprocess.run([SNAKEMAKE, "-n", "--cores", "1", "--configfile", "config/demo.yaml"], cwd=workdir,
                              capture_output=True, text=True, env=ENV)
    finally:
        (workdir / "results").chmod(0o755)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in out
    assert "Error: the output folder results cannot be written by this user (no write permission)" in out


# ------------------------------------------------------------------------------------ temporary folders
def test_a_server_that_does_not_start_leaves_no_folder(tmp_path):
    with pytest.raises(RuntimeError, match="exited at start-up"):
        jobserver.start(tmp_path, entry="cova_no_such_module:main")
    assert list(tmp_path.iterdir()) == []


def test_the_folder_of_a_killed_server_is_removed_by_the_next_start(tmp_path):
    stale = tmp_path / "cova-k1lled00"
    stale.mkdir()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(stale / jobserver.SOCKET))  # the socket file of a server that is gone: nobody listens
    dead.close()
    other = tmp_path / "cova-notours0"
    other.mkdir()
    (other / "keep.txt").write_text("not a server's")
    path, proc = jobserver.start(tmp_path, entry="json:dumps")
    try:
        assert not stale.exists() and (other / "keep.txt").exists()
        assert Path(path).parent.parent == tmp_path and Path(path).exists()
    finally:
        jobserver.stop(path, proc)
    assert not Path(path).parent.exists()
