"""``python -m liveness_lab demo|lab|bench``: the scripted runs and the benchmark (see cli.py for the flags,
exits.py for the exit codes). scripts/demo.sh, scripts/lab.sh and scripts/bench.sh are the commands users
type; they prepare the .venv and exec here."""

import os
import shlex
import signal
import sys

from .cli import parse
from .exits import INTERRUPTED, SETUP, TERMINATED, SetupError, Terminated


def _terminated(*_):
    raise Terminated()


def main(argv=None, environ=os.environ) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    prog = environ.get("LIVENESS_LAB_PROG")  # the wrapper's name, for --help and messages
    args = parse(argv, prog)
    # --context, --namespace, --release: for every client of the run (the recorder's, the lock's, the
    # variant names), set before anything reads them (variants.RELEASE is read as it is imported).
    for flag, name in (("context", "LIVENESS_LAB_KUBE_CONTEXT"), ("namespace", "LIVENESS_LAB_NAMESPACE"), ("release", "LIVENESS_LAB_RELEASE")):
        if getattr(args, flag, None):
            environ[name] = getattr(args, flag)
    from .console import LOG, setup
    from .release import DEFAULT_CONTEXT, DEFAULT_NAMESPACE, DEFAULT_RELEASE

    # One cluster for every client of the run (the recorder's, the lock's, the Deployments' reader).
    environ.setdefault("LIVENESS_LAB_KUBE_CONTEXT", DEFAULT_CONTEXT)
    environ.setdefault("LIVENESS_LAB_NAMESPACE", DEFAULT_NAMESPACE)
    environ.setdefault("LIVENESS_LAB_RELEASE", DEFAULT_RELEASE)

    console = setup()
    signal.signal(signal.SIGTERM, _terminated)
    command = f"{prog or 'scripts/' + args.command + '.sh'}" + (" " + shlex.join(argv[1:]) if len(argv) > 1 else "")
    try:
        if args.command == "demo":
            from .demo import DemoOptions, run_demo

            opts = DemoOptions(hold=args.hold, ramp=args.ramp, quiet=args.quiet, users=args.users, rate=args.rate,
                               latency_ms=args.latency_ms, variants=args.variants, out=args.out, keep_pods=args.keep_pods,
                               stop_swarm=args.stop_swarm, load=args.load, command=command)
            return run_demo(opts, console, environ)
        if args.command == "bench":
            from .bench import options, run_bench

            return run_bench(options(args, command), console, environ)
        from lab.runner import LabOptions, run_lab

        return run_lab(LabOptions(only=args.only, quick=args.quick, repeat=args.repeat, out=args.out, load=args.load, command=command), console, environ)
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
        LOG.error("the run broke: %s: %s (the traceback is in the run's log file)\n  fix: report it with that log", type(e).__name__, e, exc_info=True)
        return SETUP


if __name__ == "__main__":
    sys.exit(main())
