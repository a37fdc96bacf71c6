"""A shell loop inside a kind node container (``docker exec``), its output read line by line from a thread
of its own: how the recorder reads the Docker machine's CPU (recorder.MachineCpu) and the kernel's CFS
counters (cgroups.NodeCgroups) where the pods run, never the host's own /proc.

Ending the ``docker exec`` client does not end the process it started in the container (Docker keeps it
running, and its API has no way to kill it: moby/moby#9098, #35703), and the loop's output never fails
while the runtime reads it. So each loop says its PID first and stop() kills it there; and it ends by
itself after LIFETIME_S at the latest, for a client that died without stop() (SIGKILL). Without that,
every run left its loops behind: 21 were found in one node after seven lab runs (each ``find
/sys/fs/cgroup`` loop 3.2 % of a CPU, each /proc/stat loop 0.3 %: about 13 % of this 2-CPU machine), and
the same load kept the machine 82 % busy in the first runs and 94 % in the later ones."""

import itertools
import re
import subprocess
import threading

# At most this long when stop() never comes: longer than any recording the demo or the lab makes.
LIFETIME_S = 4 * 3600
PID_LINE = re.compile(r"pid (\d+)\n?")


def loop_script(body: str, lifetime_s: float) -> str:
    """BODY once a second, after one line that gives the shell's PID; at most LIFETIME_S iterations (each
    takes a second or more, so never fewer seconds)."""
    return f'echo "pid $$"\nn=0\nwhile [ "$n" -lt {int(lifetime_s)} ]; do\n{body.strip()}\nsleep 1\nn=$((n + 1))\ndone\n'


class NodeLoop:
    """BODY run by sh in kind node NODE once a second for as long as the loop lives; READ(lines) consumes its
    stdout in a thread of its own."""

    def __init__(self, node: str, body: str, read, docker: str = "docker", lifetime_s: float = LIFETIME_S):
        self.node, self.docker, self.pid = node, docker, None
        self.said_pid = threading.Event()
        self.proc = subprocess.Popen(
            [docker, "exec", node, "sh", "-c", loop_script(body, lifetime_s)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.thread = threading.Thread(target=self._pump, args=(read,), daemon=True)
        self.thread.start()

    def _pump(self, read):
        first = self.proc.stdout.readline()
        m = PID_LINE.fullmatch(first)
        self.pid = int(m.group(1)) if m else None
        self.said_pid.set()
        read(self.proc.stdout if m else itertools.chain([first] if first else [], self.proc.stdout))

    def stop(self):
        """The loop killed in the node (its PID), then the client ended."""
        self.said_pid.wait(timeout=5)
        if self.pid is not None:
            try:
                subprocess.run([self.docker, "exec", self.node, "sh", "-c", f"kill {self.pid}"], capture_output=True, timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass  # the loop ends by itself after LIFETIME_S
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.thread.join(timeout=5)
