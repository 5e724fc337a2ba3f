"""The job server (cova.jobserver): a step run by a forked child of the server behaves as in a fresh interpreter
(arguments, working directory, environment, streams, thread limits, exit status); a client that goes away stops
its step; the server goes when its parent goes; without a server the client runs the step itself.

The workflow's own check that results are bit-identical with and without the server is
tests/test_workflow.py::test_two_runs_give_identical_scores (its first run uses the server, its second not)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cova import jobserver

ROOT = Path(__file__).resolve().parents[1]


def _python(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cova", *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path, proc = jobserver.start(tmp_path_factory.mktemp("srv"))
    yield path
    jobserver.stop(path, proc)
    assert proc.returncode is not None and not os.path.exists(path)


def test_a_step_in_the_server_behaves_as_in_a_fresh_interpreter(server, tmp_path):
    """The same command through the server and in a fresh process: same exit status, same messages, the client's
    working directory and environment, and the step's own thread limits (its thread report)."""
    (tmp_path / "sub").mkdir()
    bad = ["check-config", "--configfile", "missing.yaml"]
    fresh = _python(bad, dict(os.environ), tmp_path / "sub")
    served = _python(bad, {**os.environ, jobserver.ENV: server}, tmp_path / "sub")
    assert fresh.returncode == served.returncode == 1
    assert fresh.stderr.split("ERROR", 1)[1] == served.stderr.split("ERROR", 1)[1]  # relative to the client's cwd
    report = tmp_path / "threads.json"
    env = {**os.environ, jobserver.ENV: server, "COVA_THREADS_REPORT": str(report)}
    demo = ["check-config", "--configfile", str(ROOT / "config/demo.yaml"), "--workdir", str(ROOT)]  # an overlay
    ok = _python(["--threads", "1", *demo], env, tmp_path)
    assert ok.returncode == 0 and "is valid" in ok.stderr
    threads = json.loads(report.read_text())
    assert threads["numba"] == 1 and threads["pools"] and all(p["num_threads"] == 1 for p in threads["pools"])
    # the next step gets its own limits, not the last step's: every child starts from the server's state
    two = _python(["--threads", "2", *demo], env, tmp_path)
    threads = json.loads(report.read_text())
    assert two.returncode == 0 and threads["numba"] == 2 and all(p["num_threads"] == 2 for p in threads["pools"])
    helped = _python(["--help"], {**os.environ, jobserver.ENV: server}, tmp_path)
    assert helped.returncode == 0 and "usage: cova" in helped.stdout


def test_without_a_server_the_client_runs_the_step_itself(tmp_path):
    assert jobserver.run_remote(str(tmp_path / "nobody.sock"), ["--help"]) is None
    gone = _python(["--help"], {**os.environ, jobserver.ENV: str(tmp_path / "nobody.sock")}, tmp_path)
    assert gone.returncode == 0 and "usage: cova" in gone.stdout


def _sleeper(tmp_path: Path) -> dict[str, str]:
    """An entry point that records its pid and sleeps: a long step whose life the test can watch."""
    (tmp_path / "sleeper.py").write_text(textwrap.dedent("""
        import os, time
        def main(argv):
            open(argv[0], "w").write(str(os.getpid()))
            time.sleep(float(argv[1]))
            return 3
    """))
    return {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_for(condition, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_the_exit_status_comes_back_and_a_client_that_goes_stops_its_step(tmp_path):
    env = _sleeper(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "cova.jobserver", str(tmp_path / "s.sock"), "sleeper:main"],
                            env=env)
    try:
        assert _wait_for(lambda: (tmp_path / "s.sock").exists())
        client = [sys.executable, "-c", "import sys; from cova.jobserver import run_remote; "
                  "sys.exit(run_remote(sys.argv[1], sys.argv[2:]))", str(tmp_path / "s.sock")]
        done = subprocess.run([*client, str(tmp_path / "a.pid"), "0"], env=env, timeout=60)
        assert done.returncode == 3
        waiting = subprocess.Popen([*client, str(tmp_path / "b.pid"), "60"], env=env)
        assert _wait_for(lambda: (tmp_path / "b.pid").exists() and (tmp_path / "b.pid").read_text())
        step = int((tmp_path / "b.pid").read_text())
        assert _alive(step)
        waiting.send_signal(signal.SIGKILL)  # as when Snakemake stops a job
        waiting.wait()
        assert _wait_for(lambda: not _alive(step))
    finally:
        proc.terminate()
        proc.wait(30)
    assert not (tmp_path / "s.sock").exists()


def test_the_server_goes_when_its_parent_goes(tmp_path):
    env = _sleeper(tmp_path)
    pid_file = tmp_path / "server.pid"
    subprocess.run(
        [sys.executable, "-c", "import os, subprocess, sys; p = subprocess.Popen([sys.executable, '-m', "
         "'cova.jobserver', sys.argv[1], 'sleeper:main', str(os.getpid())], stdout=subprocess.DEVNULL, "
         "stderr=subprocess.DEVNULL); open(sys.argv[2], 'w').write(str(p.pid))", str(tmp_path / "p.sock"),
         str(pid_file)], env=env, timeout=60, check=True)
    server = int(pid_file.read_text())
    assert _wait_for(lambda: _zombie(server))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_step_does_not_outlive_a_killed_server(tmp_path):
    """Snakemake killed with its process group takes the server with it (SIGKILL, no clean-up): the running step,
    in a process group of its own, must not go on as an orphan."""
    env = _sleeper(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "cova.jobserver", str(tmp_path / "k.sock"), "sleeper:main"],
                            env=env)
    client = None
    try:
        assert _wait_for(lambda: (tmp_path / "k.sock").exists())
        client = subprocess.Popen([sys.executable, "-c", "import sys; from cova.jobserver import run_remote; "
                                   "sys.exit(run_remote(sys.argv[1], sys.argv[2:]))", str(tmp_path / "k.sock"),
                                   str(tmp_path / "c.pid"), "60"], env=env)
        assert _wait_for(lambda: (tmp_path / "c.pid").exists() and (tmp_path / "c.pid").read_text())
        step = int((tmp_path / "c.pid").read_text())
        assert _alive(step)
        proc.kill()
        proc.wait()
        assert _wait_for(lambda: _zombie(step))
        assert client.wait(30) == 1  # the client reports that the server went before the step ended
    finally:
        proc.kill()
        if client is not None:
            client.kill()


def _zombie(pid: int) -> bool:
    """Gone, or exited and not yet reaped (an orphan's exit is reaped by init, when it gets to it)."""
    status = Path(f"/proc/{pid}/status")
    try:
        return "zombie" in status.read_text()
    except FileNotFoundError:
        return True
