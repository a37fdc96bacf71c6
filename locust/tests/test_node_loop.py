"""The recorder's loops in a kind node (report.node_loop) end when the recording does: ending the
``docker exec`` client leaves the process it started running in the container, so stop() kills it there,
and a loop whose client died without stop() ends after its lifetime. A stand-in for the docker CLI runs
the command in a session of its own, as Docker does: ending the client leaves it running."""

import os
import queue
import time
from pathlib import Path

import pytest

from liveness_lab.report.node_loop import NodeLoop

FAKE_DOCKER = """#!/bin/sh
# docker exec NODE CMD...: CMD in a session of its own, as dockerd runs it; ending this client leaves it running.
[ "$1" = exec ] || exit 2
shift 2
setsid "$@" &
wait
"""


@pytest.fixture
def docker(tmp_path) -> str:
    path = tmp_path / "docker"
    path.write_text(FAKE_DOCKER)
    path.chmod(0o755)
    return str(path)


def running(pid: int) -> bool:
    """PID is a live process (a zombie, ended and not yet reaped, is not)."""
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def ticks(loop_lines: queue.Queue, n: int) -> list[str]:
    return [loop_lines.get(timeout=5) for _ in range(n)]


def test_a_stopped_loop_ends_in_the_node_not_only_its_client(docker):
    lines = queue.Queue()
    loop = NodeLoop("node", "echo tick", lambda out: [lines.put(x) for x in out], docker=docker)
    assert ticks(lines, 2) == ["tick\n", "tick\n"]
    pid = loop.pid
    assert pid and running(pid)
    loop.stop()
    deadline = time.time() + 5
    while running(pid) and time.time() < deadline:
        time.sleep(0.1)
    assert not running(pid), f"the loop {pid} still runs in the node after stop()"


def test_a_loop_whose_client_died_without_stop_ends_after_its_lifetime(docker):
    lines = queue.Queue()
    loop = NodeLoop("node", "echo tick", lambda out: [lines.put(x) for x in out], docker=docker, lifetime_s=2)
    assert ticks(lines, 1) == ["tick\n"]
    os.kill(loop.proc.pid, 9)  # the client gone, as with a SIGKILL of the lab
    assert ticks(lines, 1) == ["tick\n"]
    deadline = time.time() + 5
    while running(loop.pid) and time.time() < deadline:
        time.sleep(0.1)
    assert not running(loop.pid)
    with pytest.raises(queue.Empty):
        lines.get(timeout=1.5)
