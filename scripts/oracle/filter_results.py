#!/usr/bin/env python3
"""Keep only the cases the SGLang oracle answered with an SGLang decision, and make results stable.

  filter_results.py --cases ALL_CASES.jsonl --results ALL_RESULTS.jsonl \
                    --cases-out cases.jsonl --results-out results.jsonl [--dropped-out dropped.jsonl]

Dropped:
  * outcome "oracle_error" / "input_error" (a gap in the oracle's stand-ins, or a bad case line);
  * outcome "startup_failed" whose error comes from the oracle's meta-tensor stand-in
    ("... cannot be called on meta tensors"): the oracle builds pools on device='meta', so that
    exception is an oracle gap, not a decision SGLang would make on a GPU.
Also removed: the make_cases.py --with-bootstrap line (id "_bootstrap..."), from cases and results.
Results: "elapsed_s" is removed (wall time); everything else is kept as the oracle printed it.
Prints outcome counts (kept) and the dropped ids to stderr.
"""
import argparse
import collections
import json
import sys

ORACLE_ARTIFACT_MARKERS = ("cannot be called on meta tensors",)
BOOTSTRAP_PREFIX = "_bootstrap"  # make_cases.py --with-bootstrap: not a test case, always removed


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip() and not ln.lstrip().startswith("#")]


def drop_reason(summary):
    oc = summary.get("outcome")
    if oc in ("oracle_error", "input_error"):
        return oc
    msg = summary.get("error_message") or ""
    if oc == "startup_failed" and any(m in msg for m in ORACLE_ARTIFACT_MARKERS):
        return "oracle_artifact(startup_failed on a meta tensor)"
    return None


def split_kept(cases, results, reason_fn):
    """(kept cases, kept results without elapsed_s, dropped records) for aligned case/result lists.

    ``reason_fn(summary)`` returns why a result is not an SGLang decision, or None to keep it.
    """
    kept_c, kept_r, dropped = [], [], []
    for c, r in zip(cases, results):
        assert c["id"] == r["id"]
        r = dict(r)
        r.pop("elapsed_s", None)
        s = r["summary"]
        why = reason_fn(s)
        if why:
            dropped.append({"id": c["id"], "reason": why, "outcome": s.get("outcome"), "stage": s.get("stage"),
                            "error_type": s.get("error_type"), "error_message": s.get("error_message")})
            continue
        kept_c.append(c)
        kept_r.append(r)
    return kept_c, kept_r, dropped


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--cases-out", required=True)
    p.add_argument("--results-out", required=True)
    p.add_argument("--dropped-out", default=None, help="optional JSONL of dropped ids with the reason")
    a = p.parse_args()

    cases = [c for c in read_jsonl(a.cases) if not c["id"].startswith(BOOTSTRAP_PREFIX)]
    results = [r for r in read_jsonl(a.results) if not r["id"].startswith(BOOTSTRAP_PREFIX)]
    by_id = {}
    for r in results:
        if r["id"] in by_id:
            raise SystemExit(f"duplicate result id {r['id']}")
        by_id[r["id"]] = r
    if len(by_id) != len(cases) or any(c["id"] not in by_id for c in cases):
        raise SystemExit(f"results ({len(by_id)}) do not match cases ({len(cases)})")

    kept_c, kept_r, dropped = split_kept(cases, [by_id[c["id"]] for c in cases], drop_reason)
    counts = collections.Counter(r["summary"]["outcome"] for r in kept_r)

    with open(a.cases_out, "w") as f:
        f.writelines(json.dumps(c) + "\n" for c in kept_c)
    with open(a.results_out, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in kept_r)
    if a.dropped_out:
        with open(a.dropped_out, "w") as f:
            f.writelines(json.dumps(d) + "\n" for d in dropped)
    print(f"filter: kept {len(kept_c)} of {len(cases)}: "
          + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())), file=sys.stderr)
    for d in dropped:
        print(f"filter: dropped {d['id']}: {d['reason']}: {d['error_type']}: {d['error_message']}", file=sys.stderr)


if __name__ == "__main__":
    main()
