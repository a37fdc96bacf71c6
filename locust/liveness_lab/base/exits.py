"""The exit codes of the scripted runs, in one place: ``python -m liveness_lab demo|lab|bench`` and the
commands users type for them, ``scripts/demo.sh``, ``scripts/lab.sh`` and ``scripts/bench.sh``.

    0  demo: PASS                  lab: every prediction held
    1  demo: FAIL                  lab: a prediction did not hold
    2  demo: INCONCLUSIVE          lab: a run could not tell (and none failed)
    3  usage or set-up error: a bad flag, no cluster, a variant not deployed, the cluster held by another
       run, a release that does not settle, Locust recording nothing; nothing was judged (also when the
       run broke on a bug: the traceback is in its log file)
    130, 143  interrupted (Ctrl-C, SIGTERM); the cluster lock is given back (and the lab's release
       restored) first

The bench judges nothing: 0 when it measured what it was asked to and wrote its report, 3 for a usage
or set-up error (a bad flag, an unknown mode, another bench running, not Linux, no JDK or vegeta, a jar
that does not build, a JVM that does not get ready), 130/143 interrupted (its JVMs are stopped first).

A verdict is never 3, and a set-up error is never 1: a script that calls these can tell "the claim
failed" from "the run could not start".
"""

from __future__ import annotations

PASS = HELD = 0
FAIL = NOT_HELD = 1
INCONCLUSIVE = CANNOT_TELL = 2
SETUP = 3
INTERRUPTED = 130
TERMINATED = 143

# The --help epilog of both commands.
HELP = """exit codes:
  0         PASS (demo); every prediction held (lab)
  1         FAIL (demo); a prediction did not hold (lab)
  2         INCONCLUSIVE (demo); a run could not tell, none failed (lab)
  3         usage or set-up error (bad flag, no cluster, variant not deployed, cluster held by
            another run, release not settling): nothing was measured
  130, 143  interrupted (Ctrl-C, SIGTERM): the cluster lock given back first"""


# The --help epilog of the bench.
BENCH_HELP = """exit codes:
  0         measured: the report is in reports/bench-<timestamp>/
  3         usage or set-up error (bad flag, unknown mode, another bench running, not Linux, no JDK,
            a jar that does not build, a JVM that does not get ready)
  130, 143  interrupted (Ctrl-C, SIGTERM): the JVMs stopped first"""


class SetupError(Exception):
    """The run cannot start (or go on): exit 3, with what to do about it."""

    def __init__(self, message: str, fix: str | None = None):
        super().__init__(message)
        self.message, self.fix = message, fix


class Terminated(Exception):
    """SIGTERM arrived: unwind (the lock, the release) and exit 143."""
