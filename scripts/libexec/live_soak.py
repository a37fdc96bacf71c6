"""A long swarm from the in-cluster Locust, as a workshop leaves one running during a talk, measured from
outside: what the Live tab holds over time, what it costs the master, and what `kubectl get pods -w` saw.

It stops any swarm, starts USERS per variant (BlockingUser, ReactiveUser) at 1 request/s from the
in-cluster master's web UI, and for MINUTES:
- every SAMPLE_S seconds reads GET /liveness-lab/live (its size and how long the master took to answer,
  blocking's markers and restarts) and the master pod's CPU and memory from the kubelet's summary API
  (nodes/proxy stats/summary, through the API server);
- every second for the first minutes, the live JSON's newest kill marker against the moment it was first
  seen: how long after the API's event time a kill reaches the endpoint (the tab reads it every 2 s);
- keeps a headless Chromium (Debian's) on the Live tab during the middle third only, so the master's CPU
  with the tab open and closed can be compared;
- runs `kubectl get pods -w` throughout, each line stamped with the host's time.
Then a screenshot of the tab with the whole history, and the swarm is stopped. Writes into OUT: soak.json
(every sample), pods-watch.txt, live-tab-soak.png, and prints a summary.

Usage (from the repository root, the cluster up):
    .venv/bin/python scripts/libexec/live_soak.py --minutes 30 --out reports/live-soak
Loopback only: the web UI at http://127.0.0.1:8089, the API server through kubeconfig.
"""

import argparse
import json
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

UI = "http://127.0.0.1:8089"
CONTEXT = "kind-liveness-lab"
NAMESPACE = "liveness-lab"
CHROMIUM = "/usr/bin/chromium"


def post(path, **form):
    data = urllib.parse.urlencode(form, doseq=True).encode()
    with urllib.request.urlopen(urllib.request.Request(UI + path, data=data, method="POST"), timeout=10) as r:
        return r.read()


def live():
    started = time.monotonic()
    with urllib.request.urlopen(UI + "/liveness-lab/live", timeout=20) as r:
        body = r.read()
    return json.loads(body), len(body), time.monotonic() - started


def master_stats(kubectl, node):
    raw = subprocess.run(
        [kubectl, "--context", CONTEXT, "get", "--raw", f"/api/v1/nodes/{node}/proxy/stats/summary"],
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    ).stdout
    for pod in json.loads(raw)["pods"]:
        name = pod["podRef"]["name"]
        if pod["podRef"]["namespace"] == NAMESPACE and name.startswith("liveness-lab-locust-") and "worker" not in name:
            c = pod["containers"][0]
            return {"pod": name, "cpuNs": c["cpu"]["usageCoreNanoSeconds"], "memBytes": c["memory"]["workingSetBytes"]}
    return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=30)
    p.add_argument("--users", type=int, default=20, help="users per variant")
    p.add_argument("--sample-s", type=float, default=30)
    p.add_argument("--kubectl", default="kubectl")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    node = subprocess.run(
        [a.kubectl, "--context", CONTEXT, "get", "nodes", "-o", "jsonpath={.items[0].metadata.name}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    watch_file = (out / "pods-watch.txt").open("w")
    watch = subprocess.Popen([a.kubectl, "--context", CONTEXT, "-n", NAMESPACE, "get", "pods", "-w"], stdout=subprocess.PIPE, text=True)

    def stamp():
        for line in watch.stdout:
            watch_file.write(f"{time.strftime('%H:%M:%S', time.gmtime())} {line}")
            watch_file.flush()

    threading.Thread(target=stamp, daemon=True).start()
    post("/stop")
    time.sleep(3)
    post(
        "/swarm",
        user_count=2 * a.users,
        spawn_rate=2 * a.users,
        user_classes=["BlockingUser", "ReactiveUser"],
        shape_class="Default",
        rate_per_user=1,
        latency_ms=1000,
    )
    t0 = time.time()
    end = t0 + a.minutes * 60
    samples, first_seen, stop = [], {}, threading.Event()

    def watch_kills():  # every second for the first 10 minutes: when each kill marker first shows
        while not stop.is_set() and time.time() < min(end, t0 + 600):
            try:
                data, _, _ = live()
                for v in data["variants"]:
                    for m in v["markers"]:
                        if m["kind"] == "kill":
                            key = (v["name"], m["pod"], m["t"])
                            first_seen.setdefault(key, time.time())
            except Exception as e:  # the master busy: try again
                print(f"live read failed: {e}", file=sys.stderr)
            time.sleep(1)

    threading.Thread(target=watch_kills, daemon=True).start()
    browser = None
    third = (end - t0) / 3
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            while time.time() < end:
                now = time.time()
                want_open = t0 + third <= now < t0 + 2 * third
                if want_open and browser is None:
                    browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
                    page = browser.new_page(viewport={"width": 1920, "height": 1080})
                    page.goto(UI + "/", timeout=30000)
                    page.get_by_role("tab", name="Live").click(timeout=30000)
                elif not want_open and browser is not None:
                    browser.close()
                    browser = None
                try:
                    data, size, took = live()
                    blocking = next((v for v in data["variants"] if v["name"] == "blocking"), None)
                    sample = {
                        "t": round(now - t0, 1),
                        "tabOpen": browser is not None,
                        "liveBytes": size,
                        "liveMs": round(1000 * took, 1),
                        "points": len(blocking["series"]["t"]) if blocking else 0,
                        "blockingKills": sum(m["kind"] == "kill" for m in blocking["markers"]) if blocking else 0,
                        "blockingRestarts": blocking["series"]["restarts"][-1] if blocking and blocking["series"]["restarts"] else None,
                        "master": master_stats(a.kubectl, node),
                    }
                except Exception as e:
                    sample = {"t": round(now - t0, 1), "error": f"{type(e).__name__}: {e}"}
                samples.append(sample)
                print(json.dumps(sample), flush=True)
                (out / "soak.json").write_text(json.dumps({"samples": samples}, indent=1))
                time.sleep(max(0.0, a.sample_s - (time.time() - now)))
            stop.set()
            browser = browser or pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            opened = time.monotonic()
            page.goto(UI + "/", timeout=30000)
            page.get_by_role("tab", name="Live").click(timeout=30000)
            page.wait_for_timeout(3000)
            tab_s = time.monotonic() - opened
            page.screenshot(path=str(out / "live-tab-soak.png"))
            browser.close()
    finally:
        post("/stop")
        watch.terminate()
    data, size, took = live()
    delays = []
    for (variant, pod, t), seen in sorted(first_seen.items(), key=lambda x: x[0][2]):
        delays.append({"variant": variant, "pod": pod, "eventT": t, "seenAfterS": round(seen - t, 2)})

    def cpu_share(rows):
        rows = [r for r in rows if r.get("master")]
        if len(rows) < 2:
            return None
        return (rows[-1]["master"]["cpuNs"] - rows[0]["master"]["cpuNs"]) / 1e9 / (rows[-1]["t"] - rows[0]["t"])

    closed = [s for s in samples if not s.get("tabOpen") and s["t"] < third]
    opened_rows = [s for s in samples if s.get("tabOpen")]
    mem = [s["master"]["memBytes"] / 2**20 for s in samples if s.get("master")]
    summary = {
        "minutes": a.minutes,
        "finalLiveBytes": size,
        "finalLiveMs": round(1000 * took, 1),
        "tabLoadS": round(tab_s, 1),
        "masterCpuTabClosed": cpu_share(closed),
        "masterCpuTabOpen": cpu_share(opened_rows),
        "masterMemMiB": {"first": mem[0] if mem else None, "last": mem[-1] if mem else None, "max": max(mem) if mem else None},
        "blockingKills": samples[-1].get("blockingKills"),
        "killToEndpoint": delays,
    }
    (out / "soak.json").write_text(json.dumps({"summary": summary, "samples": samples}, indent=1))
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
