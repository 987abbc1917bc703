#!/usr/bin/env python3
"""Golden cases for the DeepEP all-to-all backend (--moe-a2a-backend deepep, --deepep-mode auto / normal /
low_latency) and --ep-num-redundant-experts on MLA models, with and without DP attention, made by SGLang's own code
(the oracle with the repository's adapters).

    bash scripts/oracle/oracle_copy.sh /tmp/oracle-deepep
    python3 scripts/oracle/deepep_cases.py regen --version 0.5.16 --oracle /tmp/oracle-deepep
    python3 scripts/oracle/deepep_cases.py regen --version 0.5.23 --oracle /tmp/oracle-deepep
    python3 scripts/oracle/deepep_cases.py regen --version 0.5.16 --oracle /tmp/oracle-deepep --random-only --seed 7 \
        --out /tmp/deepep-fresh
    .venv/bin/python scripts/oracle/deepep_cases.py check /tmp/deepep-fresh/deepep_random_seed7.jsonl --version 0.5.16

The oracle runs SGLang's ServerArgs resolution and its pool sizing; it builds no model and no dispatcher, so nothing
of the deep_ep library runs (and nothing is faked): DeepEP's buffers are allocated at the first MoE dispatch, after
the pools (tests/golden/dp_ep/README.md, "DeepEP"). Free memory after the weights is given (a measured value): the
cases check the per-rank sizing, not the weights (the planner's expert-weight terms are tested in
tests/test_expert_parallel.py).
"""
from __future__ import annotations

import argparse
import json
import os
import random

from dp_ep_cases import EP_RELEASES, GPUS, MODELS, V3, _run  # noqa: E402  (same folder; run from anywhere via the path below)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
MODES = ("auto", "normal", "low_latency")


def _case(cid, gpu, flags, model="deepseek-v3", fa=None):
    total, sm, name, fb, fa0 = GPUS[gpu]
    return dict(id=cid, gpu=gpu, gpu_total_mib=total, gpu_sm=sm, gpu_name=name, planner_model=model,
                config_json=MODELS[model], flags=flags, free_before_gib=fb, free_after_gib=fa0 if fa is None else fa,
                env={})


def cases(version):
    out = []
    for gpu in ("h200", "b200", "h100-sxm"):
        for tp, dp in ((8, 8), (8, 1), (8, 4), (4, 4)):
            for mode in MODES:
                extras = ([], ["--max-running-requests", "512"], ["--disable-cuda-graph"],
                          ["--cuda-graph-max-bs", "64"], ["--kv-cache-dtype", "fp8_e4m3"],
                          ["--ep-num-redundant-experts", "8"], ["--chunked-prefill-size", "4096"])
                for extra in (extras if gpu != "h100-sxm" else extras[:1]):
                    dpf = ["--dp-size", str(dp), "--enable-dp-attention"] if dp > 1 else []
                    cid = (f"{gpu}_tp{tp}_dp{dp}_{mode}_"
                           + ("_".join(x.lstrip("-").replace("-", "") for x in extra) or "default"))
                    out.append(_case(cid, gpu, ["--tp-size", str(tp)] + dpf + ["--moe-a2a-backend", "deepep",
                                                                               "--deepep-mode", mode] + extra))
    for gpu in ("h200", "b200"):  # the default mode (auto) unspelled, an --ep-size SGLang overrides, Kimi-K2
        out.append(_case(f"{gpu}_tp8_dp8_unspelled", gpu,
                         ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention", "--moe-a2a-backend", "deepep"]))
        out.append(_case(f"{gpu}_tp8_dp8_ep4_overridden", gpu, ["--tp-size", "8", "--dp-size", "8",
                                                                "--enable-dp-attention", "--ep-size", "4",
                                                                "--moe-a2a-backend", "deepep"]))
        out.append(_case(f"{gpu}_kimi_tp8_dp8", gpu, ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention",
                                                      "--moe-a2a-backend", "deepep"], model="kimi-k2-instruct"))
        if version in EP_RELEASES:  # --ep-size without DeepEP: modelled on these only
            out.append(_case(f"{gpu}_tp8_ep8_redundant32_none", gpu, ["--tp-size", "8", "--ep-size", "8",
                                                                      "--ep-num-redundant-experts", "32"]))
    return out


# DeepEP with speculative decoding on the checkpoint's own MTP layer (pipeline/expert_parallel.py _spec_scope): the
# public DP attention + DeepEP + MTP recipe (EAGLE 1 / 1 / 2), EAGLE 3 / 1 / 4, EAGLE 2 / 4 / 8, NEXTN's defaults
SPECS = {"eagle112": ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1", "--speculative-eagle-topk",
                      "1", "--speculative-num-draft-tokens", "2"],
         "eagle314": ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk",
                      "1", "--speculative-num-draft-tokens", "4"],
         "eagle248": ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2", "--speculative-eagle-topk",
                      "4", "--speculative-num-draft-tokens", "8"],
         "nextn": ["--speculative-algorithm", "NEXTN"]}


def spec_cases(version):
    """DeepEP + NEXTN / EAGLE (deepep_spec.jsonl): H200 / B200 (H100: defaults), (T, D) = (8, 8), (8, 4), (8, 1),
    (4, 4), each mode, each SPECS entry, default flags, R 1024, R 1024 with the decode graphs capped at 64 (#25's
    launch); the public recipe (EAGLE 1 / 1 / 2) also with R 256, FP8 KV and R 1024 capped at 128."""
    gmax = "--cuda-graph-max-bs" if version == "0.5.16" else "--cuda-graph-max-bs-decode"  # 0.5.20+: ambiguous
    out = []
    for gpu in ("h200", "b200", "h100-sxm"):
        for tp, dp in ((8, 8), (8, 4), (8, 1), (4, 4)):
            dpf = ["--dp-size", str(dp), "--enable-dp-attention"] if dp > 1 else []
            for mode in MODES:
                for sname, spec in SPECS.items():
                    # SGLang caps the running requests at 48 under EAGLE unless given (so 48 // D per DP rank):
                    # R 1024 lets the decode graphs reach the cap
                    r = ["--max-running-requests", "1024"]
                    extras = [[], r, r + [gmax, "64"]]
                    if sname == "eagle112":
                        extras += [["--max-running-requests", "256"], ["--kv-cache-dtype", "fp8_e4m3"],
                                   r + [gmax, "128"]]
                    for extra in (extras if gpu != "h100-sxm" else extras[:1]):
                        cid = (f"{gpu}_tp{tp}_dp{dp}_{mode}_{sname}_"
                               + ("_".join(x.lstrip("-").replace("-", "") for x in extra) or "default"))
                        out.append(_case(cid, gpu, ["--tp-size", str(tp)] + dpf
                                         + ["--moe-a2a-backend", "deepep", "--deepep-mode", mode] + spec + extra))
    return out


def random_cases(version, seed, count, spec=False):
    """Random DeepEP launches: model, GPU, (tp, dp), mode, KV dtype, context, caps, chunk, graphs, page size,
    redundant experts; 0.5.23 spells half of the DP-attention ones --attn-dp-size."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        model, gpu = rng.choice(sorted(MODELS)), rng.choice(sorted(GPUS))
        tp, dp = rng.choice([(8, 8), (8, 4), (8, 2), (8, 1), (4, 4), (4, 1), (2, 2)])
        total = GPUS[gpu][0]
        dpf = ["--dp-size", str(dp), "--enable-dp-attention"] if dp > 1 else []
        if dpf and version == "0.5.23" and rng.random() < 0.5:
            dpf = ["--attn-dp-size", str(dp)]
        flags = ["--tp-size", str(tp)] + dpf + ["--moe-a2a-backend", "deepep"]
        if rng.random() < 0.7:
            flags += ["--deepep-mode", rng.choice(MODES)]
        if rng.random() < 0.3:
            flags += ["--kv-cache-dtype", rng.choice(["fp8_e4m3", "auto", "bfloat16"])]
        if rng.random() < 0.3:
            flags += ["--context-length", str(rng.choice([4096, 32768, 131072]))]
        if rng.random() < 0.2:
            flags += ["--mem-fraction-static", str(rng.choice([0.6, 0.75, 0.85]))]
        if rng.random() < 0.4:
            flags += ["--max-running-requests", str(rng.choice([1, 7, 64, 100, 256, 1000, 4096]))]
        if rng.random() < 0.2:
            flags += ["--chunked-prefill-size", str(rng.choice([2048, 4096, 16384]))]
        if rng.random() < 0.15:
            flags += ["--cuda-graph-max-bs", str(rng.choice([16, 64, 160, 400]))]
        if rng.random() < 0.1:
            flags += ["--disable-cuda-graph"]
        if rng.random() < 0.15:
            flags += ["--page-size", str(rng.choice([1, 16, 64]))]
        if rng.random() < 0.1:
            flags += ["--disable-radix-cache"]
        if rng.random() < 0.25:
            flags += ["--ep-num-redundant-experts", str(rng.choice([tp, 2 * tp, 4 * tp]))]
        fa = round(total / 1024 * rng.choice([0.1, 0.2, 0.35, 0.5]), 2)
        if spec:  # NEXTN / EAGLE on DeepSeek-V3's own MTP layer (Kimi-K2 has none), random steps / topk / tokens
            model = "deepseek-v3"
            flags = [f for i2, f in enumerate(flags) if not (f == "--ep-num-redundant-experts" or (
                i2 and flags[i2 - 1] == "--ep-num-redundant-experts"))]
            if rng.random() < 0.25:
                flags += ["--speculative-algorithm", "NEXTN"]
            else:
                steps, topk = rng.choice([1, 1, 2, 3, 4]), rng.choice([1, 1, 1, 2, 4])
                tokens = rng.choice([steps + 1, 2 * (steps + 1), 8]) if topk > 1 else steps + 1
                flags += ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", str(steps),
                          "--speculative-eagle-topk", str(topk), "--speculative-num-draft-tokens", str(tokens)]
            if rng.random() < 0.3:
                flags += ["--cuda-graph-max-bs" if version == "0.5.16" else "--cuda-graph-max-bs-decode",
                          str(rng.choice([16, 32, 64, 128]))]
        out.append(_case(f"r{seed}{'s' if spec else ''}_{i:03d}", gpu, flags, model=model, fa=fa))
    return out


def check(cases_path, version):
    """The planner against the oracle's results beside ``cases_path`` (<name>_results.jsonl), every SUMMARY_FIELDS
    field; cases the planner refuses as not modelled are counted apart. Needs the planner importable (the repo's
    venv). Exit 1 on any disagreement."""
    import sys

    sys.path.insert(0, REPO)
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.engines.sglang.plan import make_plan  # noqa: PLC0415
    from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary  # noqa: PLC0415
    from planner.errors import BadInput  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415

    rpath = cases_path[:-len(".jsonl")] + "_results.jsonl"
    if not os.path.exists(rpath) and cases_path.endswith("_cases.jsonl"):  # deepep_cases.jsonl / deepep_results.jsonl
        rpath = cases_path[:-len("_cases.jsonl")] + "_results.jsonl"
    res = {r["id"]: r["summary"] for r in map(json.loads, open(rpath))}
    equal = refused = beyond = 0
    bad = []
    for c in map(json.loads, open(cases_path)):
        exp = res[c["id"]]
        try:
            got = build_summary(make_plan(find_profile(c["gpu"]), resolve_model(c["planner_model"]), c["flags"],
                                          c.get("env") or {}, c["free_before_gib"], c["free_after_gib"],
                                          version=version))
        except BadInput as exc:
            refused += 1
            print(f"refused {c['id']}: {exc}")
            continue
        skip = set()
        if exp["outcome"] == "ok" and got["stage"] in ("cuda_graph_capture", "cuda_graph_batch_sizes"):
            # DeepEP's dispatch limit at the capture (no graph in the oracle), or the capture list left empty by the
            # attn-TP padding the oracle misses (expert_parallel.capture_mul_base)
            skip = {"outcome", "startup_ok", "stage", "error_type", "error_message"}
            beyond += 1
        elif exp["outcome"] == "ok" and got["stage"] == "tp_worker":  # SGLang's later assert the oracle does not
            skip = {"outcome", "startup_ok", "stage", "error_type", "error_message"}  # run (agree.py BEYOND_ORACLE)
            beyond += 1
        elif exp["stage"] == "cuda_graph_batch_sizes" and got["stage"] == "tp_worker":  # R // D = 0 on 0.5.16
            skip = {"outcome", "startup_ok", "stage", "error_type", "error_message", "cuda_graph_capture_max_bs"}
            beyond += 1
        if ("--enable-dp-attention" not in c["flags"] and "--attn-dp-size" not in c["flags"]
                and "deepep" in c["flags"] and exp["cuda_graph_capture_max_bs"] is not None):
            skip.add("cuda_graph_capture_max_bs")  # the oracle's unpadded list (expert_parallel.capture_mul_base)
        diffs = {k: (exp[k], got[k]) for k in SUMMARY_FIELDS if k not in skip and exp[k] != got[k]}
        if diffs:
            bad.append(c["id"])
            print(f"DIFF {c['id']} {' '.join(c['flags'])}: (oracle, planner) {diffs}")
        else:
            equal += 1
    print(f"{version} {os.path.basename(cases_path)}: {equal} equal ({beyond} of them ending after the pools in "
          "SGLang's tp_worker assert, DeepEP's dispatch limit or the padded capture list, which the oracle does not "
          f"run), {len(bad)} differ, {refused} refused by name")
    return 1 if bad else 0


def main():
    import sys

    if len(sys.argv) > 1 and sys.argv[1] == "check":
        c = argparse.ArgumentParser()
        c.add_argument("cmd")
        c.add_argument("cases")
        c.add_argument("--version", required=True)
        a = c.parse_args()
        return check(a.cases, a.version)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("cmd", choices=["regen"])
    p.add_argument("--version", required=True)
    p.add_argument("--oracle", required=True)
    p.add_argument("--py", default=None)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=40)
    p.add_argument("--random-only", action="store_true", help="only the random set (fresh draws: another --seed)")
    p.add_argument("--spec", action="store_true", help="the speculative-decoding sets (deepep_spec*.jsonl)")
    p.add_argument("--out", default=None, help="folder for the files (default: the golden folder)")
    a = p.parse_args()
    d = a.out or os.path.join(REPO, "tests", "golden", "dp_ep", f"sglang-{a.version}")
    os.makedirs(d, exist_ok=True)
    py = a.py or os.path.expanduser(f"~/.cache/sglang-oracle/{a.version}/venv/bin/python")
    fixed, rand = ("deepep_spec", "deepep_spec_random") if a.spec else ("deepep", "deepep_random")
    if not a.random_only:
        with open(os.path.join(d, f"{fixed}_cases.jsonl" if not a.spec else f"{fixed}.jsonl"), "w") as f:
            for c in (spec_cases if a.spec else cases)(a.version):
                if a.out:
                    c["config_json"] = os.path.normpath(os.path.join(REPO, "tests", "golden", "dp_ep",
                                                                     f"sglang-{a.version}", c["config_json"]))
                f.write(json.dumps(c) + "\n")
        _run(py, a.oracle, os.path.join(d, f"{fixed}_cases.jsonl" if not a.spec else f"{fixed}.jsonl"),
             os.path.join(d, f"{fixed}_results.jsonl"))
    name = rand if a.seed == 1 else f"{rand}_seed{a.seed}"
    golden = os.path.join(REPO, "tests", "golden", "dp_ep", f"sglang-{a.version}")
    with open(os.path.join(d, f"{name}.jsonl"), "w") as f:
        for c in random_cases(a.version, a.seed, a.count, spec=a.spec):
            if a.out:  # the configs are named relative to the golden folder
                c["config_json"] = os.path.normpath(os.path.join(golden, c["config_json"]))
            f.write(json.dumps(c) + "\n")
    _run(py, a.oracle, os.path.join(d, f"{name}.jsonl"), os.path.join(d, f"{name}_results.jsonl"))


if __name__ == "__main__":
    raise SystemExit(main())
