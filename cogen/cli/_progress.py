"""Progress bars on stderr for long commands (``build``, ``verify``, ``prompts export``, ``prompts run``,
``baselines train``).

Library functions report progress through a callback ``progress(phase, advance, total)``
(``advance=0`` announces a phase's total); :func:`progress_bar` turns it into one rich bar per phase.
"""

from __future__ import annotations

from cogen.cli import _console

__all__ = ["COMPILE_NOTICE_AFTER_S", "counted_bar", "progress_bar"]

#: How long the kernels may load before "compiling kernels" is shown (a cached load takes less).
COMPILE_NOTICE_AFTER_S = 0.5


def progress_bar(enabled: bool, labels: dict[str, str]):
    """A context manager yielding ``update(phase, advance, total)`` that draws one bar per phase.

    The phase ``compile`` (no counts) shows "compiling kernels (first run only)" while it lasts,
    if it lasts longer than a cached load would. Not ``enabled``: it yields None (the library then
    reports nothing), and neither rich's progress module nor a timer thread is started.
    """
    import threading
    from contextlib import contextmanager, nullcontext

    if not enabled:
        return nullcontext()

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    @contextmanager
    def bar():
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=_console.err, transient=False) as rich_progress:
            tasks, lock, timers = {}, threading.Lock(), []

            def show_compiling() -> None:
                with lock:
                    if timers:
                        tasks["compile"] = rich_progress.add_task("compiling kernels (first run only)", total=None)

            def end_compiling() -> None:
                with lock:
                    for timer in timers:
                        timer.cancel()
                    timers.clear()
                    if "compile" in tasks:
                        rich_progress.remove_task(tasks.pop("compile"))

            def update(phase: str, advance: int, total: int) -> None:
                if phase == "compile":
                    timers.append(threading.Timer(COMPILE_NOTICE_AFTER_S, show_compiling))
                    timers[-1].start()
                    return
                end_compiling()
                if phase not in tasks:
                    tasks[phase] = rich_progress.add_task(labels.get(phase, phase), total=total or None)
                elif total:
                    rich_progress.update(tasks[phase], total=total)
                rich_progress.advance(tasks[phase], advance)

            try:
                yield update
            finally:
                end_compiling()

    return bar()


def counted_bar(enabled: bool, label: str, *columns: str, **fields):
    """A context manager yielding ``(progress, task)``: one rich bar of ``label`` with its count (k of n),
    the text ``columns`` (templates such as ``"{task.fields[rate]}"``, whose ``fields`` start as given),
    the time elapsed and the time remaining; drawn on stderr unless not ``enabled``."""
    from contextlib import contextmanager

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    @contextmanager
    def bar():
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      *(TextColumn(c) for c in columns), TimeElapsedColumn(), TimeRemainingColumn(),
                      console=_console.err, disable=not enabled) as progress:
            yield progress, progress.add_task(label, total=None, **fields)

    return bar()
