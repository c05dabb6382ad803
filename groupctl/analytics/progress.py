"""A live progress line on stderr while an analysis runs: the job's step and its Spark tasks.

When: only for a person watching, i.e. when the console (stderr) is a terminal. Otherwise
`spark_progress` yields a step callback that does nothing, starts no thread and prints nothing, so
pipes, files and JSON consumers see no progress output at all.

How: one daemon thread polls `SparkContext.statusTracker()` every POLL_SECONDS and shows the
active stages' completed/total tasks next to the current step name ("reading", "evaluating",
"writing"). The poller only reads the tracker, so it can neither slow nor break the job; its loop
ends when the `with` block exits (a stop event, then a join bounded by JOIN_SECONDS) or, if the
tracker stops answering (the context was stopped), at its first failed poll. The display is
transient: it is erased when the job ends, leaving the terminal to the results.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from rich.console import Console
    from rich.progress import Progress, TaskID

POLL_SECONDS = 0.2
JOIN_SECONDS = 2.0


@contextmanager
def spark_progress(spark: "SparkSession", console: "Console") -> Iterator[Callable[[str], None]]:
    """Yield `step(name)`; while the block runs, show the step and the active Spark stages' task
    progress on `console` if it is a terminal."""
    if not console.is_terminal:
        yield lambda _name: None
        return
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    display = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                       TextColumn("{task.fields[tasks]}"), TimeElapsedColumn(), console=console, transient=True)
    poller = _StagePoller(spark, display, display.add_task("starting", total=None, tasks=""))
    with display:
        poller.start()
        try:
            yield poller.step
        finally:
            poller.stop()


class _StagePoller:
    """Copies the step name and the status tracker's task counts into one progress task."""

    def __init__(self, spark: "SparkSession", display: "Progress", task: "TaskID") -> None:
        self._tracker = spark.sparkContext.statusTracker()
        self._display = display
        self._task = task
        self._step = "starting"
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="groupctl-spark-progress", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def step(self, name: str) -> None:
        self._step = name
        self._display.update(self._task, description=name)

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(JOIN_SECONDS)

    def _run(self) -> None:
        while not self._stopped.wait(POLL_SECONDS):
            try:
                stages = [self._tracker.getStageInfo(stage) for stage in self._tracker.getActiveStageIds()]
            except Exception:  # noqa: BLE001 - the context is gone (stopped, JVM exited): only the display ends
                return
            self._show([stage for stage in stages if stage is not None])

    def _show(self, stages: list) -> None:
        """The active stages' tasks as a bar and "done/total tasks"; between stages a pulsing bar."""
        if not stages:
            self._display.update(self._task, description=self._step, tasks="")
            self._display.tasks[0].total = None  # `update` cannot unset a total
            return
        total = sum(stage.numTasks for stage in stages)
        completed = sum(stage.numCompletedTasks for stage in stages)
        ids = ", ".join(str(stage.stageId) for stage in stages)
        self._display.update(self._task, description=f"{self._step} (stage {ids})", completed=completed, total=total,
                             tasks=f"{completed}/{total} tasks")
