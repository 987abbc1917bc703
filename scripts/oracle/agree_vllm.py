#!/usr/bin/env python3
"""Fresh random vLLM launches: run the vLLM oracle, run the planner's size(), compare every summary field.

    agree_vllm.py --version 0.34.0 --family dense,moe --seed 1234 --count 30 [--gpu b200] [--spec eagle3] [--resolve] [-v]

Prints, per release and family: equal / differ / refused (the planner refused by name) / rejected (vLLM refused
the flags at argument resolution: config.resolve's domain, not compared here unless --resolve). By default the
sizing runs on the VllmConfig vLLM resolved (read back from the oracle's summary, tests/vllm_golden.py
config_from_summary); --resolve sizes from the planner's own config.resolve (the whole chain).
"""
from __future__ import annotations

import argparse
import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path[:0] = [REPO, os.path.join(REPO, "tests"), HERE]

import vllm_cases  # noqa: E402
from vllm_golden import compare, config_from_summary, launch_from_case  # noqa: E402

from planner.engines.vllm.sizing import size  # noqa: E402
from planner.errors import BadInput  # noqa: E402


def _pydantic_wrapped(theirs: str, mine: str) -> bool:
    """vLLM raised ``mine`` (a ValueError in a config class's validator) and pydantic wrapped it: ``1 validation error
    for <Config>\\n  Value error, <mine> [type=value_error, input_value=<elided repr of the class's arguments>, ...]``;
    the wrapper's text depends on the pydantic installed, the message is vLLM's."""
    import re  # noqa: PLC0415

    m = re.match(r"\d+ validation errors? for \w+\n  Value error, (.*) \[type=value_error, ", theirs, re.S)
    return bool(m) and m.group(1) == mine


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", default="0.34.0", choices=("0.33.0", "0.34.0"))
    ap.add_argument("--family", default="dense,moe")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, default=30)
    ap.add_argument("--gpu", choices=sorted(vllm_cases.GPUS), help="every launch on this GPU (e.g. b200: SM 10.0)")
    ap.add_argument("--spec", choices=sorted(vllm_cases.SPEC_SETS), help="every launch with this drafter")
    ap.add_argument("--resolve", action="store_true", help="size from config.resolve instead of vLLM's config")
    ap.add_argument("-v", action="store_true", help="print each differing field")
    ns = ap.parse_args(argv)
    differ_total = 0
    for family in ns.family.split(","):
        cl = vllm_cases.cases(family, ns.version, ns.seed, ns.count, ns.gpu, ns.spec)
        for c in cl:
            c["id"] = f"agree-{ns.seed}-{c['id']}"
        vllm_cases.copy_configs(sorted({c["model"] for c in cl}))
        results = {r["id"]: r["summary"] for r in
                   vllm_cases.run_oracle(ns.version, cl, f"/tmp/vkv-agree-{ns.version}-{family}-{ns.seed}")}
        cnt = collections.Counter()
        for case in cl:
            theirs = results[case["id"]]
            if theirs["outcome"] in ("oracle_error", "input_error"):
                cnt["oracle_error"] += 1
                continue
            if theirs["outcome"] == "rejected" and not ns.resolve:
                cnt["rejected"] += 1
                continue
            launch = launch_from_case(case, ns.version)
            try:
                mine = size(launch, None if ns.resolve else config_from_summary(theirs, case)).summary
            except BadInput as e:
                cnt["refused"] += 1
                if ns.v:
                    print(f"  refused {case['id']}: {e}")
                continue
            d = compare(mine, theirs)
            if d and theirs["outcome"] == "rejected" and mine.get("outcome") == "rejected" and all(
                    line.startswith("error_message") for line in d):
                inner = mine.get("error_message") or ""
                if _pydantic_wrapped(theirs.get("error_message") or "", inner):
                    cnt["equal_inner"] += 1  # vLLM's ValueError text, inside pydantic's ValidationError wrapper
                    continue
                cnt["rejected_message"] += 1  # config.resolve's message text: its own tests' domain
                if ns.v:
                    print(f"  rejection message differs {case['id']}: {d[0][:200]}")
                continue
            cnt["differ" if d else "equal"] += 1
            if d and ns.v:
                print(f"  differ {case['id']} {case['flags']}")
                for line in d:
                    print(f"      {line[:300]}")
        differ_total += cnt["differ"]
        print(f"vllm {ns.version} {family} seed {ns.seed}: equal {cnt['equal']} / differ {cnt['differ']} / refused "
              f"{cnt['refused']} / rejected {cnt['rejected']} / rejected with vLLM's message inside pydantic's wrapper "
              f"{cnt['equal_inner']} / rejection message differs {cnt['rejected_message']} / "
              f"oracle_error {cnt['oracle_error']}")
    return 1 if differ_total else 0


if __name__ == "__main__":
    raise SystemExit(main())
