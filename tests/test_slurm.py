"""The cluster path: the workflow through `snakemake --profile workflow/profiles/slurm` on a real SLURM cluster.

The fixture starts a one-node SLURM cluster on localhost from Debian's packages (munged, slurmctld, slurmd; no
accounting database, as with Debian's example slurm.conf), runs tests/configs/slurm.yaml through the profile,
checks that every job went through sbatch and that the scores equal those of a local run, and stops the daemons
it started, also when a test fails. docs/cluster.md describes the setup.

Where the packages cannot be installed (not root, no apt-get) or the plugin is missing, the tests skip saying
why; under CI=true they fail instead.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest
import yaml

import requirements
from snakemake_output import job_stats

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
CONFIG = ROOT / "tests" / "configs" / "slurm.yaml"
PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")
COMMANDS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "unshare")
PLUGIN = "snakemake_executor_plugin_slurm"
PARTITION = "debug"  # the partition of workflow/profiles/slurm, as in Debian's example slurm.conf

pytestmark = pytest.mark.slow


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail under CI=true, where the cluster path must run."""
    requirements.unavailable("the SLURM test", reason)


def plugin_installed() -> bool:
    try:
        __import__(PLUGIN)
    except ImportError:
        return False
    return True


def require_plugin() -> None:
    if not plugin_installed():
        unavailable(f"{PLUGIN} is not installed: pip install -e '.[slurm]' (make test installs it)")


def sbin_path() -> str:
    """PATH with the sbin directories, where Debian puts the daemons (a non-login root shell may lack them)."""
    parts = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(parts + [d for d in ("/usr/sbin", "/sbin") if d not in parts])


def missing_commands() -> list[str]:
    return [c for c in COMMANDS if shutil.which(c, path=sbin_path()) is None]


def ensure_packages() -> None:
    """Install Debian's SLURM and MUNGE packages when a command is missing (root and apt-get only)."""
    if not missing_commands():
        return
    if shutil.which("apt-get") is None:
        unavailable(f"{', '.join(missing_commands())} missing and no apt-get to install {' '.join(PACKAGES)}")
    if os.geteuid() != 0:
        unavailable(f"{', '.join(missing_commands())} missing; installing {' '.join(PACKAGES)} with apt-get "
                    "needs root")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *PACKAGES]):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            unavailable(f"`{' '.join(cmd)}` failed: {proc.stderr.strip()[-800:]}")
    if missing_commands():
        unavailable(f"{', '.join(missing_commands())} still missing after installing {' '.join(PACKAGES)}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_memory_mb(path: str) -> int:
    """RealMemory as slurmd reports it (`slurmd -C`); a node configured with more would be drained."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, env={**os.environ, "PATH": path}).stdout
    m = re.search(r"RealMemory=(\d+)", out)
    return int(m.group(1)) if m else 1000


class LocalSlurm:
    """A one-node SLURM cluster on localhost whose files all live in `base`.

    munged (its own key and socket), slurmctld and slurmd (ports picked free on 127.0.0.1), one node `localhost`
    with the machine's CPUs and memory, one partition `debug`, no accounting. Clients find the cluster through
    SLURM_CONF (`env`). The executor's job step strips SLURM_* variables before it calls `srun` inside a job, so
    slurmd runs in a private mount namespace where `base/etc` is mounted on /etc/slurm: there, and only there,
    `srun` finds the configuration at SLURM's default path. Nothing outside `base` changes.
    """

    def __init__(self, base: Path) -> None:
        self.base = base
        self.path = sbin_path()
        self.etc = base / "etc"
        self.conf = self.etc / "slurm.conf"
        self.socket = base / "munge" / "munge.socket"
        self.logs = base / "log"
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.env = {**os.environ, "PATH": self.path, "SLURM_CONF": str(self.conf)}

    def write_files(self) -> None:
        for d in ("etc", "munge", "log", "state", "spool"):
            (self.base / d).mkdir(mode=0o700)
        key = self.base / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        b = self.base
        self.conf.write_text("\n".join([
            "ClusterName=covatest",
            "SlurmctldHost=localhost",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}",
            "SlurmUser=root",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "ReturnToService=2",
            f"SlurmctldPidFile={b / 'slurmctld.pid'}",
            f"SlurmdPidFile={b / 'slurmd.pid'}",
            f"SlurmdSpoolDir={b / 'spool'}",
            f"StateSaveLocation={b / 'state'}",
            f"SlurmctldLogFile={self.logs / 'slurmctld.log'}",
            f"SlurmdLogFile={self.logs / 'slurmd.log'}",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "JobAcctGatherType=jobacct_gather/none",
            # finished jobs stay visible to squeue for 300 s, the executor's status checks need that
            "MinJobAge=300",
            f"NodeName=localhost NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} "
            f"RealMemory={node_memory_mb(self.path)} State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]) + "\n")

    def spawn(self, name: str, argv: list[str]) -> None:
        log = open(self.logs / f"{name}.out", "w")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        log.close()
        self.procs.append((name, proc))

    def wait_for(self, what: str, ready: Callable[[], bool], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            for name, proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with {proc.returncode} while waiting for {what}:\n"
                                       f"{self.log_tail(name)}")
            time.sleep(0.3)
        raise RuntimeError(f"timed out waiting for {what}:\n" + "\n".join(self.log_tail(n) for n, _ in self.procs))

    def log_tail(self, name: str) -> str:
        texts = [p.read_text(errors="replace")[-2000:] for p in sorted(self.logs.glob(f"{name}*")) if p.is_file()]
        return f"--- {name}\n" + "\n".join(texts)

    def slurm(self, *argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(argv), capture_output=True, text=True, env=self.env, timeout=30)

    def start(self) -> None:
        self.write_files()
        # --force: munged refuses a socket below a directory that is not world-executable (pytest's tmp root)
        self.spawn("munged", ["munged", "--foreground", "--force", f"--socket={self.socket}",
                              f"--key-file={self.base / 'munge' / 'munge.key'}",
                              f"--pid-file={self.base / 'munge' / 'munged.pid'}",
                              f"--seed-file={self.base / 'munge' / 'munged.seed'}",
                              f"--log-file={self.logs / 'munged.log'}"])
        self.wait_for("munged's socket", self.socket.exists)
        self.spawn("slurmctld", ["slurmctld", "-D", "-c", "-f", str(self.conf)])
        self.wait_for("slurmctld", lambda: self.slurm("scontrol", "ping").stdout.count("UP") > 0)
        self.spawn("slurmd", ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                              'mount --bind "$1" /etc/slurm && exec slurmd -D -N localhost -f "$1/slurm.conf"',
                              "sh", str(self.etc)])
        self.wait_for("node localhost idle", lambda: self.slurm("sinfo", "-h", "-o", "%T").stdout.strip() == "idle")

    def stop(self) -> None:
        """Cancel what is left of our jobs, then stop the daemons this object started, newest first."""
        if any(proc.poll() is None for name, proc in self.procs if name == "slurmctld"):
            self.slurm("scancel", "--user", str(os.getuid()))
        for name, proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=5)
        self.procs.clear()


@pytest.fixture(scope="module")
def cluster(request, tmp_path_factory) -> LocalSlurm:
    require_plugin()
    if sys.platform != "linux":
        unavailable("the local SLURM cluster needs Linux")
    ensure_packages()
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        unavailable(f"slurmd's private mount namespace is not allowed here: {probe.stderr.strip()}")
    if not Path("/etc/slurm").is_dir():
        Path("/etc/slurm").mkdir(parents=True)
    local = LocalSlurm(tmp_path_factory.mktemp("slurm"))
    request.addfinalizer(local.stop)
    local.start()
    return local


def workdir_copy(path: Path) -> Path:
    """A checkout-like copy: the Snakefile, the workflow (with the profiles), the root profiles/ and the config."""
    path.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "environment.yml"):
        shutil.copy(ROOT / name, path / name)
    shutil.copytree(ROOT / "workflow", path / "workflow")
    shutil.copytree(ROOT / "profiles", path / "profiles")
    shutil.copy(CONFIG, path / "slurm.yaml")
    return path


def scores(workdir: Path) -> dict[str, dict]:
    return {str(p.relative_to(workdir)): json.loads(p.read_text())
            for p in sorted((workdir / "results").rglob("scores.json"))}


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    workdir = workdir_copy(tmp_path_factory.mktemp("on_slurm"))
    # keep the per-job logs of successful jobs (they are the evidence of sbatch); the first status check after
    # 2 s instead of 40 s, for a short test
    proc = subprocess.run([SNAKEMAKE, "--profile", "workflow/profiles/slurm", "--configfile", "slurm.yaml",
                           "--slurm-keep-successful-logs", "--slurm-init-seconds-before-status-checks", "2"],
                          cwd=workdir, capture_output=True, text=True, env=cluster.env, timeout=600)
    assert proc.returncode == 0, (f"snakemake on SLURM failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}\n"
                                  + "\n".join(cluster.log_tail(n) for n in ("slurmctld", "slurmd")))
    return workdir, proc


def test_every_job_went_through_sbatch(slurm_run, cluster):
    workdir, proc = slurm_run
    output = proc.stdout + proc.stderr
    assert "Using profiles workflow/profiles/slurm and workflow specific profile profiles/default" in output
    # `all` has no action; `timing_plan` is a local rule (it writes a JSON file from the Snakemake process)
    planned = {rule: n for rule, n in job_stats(output).items() if rule not in ("all", "timing_plan")}
    assert planned and sum(planned.values()) >= 7
    logs = sorted((workdir / ".snakemake" / "slurm_logs").rglob("*.log"))
    per_rule: dict[str, int] = {}
    for log in logs:
        rule = log.relative_to(workdir / ".snakemake" / "slurm_logs").parts[0].removeprefix("rule_")
        per_rule[rule] = per_rule.get(rule, 0) + 1
    assert per_rule == planned, f"SLURM job logs per rule {per_rule}, planned jobs {planned}"
    job_ids = {log.stem for log in logs}
    states = dict(line.split("|") for line in cluster.slurm("squeue", "--states=all", "--noheader",
                                                            "--format=%i|%T").stdout.split())
    assert {states.get(j) for j in job_ids} == {"COMPLETED"}, states


def test_scores_equal_a_local_run(slurm_run, tmp_path_factory):
    workdir, _ = slurm_run
    local = workdir_copy(tmp_path_factory.mktemp("local"))
    proc = subprocess.run([SNAKEMAKE, "--cores", "2", "--configfile", "slurm.yaml"], cwd=local,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"local snakemake failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    on_slurm, here = scores(workdir), scores(local)
    assert len(here) == 1 and on_slurm.keys() == here.keys()
    for path in here:
        assert same(on_slurm[path], here[path]), (path, on_slurm[path], here[path])


def parsed_args(monkeypatch, *argv: str):
    """Snakemake's arguments for `snakemake ARGV` run in the project directory, profiles applied."""
    from snakemake.cli import parse_args

    monkeypatch.chdir(ROOT)
    return parse_args(list(argv))[1]


def test_default_profile_is_loaded(monkeypatch):
    args = parsed_args(monkeypatch, "--cores", "1")
    assert args.rerun_incomplete is True and args.show_failed_logs is True


def test_slurm_profiles_without_and_with_accounting(monkeypatch):
    require_plugin()

    profile = yaml.safe_load((ROOT / "workflow/profiles/slurm/config.yaml").read_text())
    assert profile["default-resources"]["slurm_partition"] == PARTITION
    args = parsed_args(monkeypatch, "--profile", "workflow/profiles/slurm")
    assert args.executor == "slurm" and args.slurm_status_command == "squeue" and args.slurm_no_account is True
    assert args.rerun_incomplete is True and args.show_failed_logs is True  # profiles/default on top
    args = parsed_args(monkeypatch, "--profile", "workflow/profiles/slurm",
                       "--profile", "workflow/profiles/slurm-accounting")
    assert args.executor == "slurm" and args.slurm_status_command == "sacct" and args.slurm_no_account is not True
    assert {"slurm_partition", "mem_mb", "runtime"} <= set(args.default_resources)
