"""vLLM 0.33.0 / 0.34.0's KV-cache sizing, field by field against the vLLM oracle (vLLM's own code on CPU).

Every committed golden case (tests/golden/vllm/<release>/<family>/, made by scripts/oracle/vllm_cases.py; see the
README there) is sized by planner/engines/vllm/sizing.size on the VllmConfig vLLM resolved (read back from the
oracle's summary) and must agree on every summary field but the meta model's weight bytes. Cases vLLM rejects at
argument resolution belong to config.resolve's tests; cases the planner refuses by name are listed in REFUSED (any
other refusal, and any listed case that is no longer refused, fails).
"""

from __future__ import annotations

import pytest

from planner.engines.vllm.sizing import size
from planner.errors import BadInput
from vllm_golden import GOLDEN, compare, config_from_summary, launch_from_case, load_set

LANDED = ("dense", "moe", "gdn", "mamba2", "swa", "chunked", "mla")  # the families whose goldens agree exactly (the others are refused by name)
SETS = sorted((p.parent.parent.name, p.parent.name, p.stem) for p in GOLDEN.glob("*/*/*.jsonl")
              if not p.stem.endswith("_results") and p.parent.name in LANDED)
# (release, family, case id): what is not modelled, refused by name
REFUSED = {
    ("0.33.0", "moe", "moe-r10"),  # FP8 MoE checkpoint on SM 8.0: vLLM fails at load_model
    ("0.34.0", "moe", "moe-r13"),
    ("0.34.0", "moe", "moe-r16"),
    ("0.33.0", "moe", "moe-ngram-r6"),
    ("0.33.0", "moe", "moe-ngram-r10"),
    ("0.33.0", "gdn", "gdn-r0"),  # MTP with pipeline parallelism (the drafter's stage)
    ("0.33.0", "gdn", "gdn-r16"),
    ("0.34.0", "gdn", "gdn-r1"),
    ("0.34.0", "gdn", "gdn-b200-r7"),  # the same on B200
    ("0.34.0", "gdn", "gdn-b200-r9"),
    ("0.34.0", "gdn", "gdn-b200-r14"),
    ("0.34.0", "gdn", "gdn-b300-r0"),
    ("0.33.0", "dense", "dense-eagle3-r6"),  # an EAGLE3 drafter with pipeline parallelism (its stage)
    ("0.33.0", "dense", "dense-eagle3-b200-r3"),
    ("0.33.0", "dense", "dense-eagle3-b200-r10"),
    ("0.33.0", "dense", "dense-eagle3-b200-r12"),
    ("0.33.0", "dense", "dense-eagle3-b200-r13"),
    ("0.34.0", "dense", "dense-eagle3-r1"),
    ("0.34.0", "dense", "dense-eagle3-r4"),
    ("0.34.0", "dense", "dense-eagle3-r6"),
    ("0.34.0", "dense", "dense-eagle3-r11"),
    ("0.34.0", "dense", "dense-eagle3-b200-r6"),
    ("0.34.0", "dense", "dense-eagle3-b200-r13"),
}


def _cases():
    for version, family, name in SETS:
        for case, theirs in load_set(version, family, name):
            if theirs["outcome"] in ("rejected", "oracle_error", "input_error"):
                continue
            yield pytest.param(version, family, case, theirs, id=f"{version}-{family}-{case['id']}")


@pytest.mark.parametrize("version,family,case,theirs", list(_cases()))
def test_golden(version, family, case, theirs):
    launch = launch_from_case(case, version)
    cfg = config_from_summary(theirs, case)
    if (version, family, case["id"]) in REFUSED:
        with pytest.raises(BadInput):
            size(launch, cfg)
        return
    mine = size(launch, cfg).summary
    assert compare(mine, theirs) == []


def test_sets_present():
    """Both releases, the families landed so far, curated and random sets, and a B200 (SM 10.0) set each."""
    have = {(v, f) for v, f, _ in SETS}
    for v in ("0.33.0", "0.34.0"):
        for f in LANDED:
            assert (v, f) in have
            assert (v, f, "b200") in SETS
    assert len(list(_cases())) >= 480


def test_refusal_without_weights():
    case, theirs = load_set("0.34.0", "dense", "cases")[0]
    launch = launch_from_case(dict(case, weights_gib=None), "0.34.0")
    launch = type(launch)(**{**launch.__dict__, "measured": type(launch.measured)(
        **{**launch.measured.__dict__, "weights_gib": None})})
    with pytest.raises(BadInput, match="weights_gib"):
        size(launch, config_from_summary(theirs, case))


def test_log_lines():
    """The capacity line as vLLM prints it (v1/core/kv_cache_utils.py:1168-1175 @0.34.0)."""
    case, theirs = next((c, t) for c, t in load_set("0.34.0", "dense", "cases") if t["outcome"] == "ok")
    res = size(launch_from_case(case, "0.34.0"), config_from_summary(theirs, case))
    line = res.log[-1]
    assert line.startswith(f"GPU KV cache size: {theirs['kv_cache_size_tokens']:,} tokens, Maximum concurrency for "
                           f"{theirs['max_model_len']:,} tokens per request: ")
    assert line.endswith(f"{theirs['max_concurrency']:.2f}x")


# ---- the oracle's own reference cases (its examples/, with vLLM's log): summary and log lines ----------------------

REFERENCE = GOLDEN / "reference"


def _reference():
    import json
    import os

    cases = [json.loads(line) for line in (REFERENCE / "cases.jsonl").read_text().splitlines() if line.strip()]
    for version in ("0.33.0", "0.34.0"):
        res = {r["id"]: r for r in (json.loads(line) for line in
                                    (REFERENCE / f"results-{version}.jsonl").read_text().splitlines() if line)}
        for c in cases:
            model = c.get("model") or os.path.basename([f for f in c["flags"] if not f.startswith("-")][0])
            yield pytest.param(version, dict(c, model=model), res[c["id"]], id=f"{version}-{c['id']}")


@pytest.mark.parametrize("version,case,ref", list(_reference()))
def test_reference_case(version, case, ref):
    """The reference cases ran on the meta model's weights: the same bytes given as weights_gib agree on every
    field but the weights' source, and every line size() logs is one vLLM logged."""
    theirs = ref["summary"]
    case = dict(case, weights_gib=theirs["weights_bytes_meta"] / (1 << 30))
    res = size(launch_from_case(case, version), config_from_summary(theirs, case))
    assert [d for d in compare(res.summary, theirs) if not d.startswith("weights_source")] == []
    for line in res.log:
        assert any(line in theirs_line for theirs_line in ref["vllm_log"]), line
