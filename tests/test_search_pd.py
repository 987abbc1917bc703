"""The flag search for a PD role (``--disaggregation-mode prefill|decode``): its fast evaluation equals ``plan``
(make_plan) on the same flags, on the releases PD is modelled for (0.5.16, 0.5.23). The decode role's
--max-running-requests is a categorical axis (it sets the extra decode slots and the fraction's decode reserve,
search.run_search), so the grid points here put it in the combination for that role.

What it checks: randomized points (combination x numeric axes, hybrid and dense models, speculative where the role
models it) against make_plan, and every ranked candidate of a role's search against make_plan on its flags."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.catalog.catalog import resolve_model
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.search import (MAMBA_SIZES, MFS_VALUES, RATIO_VALUES, RUNNING, FlagBase, Needs,
                                           evaluate_combo, point_flags, run_search)
from planner.engines.sglang.summary import build_summary
from planner.hardware.profiles import find_profile

CASES = [("h100-sxm", "llama-3.1-8b-instruct"), ("h100-sxm", "qwen3.5-9b"), ("h200", "qwen3.6-27b"),
         ("rtxpro6000", "qwen3.6-27b")]
COMBOS = [[], ["--chunked-prefill-size", "4096"], ["--page-size", "64"], ["--disable-overlap-schedule"],
          ["--kv-cache-dtype", "fp8_e4m3"], ["--context-length", "32768"]]
HYBRID = [["--mamba-radix-cache-strategy", "extra_buffer"], ["--mamba-radix-cache-strategy", "no_buffer"],
          ["--mamba-radix-cache-strategy", "extra_buffer", "--disable-overlap-schedule"]]
SPEC = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "3"]


@st.composite
def pd_points(draw):
    version = draw(st.sampled_from(("0.5.16", "0.5.23")))
    role = draw(st.sampled_from(("prefill", "decode")))
    gpu, model = draw(st.sampled_from(CASES))
    hybrid = model != "llama-3.1-8b-instruct"
    combo = list(draw(st.sampled_from(COMBOS + (HYBRID if hybrid else []))))
    if hybrid and version == "0.5.16" and "--mamba-radix-cache-strategy" in combo:
        combo[combo.index("--mamba-radix-cache-strategy")] = "--mamba-scheduler-strategy"
    if hybrid and draw(st.booleans()) and not (role == "prefill" and version == "0.5.23"):
        combo += SPEC  # the hybrid models' own MTP layer (a 0.5.23 prefill role with it is refused by name)
    k = draw(st.integers(1, 6))
    pts = {"mfs": np.array([draw(st.sampled_from(MFS_VALUES)) for _ in range(k)], dtype=np.float64),
           "ratio": np.array([draw(st.sampled_from(RATIO_VALUES)) if hybrid else np.nan for _ in range(k)]),
           "msize": np.array([draw(st.sampled_from(MAMBA_SIZES)) if hybrid else -1 for _ in range(k)],
                             dtype=np.int64),
           "run": np.array([draw(st.sampled_from(RUNNING)) for _ in range(k)], dtype=np.int64)}
    if role == "decode":  # one categorical value of R per combination (search.run_search)
        run = draw(st.sampled_from(RUNNING))
        combo += [] if run < 0 else ["--max-running-requests", str(run)]
        pts["run"] = np.full(k, -1, dtype=np.int64)
    fb = draw(st.sampled_from([None, 0.8]))
    return version, gpu, model, ["--disaggregation-mode", role], combo, pts, fb


@settings(max_examples=80, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(pd_points())
def test_pd_evaluation_equals_plan(point):
    version, gpu_id, model_id, launch, combo, grid, fb = point
    gpu, model = find_profile(gpu_id), resolve_model(model_id)
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
        if p.error_type == "BadInput":
            continue
        o = ev.out
        if s["outcome"] == "ok":
            assert bool(o["ok"][i]), (flags, p.stage)
            assert int(o["pool_total"][i]) == s["pool_total_bytes"], flags
            assert int(o["headroom"][i]) == p.headroom_bytes, flags
            assert int(o["need_total"][i]) == sum(x.bytes for x in p.needs), flags
            assert bool(o["left"][i] >= 0) == (p.verdict == "fits"), flags
            assert int(o["n"][i]) == s["max_total_num_tokens"] and int(o["r"][i]) == s["max_running_requests"], flags
            if s["max_mamba_cache_size"] is not None and p.state is not None:
                assert int(o["m"][i]) == s["max_mamba_cache_size"], flags
        else:
            assert not bool(o["ok"][i]), (flags, s["stage"], p.error_message)


@pytest.mark.parametrize("version,role,gpu,model,extra", [
    *[(v, r, "h100-sxm", m, "") for v in ("0.5.16", "0.5.23") for r in ("prefill", "decode")
      for m in ("qwen3.5-9b", "llama-3.1-8b-instruct")],
    # the roles widened after the search learnt PD (pprel): other releases, DeepSeek-V3 (MLA) at tp 8
    *[(v, r, "h100-sxm", "qwen3.5-9b", "") for v in ("0.5.18", "0.5.21") for r in ("prefill", "decode")],
    *[(v, r, "h200", "deepseek-v3", "--tp-size 8") for v in ("0.5.16", "0.5.23") for r in ("prefill", "decode")]])
def test_pd_ranked_candidates_equal_plan(version, role, gpu, model, extra):
    gpu, model = find_profile(gpu), resolve_model(model)
    flags = ["--disaggregation-mode", role, *extra.split()]
    res = run_search(gpu, model, flags, None, Needs(context=65536, concurrency=4), top=5, relax=False,
                     version=version, prune=True)
    assert res.ranked and not res.skipped_why
    for c in res.ranked:
        assert c.flags[:len(flags)] == flags
        p = make_plan(gpu, model, c.flags, None, version=version)
        assert p.verdict == "fits", (c.flags, p.stage, p.error_message)
        assert c.kv_tokens == p.profile.max_total_num_tokens and c.running == p.profile.max_running_requests, c.flags
        assert c.headroom_left == p.headroom_bytes - sum(x.bytes for x in p.needs), c.flags
    if role == "decode":  # the forced chunk cache: the search never offers the radix cache's flag
        assert all("--disable-radix-cache" not in c.chosen for c in res.ranked) and res.no_radix_best is None
    full = run_search(gpu, model, flags, None, Needs(context=65536, concurrency=4), top=5, relax=False,
                      version=version)
    assert [c.flags for c in full.ranked] == [c.flags for c in res.ranked]
