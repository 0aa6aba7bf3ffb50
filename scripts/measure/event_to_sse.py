#!/usr/bin/env python3
"""Event → SSE latency across processes: builds run by a `wright worker`, streamed from two
`wright serve --no-workers` on the same PostgreSQL. For each event: the time it was received
on the SSE stream minus its `ts` (stamped when the worker emitted it, before it was stored), so
the figure is an upper bound on commit → SSE. Same machine, same clock.
Usage: event_to_sse.py API_PORT_A,API_PORT_B TOKEN [BUILDS]"""
import http.client, json, sys, threading, time, datetime, statistics

API = [("127.0.0.1", int(p)) for p in sys.argv[1].split(",")]
TOKEN = sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 40
lat = []
lock = threading.Lock()

def ts_of(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()

def create(i):
    h, p = API[i % len(API)]
    c = http.client.HTTPConnection(h, p)
    c.request("POST", "/api/builds", json.dumps({"prompt": f"a landing page number {i} for a dog walker"}),
              {"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    return json.loads(c.getresponse().read())["id"]

def follow(bid, i):
    h, p = API[(i + 1) % len(API)]   # the other server from the one that took the request
    c = http.client.HTTPConnection(h, p)
    c.request("GET", f"/api/builds/{bid}/events", headers={"Authorization": "Bearer " + TOKEN})
    r = c.getresponse()
    mine = []
    while True:
        line = r.fp.readline()
        if not line:
            break
        now = time.time()
        line = line.decode().rstrip("\n")
        if line.startswith("data:"):
            e = json.loads(line[5:])
            if e["type"] != "queued":
                mine.append((now - ts_of(e["ts"])) * 1000)
            if e["type"] == "complete":
                break
    with lock:
        lat.extend(mine)

threads = []
for i in range(N):
    bid = create(i)
    t = threading.Thread(target=follow, args=(bid, i)); t.start(); threads.append(t)
    time.sleep(0.05)
for t in threads:
    t.join()
lat.sort()
q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))]
print(f"events: {len(lat)} over {N} builds; event→SSE on another server: p50 {q(0.5):.1f} ms, p99 {q(0.99):.1f} ms, max {lat[-1]:.1f} ms")
