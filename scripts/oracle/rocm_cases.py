#!/usr/bin/env python3
"""SGLang's own decisions on a simulated AMD Instinct (ROCm) device, and the planner's, compared field by field.

    # the golden set (tests/golden/rocm/): curated cases, their results per release
    rocm_cases.py regen --version 0.5.23 [--oracle /tmp/oracle-rocm]
    # fresh random launches (any seed), compared with the planner; exit 1 on any difference
    rocm_cases.py agree --version 0.5.11 --seed 3 --count 40 [--oracle /tmp/oracle-rocm]

The oracle is the repo's copy with its adapters (``bash scripts/oracle/oracle_copy.sh /tmp/oracle-rocm``), run
with ``ORACLE_FAKE_HIP=1`` (scripts/oracle/adapters/shim/cpu_shim.py ``_install_fake_hip``: torch.version.hip
set, torch.version.cuda None, the gfx arch of ``ORACLE_GCN_ARCH``, rocminfo's Pool 1 = ``gpu_total_mib``).
gfx942 (MI300X, MI325X) and gfx950 (MI355X) run as separate batches (the arch is per process); a case with an
env runs alone. Free memory: ``free_before`` = total - 0.9 GiB (tp 1) or 1.4 GiB, ``free_after`` = that less the
checkpoint's weights / tp (the planner is given both, so the pools are compared on the same inputs).
Models: Llama-3.1-8B / 70B (dense GQA), Qwen3-8B / 32B (dense), Qwen3-30B-A3B / 235B-A22B (MoE GQA), DeepSeek-V3
(MLA, block FP8); the random draws add Kimi-K2 (DeepSeek-V3's architecture, 64 heads: triton at TP 8). Flags: what pipeline/rocm.py models (context, TP, fraction, caps, chunk, graph max bs, radix,
KV dtype auto / fp8_e4m3, attention backend aiter / triton, page size, SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, REPO)
sys.path.insert(0, HERE)
GOLDEN = os.path.join(REPO, "tests", "golden", "rocm")
CONFIGS = "../../../planner/catalog/configs/"  # relative to GOLDEN
ORACLE = "/tmp/oracle-rocm"

# catalog id -> (config file, whole-checkpoint weights GiB, dense/moe/mla)
MODELS = {
    "llama-3.1-8b-instruct": ("meta-llama__Llama-3.1-8B-Instruct.config.json", 14.96),
    "llama-3.1-70b-instruct": ("meta-llama__Llama-3.1-70B-Instruct.config.json", 131.42),
    "qwen3-8b": ("Qwen__Qwen3-8B.config.json", 15.26),
    "qwen3-32b": ("Qwen__Qwen3-32B.config.json", 61.02),
    "qwen3-30b-a3b": ("Qwen__Qwen3-30B-A3B.config.json", 56.9),
    "qwen3-235b-a22b": ("Qwen__Qwen3-235B-A22B.config.json", 437.9),
    "deepseek-v3": ("deepseek-ai__DeepSeek-V3.config.json", 627.0),
    "kimi-k2-instruct": ("moonshotai__Kimi-K2-Instruct.config.json", 958.5),  # random draws only
}
# profile id -> (gpu_total_mib = rocminfo Pool 1, gpu_sm as torch reports it on ROCm, market name, gfx arch)
GPUS = {
    "mi300x": (196592, "9.4", "AMD Instinct MI300X", "gfx942:sramecc+:xnack-"),
    "mi325x": (262128, "9.4", "AMD Instinct MI325X", "gfx942:sramecc+:xnack-"),
    "mi355x": (294896, "9.5", "AMD Instinct MI355X", "gfx950:sramecc+:xnack-"),
}
HONOR = "SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION"


def case(cid, gpu, model, flags=(), tp=1, env=None):
    total, sm, name, _ = GPUS[gpu]
    fb = round(total / 1024 - (0.9 if tp == 1 else 1.4), 2)
    fa = round(fb - MODELS[model][1] / tp, 2)
    flags = list(flags) + (["--tp-size", str(tp)] if tp > 1 else [])
    return {"id": cid, "config_json": CONFIGS + MODELS[model][0], "flags": flags, "gpu_total_mib": total,
            "gpu_sm": sm, "gpu_name": name, "free_before_gib": fb, "free_after_gib": fa, "env": dict(env or {}),
            "gpu": gpu, "planner_model": model}


def curated():
    """The fixed set: each model at its smallest fitting TP on an MI300X, with SGLang's defaults, a short context
    (no x 0.85), an explicit fraction, FP8 KV, triton, and the other two parts."""
    out = []
    for model, tp in (("llama-3.1-8b-instruct", 1), ("qwen3-32b", 1), ("qwen3-30b-a3b", 1), ("llama-3.1-70b-instruct", 2),
                      ("qwen3-235b-a22b", 8), ("deepseek-v3", 8)):
        short = model.split("-instruct")[0]
        out.append(case(f"{short}-tp{tp}-default", "mi300x", model, tp=tp))
        out.append(case(f"{short}-tp{tp}-ctx8192", "mi300x", model, ["--context-length", "8192"], tp=tp))
        out.append(case(f"{short}-tp{tp}-mfs0.9", "mi300x", model, ["--mem-fraction-static", "0.9"], tp=tp))
        out.append(case(f"{short}-tp{tp}-fp8kv", "mi300x", model, ["--kv-cache-dtype", "fp8_e4m3"], tp=tp))
        out.append(case(f"{short}-tp{tp}-triton", "mi300x", model, ["--attention-backend", "triton"], tp=tp))
    out.append(case("deepseek-v3-tp4-default", "mi300x", "deepseek-v3", tp=4))  # 32 heads per rank: triton
    out.append(case("llama-3.1-8b-mi325x-default", "mi325x", "llama-3.1-8b-instruct"))
    out.append(case("qwen3-235b-a22b-mi325x-tp4", "mi325x", "qwen3-235b-a22b", tp=4))
    out.append(case("llama-3.1-8b-mi355x-default", "mi355x", "llama-3.1-8b-instruct"))
    out.append(case("qwen3-32b-mi355x-ctx4096", "mi355x", "qwen3-32b", ["--context-length", "4096"]))
    out.append(case("llama-3.1-8b-honor-mfs0.9", "mi300x", "llama-3.1-8b-instruct", ["--mem-fraction-static", "0.9"],
                    env={HONOR: "1"}))
    return out


def random_cases(seed, count, version="0.5.23"):
    rng = random.Random(seed)
    new_gen = tuple(int(x) for x in version.split(".")) >= (0, 5, 14)
    graph_max = "--cuda-graph-max-bs-decode" if new_gen else "--cuda-graph-max-bs"
    out = []
    min_tp = {"llama-3.1-70b-instruct": 2, "qwen3-235b-a22b": 4, "deepseek-v3": 4, "kimi-k2-instruct": 8}
    for i in range(count):
        model = rng.choice(sorted(MODELS))
        gpu = rng.choice(sorted(GPUS))
        tp = rng.choice([t for t in (1, 2, 4, 8) if t >= min_tp.get(model, 1)])
        if model == "deepseek-v3" and GPUS[gpu][0] < 200000:
            tp = 8
        flags = []
        if rng.random() < 0.4:
            flags += ["--context-length", str(rng.choice([2048, 8192, 8193, 16384, 32768, 65536]))]
        if rng.random() < 0.3:
            flags += ["--mem-fraction-static", str(rng.choice([0.7, 0.8, 0.85, 0.9]))]
        if rng.random() < 0.25:
            flags += ["--max-running-requests", str(rng.choice([8, 32, 64, 200]))]
        if rng.random() < 0.2:
            flags += ["--chunked-prefill-size", str(rng.choice([2048, 4096, 8192]))]
        if rng.random() < 0.2:
            flags += [graph_max, str(rng.choice([16, 64, 160]))]
        if rng.random() < 0.15:
            flags += ["--max-total-tokens", str(rng.choice([20000, 100000, 400000]))]
        if rng.random() < 0.25:
            flags += ["--kv-cache-dtype", rng.choice(["fp8_e4m3", "fp8_e4m3", "fp8_e5m2", "bfloat16"])]
        if rng.random() < 0.2:
            flags += ["--attention-backend", rng.choice(["aiter", "triton"])]
        if rng.random() < 0.15:
            flags += ["--page-size", str(rng.choice([1, 16, 64]))]
        if rng.random() < 0.15:
            flags += ["--disable-radix-cache"]
        if rng.random() < 0.1:
            flags += ["--disable-cuda-graph"]
        env = {HONOR: "1"} if rng.random() < 0.1 and "--mem-fraction-static" in flags else None
        out.append(case(f"r{seed}-{i:03d}", gpu, model, flags, tp=tp, env=env))
    return out


def run_oracle(cases, version, oracle):
    """{id: summary}: gfx942 and gfx950 as separate batches, a case with an env alone."""
    py = os.path.expanduser(f"~/.cache/sglang-oracle/{version}/venv/bin/python")
    groups: dict[tuple, list] = {}
    for c in cases:
        key = (GPUS[c["gpu"]][3], json.dumps(c["env"], sort_keys=True) if c["env"] else "", c["id"] if c["env"] else "")
        groups.setdefault(key, []).append(c)
    results = {}
    for (arch, _, _), group in groups.items():
        fd, path = tempfile.mkstemp(suffix=".jsonl", dir=GOLDEN, prefix=".rocm-")
        with os.fdopen(fd, "w") as f:
            for c in group:
                f.write(json.dumps(c) + "\n")
        try:
            env = {**os.environ, "ORACLE_FAKE_HIP": "1", "ORACLE_GCN_ARCH": arch}
            out = subprocess.run(["nice", "-n", "10", py, os.path.join(oracle, "oracle.py"), "--batch", path,
                                  "--summary-only"], cwd=GOLDEN, env=env, capture_output=True, text=True, check=False)
        finally:
            os.remove(path)
        for line in out.stdout.splitlines():
            if line.strip():
                r = json.loads(line)
                results[r["id"]] = r
    return results


def compare(cases, results, version):
    """(agree, differ, refused, dropped) and a line per difference / refusal."""
    from filter_results import drop_reason  # noqa: PLC0415

    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.engines.sglang.plan import make_plan  # noqa: PLC0415
    from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary  # noqa: PLC0415
    from planner.errors import BadInput  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415

    counts = {"agree": 0, "differ": 0, "refused": 0, "dropped": 0}
    lines = []
    for c in cases:
        r = results.get(c["id"])
        exp = r["summary"] if r else None
        if exp is None or drop_reason(exp):
            counts["dropped"] += 1
            lines.append(f"dropped {c['id']}: {exp and drop_reason(exp)}")
            continue
        try:
            plan = make_plan(find_profile(c["gpu"]), resolve_model(c["planner_model"]), c["flags"], c["env"],
                             c["free_before_gib"], c["free_after_gib"], version=version)
        except BadInput as exc:
            counts["refused"] += 1
            lines.append(f"refused {c['id']}: {exc}")
            continue
        got = build_summary(plan)
        skip = set()
        if exp["outcome"] == "ok" and got["stage"] in ("tp_worker", "init_attention_backend", "scheduler_init"):
            skip = {"outcome", "startup_ok", "stage", "error_type", "error_message"}
        diffs = {k: (exp[k], got[k]) for k in SUMMARY_FIELDS if k not in skip and exp.get(k) != got.get(k)}
        if diffs:
            counts["differ"] += 1
            lines.append(f"DIFFERS {c['id']} {c['flags']} {c['env']}: (oracle, planner) {diffs}")
        else:
            counts["agree"] += 1
    return counts, lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("regen", "agree", "compare"))
    ap.add_argument("--version", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--oracle", default=ORACLE)
    args = ap.parse_args()
    if args.mode == "regen":  # the curated set's cases and this release's results
        cases = curated()
        with open(os.path.join(GOLDEN, "cases.jsonl"), "w") as f:
            for c in cases:
                f.write(json.dumps(c) + "\n")
        res = run_oracle(cases, args.version, args.oracle)
        os.makedirs(os.path.join(GOLDEN, f"sglang-{args.version}"), exist_ok=True)
        with open(os.path.join(GOLDEN, f"sglang-{args.version}", "results.jsonl"), "w") as f:
            for c in cases:
                if c["id"] in res:
                    f.write(json.dumps(res[c["id"]]) + "\n")
        print(f"regen {args.version}: {len(res)} of {len(cases)} cases")
        return 0
    if args.mode == "compare":  # the committed golden set against the planner
        cases = [json.loads(x) for x in open(os.path.join(GOLDEN, "cases.jsonl")) if x.strip()]
        res = {}
        for line in open(os.path.join(GOLDEN, f"sglang-{args.version}", "results.jsonl")):
            r = json.loads(line)
            res[r["id"]] = r
    else:
        cases = random_cases(args.seed, args.count, args.version)
        res = run_oracle(cases, args.version, args.oracle)
    counts, lines = compare(cases, res, args.version)
    for line in lines:
        print(line)
    print(f"rocm {args.mode}: SGLang {args.version}, seed {args.seed}: {counts['agree']} equal, {counts['differ']} "
          f"differ, {counts['refused']} refused as not modelled, {counts['dropped']} dropped (oracle error / artifact)")
    return 1 if counts["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
