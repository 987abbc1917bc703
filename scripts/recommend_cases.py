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
from planner.engines.sglang.search import Needs, run_search  # noqa: E402

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
# issue 14: the search with the newer speculative algorithms (no draft given: the catalog's head for the model),
# and STANDALONE with a draft the user names; ids spec*, rows a release does not have are skipped
SPEC_MATRIX = [
    ("rtxpro6000", "qwen3.6-27b", Needs(speculative="DFLASH"), [], "0.5.11"),
    ("rtxpro6000", "qwen3.6-27b", Needs(context=131072, concurrency=2, speculative="DFLASH"), [], "0.5.11"),
    ("rtxpro6000", "qwen3.6-27b", Needs(speculative="NGRAM"), [], "0.5.9"),
    ("h100-sxm", "qwen3.5-27b", Needs(context=65536, concurrency=4, speculative="NGRAM"), [], "0.5.9"),
    ("rtxpro6000", "qwen3.6-27b", Needs(speculative="DSPARK"), [], "0.5.16"),
    ("h100-sxm", "qwen3-32b", Needs(speculative="STANDALONE"),
     ["--tp-size", "4", "--speculative-draft-model-path", "qwen3-8b"], "0.5.9"),
]
SEED = ("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4 --mamba-scheduler-strategy extra_buffer "
        "--max-mamba-cache-size 24 --mamba-full-memory-ratio 0.4").split()


def _vt(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def oracle_flags(flags: list[str], drafts_dir: str) -> list[str]:
    """The flags as the oracle takes them: a catalog draft name becomes the folder holding its config.json
    (tests/golden/recommended/drafts/<id>/, written by --write-drafts)."""
    out = list(flags)
    for i, f in enumerate(out[:-1]):
        if f == "--speculative-draft-model-path":
            out[i + 1] = f"{drafts_dir}/{out[i + 1]}"
    return out


def write_drafts(root: Path) -> None:
    """The catalog drafts' configs as the oracle reads them. A reconstructed config (level R) that records no
    context key gets the published head's context the planner plans with (pipeline/dflash.py
    unrecorded_draft_context): the file SGLang reads is the published one, not the record."""
    from planner.catalog.catalog import CONFIG_DIR, resolve_model  # noqa: PLC0415
    from planner.engines.sglang.pipeline.dflash import unrecorded_draft_context  # noqa: PLC0415

    for e in load_catalog():
        if e.draft or e.id in {r[3][r[3].index("--speculative-draft-model-path") + 1] for r in SPEC_MATRIX
                                if "--speculative-draft-model-path" in r[3]}:
            (root / e.id).mkdir(parents=True, exist_ok=True)
            text = (CONFIG_DIR / e.file).read_text()
            published = unrecorded_draft_context(resolve_model(e.id).spec) if e.draft else None
            if published is not None:
                text = json.dumps({**json.loads(text), "max_position_embeddings": published[0]}, indent=2) + "\n"
            (root / e.id / "config.json").write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sglang-version", required=True)
    ap.add_argument("--spec-only", action="store_true", help="only the speculative rows (SPEC_MATRIX)")
    ap.add_argument("--oracle-input", action="store_true",
                    help="write the oracle's batch lines: catalog draft names as ../drafts/<id> folders")
    ap.add_argument("--write-drafts", action="store_true", help="(re)write tests/golden/recommended/drafts/")
    ns = ap.parse_args()
    version = ns.sglang_version
    if ns.write_drafts:
        write_drafts(Path(__file__).resolve().parents[1] / "tests" / "golden" / "recommended" / "drafts")
    files = {e.id: e.file for e in load_catalog()}
    from planner.engines.sglang.cli_flags import translate_flags  # noqa: PLC0415
    from planner.engines.sglang.rules import rules_for  # noqa: PLC0415

    seed = translate_flags(SEED, rules_for(version).flags)  # the strategy flag in this release's spelling
    rows = [(f"rec{i:02d}", g, m, n, []) for i, (g, m, n) in enumerate(MATRIX)]
    rows += [(f"rec{len(MATRIX):02d}", "rtxpro6000", "qwen3.6-27b", Needs(), seed)]
    if ns.spec_only:
        rows = []
    rows += [(f"spec{i:02d}", g, m, n, translate_flags(f, rules_for(version).flags))
             for i, (g, m, n, f, since) in enumerate(SPEC_MATRIX) if _vt(version) >= _vt(since)]
    for rid, gpu_id, model_id, needs, fixed in rows:
        gpu, model = find_profile(gpu_id), resolve_model(model_id)
        res = run_search(gpu, model, fixed, needs=needs, relax=False, version=version)
        if res.recommended is None:
            print(f"# no recommendation for {gpu_id} {model_id} {needs}", file=sys.stderr)
            continue
        p = res.recommended
        print(json.dumps({
            "id": f"{rid}_{gpu_id}_{model_id}", "gpu": gpu_id, "planner_model": model_id,
            "sglang_version": version,
            "needs": asdict(needs), "fixed": fixed,
            "flags": oracle_flags(res.ranked[0].flags, "../drafts") if ns.oracle_input else res.ranked[0].flags,
            "gpu_total_mib": gpu.capacity_mib, "gpu_sm": gpu.compute_capability, "gpu_name": gpu.nvml_names[0],
            "config_json": f"../../../../planner/catalog/configs/{files[model.catalog_id]}",
            "free_before_gib": p.free_before_bytes / 2**30, "free_after_gib": p.free_after_bytes / 2**30,
            "env": {},
        }))


if __name__ == "__main__":
    main()
