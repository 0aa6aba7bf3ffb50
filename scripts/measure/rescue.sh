#!/usr/bin/env bash
# Rescue time after kill -9 with the shipped lease (10 s): kill → the build's `restarted` event.
# Needs: a release build, a PostgreSQL database in $WRIGHT_DATABASE_URL, and the scripted model
# (python3 scripts/measure/slow_model.py 18097 &). Prints one line per trial.
set -u
B=${WRIGHT_BIN:-target/release/wright}
: "${WRIGHT_DATABASE_URL:?set WRIGHT_DATABASE_URL=postgres://…}"
export WRIGHT_DATABASE_URL OPENAI_API_KEY=sk-test
DATA=${DATA_DIR:-$(mktemp -d)}
COMMON="--provider openai --base-url http://127.0.0.1:18097/v1 --model m --browser-check off --data-dir $DATA"
$B serve --no-workers --bind 127.0.0.1:18831 --preview-bind 127.0.0.1:18832 $COMMON --builds-per-hour 1000 --max-concurrent-builds 1000 > /tmp/rs-a.out 2>&1 &
API=$!
sleep 3
T=$($B users add r$RANDOM --data-dir $DATA 2>/dev/null | head -1)
for trial in 1 2 3 4 5; do
  $B worker --workers 1 $COMMON > /tmp/rs-w1.out 2>&1 & W1=$!
  sleep 2
  ID=$(curl -s -X POST http://127.0.0.1:18831/api/builds -H "Authorization: Bearer $T" -H 'Content-Type: application/json' -d "{\"prompt\": \"a landing page, trial $trial $RANDOM\"}" | python3 -c 'import sys,json; print(json.load(sys.stdin)["id"])')
  # wait until the sleep runs, at a random point in the lease
  for i in $(seq 1 100); do curl -s http://127.0.0.1:18831/api/builds/$ID/events -H "Authorization: Bearer $T" -m 1 | grep -q command_started && break; sleep 0.2; done
  sleep 0.$((RANDOM % 10))$((RANDOM % 10))
  $B worker --workers 1 $COMMON > /tmp/rs-w2.out 2>&1 & W2=$!
  sleep 1
  K=$(python3 -c 'import time; print(time.time())'); kill -9 $W1
  for i in $(seq 1 200); do
    R=$(curl -s http://127.0.0.1:18831/api/builds/$ID/events -H "Authorization: Bearer $T" -m 1 | grep -m1 '"type":"restarted"')
    [ -n "$R" ] && break; sleep 0.1
  done
  echo "$R" | python3 -c "import sys,json,datetime; e=json.loads(sys.stdin.read()[5:]); t=datetime.datetime.fromisoformat(e['ts'].replace('Z','+00:00')).timestamp(); print(f'trial $trial: rescue {t-$K:.2f} s')"
  kill -9 $W2; sleep 1
done
kill $API
