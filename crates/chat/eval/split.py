"""Split `all.jsonl` once into `tuning.jsonl` (fitted and thresholded on, and the shipped
example bank) and `heldout.jsonl` (only measured). Stratified by language, kind and tools;
seed 38. Run from this folder: `python3 split.py` (the output is committed; rerunning gives
the same split)."""
import json
import random

SEED = 38
HELD_OUT = 0.4

rows = [json.loads(l) for l in open("all.jsonl", encoding="utf-8") if l.strip()]
strata = {}
for r in rows:
    strata.setdefault((r["lang"], r["kind"], tuple(sorted(r["tools"]))), []).append(r)
rng = random.Random(SEED)
tuning, heldout, i = [], [], 0
for key in sorted(strata):
    group = strata[key]
    rng.shuffle(group)
    for r in group:
        # A running counter across strata: every stratum gets its share, no rounding drift.
        (heldout if int((i + 1) * HELD_OUT) > int(i * HELD_OUT) else tuning).append(r)
        i += 1
for name, part in [("tuning.jsonl", tuning), ("heldout.jsonl", heldout)]:
    with open(name, "w", encoding="utf-8") as f:
        for r in part:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(name, len(part))
