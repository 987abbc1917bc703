"""Re-run a random sample of one release's committed golden cases through the current adapters and compare
with the committed results. Usage: python3 scripts/oracle/sample_regen.py RELEASE N SEED ORACLE_COPY (venv: ~/.cache/sglang-oracle/RELEASE/venv)"""
import json, os, random, sys
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts/oracle"))
import make_cases_v0516 as m
rel, n, seed, oracle = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
gdir = os.path.join(REPO, f"tests/golden/sglang-{rel}")
py = os.path.expanduser(f"~/.cache/sglang-oracle/{rel}/venv/bin/python")
def rd(p): return [json.loads(l) for l in open(p) if l.strip()]
cases, results = {}, {}
for cf, rf in (("cases", "results"), ("random", "random_results")):
    for c in rd(os.path.join(gdir, cf + ".jsonl")): cases[c["id"]] = c
    for r in rd(os.path.join(gdir, rf + ".jsonl")): results[r["id"]] = r
ids = sorted(cases)
pick = random.Random(seed).sample(ids, min(n, len(ids)))
got = m.run_isolated(py, oracle, [cases[i] for i in pick], gdir, 2, "sample")
for r in got:
    r.pop("elapsed_s", None)  # filter_results.split_kept drops it from the committed results too
same = 0
for r in got:
    ok = json.dumps(r, sort_keys=True) == json.dumps(results[r["id"]], sort_keys=True)
    same += ok
    print(("same " if ok else "DIFF ") + r["summary"].get("outcome", "?").ljust(16) + r["id"])
print(f"{rel}: {same}/{len(got)} sampled cases identical to the committed golden results (seed {seed}, of {len(ids)})")
