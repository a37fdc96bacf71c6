"""Opens N keep-alive connections to a service on 127.0.0.1 and holds them idle, for the bench's
memory-per-connection measurement (liveness_lab/bench/run.py runs it on the load generator's CPU).

Usage: python hold_connections.py PORT N
Each connection sends one `GET /api/work?latencyMs=0` and reads the answer (so the server has set up
everything a served connection has), then stays open and idle. Prints "open N" when all are open (or
"open K" with the errors when fewer could be), then holds them until its standard input closes.
Standard library only, one asyncio loop: 10,000 sockets need no threads.
"""

import asyncio
import sys

REQUEST = b"GET /api/work?latencyMs=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n"


async def one(port: int) -> asyncio.StreamWriter:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(REQUEST)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), None)
    if length is None:
        raise RuntimeError(f"no Content-Length in {head[:200]!r}")
    await reader.readexactly(length)
    return writer


async def main(port: int, count: int) -> int:
    writers, errors = [], {}
    # In batches: thousands of SYNs at once would overflow the listen queue and measure that instead.
    for start in range(0, count, 200):
        for result in await asyncio.gather(*(one(port) for _ in range(min(200, count - start))), return_exceptions=True):
            if isinstance(result, BaseException):
                errors[type(result).__name__] = errors.get(type(result).__name__, 0) + 1
            else:
                writers.append(result)
    print(f"open {len(writers)}" + (f" errors {errors}" if errors else ""), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for writer in writers:
        writer.close()
    return 0 if not errors else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]))))
