"""Hybrid sliding-window models (gpt-oss, Llama 4) against SGLang's own code, on the releases whose SWA rules are verified.

The expected values are the ``summary`` objects the sglang-oracle printed (each release's real ServerArgs,
ModelConfig, HybridSWAPoolConfigurator and ``_init_pools`` with the SWAKVPool on meta tensors), made by
``scripts/oracle/swa_cases.py``; tests/golden/swa/README.md gives the commands. Every field of
``planner.engines.sglang.summary.SUMMARY_FIELDS`` is compared exactly, the ratio-weighted float cell included. Nothing here is
hand-derived.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.engines.sglang.pipeline.swa import VERIFIED
from planner.errors import BadInput
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary
from golden_sets import read_pairs

HERE = Path(__file__).parent / "golden" / "swa"

# the releases whose SWA rules were run through SGLang's own code (an oracle venv each); the others in VERIFIED were
# verified by reading their source against these neighbours (tests/golden/swa/README.md)
ORACLE_RELEASES = ("0.5.9", "0.5.10", "0.5.11", "0.5.13", "0.5.14", "0.5.15", "0.5.16", "0.5.20", "0.5.23")
RELEASES = tuple(r for r in ORACLE_RELEASES if (HERE / f"sglang-{r}").exists())
BEYOND_ORACLE = {"tp_worker", "init_attention_backend", "scheduler_init"}
OUTCOME_FIELDS = {"outcome", "startup_ok", "stage", "error_type", "error_message"}


# --max-running-requests 0 with the request-capped SWA pool: the pools equal SGLang's (0.5.23 counts max(1, R)), and
# both fail the start; on 0.5.14-0.5.20 the oracle stops at the CUDA-graph list (capture_bs=[0]) where the planner
# names TpModelWorker's "max_running_request is zero" first: which of the two a real server hits first with R 0 is the
# pipeline's order of those checks, not the SWA sizing (not changed here)
R0_LATER_CHECK = {(v, "oss20_h100_reqcap0") for v in ("0.5.14", "0.5.15", "0.5.16", "0.5.20")}


def _load(version: str, cases: str, results: str) -> list[tuple[dict, dict]]:
    if not (HERE / f"sglang-{version}" / cases).exists():
        return []
    return read_pairs(HERE, version, cases=cases, results=results)


ALL = [(v, c, e) for v in RELEASES for c, e in _load(v, "cases.jsonl", "results.jsonl")
       + _load(v, "random.jsonl", "random_results.jsonl")]


def _plan(case: dict, version: str):
    gpu = find_profile(case["gpu"])
    assert gpu.capacity_mib == case["gpu_total_mib"]
    return make_plan(gpu, resolve_model(case["planner_model"]), case["flags"], case.get("env") or {},
                     case["free_before_gib"], case["free_after_gib"], version=version)


def test_every_oracle_release_has_golden_cases():
    assert set(RELEASES) == set(ORACLE_RELEASES) and set(ORACLE_RELEASES) <= set(VERIFIED)
    assert {v for v, _, _ in ALL} == set(RELEASES)


@pytest.mark.parametrize("version,case,expected", ALL, ids=[f"{v}-{c['id']}" for v, c, _ in ALL])
def test_planner_matches_sglang(version, case, expected):
    got = build_summary(_plan(case, version))
    skip = OUTCOME_FIELDS if expected["outcome"] == "ok" and got["stage"] in BEYOND_ORACLE else set()
    if (version, case["id"]) in R0_LATER_CHECK:
        assert expected["stage"] == "cuda_graph_batch_sizes" and got["stage"] == "tp_worker"
        skip = {"stage", "error_message"}  # every other field (outcome, error type, pools) still compared
    diffs = {k: (expected[k], got[k]) for k in SUMMARY_FIELDS if k not in skip and expected[k] != got[k]}
    assert not diffs, f"{version} {case['id']}: (oracle, planner) {diffs}"


def test_the_sets_reach_the_swa_rules():
    """Each release's set has the float cell, both models, the plain pool (--disable-hybrid-swa-memory), the three
    GPU generations' backends (fa3, trtllm_mha with page 64, triton) and SGLang's rejection of flashinfer."""
    for version in RELEASES:
        rows = [(c, e) for v, c, e in ALL if v == version]
        ok = [e for _, e in rows if e["outcome"] == "ok"]
        if tuple(map(int, version.split("."))) >= (0, 5, 11):  # HybridSWAPoolConfigurator's ratio-weighted cell
            assert any(isinstance(e["kv_cell_bytes_per_token"], float)
                       and not e["kv_cell_bytes_per_token"].is_integer() for e in ok), version
        else:  # 0.5.9 / 0.5.10: the all-layer int cell, the full pool rescaled after the profile
            assert all(isinstance(e["kv_cell_bytes_per_token"], int) for e in ok), version
        assert {c["planner_model"] for c, _ in rows} == {"gpt-oss-20b", "gpt-oss-120b", "llama-4-scout-17b-16e-instruct",
                                                         "llama-4-maverick-17b-128e-instruct", "gemma-2-2b-it"}
        assert {e["attention_backend"] for e in ok} >= {"fa3", "trtllm_mha", "triton"}
        assert any(e["attention_backend"] == "trtllm_mha" and e["page_size"] == 64 for e in ok)
        assert any("--disable-hybrid-swa-memory" in c["flags"] and e["outcome"] == "ok" for c, e in rows)
        assert any(e["outcome"] == "rejected" and "GptOssForCausalLM requires one of" in e["error_message"]
                   for _, e in rows)


def test_the_swa_pool_floor_is_the_models_window_minus_one():
    """0.5.16+ refuses an SWA pool of at most sliding_window_size + page tokens, the window being what gpt-oss's
    loaded model answers (sliding_window - 1 = 127); 0.5.11 has no such check."""
    rows = {(v, c["id"]): e for v, c, e in ALL}
    for v in [r for r in RELEASES if tuple(map(int, r.split("."))) >= (0, 5, 16)]:
        assert rows[(v, "oss20_h100_swa_pool_above_floor")]["outcome"] == "ok"  # SWA 129 > 127 + 1
        at = rows[(v, "oss20_h100_swa_pool_at_floor")]  # SWA 128
        assert at["outcome"] == "startup_failed" and "SWA pool (128 tokens)" in at["error_message"]
        assert "sliding_window_size (127)" in at["error_message"]
    for v in [r for r in RELEASES if tuple(map(int, r.split("."))) < (0, 5, 16)]:
        assert rows[(v, "oss20_h100_swa_pool_at_floor")]["outcome"] == "ok"


def test_llama4_chunked_layers_use_the_chunk_as_their_window():
    """Llama 4's chunked layers go to the SWA sub-pool with attention_chunk_size (8192) as the window SGLang checks
    the pool against on 0.5.16+ (resolve_sliding_window_size falls back to it); its 10M-token default context makes
    req_to_token (R + 1) x 10,485,764 int32, tens of GiB, which the planner's pools carry."""
    rows = {(v, c["id"]): e for v, c, e in ALL}
    for v in [r for r in RELEASES if tuple(map(int, r.split("."))) >= (0, 5, 16)]:
        at = rows[(v, "scout_h200_tp8_mtt_chunk_floor")]
        assert at["outcome"] == "startup_failed" and "sliding_window_size (8192)" in at["error_message"]
        assert rows[(v, "scout_h200_tp8_mtt_above_floor")]["outcome"] == "ok"
    for v in RELEASES:
        default = rows[(v, "scout_h200_tp8")]
        assert default["context_len"] == 10485760
        table_rows = default["max_running_requests"] + (1 if tuple(map(int, v.split("."))) >= (0, 5, 11) else 0)
        assert default["pool_req_to_token_bytes"] == table_rows * (10485760 + 4) * 4
        assert default["pool_req_to_token_bytes"] > 64 << 30


def test_every_modelled_release_is_verified_and_a_new_one_would_be_refused(monkeypatch):
    """Every release the planner models has its SWA rules checked (VERIFIED); a release added to the rules later is
    refused for these models by name until its SWA code is checked, never planned with a neighbour's rules."""
    from planner.engines.sglang.pipeline import swa  # noqa: PLC0415
    from planner.engines.sglang.rules import RULES  # noqa: PLC0415

    assert set(RULES) == set(VERIFIED)
    monkeypatch.setattr(swa, "VERIFIED", tuple(v for v in VERIFIED if v != "0.5.23"))
    with pytest.raises(BadInput, match="on SGLang 0.5.23 is not verified"):
        make_plan(find_profile("h200"), resolve_model("gpt-oss-120b"), ["--tp-size", "8"], {}, None, None,
                  version="0.5.23")


def test_request_capped_swa_pool_from_0_5_14():
    """0.5.14+ sizes the SWA pool from --max-running-requests when the radix cache is off (SWAChunkCapPoolConfigurator,
    0.5.23 SWARequestCapPoolConfigurator): the oracle's 0.5.13 set keeps the ratio pool, 0.5.14+ the capped one (more
    full tokens, the SWA sub-pool at the cap, no floor check) with its error when the cap leaves no full pool; with
    --disable-hybrid-swa-memory one plain pool. 0.5.12 (no oracle set) is planned as 0.5.13."""
    rows = {(v, c["id"]): (c, e) for v, c, e in ALL}
    case, old = rows[("0.5.13", "oss20_h100_reqcap32")]
    capped = [r for r in RELEASES if tuple(map(int, r.split("."))) >= (0, 5, 14)]
    assert capped == ["0.5.14", "0.5.15", "0.5.16", "0.5.20", "0.5.23"]
    for v in capped:
        new = rows[(v, "oss20_h100_reqcap32")][1]
        assert new["max_total_num_tokens"] > old["max_total_num_tokens"], v
        assert new["pool_kv_k_bytes"] > old["pool_kv_k_bytes"], v  # the full pool's K: more tokens
        e = rows[(v, "oss20_h100_reqcap_no_room")][1]
        assert e["outcome"] == "startup_failed" and "SWA pool cap (" in e["error_message"], v
        assert isinstance(rows[(v, "oss20_h100_reqcap_no_hybrid")][1]["kv_cell_bytes_per_token"], int), v
    assert rows[("0.5.13", "oss20_h100_reqcap_no_room")][1]["outcome"] == "ok"  # the ratio pool: R 20000 capped to 4096
    assert build_summary(_plan(case, "0.5.12"))["max_total_num_tokens"] == old["max_total_num_tokens"]


LOGS = Path(__file__).parent / "data" / "logs"


@pytest.mark.parametrize("log,gpu,version", [
    ("synthetic-0.5.11-gpt-oss-20b-swa.log", "a100-80gb", "0.5.11"),  # two unlabelled lines, SWA first
    ("synthetic-0.5.23-gpt-oss-120b-tp8-swa.log", "h200", "0.5.23"),  # "Full" and "SWA" labels
])
def test_plan_check_reads_both_sub_pools_of_an_swa_log(log, gpu, version):
    """plan check pairs the full and the sliding sub-pool's 'KV Cache is allocated' lines with the planner's two
    pools (not the second as a draft's, nor as a second launch); the sizes are SGLang's own log lines."""
    from planner.engines.sglang.check import check  # noqa: PLC0415
    from planner.logs import parse_file  # noqa: PLC0415

    res = check(parse_file(LOGS / log), find_profile(gpu), None, [], version=version)
    assert not res.stale
    rows = {r.what: r for r in res.rows}
    assert {"KV K", "sliding-window KV K", "sliding-window KV V", "KV #tokens (max_total_num_tokens)"} <= set(rows)
    assert all(r.agrees for r in res.rows if r.what != "Memory pool end avail"), \
        [(r.what, r.predicted, r.actual) for r in res.rows]


def test_gemma2_sliding_layers_stay_in_one_plain_pool():
    """SGLang turns Gemma 2's hybrid SWA memory off: every layer keeps every token, the integer all-layer cell, with
    or without --disable-hybrid-swa-memory (the same numbers)."""
    rows = {(v, c["id"]): e for v, c, e in ALL}
    for v in RELEASES:
        plain = rows[(v, "gemma2_h100")]
        assert plain["outcome"] == "ok" and plain["kv_cell_bytes_per_token"] == 4 * (256 + 256) * 26 * 2
        flag = rows[(v, "gemma2_h100_no_hybrid_flag")]
        assert flag["max_total_num_tokens"] == plain["max_total_num_tokens"]



def test_the_search_shrinks_the_sliding_pool_only_as_far_as_its_requests_fit():
    """--swa-full-tokens-ratio is a search axis for hybrid SWA models: gpt-oss's 128-token window needs little of
    the sliding sub-pool, so a smaller ratio buys full tokens; every ranked point's concurrency is within what the
    sliding sub-pool holds by SGLang's own worst case per request (swa.request_capacity), and the recommendation
    re-planned gives the KV tokens the search promised."""
    from planner.engines.sglang.pipeline import swa  # noqa: PLC0415
    from planner.engines.sglang.search import Needs, run_search  # noqa: PLC0415

    gpu = find_profile("h200")
    for name, flags, need in (("gpt-oss-120b", ["--tp-size", "8"], Needs()),
                              ("llama-4-scout-17b-16e-instruct", ["--tp-size", "8"], Needs(context=8192, concurrency=64))):
        model = resolve_model(name)
        res = run_search(gpu, model, flags, needs=need, version="0.5.23")
        best = res.ranked[0]
        assert "--swa-full-tokens-ratio" in best.chosen, (name, best.chosen)
        plan = make_plan(gpu, model, best.flags, {}, None, None, version="0.5.23")
        assert plan.profile.max_total_num_tokens == best.kv_tokens
        for c in res.ranked:
            p = make_plan(gpu, model, c.flags, {}, None, None, version="0.5.23")
            cap = int(swa.request_capacity(p.args, model.spec, p.profile.max_total_num_tokens))
            assert c.concurrency <= cap, (name, c.flags, c.concurrency, cap)
    # Llama 4's chunked layers hold up to 8,192 tokens per request: at a 16k context the sliding sub-pool, not the
    # full one, caps the requests at once, so the search keeps SGLang's ratio
    model = resolve_model("llama-4-scout-17b-16e-instruct")
    res = run_search(gpu, model, ["--tp-size", "8", "--context-length", "16384"],
                     needs=Needs(context=8192, concurrency=64), version="0.5.23")
    best = res.ranked[0]
    assert "--swa-full-tokens-ratio" not in best.chosen
    plan = make_plan(gpu, model, best.flags, {}, None, None, version="0.5.23")
    cap = int(swa.request_capacity(plan.args, model.spec, plan.profile.max_total_num_tokens))
    assert best.concurrency == cap < plan.profile.max_total_num_tokens // 8192


def test_the_search_sizes_the_request_capped_swa_pool_as_the_plan_does():
    """With --disable-radix-cache and --max-running-requests (0.5.14+) the SWA sub-pool comes from the request cap:
    every ranked point re-planned gives the search's KV tokens and pool bytes (the capped sub-pool's, not the
    ratio's), its R requests fit the capped sub-pool by construction, and --swa-full-tokens-ratio, which this pool
    ignores, is never recommended."""
    from planner.engines.sglang.search import Needs, run_search  # noqa: PLC0415

    gpu, model = find_profile("h100-sxm"), resolve_model("gpt-oss-20b")
    flags = ["--disable-radix-cache", "--max-running-requests", "32"]
    res = run_search(gpu, model, flags, needs=Needs(context=32768), version="0.5.23")
    assert res.ranked
    for c in res.ranked:
        assert "--swa-full-tokens-ratio" not in c.chosen, c.flags
        p = make_plan(gpu, model, c.flags, {}, None, None, version="0.5.23")
        assert p.profile.max_total_num_tokens == c.kv_tokens, c.flags
        assert c.concurrency == 32
        assert p.profile.swa_tokens is not None  # the capped sub-pool, not int(N x ratio)
