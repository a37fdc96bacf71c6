"""The catalogue's and the judge's own command line, for a person at the keyboard (from locust/, in the
repository's .venv; the lab itself runs as `python -m liveness_lab lab`, scripts/lab.sh):

    python -m liveness_lab.lab list [--only a,b] [--quick] [--group G]   the scenarios to run, one name a line, in
                                                 catalogue order, then how long the lab would take on 2 cores
    python -m liveness_lab.lab check                          load every scenario file; exit 1 naming the bad one
    python -m liveness_lab.lab judge NAME FOLDER              judge a finished demo.sh folder; writes FOLDER/lab.json;
                                                 exit 0 held, 1 not held, 2 cannot tell
    python -m liveness_lab.lab matrix LAB-FOLDER              matrix.md and matrix.html over every lab.json below it
    python -m liveness_lab.lab ledger [--ledger DIR] [--only a,b] per scenario, its runs in the ledger (locust/ledger/)
                                                 under its current prediction, and under each earlier one
    python -m liveness_lab.lab ledger --write | --check       the ledger's tables in docs/lab.md and its figures in
                                                 README.md: write them, or exit 1 showing where they differ
    python -m liveness_lab.lab ledger --rejudge [--only a,b]  judge every recorded run again, now; exit 1 where one
                                                 comes out other than its record says
"""

import argparse
import difflib
import sys

from liveness_lab.base import LAB_GROUPS
from liveness_lab.base.scenario import ScenarioError
from liveness_lab.report.predictions import EXIT

from . import catalogue, judge, ledger, matrix


def write_documents(folder, check: bool) -> int:
    """ledger --write / --check: the documents' generated blocks (ledger.documents)."""
    try:
        docs = ledger.documents(ledger.load(folder), catalogue.load_catalogue())
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 3
    stale = [path for path, (now, new) in docs.items() if now != new]
    for path in stale:
        now, new = docs[path]
        if check:
            name = str(path.relative_to(ledger.ROOT))
            sys.stdout.writelines(difflib.unified_diff(now.splitlines(True), new.splitlines(True), name, f"{name} from the ledger"))
        else:
            path.write_text(new)
            print(f"wrote {path}", file=sys.stderr)
    if check and stale:
        print("error: the documents above differ from the ledger: python -m liveness_lab.lab ledger --write", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m liveness_lab.lab", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("list")
    p.add_argument("--only", default="")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--group", choices=LAB_GROUPS)
    sub.add_parser("check")
    p = sub.add_parser("judge")
    p.add_argument("name")
    p.add_argument("folder")
    p = sub.add_parser("matrix")
    p.add_argument("folder")
    p = sub.add_parser("ledger")
    p.add_argument("--ledger", default=None)
    p.add_argument("--only", default="")
    done = p.add_mutually_exclusive_group()
    done.add_argument("--write", action="store_true", help="write the ledger's tables and figures into docs/lab.md and README.md")
    done.add_argument("--check", action="store_true", help="exit 1, with the difference, where those documents differ from them")
    done.add_argument("--rejudge", action="store_true", help="judge every run again from its recording; exit 1 where one differs")
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            only = [n.strip() for n in args.only.split(",") if n.strip()]
            chosen = catalogue.load_catalogue(only=only, quick=args.quick, group=args.group)
            for s in chosen:
                print(s.name)
            print(f"{len(chosen)} scenario(s): about {round(catalogue.estimate_s(chosen) / 60)} minutes on 2 cores", file=sys.stderr)
            return 0
        if args.command == "check":
            found = catalogue.load_catalogue()
            print(f"{len(found)} scenarios: {', '.join(s.name for s in found)}")
            return 0
        if args.command == "ledger":
            only = [n.strip() for n in args.only.split(",") if n.strip()]
            if args.write or args.check:
                return write_documents(args.ledger, args.check)
            if args.rejudge:
                lines, differ = ledger.rejudge_all(args.ledger, catalogue.load_catalogue(only=only), every=not only)
                print("\n".join(lines))
                return 1 if differ else 0
            print("\n".join(ledger.report(ledger.load(args.ledger), catalogue.load_catalogue(only=only))))
            return 0
        if args.command == "matrix":
            md, html = matrix.build(args.folder)
            print(md.read_text())
            print(f"matrix: {html}", file=sys.stderr)
            return 0
        scenario = next((s for s in catalogue.load_catalogue() if s.name == args.name), None)
        if scenario is None:
            raise ScenarioError(catalogue.CATALOGUE, "name", f"no scenario {args.name}")
        result = judge.judge_scenario(scenario, args.folder)
        judge.write(result, args.folder)
        print("\n".join(result.text()))
        return EXIT[result.outcome]
    except ScenarioError as e:
        print(f"error: {e}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
