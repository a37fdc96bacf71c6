"""The instructor's table (workshop/room.py, scripts/workshop.sh) on ConfigMaps as the API lists them
(``kubectl get configmaps -A -l <room.SELECTOR> -o json``), whose data the master's own code wrote from the
recorded cluster data (recorded_release.py: the recorded Deployments; the recorded passing run as step 1's
window): Alice met step 1 on the kill and is on the TCP probe step with its change not in place, Bob's
swarm has not killed anything yet, Carol's master has never written, Dave's wrote 3 hours ago."""

import json

import pytest
from recorded_release import RecordedApi, window_of
from test_workshop import STEPS, workshop

from liveness_lab import __main__ as main
from liveness_lab.workshop import room

LABELS = {
    "app.kubernetes.io/name": "liveness-lab",
    "app.kubernetes.io/component": "workshop",
    "app.kubernetes.io/part-of": "liveness-lab",
    "app.kubernetes.io/managed-by": "Helm",
}


def configmap(namespace: str, data: dict, release: str = "liveness-lab") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{release}-workshop", "namespace": namespace, "labels": {**LABELS, "app.kubernetes.io/instance": release}},
        **({"data": data} if data else {}),
    }


def master_wrote(walk) -> tuple[dict, float]:
    """The ConfigMap data a master writes after WALK(workshop, window start); and the time it last checked."""
    api = RecordedApi()
    w = workshop(api)
    w.window = window_of("run-pass", STEPS["baseline"])
    now = walk(w, w.window.started)
    return dict(api.cm["data"]), now


def alice(w, t0):
    w.window.stopped = t0 + 40  # the recorded swarm as it was 40 s in: the first kill came at +13.3 s
    w.tick(now=t0 + 45)
    w.act("tcp-probe", "select", now=t0 + 50)
    w.tick(now=t0 + 51)  # the TCP probe is not in place: the check says what differs
    return t0 + 51


def bob(w, t0):
    w.window.stopped = t0 + 8  # 8 s in: no kill yet
    w.tick(now=t0 + 9)
    return t0 + 9


@pytest.fixture(scope="module")
def room_list():
    a, a_t = master_wrote(alice)
    b, b_t = master_wrote(bob)
    d, d_t = master_wrote(bob)
    now = max(a_t, b_t) + 20
    dave = json.loads(d["progress.json"])
    dave["last"]["t"] = now - 3 * 3600
    d["progress.json"] = json.dumps(dave)
    items = [configmap("ws-carol", {}), configmap("ws-bob", b), configmap("ws-dave", d, "lab"), configmap("ws-alice", a)]
    return {"apiVersion": "v1", "kind": "ConfigMapList", "items": items}, now


def test_one_line_per_namespace_with_step_done_total_and_the_last_checks_reason(room_list):
    listed, now = room_list
    rows = {r.namespace: r for r in room.rows_of(listed)}
    assert [r.namespace for r in room.rows_of(listed)] == ["ws-alice", "ws-bob", "ws-carol", "ws-dave"]
    a = rows["ws-alice"]
    assert (a.release, a.step, a.done, a.total, a.state) == ("liveness-lab", "tcp-probe (Try a TCP liveness probe)", 1, 7, "change")
    assert "tcpSocket" in a.reason, a.reason
    b = rows["ws-bob"]
    assert (b.step.split()[0], b.done, b.total, b.state) == ("baseline", 0, 7, "checking")
    assert "no liveness kill yet" in b.reason, b.reason
    c = rows["ws-carol"]
    assert (c.done, c.state, c.written) == (None, None, None) and "has not written" in c.reason
    assert rows["ws-dave"].release == "lab"

    table = room.render(room.rows_of(listed), now=now).splitlines()
    assert table[0].split() == ["NAMESPACE", "RELEASE", "STEP", "DONE", "WRITTEN", "LAST", "CHECK"]
    line = {t.split()[0]: t for t in table[1:-1]}
    assert "1/7" in line["ws-alice"] and "20 s ago" in line["ws-alice"] and "change: " in line["ws-alice"]
    assert "0/7" in line["ws-bob"] and "checking: " in line["ws-bob"]
    assert "3 h ago" in line["ws-dave"]  # a master that stopped writing shows its age
    assert table[-1] == "4 releases, 0 with every step done"
    # The reason column starts at the same place on every line.
    starts = {t.index(r.reason) - (len(r.state) + 2 if r.state else 0) for t, r in zip(table[1:-1], room.rows_of(listed), strict=True)}
    assert len(starts) == 1, table


def test_a_progress_of_every_step_done_counts_as_done(room_list):
    listed, now = room_list
    alice_cm = next(c for c in listed["items"] if c["metadata"]["namespace"] == "ws-alice")
    done = json.loads(alice_cm["data"]["progress.json"])
    done["done"] = done["total"]
    finished = {"items": [configmap("ws-eve", {"progress.json": json.dumps(done)})]}
    assert room.render(room.rows_of(finished), now=now).splitlines()[-1] == "1 release, 1 with every step done"


def test_a_malformed_and_a_forged_configmap_among_good_ones_are_marked_bad_and_every_good_line_prints(room_list):
    """Anyone who may edit a namespace may write its ConfigMap: one that is not JSON, one naming a step the
    workshop does not have, one counting more steps done than there are, and one whose texts carry terminal
    escapes, among the four good ones. Each good line prints as before, each bad one is a line saying what
    is wrong, and no control character reaches the screen."""
    listed, now = room_list
    alice = json.loads(next(c for c in listed["items"] if c["metadata"]["namespace"] == "ws-alice")["data"]["progress.json"])
    forged = {**alice, "current": "rm -rf /\x1b[2J", "currentTitle": "Gone"}
    beyond = {**alice, "done": 9, "total": 7}
    escaping = {
        **alice,
        "currentTitle": "Try a TCP\x1b]0;pwned\x07 liveness probe",
        "last": {**alice["last"], "state": "change\x1b[5m", "reason": "\x1b[31mred\x1b[0m\rline\nbreak\u202eevil\x07"},
    }
    bad = [
        configmap("ws-mallory", {"progress.json": "{not json"}),
        configmap("ws-forger", {"progress.json": json.dumps(forged)}),
        configmap("ws-counter", {"progress.json": json.dumps(beyond)}),
    ]
    items = [*listed["items"], *bad, configmap("ws-esc", {"progress.json": json.dumps(escaping)})]
    rows = {r.namespace: r for r in room.rows_of({"items": items})}

    assert [rows[r.namespace] for r in room.rows_of(listed)] == room.rows_of(listed)  # the good lines, as they were
    assert rows["ws-mallory"].state == "bad" and "progress.json is not JSON" in rows["ws-mallory"].problem
    assert rows["ws-forger"].state == "bad" and "is none of this workshop's (baseline, tcp-probe" in rows["ws-forger"].problem
    assert "\x1b" not in rows["ws-forger"].problem
    assert rows["ws-counter"].state == "bad" and rows["ws-counter"].problem == "it counts 9 steps done of 7"
    esc = rows["ws-esc"]
    assert (esc.state, esc.step, esc.problem) == ("change", "tcp-probe (Try a TCP liveness probe)", None)
    assert esc.reason == "red line breakevil"

    table = room.render(room.rows_of({"items": items}), now=now)
    assert all(c.isprintable() for line in table.splitlines() for c in line), [
        line for line in table.splitlines() if not line.isprintable()
    ]
    line = {t.split()[0]: t for t in table.splitlines()[1:-1]}
    assert "bad: unreadable progress: progress.json is not JSON" in line["ws-mallory"]
    assert "1/7" in line["ws-alice"] and "0/7" in line["ws-bob"]
    assert table.splitlines()[-1] == "8 releases, 0 with every step done, 3 marked bad"
    out = json.loads(room.to_json(room.rows_of({"items": items})))
    assert {r["namespace"]: r["problem"] is not None for r in out}["ws-counter"]


@pytest.mark.parametrize(
    "data",
    [
        "[]",
        "null",
        '"text"',
        '{"current": "baseline", "done": "1", "total": 7}',
        '{"current": "baseline", "done": true, "total": 7}',
        '{"current": "baseline", "done": 1, "total": 6}',
        '{"current": "baseline", "done": 0, "total": 7, "last": "x"}',
        '{"current": ["baseline"], "done": 0, "total": 7}',
    ],
)
def test_no_progress_crashes_the_table(room_list, data):
    listed, now = room_list
    rows = room.rows_of({"items": [*listed["items"], configmap("ws-x", {"progress.json": data})]})
    assert len(rows) == 5 and next(r for r in rows if r.namespace == "ws-x").state == "bad"
    assert room.render(rows, now=now).splitlines()[-1].endswith("1 marked bad")


def test_a_progress_with_a_strange_time_still_prints():
    """A time that is not a number (or none) shows as "-", the rest of the line as it is."""
    progress = {"current": "baseline", "done": 0, "total": 7, "last": {"state": "waiting", "reason": "ok", "t": "soon"}}
    (row,) = room.rows_of({"items": [configmap("ws-x", {"progress.json": json.dumps(progress)})]})
    assert (row.state, row.written, row.problem) == ("waiting", None, None)
    assert "ws-x" in room.render([row], now=0.0)


def test_the_command_prints_the_table_or_says_why_not(room_list, monkeypatch, capsys):
    listed, _ = room_list
    asked = []
    monkeypatch.setattr(room, "read_room", lambda context: asked.append(context) or listed)
    assert main.main(["workshop", "--context", "workshop"], environ={}) == 0
    out = capsys.readouterr().out
    assert asked == ["workshop"] and out.splitlines()[0].startswith("NAMESPACE") and "ws-alice" in out
    assert main.main(["workshop", "--json"], environ={}) == 0
    assert [r["namespace"] for r in json.loads(capsys.readouterr().out)] == ["ws-alice", "ws-bob", "ws-carol", "ws-dave"]
    assert asked[-1] == "kind-liveness-lab"

    monkeypatch.setattr(room, "read_room", lambda context: {"items": []})
    assert main.main(["workshop"], environ={}) == 0
    assert "no namespace of context kind-liveness-lab holds the workshop's ConfigMap" in capsys.readouterr().err

    def refused(context):
        raise room.RoomError(
            "the API refused to list ConfigMaps in every namespace (context x): 403", "run it with the organiser's kubeconfig"
        )

    monkeypatch.setattr(room, "read_room", refused)
    assert main.main(["workshop"], environ={}) == 3
    err = capsys.readouterr().err
    assert "403" in err and "fix: run it with the organiser's kubeconfig" in err


def test_no_context_of_that_name_is_a_setup_error_saying_how_to_find_one(tmp_path, monkeypatch, capsys):
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: a\nclusters: [{name: a, cluster: {server: 'https://127.0.0.1:18082'}}]\n"
        "users: [{name: a, user: {token: x}}]\ncontexts: [{name: a, context: {cluster: a, user: a}}]\n"
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    assert main.main(["workshop", "--context", "nowhere"], environ={}) == 3
    err = capsys.readouterr().err
    assert "no kubeconfig context nowhere" in err and "kubectl config get-contexts" in err
