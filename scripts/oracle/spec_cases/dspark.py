#!/usr/bin/env python3
"""DSPARK launches for the sizing oracle: SGLang's own code decides every number.

DSPARK (0.5.16+) is a DFLASH-family algorithm: ``_handle_dspark`` (srt/arg_groups/speculative_hook.py:276-420
@0.5.16) forces steps = topk = 1, sets D = gamma + 1 (gamma = --speculative-dspark-block-size, else the draft
config's block_size, else DEFAULT_DSPARK_GAMMA 7), max_running_requests 48; the draft is a separate
DFlash-style model (draft worker built before the pools) whose KV the target's cell pays for (layer ratio in
0.5.16-0.5.17, the draft's own geometry from 0.5.18), and the mamba intermediates are sized for D.
Drafts: tests/golden/spec/dspark/drafts/ (templates, see its README).

    python3 scripts/oracle/spec_cases/dspark.py cases --version 0.5.23 [--seed 1 --count 30]
    python3 scripts/oracle/spec_cases/dspark.py regen --version 0.5.23 [--py VENV_PY] [--oracle DIR]

The oracle copy must carry this repository's adapters (``bash scripts/oracle/oracle_copy.sh DIR``: the 0.5.16
DSPARK draft worker lives in scripts/oracle/adapters/v0_5_16.py). ``random_cases(version, seed, count)`` is
what ``scripts/oracle/agree.py --algorithm DSPARK`` draws from.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE_DIR = os.path.dirname(HERE)
REPO = os.path.normpath(os.path.join(ORACLE_DIR, "..", ".."))
sys.path.insert(0, ORACLE_DIR)
import make_cases as mc  # noqa: E402  (tables only: GPUS, MODELS)
from filter_results import split_kept  # noqa: E402
from make_cases_v0516 import drop_reason, path_draft_params  # noqa: E402

CONFIGS = os.path.join(REPO, "planner", "catalog", "configs")
GOLDEN = os.path.join(REPO, "tests", "golden", "spec", "dspark")
DRAFTS_DIR = os.path.join(GOLDEN, "drafts")
GPUS = dict(mc.GPUS)
# target -> its DSpark draft template (tests/golden/spec/dspark/drafts/)
DRAFT_OF = {"qwen3.6-27b": "qwen3.6-27b-dspark", "qwen3.5-27b": "qwen3.5-27b-dspark",
            "qwen3.6-35b-a3b": "qwen3.6-35b-a3b-dspark", "qwen3-8b": "qwen3-8b-dspark",
            "nemotron-3-nano-30b-a3b": "nemotron-3-nano-30b-a3b-dspark"}
RANDOM_MODELS = ("qwen3.6-27b", "qwen3.5-27b", "qwen3.6-35b-a3b", "qwen3-8b")  # NemotronH: curated only
STRAT = "--mamba-radix-cache-strategy"
CGBS = "--cuda-graph-max-bs-decode"


def _v(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def folder(version: str) -> str:
    return os.path.join(GOLDEN, f"sglang-{version}")


def _draft_gib(draft: str) -> float:
    return path_draft_params(os.path.join(DRAFTS_DIR, draft, "config.json")) * 2 / 2**30


def _case(version, cid, gpu, model, flags, tp=1, draft=True, overhead=0.35, base=None, draft_name=None):
    """One oracle batch line: free after = free before - (target + draft weights) / tp - overhead. Paths are
    relative to ``base`` (the cases file's folder; default the release's golden folder)."""
    base = base or folder(version)
    flags = [str(f) for f in flags]
    d = draft_name or DRAFT_OF[model]
    if draft:
        flags = ["--speculative-draft-model-path", os.path.relpath(os.path.join(DRAFTS_DIR, d), base)] + flags
    flags = ["--speculative-algorithm", "DSPARK"] + flags
    if tp != 1:
        flags += ["--tp-size", str(tp)]
    total, sm, name = GPUS[gpu]
    free_before = total / 1024.0 - (0.9 if tp == 1 else 1.4)
    free_after = free_before - (mc.MODELS[model][1] + (_draft_gib(d) if draft else 0.0)) / tp - overhead
    return {"id": cid, "gpu": gpu, "gpu_total_mib": total, "gpu_sm": sm, "gpu_name": name, "planner_model": model,
            "config_json": os.path.relpath(os.path.join(CONFIGS, mc.MODELS[model][0]), base),
            "flags": flags, "free_before_gib": round(float(free_before), 2),
            "free_after_gib": round(float(free_after), 2), "env": {}}


def _fits(model, gpu, tp):
    return GPUS[gpu][0] / 1024.0 - 1.5 - (mc.MODELS[model][1] + _draft_gib(DRAFT_OF[model])) / tp >= 2.0


def curated(version: str) -> list[dict]:
    """Fixed launches: defaults, each way D is decided, the rejections, per release."""
    c = []
    add = lambda cid, *a, **k: c.append(_case(version, cid, *a, **k))  # noqa: E731
    if _v(version) < (0, 5, 16):  # the boundary: no DSPARK in the registry yet (srt/speculative/spec_info.py @0.5.15)
        add("default_36_27b", "rtxpro6000", "qwen3.6-27b", [])
        add("tp2_h100", "h100-sxm", "qwen3.6-27b", [], tp=2)
        add("dense_8b_l40s", "l40s", "qwen3-8b", ["--max-running-requests", "16"])
        return c
    add("default_36_27b", "rtxpro6000", "qwen3.6-27b", [])
    add("default_35_27b_cfg_no_block", "rtxpro6000", "qwen3.5-27b", [])
    add("default_36_35b", "rtxpro6000", "qwen3.6-35b-a3b", [])
    add("default_qwen3_8b_dense", "rtxpro6000", "qwen3-8b", [])
    add("block3", "rtxpro6000", "qwen3.6-27b", ["--speculative-dspark-block-size", "3"])
    add("block15_mrr8", "rtxpro6000", "qwen3.6-27b", ["--speculative-dspark-block-size", "15", "--max-running-requests", "8"])
    add("ndraft_matches", "rtxpro6000", "qwen3.6-27b", ["--speculative-num-draft-tokens", "8"])
    add("ndraft_mismatch_rejected", "rtxpro6000", "qwen3.6-27b", ["--speculative-num-draft-tokens", "4"])
    add("ndraft_only_no_block_cfg", "rtxpro6000", "qwen3.5-27b", ["--speculative-num-draft-tokens", "5"])
    add("steps3_topk4_overridden", "rtxpro6000", "qwen3.6-27b", ["--speculative-num-steps", "3", "--speculative-eagle-topk", "4"])
    add("block0_rejected", "rtxpro6000", "qwen3.6-27b", ["--speculative-dspark-block-size", "0"])
    add("no_draft_rejected", "rtxpro6000", "qwen3.6-27b", [], draft=False)
    add("pp2_rejected", "rtxpro6000", "qwen3.6-27b", ["--pp-size", "2"])
    add("dp_attn_no_lm_head_rejected", "h200", "qwen3.6-35b-a3b", ["--enable-dp-attention", "--dp-size", "2"], tp=2)
    add("tp2_h100", "h100-sxm", "qwen3.6-27b", [], tp=2)
    add("tp4_h100_35b", "h100-sxm", "qwen3.6-35b-a3b", ["--max-running-requests", "16"], tp=4)
    add("no_buffer_b200", "b200", "qwen3.6-27b", [STRAT, "no_buffer"])
    add("extra_buffer_mrr32_h200", "h200", "qwen3.5-27b", [STRAT, "extra_buffer", "--max-running-requests", "32"])
    add("radix_off_mrr16", "rtxpro6000", "qwen3.6-27b", ["--disable-radix-cache", "--max-running-requests", "16"])
    add("fp8_kv", "rtxpro6000", "qwen3.6-35b-a3b", ["--kv-cache-dtype", "fp8_e4m3"])
    add("mfs_085", "rtxpro6000", "qwen3.6-27b", ["--mem-fraction-static", "0.85"])
    add("page16", "h200", "qwen3.6-27b", ["--page-size", "16"])
    add("ctx32k_cg_bs8", "rtxpro6000", "qwen3.6-27b", ["--context-length", "32768", CGBS, "8"])
    add("dense_8b_mrr64_l40s", "l40s", "qwen3-8b", ["--max-running-requests", "64"])
    add("dense_8b_tp2_rtx4090", "rtx4090", "qwen3-8b", [], tp=2)
    add("rtx5090_35b_tp4", "rtx5090", "qwen3.6-35b-a3b", ["--context-length", "65536"], tp=4)
    add("dflash_head_no_markov_failed", "rtxpro6000", "qwen3.6-27b", [], draft_name="qwen3.6-27b-dflash")
    add("ndraft1_no_block_cfg_rejected", "rtxpro6000", "qwen3.5-27b", ["--speculative-num-draft-tokens", "1"])
    # NemotronH: the target must capture the draft's layers (set_dflash_layers_to_capture, models/nemotron_h.py
    # from 0.5.19); earlier releases fail in init_attention_backends, after the pools (beyond the oracle)
    add("nemotron_nano_h200", "h200", "nemotron-3-nano-30b-a3b", [])
    add("nemotron_nano_tp2_mrr16", "h100-sxm", "nemotron-3-nano-30b-a3b", ["--max-running-requests", "16"], tp=2)
    if _v(version) >= (0, 5, 17):
        add("replayssm_rejected", "rtxpro6000", "qwen3.6-27b", ["--enable-linear-replayssm-spec"])
    if _v(version) >= (0, 5, 18):
        add("unified_memory", "rtxpro6000", "qwen3.6-27b", ["--enable-unified-memory"])
    return c


def random_cases(version: str, seed: int, count: int) -> tuple[list[dict], str]:
    """For scripts/oracle/agree.py: paths relative to tests/golden/spec/dspark/, where the drafts are drafts/<name>
    (agree.py resolves "drafts/..." flags against the folder returned)."""
    return _random(version, seed, count, GOLDEN), GOLDEN


def _random(version: str, seed: int, count: int, base: str) -> list[dict]:
    rng = random.Random(f"dspark-{version}-{seed}")
    out = []
    models = sorted(RANDOM_MODELS)
    while len(out) < count:
        model, gpu, tp = rng.choice(models), rng.choice(sorted(GPUS)), rng.choice((1, 1, 2, 4))
        if not _fits(model, gpu, tp):
            continue
        flags = []
        r = rng.random()
        if r < 0.35:
            flags += ["--speculative-dspark-block-size", rng.choice((1, 3, 5, 7, 11, 15))]
        elif r < 0.45:
            flags += ["--speculative-num-draft-tokens", rng.choice((2, 4, 6, 8, 11))]
        if rng.random() < 0.5:
            flags += ["--max-running-requests", rng.choice((1, 4, 8, 16, 32, 64, 128))]
        if mc.MODELS[model] and model != "qwen3-8b" and rng.random() < 0.6:
            flags += [STRAT, rng.choice(("auto", "no_buffer", "extra_buffer"))]
        if rng.random() < 0.2:
            flags += ["--mem-fraction-static", rng.choice((0.7, 0.8, 0.88))]
        if rng.random() < 0.2:
            flags += ["--context-length", rng.choice((8192, 32768, 131072))]
        if rng.random() < 0.15:
            flags += ["--disable-radix-cache"]
        if rng.random() < 0.15:
            flags += ["--page-size", rng.choice((16, 64))]
        if rng.random() < 0.1:
            flags += ["--kv-cache-dtype", "fp8_e4m3"]
        out.append(_case(version, f"r{seed}_{len(out)}", gpu, model, flags, tp=tp, base=base))
    return out


def _write(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["cases", "regen"])
    ap.add_argument("--version", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=30)
    ap.add_argument("--py", default=None)
    ap.add_argument("--oracle", default="/tmp/oracle-dspark")
    a = ap.parse_args(argv)
    d = folder(a.version)
    os.makedirs(d, exist_ok=True)
    cases_path = os.path.join(d, "cases.jsonl")
    if a.mode == "cases":
        rnd = _random(a.version, a.seed, a.count, d) if _v(a.version) >= (0, 5, 16) else []
        _write(cases_path, curated(a.version) + rnd)
        return 0
    py = a.py or os.path.expanduser(f"~/.cache/sglang-oracle/{a.version}/venv/bin/python")
    cases = [json.loads(x) for x in open(cases_path) if x.strip()]
    out = subprocess.run(["nice", "-n", "10", py, os.path.join(a.oracle, "oracle.py"), "--batch", cases_path,
                          "--summary-only"], cwd=d, capture_output=True, text=True, check=False)
    sys.stderr.write(out.stderr[-1500:])
    results = [json.loads(x) for x in out.stdout.splitlines() if x.strip()]
    for r in results:
        r.pop("elapsed_s", None)
    kept_c, kept_r, dropped = split_kept(cases, results, drop_reason)
    _write(cases_path, kept_c)
    _write(os.path.join(d, "results.jsonl"), kept_r)
    _write(os.path.join(d, "dropped.jsonl"), dropped)
    print(f"{a.version}: {len(kept_c)} kept, {len(dropped)} dropped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
