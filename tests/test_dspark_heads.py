"""A DSPARK / DFLASH head's weights are counted once (planner/engines/sglang/pipeline/dflash.py ``head_weights``):
the draft worker's load before sizing, the DFLASH draft weights and the catalog's draft size all read it, and
its DSpark parts equal what SGLang's own modules hold (tests/golden/spec/dspark/heads-<version>.json, made by
scripts/oracle/dspark_head_bytes.py from each release's srt/models/dspark.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.catalog.drafts import head_weight_bytes, resolve_draft
from planner.catalog.draft_heads import head_weights
from planner.engines.sglang.pipeline.dflash import draft_weight_bytes
from planner.engines.sglang.pipeline.headroom import draft_load_before_sizing

ROOT = Path(__file__).resolve().parent.parent
HEADS = sorted((ROOT / "tests" / "golden" / "spec" / "dspark").glob("heads-*.json"))
CAP = {"SGLANG_RAGGED_VERIFY_MODE": "cap-accept"}
CASES = [(f.stem[len("heads-"):], cfg, row) for f in HEADS for cfg, row in json.loads(f.read_text())["heads"].items()
         if row["static"]["markov"] is not None]


def test_the_golden_heads_cover_every_markov_head_type_and_four_releases():
    assert {v for v, _, _ in CASES} == {"0.5.16", "0.5.18", "0.5.21", "0.5.23"}
    kinds = {json.loads((ROOT / c).read_text()).get("markov_head_type") for _, c, _ in CASES}
    assert kinds == {"vanilla", "gated", "rnn"}


@pytest.mark.parametrize(("version", "config", "sglang"), CASES, ids=[f"{v}-{Path(c).parent.name}" for v, c, _ in CASES])
def test_dspark_heads_equal_sglangs_own_modules(version, config, sglang):
    spec = resolve_model(str(ROOT / config)).spec
    trunk = head_weights(spec, 1, None, dspark=False)
    default, cap = head_weights(spec, 1, None, dspark=True), head_weights(spec, 1, CAP, dspark=True)
    assert (default.params - trunk.params) * default.dtype_bytes == sglang["static"]["markov"]["torch.bfloat16"]
    assert cap.params == default.params  # the Markov head does not depend on the mode
    # no confidence head by default (SGLANG_RAGGED_VERIFY_MODE "static"); float32 weight, bias and buffer otherwise
    assert sglang["static"]["confidence"] == {} and default.f32_bytes == 0
    assert cap.f32_bytes == sglang["cap-accept"]["confidence"]["torch.float32"]


@pytest.mark.parametrize("draft", ["qwen3.8-27b-dspark", "qwen3.6-27b-dflash", "qwen3.5-27b-dflash",
                                   str(ROOT / "tests/golden/spec/dspark/drafts/qwen3.6-35b-a3b-dspark")])
def test_the_three_callers_agree_to_the_byte(draft):
    spec = resolve_draft(draft).spec
    for env in (None, CAP):
        catalog, _ = head_weight_bytes(spec, env)
        for tp in (1, 2, 4):
            load, _ = draft_load_before_sizing(spec, spec, tp, env)
            assert load == draft_weight_bytes(spec, tp, env)[0] == head_weights(spec, tp, env).per_gpu_bytes
        assert catalog == draft_load_before_sizing(spec, spec, 1, env)[0] == head_weights(spec, 1, env).total_bytes


def test_markov_and_confidence_heads_are_whole_on_every_gpu():
    """plain nn.Embedding / nn.Linear modules (srt/models/dspark.py:198-199, 437 @0.5.23): only the trunk's
    attention and MLP shard over TP, so tp 2 saves exactly half of those and nothing of the heads"""
    spec = resolve_draft("qwen3.8-27b-dspark").spec
    one, two = head_weights(spec, 1, CAP), head_weights(spec, 2, CAP)
    trunk1, trunk2 = head_weights(spec, 1, dspark=False), head_weights(spec, 2, dspark=False)
    assert one.params == two.params  # the whole head
    assert one.params_per_gpu - two.params_per_gpu == trunk1.params_per_gpu - trunk2.params_per_gpu > 0
    assert one.f32_bytes == two.f32_bytes == (5120 + 256 + 1 + 1) * 4
