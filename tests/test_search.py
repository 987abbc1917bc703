"""The search: its vectorized evaluation equals the scalar plan, and what it recommends boots."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.catalog.catalog import resolve_model
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.search import (
    MAMBA_SIZES,
    MFS_VALUES,
    RATIO_VALUES,
    RUNNING,
    FlagBase,
    Needs,
    evaluate_combo,
    point_flags,
    run_search,
)
from planner.engines.sglang.summary import build_summary

COMBOS = [
    [],
    ["--mamba-scheduler-strategy", "extra_buffer"],
    ["--disable-radix-cache"],
    ["--mamba-scheduler-strategy", "extra_buffer", "--disable-overlap-schedule", "--page-size", "64"],
    ["--speculative-algorithm", "EAGLE", "--mamba-scheduler-strategy", "extra_buffer"],
    ["--speculative-algorithm", "EAGLE", "--disable-radix-cache", "--speculative-num-steps", "2",
     "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "3"],
    ["--speculative-algorithm", "NEXTN", "--mamba-scheduler-strategy", "no_buffer"],  # rejected by SGLang
    ["--kv-cache-dtype", "fp8_e4m3", "--mamba-ssm-dtype", "bfloat16", "--context-length", "32768"],
    ["--tp-size", "2", "--chunked-prefill-size", "4096"],
]
CASES = [("rtxpro6000", "qwen3.6-27b"), ("h100-sxm", "qwen3.5-9b"), ("b200", "qwen3-next-80b-a3b"),
         ("rtx5090", "qwen3.5-9b"), ("h200", "qwen3.6-35b-a3b"), ("l40s", "llama-3.1-8b-instruct"),
         ("a100-80gb", "nemotron-3-nano-30b-a3b")]
FIELDS = ("outcome", "stage", "max_total_num_tokens", "max_running_requests", "max_mamba_cache_size",
          "available_kv_bytes", "spec_reserved_bytes", "pool_total_bytes")


@st.composite
def grid_points(draw):
    gpu, model = draw(st.sampled_from(CASES))
    # EAGLE without a draft path is the hybrid models' own MTP layer; on a dense target it is refused by name
    combo = draw(st.sampled_from(COMBOS if model != "llama-3.1-8b-instruct" else
                                 [c for c in COMBOS if "EAGLE" not in c and "NEXTN" not in c]))
    k = draw(st.integers(1, 6))
    pts = {
        "mfs": np.array([draw(st.sampled_from(MFS_VALUES)) for _ in range(k)], dtype=np.float64),
        "ratio": np.array([draw(st.sampled_from(RATIO_VALUES)) for _ in range(k)], dtype=np.float64),
        "msize": np.array([draw(st.sampled_from(MAMBA_SIZES)) for _ in range(k)], dtype=np.int64),
        "run": np.array([draw(st.sampled_from(RUNNING)) for _ in range(k)], dtype=np.int64),
    }
    fb = draw(st.sampled_from([None, 0.9, 0.99]))
    return gpu, model, combo, pts, fb


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grid_points())
def test_vectorized_equals_scalar_plan(point):
    gpu_id, model_id, combo, grid, fb = point
    gpu, model = find_profile(gpu_id), resolve_model(model_id)
    plan0 = make_plan(gpu, model, [], None, None, None)
    if fb is not None:  # also vary the free memory: a fraction of the modelled values
        plan0 = make_plan(gpu, model, [], None, plan0.free_before_bytes / 2**30,
                          plan0.free_after_bytes * fb / 2**30)
    free = (plan0.free_before_bytes / 2**30, plan0.free_after_bytes / 2**30)
    ev = evaluate_combo(plan0, model, combo, grid, None, Needs(), 32768)
    # the search's path: the combination parsed onto the once-parsed fixed flags gives the same arrays
    fast = evaluate_combo(plan0, model, combo, grid, None, Needs(), 32768, FlagBase(plan0.rules.flags, model.spec.name, []))
    assert (fast.args is None) == (ev.args is None)
    assert fast.out.keys() == ev.out.keys() and all(np.array_equal(fast.out[k], ev.out[k]) for k in ev.out)
    for i in range(grid["mfs"].size):
        flags = point_flags(combo, grid["mfs"][i], grid["ratio"][i], grid["msize"][i], grid["run"][i])
        p = make_plan(gpu, model, flags, None, *free)
        s = build_summary(p)
        if p.args is None or ev.args is None:  # rejected while resolving: the whole combination is
            assert ev.args is None and p.args is None, flags
            continue
        if p.error_type == "BadInput":
            continue
        o = ev.out
        if s["outcome"] == "ok":
            assert bool(o["ok"][i]), flags
            assert int(o["pool_total"][i]) == s["pool_total_bytes"], flags
            assert int(o["headroom"][i]) == p.headroom_bytes, flags
            assert int(o["need_total"][i]) == sum(x.bytes for x in p.needs), flags
            assert bool(o["left"][i] >= 0) == (p.verdict == "fits"), flags
        else:
            assert not bool(o["ok"][i]), (flags, s["stage"])
        for f, key in (("max_total_num_tokens", "n"), ("max_running_requests", "r")):
            if s[f] is not None:
                assert int(o[key][i]) == s[f], (flags, f)
        if s["available_kv_bytes"] is not None:
            assert int(o["available"][i]) == s["available_kv_bytes"], flags
        if s["max_mamba_cache_size"] is not None and p.state is not None:  # a dense model's is the flag as given
            assert int(o["m"][i]) == s["max_mamba_cache_size"], flags
        if s["spec_reserved_bytes"]:
            assert int(o["spec_reserved"][i]) == s["spec_reserved_bytes"], flags


FIXED = [[], ["--tp-size", "2"], ["--speculative-algorithm", "EAGLE", "--max-running-requests", "8"],
         ["--mem-fraction-static=0.8", "--mamba-ssm-dtype", "bfloat16"], ["--page-size", "sixty"]]
CHOSEN = [[], ["--disable-radix-cache", "--page-size", "64"], ["--chunked-prefill-size", "4096", "--context-length", "32768"],
          ["--kv-cache-dtype", "fp8_e4m3", "--disable-overlap-schedule"], ["--kv-cache-dtype", "fp9"],
          ["--max-mamba-cache-size", "-1"], ["--speculative-num-steps", "2", "--speculative-eagle-topk", "1",
                                             "--speculative-num-draft-tokens", "3"], ["--no-such-flag"]]


def test_parse_onto_fixed_flags_equals_a_full_parse():
    """FlagBase (the search's parse-once path) gives the very dict, or the very error, of argparse over the
    whole command line, in every release."""
    from planner.engines.sglang.cli_flags import SGLangArgError, parse_flags
    from planner.engines.sglang.rules import RULES

    def outcome(fn, argv):
        try:
            return fn(argv)
        except SGLangArgError as exc:
            return str(exc)

    for rules in RULES.values():
        for fixed in FIXED:
            base = FlagBase(rules.flags, "m", fixed)
            for chosen in CHOSEN:
                full = outcome(lambda a: parse_flags(rules.flags, ["--model-path", "m", *a]), fixed + chosen)
                assert outcome(base.parse, fixed + chosen) == full, (rules.flags, fixed, chosen)


def test_seed_case_recommendation_boots_and_keeps_fixed_flags():
    seed = ("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
            "--speculative-num-draft-tokens 4 --mamba-scheduler-strategy extra_buffer "
            "--max-mamba-cache-size 24 --mamba-full-memory-ratio 0.4").split()
    res = run_search(find_profile("rtxpro6000"), resolve_model("qwen3.6-27b"), seed, top=3, version="0.5.11")
    assert res.recommended is not None and res.recommended.verdict == "fits"
    best = res.ranked[0]
    assert best.flags[: len(seed)] == seed  # fixed flags stay, unchanged
    assert "--max-running-requests" in best.chosen  # the flag that frees the reservation
    assert best.concurrency >= 1 and best.longest >= 32767
    assert res.why


def test_recommendations_boot_for_gpus_models_needs():
    for gpu, model, needs in [
        ("rtxpro6000", "qwen3.6-27b", Needs(context=131072, concurrency=2, speculative="EAGLE")),
        ("h100-sxm", "qwen3.5-9b", Needs(context=65536, concurrency=4)),
        ("rtx5090", "qwen3.5-9b", Needs(context=16384, concurrency=2, allow_fp8_kv=True)),
        ("h200", "llama-3.1-8b-instruct", Needs(context=32768, concurrency=16, objective="kv-tokens")),
    ]:
        res = run_search(find_profile(gpu), resolve_model(model), [], needs=needs)
        assert res.recommended is not None, (gpu, model)
        p = make_plan(find_profile(gpu), resolve_model(model), res.ranked[0].flags)
        assert p.verdict == "fits" and p.profile.max_total_num_tokens - 1 >= needs.context
        assert min(p.profile.max_running_requests, p.profile.max_total_num_tokens // needs.context) >= needs.concurrency


def test_nothing_feasible_says_what_would_fit():
    res = run_search(find_profile("rtx4090"), resolve_model("qwen3.6-27b"), [], needs=Needs(context=65536))
    assert res.recommended is None
    assert any("--tp-size" in r for r in res.relaxations)
    assert all(":" in r for r in res.relaxations)


@pytest.mark.parametrize("with_search", [False, True])
def test_batch_jobs_keep_input_order_and_results(tmp_path, with_search):
    """--batch --jobs 2 gives the same lines, in the same order, as one process: plain lines (handed over eight at
    a time) and a batch with searches (one at a time)."""
    import io
    import json

    from planner.cli import run_batch

    reqs = [{"id": i, "gpu": g, "model": "qwen3.5-9b", "flags": ["--max-running-requests", str(4 + i)]}
            for i, g in enumerate(["h100", "h200", "rtxpro6000", "l40s", "b200"])]
    if with_search:
        reqs[1]["search"] = reqs[3]["search"] = True
        reqs[1]["flags"] = reqs[3]["flags"] = []
    f = tmp_path / "b.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in reqs) + "\nnot json\n", encoding="utf-8")
    one, two = io.StringIO(), io.StringIO()
    assert run_batch(str(f), "0.5.11", one) == 0 and run_batch(str(f), "0.5.11", two, jobs=2) == 0
    assert one.getvalue() == two.getvalue()
    assert [json.loads(x)["id"] for x in one.getvalue().splitlines()] == [0, 1, 2, 3, 4, 6]
