#!/usr/bin/env python3
"""Commit → SSE across processes, through HTTP: this script commits events to a run in
PostgreSQL exactly as wright's store does (rows + pg_notify in one transaction), and follows
the run's SSE stream from a `wright serve --no-workers`; latency = SSE receipt − commit return.
Usage: commit_to_sse.py DB_URL API_PORT TOKEN USER_NAME N  (the token is USER_NAME's, from
`wright users add USER_NAME`). Needs `pip install psycopg[binary]`."""
import http.client, json, sys, threading, time, psycopg, uuid, datetime

DB, API_PORT, TOKEN, USER, N = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
conn = psycopg.connect(DB, autocommit=False)
owner = conn.execute("SELECT id FROM users WHERE name = %s", (USER,)).fetchone()[0]
run = "bench-" + uuid.uuid4().hex[:10]
now = lambda: datetime.datetime.utcnow().isoformat(timespec="milliseconds") + "Z"
conn.execute("INSERT INTO builds (id, prompt, template, lang, provider, model, workspace, status, started_at, owner, kind, queued_at) "
             "VALUES (%s,'bench','static','en','openai','m','/tmp/x','running',%s,%s,'build',%s)", (run, now(), owner, now()))
conn.commit()
committed = {}
received = {}
ready = threading.Event()

def follow():
    c = http.client.HTTPConnection("127.0.0.1", API_PORT)
    c.request("GET", f"/api/builds/{run}/events", headers={"Authorization": "Bearer " + TOKEN})
    r = c.getresponse()
    ready.set()
    while len(received) < N:
        line = r.fp.readline()
        if not line:
            break
        t = time.perf_counter()
        line = line.decode()
        if line.startswith("data:"):
            received[json.loads(line[5:])["seq"]] = t

th = threading.Thread(target=follow); th.start(); ready.wait(); time.sleep(0.5)
for seq in range(1, N + 1):
    e = {"seq": seq, "build": run, "ts": now(), "type": "status", "message": f"e{seq}", "level": "info"}
    conn.execute("SELECT 1 FROM builds WHERE id = %s FOR UPDATE", (run,))
    conn.execute("INSERT INTO events (build_id, seq, ts, type, data) VALUES (%s,%s,%s,'status',%s)", (run, seq, e["ts"], json.dumps(e)))
    conn.execute("SELECT pg_notify('wright_runs', %s)", (f"bench {run} {seq} {seq}",))
    conn.commit()
    committed[seq] = time.perf_counter()
    time.sleep(0.005)
th.join(timeout=30)
lat = sorted((received[s] - committed[s]) * 1000 for s in committed if s in received)
q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))]
print(f"commit→SSE through a wright serve in another process: {len(lat)}/{N} events, p50 {q(0.5):.2f} ms, p99 {q(0.99):.2f} ms, max {lat[-1]:.2f} ms")
