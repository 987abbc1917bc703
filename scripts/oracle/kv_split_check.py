"""Re-run a sample of the committed SGLang 0.5.23 golden cases through the oracle and compare whole summaries.

Made to check ``kv_one_tensor_split.py``'s conversion of the committed 0.5.23 results (K and V as SGLang reports
them) against SGLang's own answer today: from each 0.5.23 set, one env-free ``ok`` case with a draft KV pool
(where the set has one) and one without, drawn with ``random.Random(seed)``; every relative path of a case made
absolute against the folder its generator runs the oracle in; one oracle batch (``--summary-only``); each
summary compared field by field with the committed one.

    bash scripts/oracle/oracle_copy.sh /tmp/oracle-kv
    python3 scripts/oracle/kv_split_check.py --py ~/.cache/sglang-oracle/0.5.23/venv/bin/python --oracle /tmp/oracle-kv
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
G = os.path.join(ROOT, "tests", "golden")
# tag: (folder of the set, cases file, results file, folder the generator runs the oracle in)
SETS = {
    "main": ("sglang-0.5.23", "cases.jsonl", "results.jsonl", "sglang-0.5.23"),
    "mainrand": ("sglang-0.5.23", "random.jsonl", "random_results.jsonl", "sglang-0.5.23"),
    "dense": ("dense/sglang-0.5.23", "cases.jsonl", "results.jsonl", "dense/sglang-0.5.23"),
    "quant": ("quant/sglang-0.5.23", "cases.jsonl", "results.jsonl", "quant/sglang-0.5.23"),
    "rec": ("recommended/sglang-0.5.23", "cases.jsonl", "results.jsonl", "recommended/drafts"),
    "dflash": ("spec/dflash/sglang-0.5.23", "cases.jsonl", "results.jsonl", "spec/dflash"),
    "dspark": ("spec/dspark/sglang-0.5.23", "cases.jsonl", "results.jsonl", "spec/dspark/sglang-0.5.23"),
    "ngram": ("spec/ngram/sglang-0.5.23", "cases.jsonl", "results.jsonl", "spec/ngram/sglang-0.5.23"),
    "standalone": ("spec/standalone/sglang-0.5.23", "cases.jsonl", "results.jsonl", "spec/standalone"),
}


def _read(path):
    return [json.loads(x) for x in open(path) if x.strip()]


def _absolute(value, bases):
    if not isinstance(value, str) or value.startswith("-") or os.path.isabs(value):
        return value
    for b in bases:
        p = os.path.normpath(os.path.join(b, value))
        if os.path.exists(p):
            return p
    return value


def sample(seed):
    rnd = random.Random(seed)
    cases, expected = [], {}
    for tag, (folder, cf, rf, run_in) in SETS.items():
        d = os.path.join(G, folder)
        bases = (d, os.path.join(G, run_in))
        res = {r["id"]: r["summary"] for r in _read(os.path.join(d, rf))}
        ok = [c for c in _read(os.path.join(d, cf))
              if not c.get("env") and res[c["id"]].get("outcome") == "ok" and res[c["id"]].get("pool_kv_k_bytes")]
        drafted = [c for c in ok if res[c["id"]].get("pool_draft_kv_k_bytes")]
        plain = [c for c in ok if c not in drafted] or ok
        for c in (rnd.sample(drafted, 1) if drafted else []) + rnd.sample(plain, 1):
            c = dict(c, id=f"{tag}:{c['id']}", config_json=_absolute(c.get("config_json"), bases),
                     flags=[_absolute(f, bases) for f in c["flags"]])
            cases.append(c)
            expected[c["id"]] = res[c["id"].split(":", 1)[1]]
    return cases, expected


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--py", required=True)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)
    cases, expected = sample(a.seed)
    with tempfile.TemporaryDirectory(prefix="kv-split-") as tmp:
        path = os.path.join(tmp, "cases.jsonl")
        with open(path, "w") as f:
            f.writelines(json.dumps(c) + "\n" for c in cases)
        env = dict(os.environ, SGLANG_ORACLE_CACHE=os.path.join(tmp, "cache"))
        p = subprocess.run(["nice", "-n", "10", a.py, os.path.join(a.oracle, "oracle.py"), "--batch", path,
                            "--summary-only"], cwd=tmp, env=env, capture_output=True, text=True)
    print((p.stderr.strip().splitlines() or [""])[-1], file=sys.stderr)
    equal = 0
    for r in (json.loads(x) for x in p.stdout.splitlines() if x.strip()):
        got, exp = r["summary"], expected[r["id"]]
        diff = {k: (exp.get(k), got.get(k)) for k in set(exp) | set(got) if exp.get(k) != got.get(k)}
        equal += not diff
        print(f"{r['id']}: K {got.get('pool_kv_k_bytes')} V {got.get('pool_kv_v_bytes')} draft K "
              f"{got.get('pool_draft_kv_k_bytes')} V {got.get('pool_draft_kv_v_bytes')}: "
              f"{'equal' if not diff else f'DIFFER {diff}'}")
    print(f"{equal} of {len(cases)} summaries equal")
    return 0 if equal == len(cases) else 1


if __name__ == "__main__":
    raise SystemExit(main())
