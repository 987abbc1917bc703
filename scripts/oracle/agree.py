#!/usr/bin/env python3
"""Fresh random launches, decided by SGLang's own code (the oracle) and by the planner, compared field by field.

    python3 scripts/oracle/agree.py --version 0.5.19 --seed 7 --count 60 \
        [--py ~/.cache/sglang-oracle/0.5.19/venv/bin/python] [--oracle /tmp/sglang-oracle-adapted]
        [--algorithm NGRAM|STANDALONE|DFLASH|DSPARK] [--family dense]

The golden sets in tests/golden/ are fixed; this draws new ones (any seed) to check that the agreement is
not an artifact of those particular cases. Cases come from make_cases.py (releases up to 0.5.13, old flag
spellings) or make_cases_v0516.py (0.5.14+); they run in one oracle batch (env-free, so the batch-isolation
caveat of the golden READMEs does not apply: cases with an "env" are dropped); oracle errors and meta-tensor
artifacts are dropped as in filter_results.py. Prints one line per disagreement and a count line; exit 1
when any modelled case disagrees. Cases the planner refuses as not modelled are counted separately.

--family swa draws hybrid sliding-window launches (gpt-oss-20b / 120b: TP 1/2/4/8, GPUs, KV dtype, context, caps,
--swa-full-tokens-ratio, --disable-hybrid-swa-memory, page size, backends) from scripts/oracle/swa_cases.py; without
--oracle it runs /tmp/oracle-swa (scripts/oracle/oracle_copy.sh) for every release.
--family mla draws DeepSeek-V3 / Kimi-K2 / DeepSeek-V3.2 launches (MLA, the DSA indexer; TP 1-8, five GPU
generations, KV dtype, context, caps, backends) from scripts/oracle/mla_cases.py, through the shared oracle.
--family glm draws GLM-4.x (the abbreviated GLM-4.7 config with num_nextn_predict_layers 1) launches with EAGLE /
NEXTN on the model's own MTP layer (8x H200 / B200; steps, topk, KV dtype, context, caps) from
scripts/oracle/glm_nextn_cases.py; without --oracle: the shared oracle for 0.5.11 / 0.5.16 / 0.5.23, else
/tmp/oracle-glmnext (scripts/oracle/oracle_copy.sh).

--family dpep draws DP-attention launches (DeepSeek-V3 / Kimi-K2, --dp-size D --enable-dp-attention or 0.5.23's
--attn-dp-size D, one attention-DP rank) from scripts/oracle/dp_ep_cases.py; without --oracle it runs /tmp/oracle-dpep
(scripts/oracle/oracle_copy.sh: the repository's adapters stamp the attention-DP widths). Verified: 0.5.16, 0.5.23.
--family dpwide draws the same with DeepSeek-V3 NEXTN / EAGLE, the GQA MoE models (Qwen3-MoE, GLM-4.7, MiniMax-M2),
DeepSeek-V3.2 and --enable-dp-lm-head (dp_ep_cases.py random_wide_cases).

--family dense draws dense / MoE full-attention launches (Llama, Qwen2.5, Qwen3, Qwen3-MoE, Mixtral, Mistral,
Qwen3-VL, GLM-4.x MoE; EAGLE3 heads) from scripts/oracle/dense_cases.py; without --oracle it runs the shared
oracle for 0.5.11 / 0.5.16 / 0.5.23 and /tmp/oracle-dense (scripts/oracle/oracle_copy.sh) for the others.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, REPO)
from filter_results import drop_reason  # noqa: E402

# startup checks SGLang runs after the pools that the oracle does not execute (as in tests/test_golden_oracle.py)
BEYOND_ORACLE = {"tp_worker", "init_attention_backend", "scheduler_init"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--count", type=int, default=60)
    ap.add_argument("--py", default=None)
    ap.add_argument("--oracle", default=None, help="default /tmp/sglang-oracle-adapted (see --family)")
    ap.add_argument("--family", choices=("hybrid", "dense", "minimax", "swa", "mla", "glm", "dpep", "dpwide"), default="hybrid",
                    help="dense: dense / MoE full-attention launches from scripts/oracle/dense_cases.py; "
                         "minimax: MiniMax-M2 / M2.7 launches (dense_cases.py new_models' random draws); swa: "
                         "hybrid sliding-window launches (gpt-oss) from scripts/oracle/swa_cases.py; mla: "
                         "DeepSeek-V3 / Kimi-K2 / DeepSeek-V3.2 launches from scripts/oracle/mla_cases.py")
    ap.add_argument("--algorithm", default=None,
                    help="draw launches of one speculative algorithm from scripts/oracle/spec_cases/<algorithm>.py")
    args = ap.parse_args()
    py = args.py or os.path.expanduser(f"~/.cache/sglang-oracle/{args.version}/venv/bin/python")
    new_gen = tuple(int(x) for x in args.version.split(".")) >= (0, 5, 14)
    work = tempfile.mkdtemp(prefix="agree-")
    # the cases file lives in the golden folder's place so relative config / draft paths resolve
    folder = os.path.join(REPO, "tests", "golden", "sglang-0.5.16" if new_gen else "sglang-0.5.11")
    cases_path = os.path.join(folder, f".agree-{os.getpid()}.jsonl")
    gen = [sys.executable, os.path.join(HERE, "make_cases_v0516.py"), "cases"] if new_gen else \
        [sys.executable, os.path.join(HERE, "make_cases.py")]
    if args.family in ("dense", "minimax"):
        import dense_cases  # noqa: PLC0415
        folder = os.path.join(dense_cases.GOLDEN, f".agree-{os.getpid()}")  # ../configs, ../drafts resolve
        os.makedirs(folder, exist_ok=True)
        dense_cases.write_drafts()
        cases_path = os.path.join(folder, "cases.jsonl")
        drawn = dense_cases.build(args.version, "random" if args.family == "dense" else "new-random", cases_path,
                                  args.seed, args.count)
        args.oracle = args.oracle or (dense_cases.SHARED_ORACLE if args.version in dense_cases.SHARED_RELEASES
                                      else dense_cases.ADAPTED_ORACLE)
    if args.family == "swa":
        import swa_cases  # noqa: PLC0415
        folder = os.path.join(swa_cases.GOLDEN, f".agree-{os.getpid()}")
        os.makedirs(folder, exist_ok=True)
        cases_path = os.path.join(folder, "cases.jsonl")
        drawn = swa_cases.build(args.version, "random", cases_path, args.seed, args.count)
        args.oracle = args.oracle or swa_cases.ORACLE
    if args.family == "mla":
        import mla_cases  # noqa: PLC0415
        folder = os.path.join(mla_cases.GOLDEN, f".agree-{os.getpid()}")  # ../configs resolves
        os.makedirs(folder, exist_ok=True)
        cases_path = os.path.join(folder, "cases.jsonl")
        drawn = mla_cases.build(args.version, "random", cases_path, args.seed, args.count)
        args.oracle = args.oracle or (mla_cases.SHARED_ORACLE if args.version in mla_cases.SHARED_RELEASES
                                      else mla_cases.ADAPTED_ORACLE)
    if args.family == "glm":  # GLM-4.x EAGLE / NEXTN on its own MTP layer (scripts/oracle/glm_nextn_cases.py)
        import glm_nextn_cases  # noqa: PLC0415
        folder = os.path.join(glm_nextn_cases.GOLDEN, f".agree-{os.getpid()}")  # ../configs resolves
        os.makedirs(folder, exist_ok=True)
        cases_path = os.path.join(folder, "cases.jsonl")
        drawn = glm_nextn_cases.build(cases_path, "random", args.seed, args.count)
        args.oracle = args.oracle or (glm_nextn_cases.SHARED_ORACLE if args.version in glm_nextn_cases.SHARED_RELEASES
                                      else glm_nextn_cases.ADAPTED_ORACLE)
    if args.family in ("dpep", "dpwide"):
        import dp_ep_cases  # noqa: PLC0415
        folder = os.path.join(dp_ep_cases.GOLDEN, f".agree-{os.getpid()}")  # its ../../../../planner paths resolve
        os.makedirs(folder, exist_ok=True)
        cases_path = os.path.join(folder, "cases.jsonl")
        drawn = dp_ep_cases.build(args.version, "random" if args.family == "dpep" else "random-wide", cases_path,
                                  args.seed, args.count)
        args.oracle = args.oracle or dp_ep_cases.ORACLE
    args.oracle = args.oracle or "/tmp/sglang-oracle-adapted"
    if args.algorithm:
        # each algorithm's generator: random_cases(version, seed, count) -> (cases, folder its paths are relative to)
        import importlib  # noqa: PLC0415
        sys.path.insert(0, os.path.join(HERE, "spec_cases"))
        drawn, folder = importlib.import_module(args.algorithm.lower()).random_cases(args.version, args.seed, args.count)
        cases_path = os.path.join(folder, f".agree-{os.getpid()}.jsonl")
    try:
        if args.algorithm or args.family in ("dense", "minimax", "swa", "mla", "glm", "dpep", "dpwide"):
            with open(cases_path, "w") as f:
                for c in drawn:
                    f.write(json.dumps(c) + "\n")
        else:
            subprocess.run([*gen, "--seed", str(args.seed), "--count", str(args.count), "--out", cases_path], check=True)
        cases = [json.loads(x) for x in open(cases_path) if x.strip()]
        cases = [c for c in cases if not c.get("env")]
        with open(cases_path, "w") as f:
            for c in cases:
                f.write(json.dumps(c) + "\n")
        out = subprocess.run([py, os.path.join(args.oracle, "oracle.py"), "--batch", cases_path, "--summary-only"],
                             cwd=folder, capture_output=True, text=True, check=False)
        results = {r["id"]: r["summary"] for r in map(json.loads, out.stdout.splitlines()) if r}
    finally:
        if os.path.exists(cases_path):
            os.remove(cases_path)

    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.errors import BadInput  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415
    from planner.engines.sglang.plan import make_plan  # noqa: PLC0415
    from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary  # noqa: PLC0415

    agree = differ = refused = dropped = beyond = 0
    for c in cases:
        exp = results.get(c["id"])
        if exp is None or drop_reason(exp):
            dropped += 1
            continue
        flags = [os.path.join(folder, f) if f.startswith(("drafts/", "../")) else f for f in c["flags"]]
        name = os.path.join(folder, c["planner_model"]) if c["planner_model"].startswith("../") else c["planner_model"]
        try:
            plan = make_plan(find_profile(c["gpu"]), resolve_model(name), flags, {},
                             c["free_before_gib"], c["free_after_gib"], version=args.version)
        except BadInput as exc:
            refused += 1
            print(f"refused {c['id']}: {exc}")
            continue
        got = build_summary(plan)
        msg = exp.get("error_message") or ""
        if exp.get("error_type") == "SystemExit" and msg.startswith("oracle.py: error:"):
            # 0.5.9's argparse names the running script: the oracle's, or launch_server.py, which the planner
            # prints (tests/test_golden_oracle.py test_0_5_9_case_matches_oracle)
            exp = {**exp, "error_message": "launch_server.py" + msg[len("oracle.py"):]}
        skip = {"spec_reserved_bytes"} if (args.family == "hybrid" and not new_gen
                                          and args.version not in ("0.5.11", "0.5.12")) else set()
        if exp["outcome"] == "ok" and got["stage"] in BEYOND_ORACLE:
            # SGLang's own later asserts, which the oracle does not execute (tests/test_golden_oracle.py)
            skip |= {"outcome", "startup_ok", "stage", "error_type", "error_message"}
            beyond += 1
        elif exp.get("stage") == "cuda_graph_batch_sizes" and got["stage"] in BEYOND_ORACLE:
            # tp_worker's assert (max_running_request is zero) runs before the graphs are captured
            # (srt/managers/tp_worker.py:374-381 @0.5.16); the oracle runs no tp_worker, so it stops at the capture
            skip |= {"outcome", "startup_ok", "stage", "error_type", "error_message", "cuda_graph_capture_max_bs"}
            beyond += 1
        diffs = {k: (exp[k], got[k]) for k in SUMMARY_FIELDS if k not in skip and exp[k] != got[k]}
        if diffs:
            differ += 1
            print(f"DIFFERS {c['id']}: (oracle, planner) {diffs}")
        else:
            agree += 1
    if args.family in ("dense", "minimax", "swa", "mla", "glm", "dpep", "dpwide"):
        os.rmdir(folder)  # after the planner ran: its ../drafts and ../configs paths go through it
    print(f"agree: SGLang {args.version}, seed {args.seed}: {agree} equal, {differ} differ, {refused} refused as "
          f"not modelled, {dropped} dropped (oracle error / artifact); {beyond} stop at a later SGLang assert the "
          "oracle does not run (sizing fields compared)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
