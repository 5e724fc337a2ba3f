"""Progress lines of the iterative methods: the one helper every optimiser loop reports through.

A :class:`Progress` logs on the "cova" logger (INFO, which ``python -m cova`` sends to the job's log file) a line
when it starts, a line whenever :data:`INTERVAL` seconds or iterations have passed since its last line, and a line
when it ends, each with the elapsed time. A loop calls :meth:`Progress.tick` once per iteration; a library's
callback (scipy's ``minimize``, openTSNE's ``callbacks``, umap-learn's epoch loop) calls it too; a library that
only prints its progress (scikit-learn's ``verbose``, TriMap, PaCMAP) has its lines logged through
:meth:`Progress.library_output`; a single solver
call without iterations of its own (cvxpy) is timed by ``with Progress(...)`` alone. An inner solver handed the
caller's Progress (``progress=``) ticks it instead of starting its own, so that nested loops give one sequence of
lines.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from typing import Any, Iterator

from .errors import UserError

log = logging.getLogger("cova")


@dataclass
class Interval:
    """A progress line at least every ``seconds`` or every ``iterations``, whichever comes first."""

    seconds: float = 10.0
    iterations: int = 50


#: The interval of every :class:`Progress` (:func:`progress_interval` changes it for a block).
INTERVAL = Interval()


@contextmanager
def progress_interval(seconds: float, iterations: int) -> Iterator[None]:
    """Within the block, progress lines come every ``seconds`` or ``iterations`` (e.g. ``(0, 1)``: every
    iteration)."""
    if seconds < 0 or iterations < 1:
        raise UserError(f"progress_interval needs seconds >= 0 and iterations >= 1, got {seconds}, {iterations}")
    saved = (INTERVAL.seconds, INTERVAL.iterations)
    INTERVAL.seconds, INTERVAL.iterations = float(seconds), int(iterations)
    try:
        yield
    finally:
        INTERVAL.seconds, INTERVAL.iterations = saved


def _values(values: dict[str, Any]) -> str:
    return "".join(f", {k} = {v:.6g}" if isinstance(v, float) else f", {k} = {v}" for k, v in values.items())


class Progress:
    """The progress of one iterative computation ``what`` (e.g. "NeRV", "momentum gradient descent") of at most
    ``total`` iterations (None: unknown). Use as a context manager (start and end lines) or call :meth:`start` and
    :meth:`done`."""

    def __init__(self, what: str, total: int | None = None) -> None:
        self.what, self.total = what, total
        self.iteration = 0
        self.t0 = self._last_t = time.perf_counter()
        self._last_i = self._lines = 0
        self._started = False

    def start(self) -> "Progress":
        self.t0 = self._last_t = time.perf_counter()
        self._started = True
        log.info("%s: started%s", self.what, f" ({self.total} iterations at most)" if self.total else "")
        return self

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def tick(self, iteration: int | None = None, **values: Any) -> None:
        """One iteration done (``iteration``: the count so far, when the caller counts); logs a line with
        ``values`` (e.g. ``f=...``) when the interval has passed."""
        self.iteration = self.iteration + 1 if iteration is None else int(iteration)
        now = time.perf_counter()
        if self.iteration - self._last_i >= INTERVAL.iterations or now - self._last_t >= INTERVAL.seconds:
            of = f"/{self.total}" if self.total else ""
            log.info("%s: iteration %d%s, %.1f s%s", self.what, self.iteration, of, now - self.t0, _values(values))
            self._last_i, self._last_t = self.iteration, now

    def callback(self, *args: Any) -> None:
        """A tick as a library callback (scipy ``minimize(callback=...)``, any arguments): returns None, so it never
        stops the library's loop."""
        self.tick()

    def opentsne_callback(self) -> dict[str, Any]:
        """openTSNE ``TSNE`` arguments that tick this Progress every :data:`INTERVAL` iterations with the KL
        divergence (openTSNE evaluates it only at its callbacks; the callback never stops the run)."""
        every = INTERVAL.iterations

        def callback(iteration: int, error: float, embedding: Any) -> None:
            self.tick(self.iteration + every, kl=float(error))

        return {"callbacks": [callback], "callbacks_every_iters": every}

    def tqdm_kwds(self, unit: str = "epoch") -> dict[str, Any]:
        """``tqdm`` arguments that turn a library's tqdm loop (umap-learn's ``tqdm_kwds``) into this Progress's
        lines: one at most every :data:`INTERVAL` seconds with the count and the elapsed time."""
        return {"disable": False, "file": _TqdmLines(self.what), "mininterval": INTERVAL.seconds, "miniters": 1,
                "bar_format": f"{unit} {{n_fmt}}/{{total_fmt}}, {{elapsed_s:.1f}} s"}

    def line(self, text: str) -> None:
        """One line of a library's own progress output (:meth:`library_output`): a tick, logged with its text when
        the interval has passed (and always the first)."""
        self._lines += 1
        now = time.perf_counter()
        if self._lines == 1 or self._lines - self._last_i >= INTERVAL.iterations \
                or now - self._last_t >= INTERVAL.seconds:
            log.info("%s: %s (%.1f s)", self.what, text, now - self.t0)
            self._last_i, self._last_t = self._lines, now

    @contextmanager
    def library_output(self) -> Iterator[None]:
        """Within the block, what a library prints on stdout (its ``verbose`` output: scikit-learn's t-SNE, MDS and
        NCA, TriMap, PaCMAP) becomes this Progress's lines (:meth:`line`) instead of reaching the console."""
        stream = _LibraryLines(self)
        with redirect_stdout(stream):  # type: ignore[type-var]
            yield
        stream.close()

    def done(self, message: str = "", **values: Any) -> None:
        after = f" after {self.iteration} iterations" if self.iteration else ""
        log.info("%s: done%s in %.1f s%s%s", self.what, after, self.elapsed, f" ({message})" if message else "",
                 _values(values))

    def __enter__(self) -> "Progress":
        return self.start()

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        if error is None:
            self.done()
        else:
            log.info("%s: stopped by %s after %d iterations in %.1f s", self.what, kind.__name__, self.iteration,
                     self.elapsed)


class _LibraryLines:
    """A text stream for ``redirect_stdout``: each complete, non-empty line it receives is one
    :meth:`Progress.line`."""

    def __init__(self, progress: Progress) -> None:
        self.progress, self._pending = progress, ""

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            if line.strip():
                self.progress.line(line.strip())
        return len(text)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        if self._pending.strip():
            self.progress.line(self._pending.strip())
        self._pending = ""


class _TqdmLines:
    """A text stream for ``tqdm(file=...)``: each status it writes becomes a log line of ``what``."""

    def __init__(self, what: str) -> None:
        self.what = what

    def write(self, text: str) -> int:
        text = text.strip("\r\n\x1b[A ")
        if text:
            log.info("%s: %s", self.what, text)
        return len(text)

    def flush(self) -> None:
        pass


def ticking(progress: Progress | None, what: str, total: int | None = None) -> tuple[Progress, bool]:
    """The Progress an inner solver reports to: the caller's ``progress`` (not owned: the caller starts and ends it)
    or a new, started one named ``what`` (owned: the solver calls :meth:`Progress.done`)."""
    if progress is not None:
        return progress, False
    return Progress(what, total).start(), True
