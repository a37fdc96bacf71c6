"""A shell loop inside a kind node container (``docker exec``), its output read line by line from a thread
of its own: how the recorder reads the Docker machine's CPU (recorder.MachineCpu) and the kernel's CFS
counters (cgroups.NodeCgroups) where the pods run, never the host's own /proc."""

import subprocess
import threading


class NodeLoop:
    """SCRIPT run by sh in kind node NODE for as long as the loop lives; READ(lines) consumes its stdout in a
    thread of its own."""

    def __init__(self, node: str, script: str, read, docker: str = "docker"):
        self.node = node
        self.proc = subprocess.Popen(
            [docker, "exec", node, "sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self.thread = threading.Thread(target=read, args=(self.proc.stdout,), daemon=True)
        self.thread.start()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.thread.join(timeout=5)
