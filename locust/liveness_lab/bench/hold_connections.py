"""Opens N keep-alive connections to a service on 127.0.0.1 and holds them, idle or each with one request
waiting, for the bench's memory measurements (liveness_lab/bench/memory.py runs it on the load generator's
CPU): memory per idle connection, and (with LATENCY_MS, scripts/bench.sh --memory) per waiting request.

Usage: python hold_connections.py PORT N [LATENCY_MS]
Each connection sends one `GET /api/work?latencyMs=0` and reads the answer (so the server has set up
everything a served connection has), then stays open and idle. Prints "open N" when all are open (or
"open K" with the errors when fewer could be). With LATENCY_MS, a line "send N" on standard input sends
`GET /api/work?latencyMs=LATENCY_MS` on the next N open connections that have not sent one ("send":
on all of them), and it prints "sent K", K the requests sent so far, once they are written; the answers
are never read. It holds the connections until its standard input closes, then closes them, after
"send" with a reset (SO_LINGER 0): a server that still reads a request after its client has gone serves
it all the same, so the bench sends no more than a server takes (memory.py, Memory.send_while_read).
Standard library only, one asyncio loop: 10,000 sockets need no threads.
"""

import asyncio
import socket
import struct
import sys

REQUEST = b"GET /api/work?latencyMs=%d HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n"


async def one(port: int) -> asyncio.StreamWriter:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(REQUEST % 0)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), None)
    if length is None:
        raise RuntimeError(f"no Content-Length in {head[:200]!r}")
    await reader.readexactly(length)
    return writer


def reset(writer: asyncio.StreamWriter) -> None:
    """Close with a RST: the server's socket drops what it has not read."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def main(port: int, count: int, latency_ms: int | None) -> int:
    writers, errors = [], {}
    # In batches: thousands of SYNs at once would overflow the listen queue and measure that instead.
    for start in range(0, count, 200):
        for result in await asyncio.gather(*(one(port) for _ in range(min(200, count - start))), return_exceptions=True):
            if isinstance(result, BaseException):
                errors[type(result).__name__] = errors.get(type(result).__name__, 0) + 1
            else:
                writers.append(result)
    print(f"open {len(writers)}" + (f" errors {errors}" if errors else ""), flush=True)
    loop = asyncio.get_running_loop()
    sent = 0
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        words = line.split()
        if words[:1] == ["send"] and latency_ms is not None:
            batch = writers[sent : sent + int(words[1])] if len(words) > 1 else writers[sent:]
            for writer in batch:
                writer.write(REQUEST % latency_ms)
            await asyncio.gather(*(writer.drain() for writer in batch), return_exceptions=True)
            sent += len(batch)
            print(f"sent {sent}", flush=True)
    for writer in writers:
        reset(writer) if sent else writer.close()
    return 0 if not errors else 1


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sys.exit(asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) == 4 else None)))
