"""The flag search under DP attention (+ EP / DeepEP): its fast evaluation equals ``plan`` (make_plan) on the same
flags, one attention-DP rank's numbers, on the releases DP attention is modelled for (0.5.16, 0.5.23).

What it checks: every point of a randomized grid (each categorical combination the search tries, every numeric
axis) against make_plan, and every ranked candidate the search returns (the recommendation and its runner-ups)
against make_plan on the candidate's flags; the branch and bound's ranking equals the exhaustive one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.catalog.catalog import resolve_model
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.search import MFS_VALUES, RUNNING, FlagBase, Needs, evaluate_combo, point_flags, run_search
from planner.engines.sglang.summary import build_summary
from planner.hardware.profiles import find_profile

DP = "--tp-size 8 --dp-size {d} --enable-dp-attention"
LAUNCHES = [DP.format(d=8), DP.format(d=4) + " --ep-size 8", DP.format(d=2) + " --ep-size 8",
            DP.format(d=8) + " --ep-size 8 --moe-a2a-backend deepep",
            DP.format(d=2) + " --ep-size 8 --moe-a2a-backend deepep",
            DP.format(d=8) + " --ep-size 8 --moe-a2a-backend deepep --deepep-mode low_latency"]
COMBOS = [[], ["--chunked-prefill-size", "4096"], ["--page-size", "64"], ["--disable-overlap-schedule"],
          ["--kv-cache-dtype", "fp8_e4m3"], ["--context-length", "32768"]]
VERSIONS = ("0.5.16", "0.5.23")


def _graph_flag(version: str) -> str:
    return "--cuda-graph-max-bs" if version == "0.5.16" else "--cuda-graph-max-bs-decode"


@st.composite
def dp_points(draw):
    version = draw(st.sampled_from(VERSIONS))
    launch = draw(st.sampled_from(LAUNCHES)).split()
    combo = list(draw(st.sampled_from(COMBOS + [[_graph_flag(version), "64"], [_graph_flag(version), "128"]])))
    k = draw(st.integers(1, 8))
    pts = {"mfs": np.array([draw(st.sampled_from(MFS_VALUES)) for _ in range(k)], dtype=np.float64),
           "ratio": np.full(k, np.nan), "msize": np.full(k, -1, dtype=np.int64),
           "run": np.array([draw(st.sampled_from(RUNNING)) for _ in range(k)], dtype=np.int64)}
    fb = draw(st.sampled_from([None, 0.7, 0.95]))
    return version, launch, combo, pts, fb


@settings(max_examples=60, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])  # the same examples every run: CI never passes by luck
@given(dp_points())
def test_dp_evaluation_equals_plan(point):
    _points_equal_plan(*point)


@pytest.mark.parametrize("version", ("0.5.16", "0.5.21", "0.5.23"))
def test_a_cap_below_the_dp_width_is_divided_as_the_plan_divides_it(version):
    """--max-running-requests below D: R // D = 0 per worker on 0.5.16-0.5.22 (SGLang's tp_worker refuses it),
    max(1, R // D) on 0.5.23. The search divided by the 0.5.23 rule on 0.5.20-0.5.22 and called those points fits."""
    grid = {"mfs": np.full(4, np.nan), "ratio": np.full(4, np.nan), "msize": np.full(4, -1, dtype=np.int64),
            "run": np.array([1, 4, 7, 64], dtype=np.int64)}
    _points_equal_plan(version, DP.format(d=8).split(), [], grid, None)


def _points_equal_plan(version, launch, combo, grid, fb, model_name="deepseek-v3"):
    """Every point of ``grid`` on ``launch + combo``: the search's evaluation equals make_plan on its flags."""
    gpu, model = find_profile("h200"), resolve_model(model_name)
    plan0 = make_plan(gpu, model, launch, None, version=version)
    if fb is not None:
        plan0 = make_plan(gpu, model, launch, None, plan0.free_before_bytes / 2**30,
                          plan0.free_after_bytes * fb / 2**30, version=version)
    free = (plan0.free_before_bytes / 2**30, plan0.free_after_bytes / 2**30)
    combo = launch + combo
    ev = evaluate_combo(plan0, model, combo, grid, None, Needs(), 32768,
                        FlagBase(plan0.rules.flags, model.spec.name, launch))
    for i in range(grid["mfs"].size):
        flags = point_flags(combo, grid["mfs"][i], grid["ratio"][i], grid["msize"][i], grid["run"][i])
        p = make_plan(gpu, model, flags, None, *free, version=version)
        s = build_summary(p)
        if p.args is None or ev.args is None:
            assert ev.args is None and p.args is None, flags
            continue
        o = ev.out
        if s["outcome"] == "ok":
            assert bool(o["ok"][i]), (flags, p.stage)
            assert int(o["pool_total"][i]) == s["pool_total_bytes"], flags
            assert int(o["headroom"][i]) == p.headroom_bytes, flags
            assert int(o["need_total"][i]) == sum(x.bytes for x in p.needs), flags
            assert bool(o["left"][i] >= 0) == (p.verdict == "fits"), flags
            assert int(o["n"][i]) == s["max_total_num_tokens"] and int(o["r"][i]) == s["max_running_requests"], flags
        else:
            assert not bool(o["ok"][i]), (flags, s["stage"], p.error_message)


def _check_ranked(res, gpu, model, version, d):
    assert res.ranked, res.skipped_why
    for c in res.ranked:  # the recommendation and every runner-up, planned in full
        p = make_plan(gpu, model, c.flags, None, version=version)
        assert p.verdict == "fits", (c.flags, p.stage, p.error_message)
        assert p.args.attn_dp_size == d
        assert c.kv_tokens == p.profile.max_total_num_tokens and c.running == p.profile.max_running_requests, c.flags
        assert c.headroom_left == p.headroom_bytes - sum(x.bytes for x in p.needs), c.flags
        assert c.longest == min(p.args.context_len - 1, p.profile.max_total_num_tokens - 1)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("launch,d", [(DP.format(d=8), 8), (DP.format(d=4) + " --ep-size 8", 4),
                                      (DP.format(d=2) + " --ep-size 8 --moe-a2a-backend deepep", 2)])
def test_dp_ranked_candidates_equal_plan_and_pruning_is_exact(version, launch, d):
    gpu, model = find_profile("h200"), resolve_model("deepseek-v3")
    needs = Needs(context=65536, concurrency=16)
    res = run_search(gpu, model, launch.split(), None, needs, top=5, relax=False, version=version, prune=True)
    _check_ranked(res, gpu, model, version, d)
    full = run_search(gpu, model, launch.split(), None, needs, top=5, relax=False, version=version)
    assert [c.flags for c in full.ranked] == [c.flags for c in res.ranked]
    # the launch's needed concurrency is met over the D ranks: one rank holds ceil(16 / D) requests of 64k
    assert all(c.concurrency * d >= 16 for c in res.ranked)
    assert res.feasible <= full.feasible and full.feasible > 0


def test_deepep_dispatch_limit_is_searched_around():
    """DeepEP's low-latency dispatch refuses the default decode capture (512 per rank > 128): SGLang fails the
    launch, and the search's recommendation lowers the decode graph's max bs so that it boots."""
    gpu, model = find_profile("h200"), resolve_model("deepseek-v3")
    launch = (DP.format(d=8) + " --ep-size 8 --moe-a2a-backend deepep").split()
    assert make_plan(gpu, model, launch, None, version="0.5.23").stage == "cuda_graph_capture"
    res = run_search(gpu, model, launch, None, Needs(), top=3, relax=False, version="0.5.23", prune=True)
    _check_ranked(res, gpu, model, "0.5.23", 8)
    assert "--cuda-graph-max-bs-decode" in res.ranked[0].chosen or "--max-running-requests" in res.ranked[0].chosen


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("launch", LAUNCHES)
@pytest.mark.parametrize("needs", [Needs(), Needs(context=131072, concurrency=8, objective="kv-tokens"),
                                   Needs(context=16384, concurrency=64, objective="headroom")])
def test_dp_pruning_equals_the_exhaustive_search(version, launch, needs):
    """The branch and bound's bounds hold per rank (the padded capture lists give no graph floor)."""
    gpu, model = find_profile("h200"), resolve_model("deepseek-v3")
    pruned = run_search(gpu, model, launch.split(), None, needs, top=3, relax=False, version=version, prune=True)
    full = run_search(gpu, model, launch.split(), None, needs, top=3, relax=False, version=version)
    assert [c.flags for c in pruned.ranked] == [c.flags for c in full.ranked]
    assert [c.headroom_left for c in pruned.ranked] == [c.headroom_left for c in full.ranked]


# the DP-attention modes widened after the search learnt DP (dpwide): GQA MoE, the own-MTP draft, DSA, the DP LM head,
# and the releases 0.5.20-0.5.22; each ranked candidate equal to make_plan, pruning equal to the exhaustive search
WIDE = [("qwen3-235b-a22b", "--tp-size 8 --dp-size 2 --enable-dp-attention", 2, ("0.5.16", "0.5.21", "0.5.23")),
        ("qwen3-30b-a3b", "--tp-size 4 --dp-size 4 --enable-dp-attention", 4, ("0.5.16", "0.5.23")),
        ("glm-4.7", "--tp-size 8 --dp-size 4 --enable-dp-attention", 4, ("0.5.21",)),
        ("deepseek-v3", "--tp-size 8 --dp-size 4 --enable-dp-attention --speculative-algorithm NEXTN", 4,
         ("0.5.16", "0.5.23")),
        ("deepseek-v3.2", "--tp-size 8 --dp-size 8 --enable-dp-attention", 8, ("0.5.22",)),
        ("deepseek-v3", "--tp-size 8 --dp-size 8 --enable-dp-attention --enable-dp-lm-head", 8, ("0.5.23",)),
        # DeepEP with the own MTP layer (deepspec), and DeepEP on 0.5.20-0.5.22
        ("deepseek-v3", "--tp-size 8 --dp-size 8 --enable-dp-attention --moe-a2a-backend deepep --speculative-algorithm "
         "EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 --speculative-num-draft-tokens 2 "
         "--max-running-requests 1024", 8, ("0.5.23",)),
        ("deepseek-v3", "--tp-size 8 --dp-size 4 --enable-dp-attention --moe-a2a-backend deepep --speculative-algorithm "
         "NEXTN", 4, ("0.5.16", "0.5.22")),
        ("deepseek-v3", "--tp-size 8 --dp-size 8 --enable-dp-attention --moe-a2a-backend deepep", 8, ("0.5.21",)),
        # PD roles with DP attention (pddp)
        ("deepseek-v3", "--tp-size 8 --dp-size 8 --enable-dp-attention --disaggregation-mode decode "
         "--speculative-algorithm NEXTN", 8, ("0.5.16",)),
        ("deepseek-v3", "--tp-size 8 --dp-size 4 --enable-dp-attention --disaggregation-mode prefill", 4, ("0.5.21",)),
        ("qwen3-235b-a22b", "--tp-size 8 --dp-size 2 --enable-dp-attention --disaggregation-mode decode", 2,
         ("0.5.23",))]


@pytest.mark.parametrize("name,launch,d,version", [(n, la, d, v) for n, la, d, vs in WIDE for v in vs])
def test_dp_search_on_the_wider_modes_equals_plan(name, launch, d, version):
    gpu, model = find_profile("h200"), resolve_model(name)
    needs = Needs(context=32768, concurrency=16)
    res = run_search(gpu, model, launch.split(), None, needs, top=5, relax=False, version=version, prune=True)
    _check_ranked(res, gpu, model, version, d)
    full = run_search(gpu, model, launch.split(), None, needs, top=5, relax=False, version=version)
    assert [c.flags for c in full.ranked] == [c.flags for c in res.ranked]


@pytest.mark.parametrize("version", ("0.5.16", "0.5.23"))
def test_dp_search_is_skipped_on_a_hybrid_model(version):
    """DP attention on Qwen3-Next: SGLang divides the mamba slots per DP shard, which the grid does not (its running
    requests came out D times the plan's): the search is skipped by name, the plan of the given flags stands."""
    from planner.engines.sglang.pipeline.post_capture import HYBRID_DP_SEARCH_SKIPPED, search_skipped

    gpu, model = find_profile("h200"), resolve_model("qwen3-next-80b-a3b")
    launch = "--tp-size 4 --dp-size 2 --enable-dp-attention".split()
    res = run_search(gpu, model, launch, None, Needs(), top=3, relax=False, version=version, prune=True)
    assert res.ranked == [] and res.skipped_why == HYBRID_DP_SEARCH_SKIPPED
    plan = make_plan(gpu, model, launch, None, version=version)
    assert search_skipped(plan) and HYBRID_DP_SEARCH_SKIPPED in plan.notes
