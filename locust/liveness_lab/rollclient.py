"""A load client that never retries, to count what a rolling update loses.

Locust (and most HTTP clients) quietly resend a request whose keep-alive connection was closed under it,
so a pod that closes idle connections without a word looks lossless to them. This client does not: each
worker keeps one persistent HTTP/1.1 connection (stdlib ``http.client``) and sends ``GET URL`` at a fixed
rate. It opens a new connection only after an answer that said ``Connection: close``, or after the server
closed the connection cleanly while it was idle (seen before the next request is sent). A request that
meets a closed or reset connection is counted lost, never sent again.

Usage, from locust/ (stdlib only, so any python3 >= 3.11 runs it, in the Locust image too):
    python -m liveness_lab.rollclient --url 'http://127.0.0.1:30081/api/work?latencyMs=1000' \\
        --connections 20 --rate 1 --duration 90 [--timeout 10] [--json result.json]

Prints one JSON object: ``answers``, ``non200``, ``lost`` (requests sent on a connection that was then
closed or reset under them, or that timed out), ``lost_reset`` (those of them reset), ``connect_failed``
(new connections refused: no request was sent), ``told_close`` (answers that said Connection: close),
``closed_idle`` and ``reset_idle`` (connections the server closed or reset between requests without
having said so), ``connections`` (opened), ``pods`` (answers per pod, from the service's JSON) and
``events`` (time and kind of every loss, reset and failed connect). Exit code 0 when nothing was lost,
1 otherwise.
"""

import argparse
import http.client
import json
import select
import socket
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, fields
from urllib.parse import urlsplit


@dataclass
class Tally:
    """What every worker saw, added up; one lock guards it."""

    answers: int = 0
    non200: int = 0
    lost: int = 0
    lost_reset: int = 0
    connect_failed: int = 0
    told_close: int = 0
    closed_idle: int = 0
    reset_idle: int = 0
    connections: int = 0
    pods: Counter = field(default_factory=Counter)
    events: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, started: float, **counts) -> None:
        with self.lock:
            for name, value in counts.items():
                if name == "pod":
                    self.pods[value] += 1
                elif name == "event":
                    self.events.append({"t": round(time.monotonic() - started, 3), **value})
                else:
                    setattr(self, name, getattr(self, name) + value)

    def summary(self) -> dict:
        with self.lock:
            return {
                f.name: (dict(v) if isinstance(v, Counter) else list(v) if isinstance(v, list) else v)
                for f in fields(self)
                if f.name != "lock"
                for v in [getattr(self, f.name)]
            }


def closed_while_idle(sock: socket.socket) -> str | None:
    """'closed' or 'reset' when the server ended the idle connection, None when it is still open."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return None
    try:
        # Nothing may arrive unasked on an idle HTTP/1.1 connection: readable means end of stream.
        return "closed" if sock.recv(1, socket.MSG_PEEK) == b"" else "unexpected-bytes"
    except ConnectionResetError:
        return "reset"


def worker(url: str, rate: float, deadline: float, timeout: float, tally: Tally, started: float) -> None:
    """One connection at a time, one request per 1/RATE seconds, until DEADLINE (time.monotonic())."""
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    conn = None
    next_send = time.monotonic()
    while next_send < deadline:
        time.sleep(max(0.0, next_send - time.monotonic()))
        next_send = max(next_send + 1 / rate, time.monotonic())
        if conn is not None and conn.sock is not None:
            ended = closed_while_idle(conn.sock)
            if ended is not None:
                tally.add(started, **{f"{'reset' if ended == 'reset' else 'closed'}_idle": 1}, event={"kind": f"{ended}-idle"})
                conn.close()
                conn = None
        if conn is None:
            conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
            try:
                conn.connect()
            except OSError as e:
                tally.add(started, connect_failed=1, event={"kind": "connect-failed", "error": repr(e)})
                conn = None
                continue
            tally.add(started, connections=1)
        try:
            conn.request("GET", target)
            response = conn.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as e:
            reset = isinstance(e, ConnectionResetError)
            tally.add(started, lost=1, lost_reset=int(reset), event={"kind": "lost-reset" if reset else "lost", "error": repr(e)})
            conn.close()
            conn = None
            continue
        tally.add(started, answers=1, non200=int(response.status != 200), pod=pod_of(body))
        if response.will_close:
            tally.add(started, told_close=1)
            conn.close()
            conn = None
    if conn is not None:
        conn.close()


def pod_of(body: bytes) -> str:
    """The answering pod as the service names it in its JSON, or '?'."""
    try:
        return str(json.loads(body).get("pod", "?"))
    except (ValueError, AttributeError):
        return "?"


def run(url: str, connections: int, rate: float, duration: float, timeout: float) -> dict:
    """Runs CONNECTIONS workers for DURATION seconds; the tally's summary."""
    tally = Tally()
    started = time.monotonic()
    deadline = started + duration
    threads = [
        threading.Thread(target=worker, args=(url, rate, deadline, timeout, tally, started), daemon=True) for _ in range(connections)
    ]
    for thread in threads:
        thread.start()
        # Spread the first requests over one period, as users arriving one by one do.
        time.sleep(1 / rate / connections)
    for thread in threads:
        thread.join()
    return {"url": url, "connections_wanted": connections, "rate_per_connection": rate, "duration": duration, **tally.summary()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1]
    )
    parser.add_argument("--url", required=True, help="what every request GETs")
    parser.add_argument("--connections", type=int, default=20, help="workers, one connection each (default 20)")
    parser.add_argument("--rate", type=float, default=1.0, help="requests per second per worker (default 1)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds to run (default 60)")
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds a request may take before it counts as lost (default 10, as Locust's)"
    )
    parser.add_argument("--json", help="also write the result to this file")
    args = parser.parse_args(argv)
    if args.connections < 1 or args.rate <= 0 or args.duration <= 0:
        parser.error("--connections, --rate and --duration must be positive")
    result = run(args.url, args.connections, args.rate, args.duration, args.timeout)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as out:
            out.write(text + "\n")
    return 0 if result["lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
