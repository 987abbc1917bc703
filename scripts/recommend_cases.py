"""Write oracle batch lines for the planner's recommendations (GPUs x models x needs).

    python scripts/recommend_cases.py --sglang-version 0.5.11 > tests/golden/recommended/sglang-0.5.11/cases.jsonl
    $PY ../shared/tools/sglang-oracle/oracle.py --batch tests/golden/recommended/sglang-0.5.11/cases.jsonl \
        --summary-only > tests/golden/recommended/sglang-0.5.11/results.jsonl
    (and the same with 0.5.16 and the oracle venv built for 0.5.16)

Each line carries what the oracle needs (flags, GPU total/SM, free memory before/after load,
config_json relative to the output folder) plus the planner's own inputs (gpu, planner_model,
needs), so tests/test_recommendations.py can re-run the search and compare.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.catalog.catalog import load_catalog, resolve_model  # noqa: E402
from planner.hardware.profiles import find_profile  # noqa: E402
from planner.search import Needs, run_search  # noqa: E402

MATRIX = [
    ("rtxpro6000", "qwen3.6-27b", Needs()),
    ("rtxpro6000", "qwen3.6-27b", Needs(speculative="EAGLE")),
    ("rtxpro6000", "qwen3.6-27b", Needs(context=131072, concurrency=2, speculative="EAGLE")),
    ("rtxpro6000", "qwen3.6-27b", Needs(context=65536, concurrency=8, allow_bf16_ssm=True, allow_fp8_kv=True)),
    ("rtxpro6000", "qwen3.6-35b-a3b", Needs(context=65536, concurrency=4)),
    ("h100-sxm", "qwen3.5-9b", Needs(context=65536, concurrency=4)),
    ("h100-sxm", "qwen3.5-27b", Needs(objective="kv-tokens")),
    ("h200", "qwen3.6-27b", Needs(speculative="NEXTN", objective="headroom")),
    ("b200", "qwen3-next-80b-a3b", Needs(context=32768, concurrency=8)),
    ("rtx5090", "qwen3.5-9b", Needs(context=16384, concurrency=2)),
    ("a100-80gb", "qwen3.5-9b", Needs(speculative="EAGLE", context=8192, concurrency=16)),
    ("l40s", "qwen3.5-9b", Needs(context=32768, concurrency=2, allow_fp8_kv=True)),
]
SEED = ("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4 --mamba-scheduler-strategy extra_buffer "
        "--max-mamba-cache-size 24 --mamba-full-memory-ratio 0.4").split()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sglang-version", required=True)
    version = ap.parse_args().sglang_version
    files = {e.id: e.file for e in load_catalog()}
    from planner.engines.sglang.cli_flags import translate_flags  # noqa: PLC0415
    from planner.engines.sglang.rules import rules_for  # noqa: PLC0415

    seed = translate_flags(SEED, rules_for(version).flags)  # the strategy flag in this release's spelling
    rows = [(g, m, n, []) for g, m, n in MATRIX] + [("rtxpro6000", "qwen3.6-27b", Needs(), seed)]
    for i, (gpu_id, model_id, needs, fixed) in enumerate(rows):
        gpu, model = find_profile(gpu_id), resolve_model(model_id)
        res = run_search(gpu, model, fixed, needs=needs, relax=False, version=version)
        if res.recommended is None:
            print(f"# no recommendation for {gpu_id} {model_id} {needs}", file=sys.stderr)
            continue
        p = res.recommended
        print(json.dumps({
            "id": f"rec{i:02d}_{gpu_id}_{model_id}", "gpu": gpu_id, "planner_model": model_id,
            "sglang_version": version,
            "needs": asdict(needs), "fixed": fixed, "flags": res.ranked[0].flags,
            "gpu_total_mib": gpu.capacity_mib, "gpu_sm": gpu.compute_capability, "gpu_name": gpu.nvml_names[0],
            "config_json": f"../../../../planner/catalog/configs/{files[model.catalog_id]}",
            "free_before_gib": p.free_before_bytes / 2**30, "free_after_gib": p.free_after_bytes / 2**30,
            "env": {},
        }))


if __name__ == "__main__":
    main()
