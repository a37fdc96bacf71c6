"""What a scripted run says while it runs: one logger, shown on stderr (progress lines with the seconds
since the start, ``warning: ...``, ``error: ...`` with ``  fix: ...``) and written to a log file in the
report folder; and the rich console the progress display draws on."""

import contextlib
import logging
import time
from pathlib import Path

LOG = logging.getLogger("liveness_lab.run")


class ConsoleHandler(logging.Handler):
    """The shell scripts' format, drawn through rich so that a live progress display stays intact."""

    def __init__(self, console, started: float):
        super().__init__(logging.INFO)
        self.console, self.started = console, started

    def emit(self, record):
        msg = record.getMessage()
        if record.levelno >= logging.ERROR:
            text = f"error: {msg}"
        elif record.levelno >= logging.WARNING:
            text = f"warning: {msg}"
        else:
            text = f"[{int(time.time() - self.started):4d}s] {msg}"
        try:
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)
        except Exception:  # a closed terminal must not end the run
            self.handleError(record)


def make_console():
    from rich.console import Console

    return Console(stderr=True)


def setup(console=None) -> "object":
    """The console (rich, on stderr) with LOG shown on it; idempotent."""
    console = console or make_console()
    LOG.setLevel(logging.DEBUG)
    LOG.propagate = False
    for h in [h for h in LOG.handlers if isinstance(h, ConsoleHandler)]:
        LOG.removeHandler(h)
    LOG.addHandler(ConsoleHandler(console, time.time()))
    return console


@contextlib.contextmanager
def log_file(path: Path):
    """LOG also written to PATH (appended, with times and levels) while inside."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(message)s"))
    LOG.addHandler(handler)
    try:
        yield path
    finally:
        LOG.removeHandler(handler)
        handler.close()
