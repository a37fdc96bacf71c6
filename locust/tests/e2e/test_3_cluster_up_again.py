"""scripts/cluster-up.sh again, with everything up, changes nothing: no image is loaded again, the release
is not upgraded, and every pod is the same pod with the same restart count. The decision is the images'
sources label, whatever `kind load` would print."""

import re

from . import kind

# The steps (scripts/lib/common.sh's `step` names, in cluster-up's log) that would change something.
CHANGING_STEPS = re.compile(r"load-liveness-lab|helm-upgrade|restart-pods")
LEFT_ALONE = re.compile(r"already in the node|is up to date|not touched")


def test_a_second_cluster_up_changes_nothing_and_restarts_no_pod(cluster, up_args, request):
    before = kind.pod_states()
    again = kind.run_streamed([kind.SCRIPTS / "cluster-up.sh", *up_args], kind.logs_dir() / "e2e-rerun.log", request.config, 1800)
    assert again.returncode == 0, again.describe()
    after = kind.pod_states()
    log = again.log.read_text(errors="replace")
    print("left alone:", *(line for line in log.splitlines() if LEFT_ALONE.search(line)), sep="\n  ")
    assert before, "the release has no pods"
    assert after == before, f"pods (name, uid, restarts) before: {before}\nafter: {after}"
    changed = [line for line in log.splitlines() if CHANGING_STEPS.search(line)]
    assert not changed, "the second cluster-up changed something:\n" + "\n".join(changed)
