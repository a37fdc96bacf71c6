"""The bench's progress display (rich), on a terminal only: what it is doing now and the time that has
left, and how many of its steps (a warm-up, a soak phase, the held requests, the idle connections, a run)
are done."""

from __future__ import annotations


class Display:
    def __init__(self, console):
        self.console = console
        self.progress = self.task = None

    def start(self, steps: int) -> None:
        if self.console is not None and self.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[left]}"),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self.task = self.progress.add_task("starting", total=steps, left="")
            self.progress.start()

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def show(self, what: str, left_s: float | None = None) -> None:
        if self.progress is not None:
            left = "" if left_s is None else f"{max(0, int(left_s)) // 60}:{max(0, int(left_s)) % 60:02d} left"
            self.progress.update(self.task, description=what, left=left)

    def advance(self) -> None:
        if self.progress is not None:
            self.progress.advance(self.task)
