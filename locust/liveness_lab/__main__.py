"""``python -m liveness_lab demo|lab|bench|workshop``: the scripted runs, the benchmark and the instructor's
table of a workshop (see cli.py for the flags, base/exits.py for the exit codes). scripts/demo.sh,
scripts/lab.sh, scripts/bench.sh and scripts/workshop.sh are the commands users type; they prepare the .venv
and exec here."""

import os
import shlex
import signal
import sys

from liveness_lab.base import coordinates
from liveness_lab.base.exits import INTERRUPTED, SETUP, TERMINATED, SetupError, Terminated

from .cli import parse


def _terminated(*_):
    raise Terminated()


def main(argv=None, environ=os.environ) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    prog = environ.get("LIVENESS_LAB_PROG")  # the wrapper's name, for --help and messages
    args = parse(argv, prog)
    from liveness_lab.base.console import LOG, setup  # rich: after --help, which needs the standard library only

    # One cluster for every client of the run (the recorder's, the lock's, the Deployments' reader, Locust's
    # subprocess): the flags', else the environment's, else kind's, handed on in the environment.
    coordinates.hand_on(environ, getattr(args, "context", None), getattr(args, "namespace", None), getattr(args, "release", None))
    if args.command == "workshop":
        return room(args, environ)
    console = setup()
    signal.signal(signal.SIGTERM, _terminated)
    command = f"{prog or 'scripts/' + args.command + '.sh'}" + (" " + shlex.join(argv[1:]) if len(argv) > 1 else "")
    try:
        if args.command == "demo":
            from liveness_lab.demo.options import DemoOptions
            from liveness_lab.demo.run import run_demo

            opts = DemoOptions(
                hold=args.hold,
                ramp=args.ramp,
                quiet=args.quiet,
                users=args.users,
                rate=args.rate,
                latency_ms=args.latency_ms,
                request_timeout_s=args.request_timeout_s,
                variants=args.variants,
                out=args.out,
                keep_pods=args.keep_pods,
                stop_swarm=args.stop_swarm,
                load=args.load,
                command=command,
            )
            return run_demo(opts, console, environ)
        if args.command == "bench":
            from liveness_lab.bench.run import options, run_bench

            return run_bench(options(args, command), console, environ)
        from liveness_lab.lab.runner import LabOptions, run_lab

        return run_lab(
            LabOptions(
                only=args.only,
                quick=args.quick,
                group=args.group,
                repeat=args.repeat,
                out=args.out,
                resume=args.resume,
                load=args.load,
                command=command,
            ),
            console,
            environ,
        )
    except SetupError as e:
        LOG.error("%s", e.message + (f"\n  fix: {e.fix}" if e.fix else ""))
        return SETUP
    except KeyboardInterrupt:
        LOG.warning("interrupted")
        return INTERRUPTED
    except Terminated:
        LOG.warning("terminated")
        return TERMINATED
    except Exception as e:  # a bug, or something nobody foresaw: never a verdict (1 is FAIL)
        LOG.error(
            "the run broke: %s: %s (the traceback is in the run's log file)\n  fix: report it with that log",
            type(e).__name__,
            e,
            exc_info=True,
        )
        return SETUP


def room(args, environ) -> int:
    """The instructor's table (workshop/room.py): stdout the table, stderr what went wrong."""
    from liveness_lab.workshop.room import SELECTOR, RoomError, read_room, render, rows_of, to_json

    context = coordinates.context(environ)
    try:
        rows = rows_of(read_room(context))
    except RoomError as e:
        print(f"error: {e.message}\n  fix: {e.fix}", file=sys.stderr)
        return SETUP
    if not rows:
        print(
            f"no namespace of context {context} holds the workshop's ConfigMap (label {SELECTOR}): has any participant "
            "installed the chart (with locust.workshop.enabled, its default)?",
            file=sys.stderr,
        )
    print(to_json(rows) if args.json else render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
