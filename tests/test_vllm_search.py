"""The search over vLLM's knobs (planner/engines/vllm/search.py): candidates, ranking, following vLLM's "at most M",
and the recommendation that must hold with the estimates off by their residuals (frontend.robust_best).

The search runs against the vLLM oracle's committed answers (tests/vllm_fixture.py) where numbers matter, and
against small synthetic sizers where only the search's own logic is under test (said so at each test)."""

from __future__ import annotations

import pytest
import vllm_scenarios as S
from vllm_fixture import OracleSizer, no_estimates

from planner.catalog.catalog import resolve_model
from planner.engines.vllm.frontend import device_of, robust_best
from planner.engines.vllm.search import (Context, Estimate, _fewer_draft_tokens, concurrency_of, evaluate,
                                         knob_values, reaches, search)
from planner.hardware.profiles import find_profile


@pytest.fixture(scope="module")
def sizer():
    return OracleSizer()


def _ctx(sizer, version="0.34.0", estimator=no_estimates, given=None):
    dev, _ = device_of(find_profile("rtxpro6000"), {})
    return Context(version, resolve_model("qwen3.6-27b").spec, dev, dict(S.Q36_MEASURED if given is None else given),
                   {}, sizer, estimator)


def test_mamba_failure_candidates_start_with_vllms_own_figure(sizer):
    base = evaluate(_ctx(sizer), [])
    assert base.summary["outcome"] == "startup_failed"
    cands = knob_values(base, {"context": None, "concurrency": None}, "0.34.0")
    assert cands[0] == [("--max-num-seqs", "780")]
    opts = {c[0][0] for c in cands}
    assert {"--gpu-memory-utilization", "--max-model-len", "--kv-cache-dtype", "--no-enable-prefix-caching",
            "--enforce-eager", "--max-num-batched-tokens", "--max-cudagraph-capture-size", "--mamba-cache-mode"} <= opts
    assert "--block-size" not in opts  # the hybrid alignment decides Qwen3.6's block size
    # 0.34 already defaults to utilization 1.0: nothing above it is tried
    assert all(float(c[0][1]) < 1.0 for c in cands if c[0][0] == "--gpu-memory-utilization")


def test_ranking_reaches_first_then_least_change(sizer):
    ctx = _ctx(sizer)
    res = search(ctx, evaluate(ctx, []))
    assert res.best is not None and res.best.chosen == ["--max-num-seqs 780"]
    reach = [c.reaches for c in res.ranked]
    assert reach == sorted(reach, reverse=True)  # every candidate that starts comes before every one that does not
    eager = [c for c in res.ranked if c.chosen == ["--enforce-eager"]]
    # --enforce-eager also starts (no FULL cudagraphs: vLLM skips the Mamba check) but costs more than a seqs cap
    assert eager and eager[0].reaches and res.ranked.index(eager[0]) > 0
    failing = [c for c in res.ranked if not c.reaches]
    assert any("Mamba cache blocks" in (c.ev.summary.get("error_message") or "") for c in failing)


def test_need_concurrency_is_reached_at_the_asked_context(sizer):
    ctx = _ctx(sizer)
    flags = ["--max-model-len", "262144", "--max-num-seqs", "32", *S.MTP3]
    base = evaluate(ctx, flags)
    assert concurrency_of(base.summary) == 1
    res = search(ctx, base, need_context=262144, need_concurrency=3)
    best = res.best
    assert best is not None and concurrency_of(best.ev.summary) >= 3
    assert best.ev.summary["max_model_len"] >= 262144
    assert reaches(best.ev.summary, 262144, 3) and not reaches(base.summary, 262144, 3)


def test_reaches():
    ok = {"outcome": "ok", "max_model_len": 32768, "max_num_seqs": 8, "max_concurrency": 12.5}
    assert reaches(ok, 32768, 8) and not reaches(ok, 32768, 9) and not reaches(ok, 65536, None)
    assert not reaches({**ok, "outcome": "startup_failed"}, None, None)
    assert concurrency_of(ok) == 8 and concurrency_of({**ok, "max_num_seqs": 64}) == 12


def _mamba_sizer(limit_of):
    """Synthetic (the search's logic only): vLLM's Mamba check with a block count that depends on max_num_seqs."""
    def size(launch):
        flags = list(launch.flags)
        seqs = int(flags[flags.index("--max-num-seqs") + 1]) if "--max-num-seqs" in flags else 1024
        blocks = limit_of(seqs, launch.measured)
        s = {"outcome": "ok", "max_num_seqs": seqs, "max_model_len": 4096, "max_concurrency": blocks / 10,
             "num_gpu_blocks": blocks, "kv_cache_size_tokens": blocks * 100, "gpu_memory_utilization": 1.0,
             "enable_extensible_kv_cache": True, "cudagraph_mode": "FULL_AND_PIECEWISE"}
        if seqs > blocks:
            s.update(outcome="startup_failed", error_type="ValueError",
                     error_message=f"max_num_seqs ({seqs}) exceeds available Mamba cache blocks ({blocks}). Please "
                                   f"lower max_num_seqs to at most {blocks}")
        return s, []
    return size


def test_follows_vllms_at_most_until_it_starts():
    # synthetic: at 700 sequences the block count drops to 690 (a capture-size step), so vLLM's "at most 700" fails
    # again with "at most 690"; the search follows vLLM's figure instead of falling back to the ladder's 512
    ctx = _ctx(_mamba_sizer(lambda seqs, m: 700 if seqs > 700 else 690))
    res = search(ctx, evaluate(ctx, []))
    tried = {c.chosen[0] for c in res.ranked if len(c.chosen) == 1}
    assert {"--max-num-seqs 700", "--max-num-seqs 690"} <= tried
    assert res.best is not None and res.best.chosen == ["--max-num-seqs 690"]


def test_recommendation_must_hold_on_the_pessimistic_side():
    # synthetic: estimates with a residual; the block count falls by 50 when they are raised by it
    def est(ctx, launch):
        return {"non_torch_gib": Estimate(1.0, "test", 0.5, "sm12x"), "peak_activation_gib": Estimate(2.0, "test")}
    size = _mamba_sizer(lambda seqs, m: 780 - (50 if m.non_torch_gib > 1.2 else 0))
    ctx = _ctx(size, estimator=est, given={})
    res = search(ctx, evaluate(ctx, []))
    assert res.best.chosen == ["--max-num-seqs 780"]  # the point estimate's best ...
    best, how = robust_best(ctx, res, None, None)
    assert best is not None and int(best.chosen[0].split()[1]) <= 730  # ... is not what is recommended
    assert "raised by its residual" in how


def test_three_changes_when_one_or_two_do_not_reach(sizer):
    """Defaults fail the Mamba check; 8 requests of 131,072 tokens need vLLM's cap on sequences, an fp8 KV cache,
    the shorter context and more blocks (the oracle's answers)."""
    o = S.q36_need_8_at_128k_034(sizer)
    r = o.json["recommendation"]
    assert r["found"] and r["max_model_len"] == 131072 and min(r["max_num_seqs"], int(r["max_concurrency"])) >= 8
    assert "--kv-cache-dtype fp8" in r["changes"] and "--max-model-len 131072" in r["changes"]
    assert 3 <= len(r["changes"]) <= 4
    for a in r["alternatives"]:
        assert a["max_model_len"] >= 131072 and a["max_concurrency"] >= 8


def test_fewer_draft_tokens():
    assert _fewer_draft_tokens('{"method": "mtp", "num_speculative_tokens": 3}') == \
        '{"method": "mtp", "num_speculative_tokens": 1}'
    assert _fewer_draft_tokens('{"method": "mtp", "num_speculative_tokens": 1}') is None
    assert _fewer_draft_tokens("not json") is None


def test_a_verdict_the_estimates_error_could_flip_says_so():
    # synthetic (the front end's logic only): 780 blocks on the point estimates, 730 with them raised by the residual
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.engines.interface import PlanRequest  # noqa: PLC0415
    from planner.engines.vllm.frontend import FRONTEND  # noqa: PLC0415

    def est(ctx, launch):
        return {"non_torch_gib": Estimate(1.0, "test", 0.5, "public logs of sm12x")}
    size = _mamba_sizer(lambda seqs, m: 780 - (50 if m.non_torch_gib > 1.2 else 0))
    o = FRONTEND.plan(PlanRequest(find_profile("rtxpro6000"), resolve_model("qwen3.6-27b"), ("--max-num-seqs", "760"),
                                  {}, "0.34", {}), sizer=size, estimator=est)
    assert o.verdict == "fits" and o.json["confidence"]["level"] == "low"
    assert "exceeds available Mamba cache blocks (730)" in o.json["confidence"]["note"]
    assert "LOW CONFIDENCE" in o.text.split("\n\n")[0]  # under the verdict, before the first section
