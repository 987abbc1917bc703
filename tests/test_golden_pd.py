"""PD disaggregation roles against SGLang's own code: each role's summary, field by field.

The expected values are what the sglang-oracle printed for each ``--disaggregation-mode prefill|decode`` launch
(SGLang's handle_pd_disaggregation, CUDA-graph roles, fraction reserve and decode request / mamba pools), made by
``scripts/oracle/pd_cases.py``; tests/golden/pp_pd/README.md gives the commands. Nothing here is hand-derived.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from planner.errors import BadInput

from planner.catalog.catalog import resolve_model
from planner.cli import main
from planner.engines.sglang.pipeline.disaggregation import DP_VERIFIED, VERIFIED, decode_pool_sizes, extra_slots_default
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary

HERE = Path(__file__).parent / "golden" / "pp_pd"
sys.path.insert(0, str(Path(__file__).parents[1] / "scripts" / "oracle"))
from pd_cases import RECIPE_DECODE, RECIPE_ENV, RECIPE_PREFILL, RECIPE_PUBLISHED_EXTRA, dsr1_published  # noqa: E402


def _pairs(version: str, prefix: str):
    folder = HERE / f"sglang-{version}"
    if not (folder / f"{prefix}cases.jsonl").exists():
        assert prefix not in ("pd_", "pd_dp_"), f"no curated PD golden cases ({prefix}) for {version}"
        return []
    cases = [json.loads(x) for x in (folder / f"{prefix}cases.jsonl").read_text().splitlines() if x.strip()]
    results = [json.loads(x) for x in (folder / f"{prefix}results.jsonl").read_text().splitlines() if x.strip()]
    assert [c["id"] for c in cases] == [r["id"] for r in results]
    return [(c, r["summary"]) for c, r in zip(cases, results)]


CASES = [(v, c, r) for v in sorted(VERIFIED) for p in ("pd_", "pd_random_") for c, r in _pairs(v, p)]
# DP-attention roles (pd_dp_*: DeepSeek-V3 TP8, DP 2-8, one attention-DP worker per case)
CASES += [(v, c, r) for v in DP_VERIFIED for p in ("pd_dp_", "pd_dp_random_") for c, r in _pairs(v, p)]


def _plan(version: str, case: dict):
    gpu = find_profile(case["gpu"])
    assert gpu.capacity_mib == case["gpu_total_mib"] and gpu.compute_capability == case["gpu_sm"]
    return make_plan(gpu, resolve_model(case["planner_model"]), case["flags"], case["env"], case["free_before_gib"],
                     case["free_after_gib"], version=version)


@pytest.mark.parametrize("version,case,expected", CASES, ids=[f"{v}-{c['id']}" for v, c, _ in CASES])
def test_every_role_matches_sglang(version, case, expected):
    if version in ("0.5.20", "0.5.21") and case["planner_model"] == "deepseek-v3" and \
            "--speculative-algorithm" in case["flags"]:
        # the DeepSeek-V3 NextN draft there: the oracle's draft worker cannot build it, the planner refuses it
        assert expected["outcome"] == "startup_failed"
        with pytest.raises(BadInput, match="not verified against its code"):
            _plan(version, case)
        return
    got = build_summary(_plan(version, case))
    diff = {k: (expected[k], got[k]) for k in SUMMARY_FIELDS if expected[k] != got[k]}
    if case["id"] == "dpa_decode_mrr4" and version != "0.5.23":
        # R 4 // D 8 = 0 requests per worker: SGLang and the planner both fail the launch at startup, SGLang at the
        # empty capture list first, the planner at tp_worker's zero-request assert first: DP attention's post-pool
        # order (the same launch without a role differs the same way), not the role's sizing
        assert expected["outcome"] == got["outcome"] == "startup_failed" and expected["max_running_requests"] == 0
        diff = {k: v for k, v in diff.items() if k not in ("stage", "error_message")}
    assert not diff, diff


def _golden(version: str, case_id: str, prefix: str = "pd_") -> tuple[dict, dict]:
    return next((c, r) for c, r in _pairs(version, prefix) if c["id"] == case_id)


def _rows(summary: dict) -> int:
    """The request pool's rows: req_to_token is rows x (context_len + 4) int32 (SGLang's own bytes)."""
    width = (summary["context_len"] + 4) * 4
    assert summary["pool_req_to_token_bytes"] % width == 0
    return summary["pool_req_to_token_bytes"] // width


@pytest.mark.parametrize("version", DP_VERIFIED)
def test_dp_attention_roles_exercise_what_a_role_changes_per_worker(version):
    """What could hide an error in a DP-attention role, from SGLang's own numbers: the decode role's request cap
    and its default extra slots count per attention-DP worker (256 // 8 = 32 <= 32: 64 extra rows; 512 // 8 = 64:
    none), the prefill role reserves no DP-attention max_bs x D term (a larger fraction than the decode role),
    chunks 8192 // 8 per worker and captures no decode graph."""
    _, r256 = _golden(version, "dpa_decode_mrr256", "pd_dp_")
    assert r256["max_running_requests"] == 32 and _rows(r256) == 32 + 64 + 1
    _, r512 = _golden(version, "dpa_decode_mrr512", "pd_dp_")
    assert r512["max_running_requests"] == 64 and _rows(r512) == 64 + 1
    _, dec = _golden(version, "dpa_decode_default", "pd_dp_")
    _, pre = _golden(version, "dpa_prefill_default", "pd_dp_")
    assert pre["mem_fraction_static"] > dec["mem_fraction_static"] and dec["disable_radix_cache"]
    assert pre["chunked_prefill_size"] == 8192 // 8 and pre["cuda_graph_capture_max_bs"] is None
    _, r4 = _golden(version, "dpa_decode_mrr4", "pd_dp_")
    # R 4 < D 8: 0.5.23 takes max(1, R // D) = 1 worker request and 2 extra slots; the older releases 0 and 0
    assert _rows(r4) == (1 + 2 + 1 if version == "0.5.23" else 0 + 0 + 1)
    assert extra_slots_default(4, 8, version) == (2 if version == "0.5.23" else 0)
    assert extra_slots_default(256, 8, version) == 64 and extra_slots_default(512, 8, version) == 0
    # a hybrid GDN MoE decode role: R 32 // 4 = 8 per worker, 16 extra slots; HybridMambaDecodeReqToTokenPool raises
    # the worker's mamba slots from the M 8 its budget charged to 8 + 16 (+ 1 padding)
    _, hyb = _golden(version, "gqa_qwen3-next-80b-a3b_dp4_decode_mrr32", "pd_dp_")
    slots = (hyb["pool_mamba_conv_bytes"] + hyb["pool_mamba_ssm_bytes"]) // hyb["mamba_cache_per_req_bytes"]
    assert hyb["max_running_requests"] == hyb["max_mamba_cache_size"] == 8 and slots == 8 + 16 + 1


@pytest.mark.parametrize("version", sorted(VERIFIED))
def test_the_golden_set_exercises_what_a_role_changes(version):
    """The cases hold what could hide an error: the decode role allocates beyond what its budget charged (extra
    request rows; mamba slots raised above M for a hybrid model), the chunk cache is forced on decode, the prefill
    role captures no decode graph, and the two roles reserve differently."""
    _, plain_dec = _golden(version, "dense_decode_default")
    _, plain_pre = _golden(version, "dense_prefill_default")
    assert plain_dec["disable_radix_cache"] and not plain_pre["disable_radix_cache"]
    assert plain_dec["mem_fraction_static"] != plain_pre["mem_fraction_static"]
    assert plain_pre["cuda_graph_capture_max_bs"] is None  # no decode graph on a prefill role
    _, locked = _golden(version, "dense_prefill_decode_graph_locked")
    assert locked["cuda_graph_capture_max_bs"] is not None  # --cuda-graph-backend-decode given: kept
    case, hyb = _golden(version, "hybrid_decode_mrr16")
    m, r = hyb["max_mamba_cache_size"], hyb["max_running_requests"]
    per_slot = hyb["mamba_cache_per_req_bytes"]
    slots = (hyb["pool_mamba_conv_bytes"] + hyb["pool_mamba_ssm_bytes"]) // per_slot
    assert slots == r + 2 * r + 1 > m + 1  # (R + extra) slots + padding, above the M the budget charged
    _, mtp = _golden(version, "hybrid_decode_mtp_mrr8")
    assert mtp["pool_mamba_intermediate_ssm_bytes"] > 0
    assert _golden(version, "dense_prefill_fake_rejected")[1]["outcome"] == "rejected"
    assert _golden(version, "dense_decode_radix_spec_rejected")[1]["outcome"] == "rejected"


def test_decode_pool_sizes_follow_sglangs_decode_pools():
    """HybridMambaDecodeReqToTokenPool (disaggregation/decode.py:219-253 @0.5.16): rows R + extra, mamba slots
    max(M, (R + extra) x (1 + tracking slots)); a plain model keeps M."""
    class A:
        decode_extra_slots, disable_overlap_schedule, extra_buffer = 32, False, False
    assert decode_pool_sizes(A, 16, 16, True) == (48, 48)
    assert decode_pool_sizes(A, 16, 100, True) == (48, 100)
    assert decode_pool_sizes(A, 16, 7, False) == (48, 7)
    A.extra_buffer = True
    assert decode_pool_sizes(A, 16, 16, True) == (48, 144)


@pytest.mark.parametrize("version", sorted(VERIFIED))
def test_qwen35_397b_recipe_gets_a_verdict_per_role_that_sglang_agrees_with(version):
    """The public Qwen3.5-397B-A17B-FP8 1P1D recipe (scripts/oracle/pd_cases.py names it): each role planned on
    B200 x4 from the planner's own weight model fits, and given the free memory the planner models, SGLang's own
    code sizes every pool as the planner does (the golden cases recipe_qwen35_397b_fp8_*)."""
    model, gpu = resolve_model("qwen3.5-397b-a17b-fp8"), find_profile("b200")
    for role, flags in (("prefill", RECIPE_PREFILL), ("decode", RECIPE_DECODE)):
        plan = make_plan(gpu, model, flags, RECIPE_ENV, version=version)
        assert plan.verdict == "fits", (role, plan.verdict)
        case, exp = _golden(version, f"recipe_qwen35_397b_fp8_{role}")
        assert case["flags"] == flags
        assert round(plan.free_after_bytes / (1 << 30), 2) == case["free_after_gib"]
        assert exp["outcome"] == "ok" and exp["startup_ok"]
        got = build_summary(_plan(version, case))
        assert {k: got[k] for k in SUMMARY_FIELDS} == {k: exp[k] for k in SUMMARY_FIELDS}
    # decode: the 64 extra slots (2 x 32 running requests) get mamba slots and MTP states beyond the budget
    _, dec = _golden(version, "recipe_qwen35_397b_fp8_decode")
    assert (dec["pool_mamba_conv_bytes"] + dec["pool_mamba_ssm_bytes"]) // dec["mamba_cache_per_req_bytes"] == 97


def test_the_published_recipe_names_what_is_not_modelled(capsys):
    code = main(["--gpu", "b200", "--model", "qwen3.5-397b-a17b-fp8", "--sglang-version", "0.5.23", "--no-search",
                 *RECIPE_DECODE, *RECIPE_PUBLISHED_EXTRA])
    err = capsys.readouterr().err
    assert code == 2 and "--moe-runner-backend flashinfer_trtllm" in err


@pytest.mark.parametrize("flags,what", [
    (["--disaggregation-mode", "decode", "--sglang-version", "0.5.15"], "PD disaggregation on SGLang 0.5.15"),
    (["--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "nixl"], "nixl"),
    (["--disaggregation-mode", "prefill", "--disaggregation-transfer-backend", "mori"], "mori"),
    (["--disaggregation-mode", "decode", "--dp-size", "2", "--enable-dp-attention", "--tp-size", "2"], "DP attention"),
    (["--disaggregation-mode", "decode", "--dp-size", "2", "--tp-size", "2"], "--dp-size"),
    (["--disaggregation-mode", "decode", "--disaggregation-decode-enable-radix-cache"], "hybrid (mamba)"),
    (["--disaggregation-mode", "prefill", "--speculative-algorithm", "NEXTN", "--sglang-version", "0.5.23"],
     "--disaggregation-mode prefill with --speculative-algorithm on SGLang 0.5.23"),
])
def test_what_is_not_modelled_is_refused_by_name(flags, what, capsys):
    code = main(["--gpu", "h100", "--model", "qwen3.6-27b", "--no-search", *flags])
    err = capsys.readouterr().err
    assert code == 2 and what in err, err


@pytest.mark.parametrize("version", sorted(VERIFIED))
def test_the_decode_role_allocates_beyond_what_its_budget_charged(version):
    """The failure the issue names: a decode server whose pools outgrow the budget they charged. The same launch as a
    plain server fits; as a decode role its 64 extra slots raise the mamba pool from 33 to 97 slots (SGLang's own
    sizes, golden hybrid_decode_tight_mrr32), past the memory the weights leave: the verdict says so, and how much."""
    case, exp = _golden(version, "hybrid_decode_tight_mrr32")
    decode = _plan(version, case)
    assert build_summary(decode)["pool_total_bytes"] == exp["pool_total_bytes"]
    assert decode.verdict == "oom_risk"
    assert any("beyond what the KV budget charged (64 extra request slots)" in w for w in decode.args.warnings)
    plain = make_plan(find_profile(case["gpu"]), resolve_model(case["planner_model"]),
                      [f for f in case["flags"] if f not in ("--disaggregation-mode", "decode")], {},
                      case["free_before_gib"], case["free_after_gib"], version=version)
    assert plain.verdict == "fits"
    assert decode.pools.total - plain.pools.total > 8 << 30


def test_a_role_is_planned_with_the_flag_search(capsys):
    """A PD role is searched as its own server (tests/test_search_pd.py holds the search equal to make_plan)."""
    code = main(["--gpu", "h100", "--model", "qwen3-32b", "--tp-size", "2", "--disaggregation-mode", "prefill",
                 "--sglang-version", "0.5.16"])
    out = capsys.readouterr().out
    assert code == 0 and "no flag search" not in out and "Verdict: FITS" in out
    assert "Verdict: FITS with the recommended flags" in out and "--disaggregation-mode prefill" in out


@pytest.mark.parametrize("model,flags,what", [
    ("qwen3.5-397b-a17b", ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention", "--disaggregation-mode",
                           "decode"], "with DP attention on"),
    ("qwen3-next-80b-a3b", ["--tp-size", "4", "--dp-size", "4", "--enable-dp-attention", "--disaggregation-mode",
                            "decode", "--speculative-algorithm", "NEXTN"], "with DP attention and --speculative"),
    ("deepseek-v3", ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention", "--disaggregation-mode", "decode",
                     "--moe-a2a-backend", "deepep", "--sglang-version", "0.5.23"], "deepep with PD disaggregation"),
    ("deepseek-v3", ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention", "--disaggregation-mode", "prefill",
                     "--sglang-version", "0.5.19"], "0.5.19"),
    ("deepseek-v3", ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention", "--disaggregation-mode", "decode",
                     "--ep-size", "8", "--sglang-version", "0.5.22"], "--ep-size"),
])
def test_dp_attention_roles_outside_what_was_checked_are_refused_by_name(model, flags, what, capsys):
    code = main(["--gpu", "h200", "--model", model, "--no-search", *flags])
    err = capsys.readouterr().err
    assert code == 2 and what in err, err


@pytest.mark.parametrize("version", ("0.5.16", "0.5.23"))
def test_deepseek_r1_1p1d_on_8x_h200_per_role_is_a_deployment_sglang_agrees_with(version, capsys):
    """The public DeepSeek-R1 1P1D recipe (Dynamo recipes/deepseek-r1/sglang/disagg-8gpu, scripts/oracle/pd_cases.py
    names it): prefill TP 8 + EP 8, decode DP attention 8 + EP 8, 8x H200 each. As a deployment each role is one
    plan from the planner's own weight model; SGLang's own code sizes every pool of each role as the planner does
    (golden recipe_dsr1_*, run without --trust-remote-code, which the planner is given here); 16 GPUs in all."""
    from planner.engines.sglang.pd_deploy import plan_deployment

    pub = dsr1_published(version)
    shared = ["--tp", "8", "--ep-size", "8", "--trust-remote-code", "--disaggregation-bootstrap-port", "30001",
              "--mem-fraction-static", "0.75", "--host", "0.0.0.0"]
    own = {"prefill": "--load-balance-method round_robin",
           "decode": "--dp 8 --enable-dp-attention" + (" --prefill-round-robin-balance" if version == "0.5.16" else "")}
    for role, flags in pub.items():  # the deployment's role flags are the published ones, reordered
        assert sorted(shared + own[role].split() + ["--disaggregation-mode", role]) == sorted(flags)
    dep = plan_deployment(find_profile("h200"), resolve_model("deepseek-r1"),
                          [*shared, "--prefill-replicas", "1", "--decode-replicas", "1", "--prefill-flags",
                           own["prefill"], "--decode-flags", own["decode"]], {}, None, None, version)
    assert dep["fits"] and dep["total_gpus"] == 16
    for r in dep["roles"]:
        case, exp = _golden(version, f"recipe_dsr1_{r['role']}", "pd_dp_")
        assert r["gpus"] == 8 and r["verdict"] == "fits" and exp["outcome"] == "ok"
        assert r["attn_dp_size"] == (8 if r["role"] == "decode" else 1)
        plan = r["plan"]
        assert round(plan.free_after_bytes / (1 << 30), 2) == case["free_after_gib"]
        # the deployment's own role flags, sized with the free memory the golden was given (the plan's, rounded)
        got = build_summary(make_plan(find_profile("h200"), resolve_model("deepseek-r1"), r["flags"], {},
                                      case["free_before_gib"], case["free_after_gib"], version=version))
        assert {k: got[k] for k in SUMMARY_FIELDS} == {k: exp[k] for k in SUMMARY_FIELDS}
    # the CLI's deployment view names the DP-attention worker on the decode role
    assert main(["--gpu", "h200", "--model", "deepseek-r1", "--sglang-version", version, *shared, "--prefill-replicas",
                 "1", "--decode-replicas", "1", "--prefill-flags", own["prefill"], "--decode-flags", own["decode"]]) == 0
    out = capsys.readouterr().out
    assert "=== decode role: 1 replica x 8 GPUs (one plan stands for every replica; DP attention: 8 attention-DP " \
           "workers per replica, the plan is one worker's GPU) ===" in out
    assert out.rstrip().splitlines()[-1] == ("=== deployment: FITS: prefill 1 x 8 GPUs = 8 (FITS); decode 1 x 8 GPUs = "
                                             "8 (FITS); total 16 x h200; every role must fit ===")


def test_the_published_dsr1_decode_flags_are_rejected_where_sglang_rejects_them():
    """--prefill-round-robin-balance (deprecated in 0.5.16) is gone by 0.5.20: SGLang 0.5.23's argparse rejects the
    recipe's decode role as published, and so does the planner."""
    _, exp = _golden("0.5.23", "recipe_dsr1_decode_published", "pd_dp_")
    assert exp["outcome"] == "rejected" and "--prefill-round-robin-balance" in exp["error_message"]
    got = build_summary(make_plan(find_profile("h200"), resolve_model("deepseek-r1"), dsr1_published("0.5.16")["decode"],
                                  {}, version="0.5.23"))
    assert got["outcome"] == "rejected" and "--prefill-round-robin-balance" in got["error_message"]
