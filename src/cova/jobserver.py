"""A job server for the workflow's short steps: one process that has imported the package forks a child per step.

Most jobs of a reproduction are short (scoring a run, embedding a few hundred points), and a fresh interpreter
spends about a second importing numpy, scipy, scikit-learn, pandas and matplotlib before any of them starts. With
``COVA_JOB_SERVER`` set to the socket of a running server, ``python -m cova ...`` does not import the package: it
passes its arguments, working directory, environment and standard streams to the server over a Unix socket and
waits. The server forks a child that runs the step exactly as ``python -m cova`` would (:func:`cova.cli.main`, with
the step's own ``--threads`` limits, environment, working directory and streams) and reports its exit status. A
client whose server is gone (or whose variable is unset) runs the step itself, so nothing depends on the server
being there.

Fork safety: the server is single-threaded and only imports modules; it never runs a numba, OpenMP or BLAS
parallel region, so the child starts with no thread pool in use (OpenBLAS re-creates its workers after a fork).
Each child is a new process group; when a client disconnects before its step ends (Snakemake stopping a job), the
server kills that group. The server exits when its parent exits or when asked to (:func:`stop`), and on Linux its
children get SIGTERM when it exits however it exits (``PR_SET_PDEATHSIG``), so a Snakemake killed with its whole
process group leaves no step running.

What the server does not reproduce: a job's Snakemake ``benchmark:`` file measures the client, so its wall time is
the step's, but its CPU seconds and peak memory are the client's own.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from pathlib import Path

__all__ = ["ENV", "ENTRY", "run_remote", "serve", "start", "stop"]

#: environment variable holding the server's socket path
ENV = "COVA_JOB_SERVER"
#: modules the server imports once so that no step pays for them
PRELOAD = ("cova.cli", "cova.methods", "cova.metrics.score", "cova.viz.scatter", "cova.experiments.common",
           "matplotlib.pyplot")
_HEADER = struct.Struct("!I")


def _send(sock: socket.socket, payload: dict, fds: list[int] | None = None) -> None:
    data = json.dumps(payload).encode()
    message = _HEADER.pack(len(data)) + data
    if fds:
        socket.send_fds(sock, [message], fds)
    else:
        sock.sendall(message)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = b""
    while len(chunks) < n:
        chunk = sock.recv(n - len(chunks))
        if not chunk:
            raise ConnectionError("the job server closed the connection")
        chunks += chunk
    return chunks


def _recv(sock: socket.socket, with_fds: int = 0) -> tuple[dict, list[int]]:
    if with_fds:
        head, fds, _, _ = socket.recv_fds(sock, _HEADER.size, with_fds)
        head += _recv_exact(sock, _HEADER.size - len(head)) if len(head) < _HEADER.size else b""
    else:
        head, fds = _recv_exact(sock, _HEADER.size), []
    (size,) = _HEADER.unpack(head)
    return json.loads(_recv_exact(sock, size)), list(fds)


# ----------------------------------------------------------------------------------------------------------------
# client
# ----------------------------------------------------------------------------------------------------------------

def run_remote(path: str, argv: list[str]) -> int | None:
    """Run ``python -m cova <argv>`` in the server at ``path``: its exit status, or ``None`` if no server answers
    there (the caller then runs the step itself)."""
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
    except OSError:
        return None
    with sock:
        _send(sock, {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}, [0, 1, 2])
        try:
            reply, _ = _recv(sock)
        except (ConnectionError, OSError):
            print("cova: the job server stopped before the step ended", file=sys.stderr)
            return 1
    return int(reply["status"])


# ----------------------------------------------------------------------------------------------------------------
# server
# ----------------------------------------------------------------------------------------------------------------

#: the function a child runs with the request's arguments (``module:function``)
ENTRY = "cova.cli:main"


#: prctl(2) option: the signal this process gets when its parent exits
_PR_SET_PDEATHSIG = 1


def _die_with_server(server: int) -> None:
    """SIGTERM to this child when the server exits, even by SIGKILL (Linux; elsewhere the server's own clean-up
    is all there is). The server may have gone between the fork and this call: then exit at once."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return
    if os.getppid() != server:
        os._exit(1)


def _child(request: dict, fds: list[int], inherited: list[socket.socket], entry: str, server: int) -> None:
    """In the forked child of the server ``server``: become the step's process and run ``entry`` with its
    arguments; never returns. ``inherited``: the server's sockets, closed here so that only the server holds them."""
    status = 1
    try:
        for sock in inherited:
            sock.close()
        os.setpgid(0, 0)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _die_with_server(server)
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["cova", *request["argv"]]
        import importlib

        module, function = entry.split(":")
        status = getattr(importlib.import_module(module), function)(request["argv"])
    except SystemExit as exit_:
        code = exit_.code
        status = code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException:  # noqa: BLE001 - the step's traceback goes to its own stderr, as in a fresh process
        import traceback

        traceback.print_exc()
        status = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(int(status) & 0xFF)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def serve(path: str, preload: tuple[str, ...] = PRELOAD, entry: str = ENTRY, parent: int | None = None) -> None:
    """Listen on the Unix socket ``path`` and run each request in a forked child (``entry``, ``module:function``,
    called with the request's arguments; its return value is the exit status) until stopped (a ``stop`` request or
    SIGTERM) or until the parent process ``parent`` (default: the current parent) is no longer its parent. The
    socket file is removed on exit."""
    import importlib

    parent = os.getppid() if parent is None else int(parent)
    me = os.getpid()
    importlib.import_module(entry.split(":")[0])
    for name in preload:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(64)
    running: dict[int, tuple[socket.socket, int]] = {}  # connection fd -> (connection, child pid)
    stopping = False

    def _terminate(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _terminate)
    try:
        while not stopping and os.getppid() == parent:
            ready, _, _ = select.select([listener, *(c for c, _ in running.values())], [], [], 0.05)
            for sock in ready:
                if sock is listener:
                    conn, _ = listener.accept()
                    try:
                        request, fds = _recv(conn, with_fds=3)
                    except (ConnectionError, OSError, ValueError):
                        conn.close()
                        continue
                    if request.get("stop"):
                        stopping = True
                        for fd in fds:
                            os.close(fd)
                        conn.close()
                        continue
                    pid = os.fork()
                    if pid == 0:
                        _child(request, fds, [listener, conn, *(c for c, _ in running.values())], entry, me)
                    for fd in fds:
                        os.close(fd)
                    running[conn.fileno()] = (conn, pid)
                else:  # a client went away before its step ended: stop the step
                    conn, pid = running.pop(sock.fileno())
                    _kill_group(pid)
                    conn.close()
            while True:  # reap every finished child, reported or stopped
                try:
                    pid, wait_status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                for key, (conn, child) in list(running.items()):
                    if child == pid:
                        del running[key]
                        try:
                            _send(conn, {"status": os.waitstatus_to_exitcode(wait_status) % 256})
                        except OSError:
                            pass
                        conn.close()
    finally:
        for conn, pid in running.values():
            _kill_group(pid)
            conn.close()
        listener.close()
        Path(path).unlink(missing_ok=True)


#: The longest path a Unix socket may have (``sun_path`` holds 108 bytes with the final NUL).
SOCKET_PATH_MAX = 107
#: The name of the server's folder (``cova-XXXXXXXX``) and of its socket in it.
FOLDER_PREFIX, SOCKET = "cova-", "jobs.sock"


def _alive(path: str | os.PathLike) -> bool:
    """Whether a server accepts connections at the socket ``path``."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(os.fspath(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def remove_stale(directory: str | os.PathLike) -> None:
    """Remove the folders of servers that are gone (a Snakemake killed before its ``onerror`` ran): a
    ``cova-XXXXXXXX`` folder under ``directory`` whose socket accepts no connection. Only the socket and the empty
    folder are removed; a folder holding anything else is left alone."""
    for folder in Path(directory).glob(f"{FOLDER_PREFIX}*"):
        if folder.is_dir() and not _alive(folder / SOCKET):
            try:
                (folder / SOCKET).unlink(missing_ok=True)
                folder.rmdir()
            except OSError:
                pass


def start(directory: str | os.PathLike, timeout: float = 120.0, entry: str = ENTRY) -> tuple[str, "object"]:
    """Start a server for this process's jobs: its socket in a new folder under ``directory`` (the workflow's
    ``results/.tmp``), or under the system's temporary folder when a socket path under ``directory`` would be too
    long for a Unix socket. Folders of servers that are gone are removed first (:func:`remove_stale`), and the new
    folder is removed again if the server does not start. Returns (socket path, the server's ``subprocess.Popen``)
    once the server accepts connections; raises ``RuntimeError`` if it does not within ``timeout`` seconds."""
    import subprocess
    import tempfile

    directory = os.path.abspath(directory)
    if len(os.path.join(directory, f"{FOLDER_PREFIX}xxxxxxxx", SOCKET).encode()) > SOCKET_PATH_MAX:
        directory = tempfile.gettempdir()
    os.makedirs(directory, exist_ok=True)
    remove_stale(directory)
    folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=directory)
    path = os.path.join(folder, SOCKET)
    proc = None
    try:
        proc = subprocess.Popen([sys.executable, "-m", "cova.jobserver", path, entry, str(os.getpid())],
                                stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the job server exited at start-up (status {proc.returncode})")
            if os.path.exists(path) and _alive(path):
                return path, proc
            time.sleep(0.05)
        raise RuntimeError(f"the job server did not start within {timeout:g} s")
    except BaseException:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        with contextlib.suppress(OSError):
            Path(path).unlink(missing_ok=True)
            os.rmdir(folder)
        raise


def stop(path: str, proc: "object | None" = None, timeout: float = 10.0) -> None:
    """Ask the server at ``path`` to exit (its running steps are stopped) and remove its folder."""
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        _send(sock, {"stop": True}, [0, 1, 2])
        sock.close()
    except OSError:
        pass
    if proc is not None:
        try:
            proc.wait(timeout)
        except Exception:  # noqa: BLE001 - a server that does not stop is killed
            proc.kill()
    try:
        os.rmdir(os.path.dirname(path))
    except OSError:
        pass


if __name__ == "__main__":
    # python -m cova.jobserver SOCKET [ENTRY [PARENT_PID]]: the parent's pid from the starter, so that a parent
    # that exits while the server is still importing is noticed too
    _entry = sys.argv[2] if len(sys.argv) > 2 else ENTRY
    serve(sys.argv[1], preload=PRELOAD if _entry == ENTRY else (), entry=_entry,
          parent=int(sys.argv[3]) if len(sys.argv) > 3 else None)
