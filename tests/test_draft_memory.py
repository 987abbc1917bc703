"""Draft memory under speculative decoding, in SGLang's order, per release (issue 10, item 3).

<= 0.5.13: the draft worker loads after the target's pools are sized, so its MTP layer and its transient
embedding / LM head are post-pool needs. 0.5.14+: the draft worker loads first (managers/scheduler.py:846-853
@0.5.16) and the pools are sized from the free memory after it (mem_cache/kv_cache_configurator.py:1527-1548
@0.5.16): the draft's whole load (MTP layer + its own embedding and LM head, freed only in init_lm_head,
speculative/eagle_worker_v2.py:181-196, 307-345 @0.5.16) is taken off before sizing and listed nowhere else.
"""

from __future__ import annotations

import planner
from planner.catalog.catalog import resolve_model
from planner.engines.sglang.check import check
from planner.engines.sglang.pipeline.headroom import draft_embed_head_bytes, draft_load_before_sizing
from planner.hardware.profiles import find_profile
from planner.logs import parse_log
from planner.engines.sglang.plan import GIB, mtp_weight_bytes

SPEC = ("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4 --max-running-requests 8")


def _draft_lines(plan):
    # the draft's weights after the pools (the draft's CUDA graphs are a post-pool need of every release)
    return [n for n in plan.needs if "draft" in n.label and "CUDA graph" not in n.label]


def test_mtp_draft_load_is_layer_plus_own_embedding_and_head():
    spec = resolve_model("qwen3.6-27b").spec
    # 2 tensors x vocab 248,320 x hidden 5,120 x 2 B = 4.74 GiB, the figure of the 0.5.16 log in issue 10
    assert draft_embed_head_bytes(spec, 1) == 2 * 248320 * 5120 * 2
    total, how = draft_load_before_sizing(spec, None, 1)
    assert total == mtp_weight_bytes(spec) + 2 * 248320 * 5120 * 2
    assert abs(total / GIB - 5.53) < 0.01, total / GIB  # 0.79 GiB layer + 4.74 GiB embedding / LM head
    half, _ = draft_load_before_sizing(spec, None, 2)
    assert abs(half - total / 2) <= 1
    assert "MTP layer" in how and "before the pools" in how


def test_0_5_16_takes_the_whole_draft_load_before_sizing_and_lists_it_nowhere_else():
    p = planner.plan("rtxpro6000", "qwen3.6-27b", SPEC, sglang_version="0.5.16")
    base = planner.plan("rtxpro6000", "qwen3.6-27b", "--max-running-requests 8", sglang_version="0.5.16")
    spec = resolve_model("qwen3.6-27b").spec
    assert base.free_after_bytes - p.free_after_bytes == draft_load_before_sizing(spec, None, 1)[0]
    assert not _draft_lines(p), [n.label for n in p.needs]  # not counted twice after the pools
    assert any(a.name == "draft worker's load per GPU" for a in p.assumptions)


def test_0_5_11_loads_the_draft_after_the_pools():
    p = planner.plan("rtxpro6000", "qwen3.6-27b", SPEC, sglang_version="0.5.11")
    base = planner.plan("rtxpro6000", "qwen3.6-27b", "--max-running-requests 8", sglang_version="0.5.11")
    assert p.free_after_bytes == base.free_after_bytes  # nothing of the draft before sizing
    assert not any("draft" in a.name for a in p.assumptions)
    if p.needs:  # when the pools exist, the draft's weights are post-pool needs
        labels = [n.label for n in _draft_lines(p)]
        assert labels == ["draft MTP weights", "draft embed + lm_head (transient)"]


# A 0.5.16-shaped excerpt (synthetic numbers; the line formats are SGLang's, model_runner.py:904-980 @0.5.16):
# the target's load, then the draft worker's own load, then the pools.
_LOG = """\
[2026-01-01 00:00:01 TP0] Load weight begin. avail mem=94.20 GB
[2026-01-01 00:00:40 TP0] Load weight end. elapsed=39.00 s, type=Qwen3_5ForConditionalGeneration, dtype=torch.bfloat16, avail mem=43.20 GB, mem usage=51.00 GB.
[2026-01-01 00:00:41 TP0] Load weight begin. avail mem=43.20 GB
[2026-01-01 00:00:45 TP0] Load weight end. elapsed=4.00 s, type=Qwen3_5ForCausalLMMTP, dtype=torch.bfloat16, avail mem=37.67 GB, mem usage=5.53 GB.
"""


def test_plan_check_sizes_from_the_draft_workers_load_end_on_0_5_14_plus():
    gpu = find_profile("rtxpro6000")
    flags = SPEC.split()
    res = check(parse_log(_LOG), gpu, "qwen3.6-27b", flags, version="0.5.16")
    assert res.plan is not None
    assert abs(res.plan.free_after_bytes / GIB - 37.67) < 1e-6
    assert any("draft worker's 'Load weight end'" in n for n in res.notes)
    old = check(parse_log(_LOG), gpu, "qwen3.6-27b", flags, version="0.5.11")
    assert abs(old.plan.free_after_bytes / GIB - 43.20) < 1e-6  # the draft loads after sizing there
