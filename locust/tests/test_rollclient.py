"""liveness_lab.rollclient against a local HTTP/1.1 server that ends its keep-alive connections in each
of the ways a stopping pod can: with a word (Connection: close), silently between requests, or silently
under a request. Only the last loses requests, and the client must count them, not retry them."""

import http.server
import json
import threading

import pytest

from liveness_lab import rollclient


class Handler(http.server.BaseHTTPRequestHandler):
    """Answers GET /<way>: `told` says Connection: close on a connection's 2nd answer; `idle` closes
    after its 2nd answer without a word; `under` reads the 3rd request and closes without answering."""

    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.served = getattr(self, "served", 0) + 1
        way = self.path.strip("/")
        if way == "under" and self.served == 3:
            self.close_connection = True
            return
        body = json.dumps({"pod": "local"}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if way == "told" and self.served == 2:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        if way == "idle" and self.served == 2:
            self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_a_connection_ended_with_connection_close_loses_nothing(server):
    result = rollclient.run(f"{server}/told", connections=2, rate=10, duration=1.0, timeout=2)
    assert result["lost"] == 0 and result["answers"] >= 16
    assert result["told_close"] >= 8
    # Every second answer said close and the next request went on a new connection.
    assert result["told_close"] >= (result["answers"] - 2) // 2
    assert result["connections"] >= result["told_close"]
    assert result["closed_idle"] == 0 and result["non200"] == 0
    assert result["pods"] == {"local": result["answers"]}


def test_a_clean_close_between_requests_is_seen_before_sending_and_loses_nothing(server):
    result = rollclient.run(f"{server}/idle", connections=2, rate=5, duration=1.2, timeout=2)
    assert result["lost"] == 0
    assert result["closed_idle"] >= 2 and result["told_close"] == 0
    assert [e["kind"] for e in result["events"]] == ["closed-idle"] * result["closed_idle"]


def test_a_connection_closed_under_a_request_is_counted_lost_and_not_retried(server):
    result = rollclient.run(f"{server}/under", connections=1, rate=10, duration=0.45, timeout=2)
    # 5 requests: 1 and 2 answered, 3 lost on the closing connection, 4 and 5 on a new connection.
    assert result["lost"] == 1
    assert result["events"][0]["kind"] in ("lost", "lost-reset")
    assert result["answers"] == 4 and result["connections"] == 2


def test_main_prints_the_result_and_exits_one_when_a_request_was_lost(server, capsys, tmp_path):
    out = tmp_path / "result.json"
    code = rollclient.main(["--url", f"{server}/under", "--connections", "1", "--rate", "10", "--duration", "0.35", "--json", str(out)])
    printed = json.loads(capsys.readouterr().out)
    assert code == 1 and printed["lost"] == 1
    assert json.loads(out.read_text()) == printed


def test_help_says_what_it_counts(capsys):
    with pytest.raises(SystemExit) as exit_:
        rollclient.main(["--help"])
    assert exit_.value.code == 0
    assert "never retries" in capsys.readouterr().out
