"""Boot logs of DFLASH / DSPARK / NGRAM / STANDALONE launches (issue 14 item 6): their draft pools and DFLASH
lines at the planner.logs level, and `plan check` on each (tests/data/logs/spec/README.md: sources).

The assertions are on parsed events and on `plan check` giving a clean result (exit 0/1 with a report, or one
line on stderr with exit 2), never on the planner's refusal text, so they hold once the algorithms are
modelled."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.cli import main
from planner.logs import (
    CudaOutOfMemory,
    DFlashBlockSizeMismatch,
    DFlashDraftGraphDisabled,
    DFlashDraftRunner,
    DFlashFusedKV,
    KVCacheAllocated,
    LoadWeightEnd,
    MaxRunningRequestsCapped,
    SchedulerException,
    parse_dict_repr,
    parse_file,
    parse_log,
    spec_lines,
)

SPEC = Path(__file__).parent / "data" / "logs" / "spec"
GIB = 2**30
ALL = sorted(SPEC.glob("*.log"))


def launch(name: str):
    log = parse_file(SPEC / name)
    assert len(log.launches) == 1, name
    return log.launches[0]


def test_every_fixture_names_its_source():
    readme = (SPEC / "README.md").read_text()
    assert len(ALL) == 7
    for f in ALL:
        head = f.read_text().splitlines()[0]
        assert head.startswith(("# Source: ", "# Synthetic, not a real log")), f.name
        assert "https://" in head or "corpus id" in f.read_text() or head.startswith("# Synthetic"), f.name
        assert f.name in readme


# ----------------------------------------------------------------------------- public excerpts


def test_club3090_1261_draft_pools_on_both_ranks_have_a_dflash_heads_geometry():
    la = launch("club3090-1261-rtx5090-tp2-dflash-draft-pools.log")
    assert sorted(la.ranks) == ["TP0", "TP1"] and la.anomalies == []
    for r in la.ranks.values():
        target, draft = r.kv_cache, r.draft_kv_cache
        assert (target.num_tokens, target.k_gib, target.is_draft) == (454112, 3.46, False)
        assert (draft.num_tokens, draft.k_gib, draft.v_gib, draft.is_draft) == (454112, 1.08, 1.08, True)
        assert r.draft_memory_pool_end is not None and r.draft_memory_pool_end.avail_gib < r.memory_pool_end.avail_gib
        # 5 layers x 4 KV heads per rank x 128 x 1 B (fp8) per token, to the log's 2 decimals
        assert round(454112 * 5 * 4 * 128 / GIB, 2) == draft.k_gib
    lines = spec_lines(la)
    assert lines[0].startswith("speculative decoding, algorithm not in the log")
    assert any("draft KV pool on TP1: #tokens 454,112, K 1.08 + V 1.08 GB" in x for x in lines)


def test_38202_dspark_draft_pool_oom_is_a_cuda_oom_with_its_byte_counts():
    la = launch("sglang-38202-kimi-k3-dspark-dp-attention-oom.log")
    f = la.failure
    assert isinstance(f, CudaOutOfMemory) and la.outcome == "failed"
    assert f.tried_bytes == 4334813184 and f.gpu_index == 1
    assert f.free_gib == pytest.approx(3779919872 / GIB) and f.total_capacity_gib == pytest.approx(287431131136 / GIB)
    assert [e.rank for e in la.events if isinstance(e, SchedulerException)] == [{"DP": 1, "TP": 1, "EP": 1}]
    assert len(la.of(CudaOutOfMemory)) == 2  # the allocator warns twice before the exception


def test_miaai_7_mamba_cap_line():
    la = launch("miaai-7-dflash2-max-running-requests-capped.log")
    (cap,) = [e for e in la.spec_events if isinstance(e, MaxRunningRequestsCapped)]
    assert cap.value == 12 and not cap.malformed
    # the issue wrapped the line: the slot counts sit on the next (quoted) line, not on this one
    assert cap.max_mamba_cache_size is None and cap.slots_per_request is None


def test_qwen38_spark_dflash_asked_vs_granted():
    la = launch("qwen38-spark-dflash-asked-vs-granted.log")
    assert la.spec_algorithm == "DFLASH" and la.has_draft_model is True and la.speculative is True
    assert la.server_args["max_running_requests"] == 8 and la.summary.max_running_requests == 6
    assert la.summary.max_total_num_tokens == 604727 and la.summary.available_gpu_mem_gib == 32.69
    assert la.outcome == "completed"


# ----------------------------------------------------------------------------- synthetic (0.5.23 format strings)


def test_dflash_0523_lines_draft_load_pool_and_runner():
    la = launch("synthetic-0.5.23-dflash-rtxpro6000.log")
    assert la.server_args_event.form == "dict" and la.server_args["speculative_num_draft_tokens"] == 16
    assert la.spec_algorithm == "DFLASH" and la.has_draft_model is True
    r = la.ranks[""]
    assert r.draft_load_end.model_class == "DFlashDraftModel" and r.draft_load_end.is_draft
    assert r.kv_cache.k_gib == 1.83 and r.draft_kv_cache.k_gib == 0.57 and r.draft_kv_cache.is_draft
    runner = next(e for e in la.spec_events if isinstance(e, DFlashDraftRunner))
    assert (runner.block_size, runner.draft_window_size, runner.attention_backend, runner.model_class,
            runner.compact_cache) == (16, None, "flashinfer", "DFlashDraftModel", False)
    fused = next(e for e in la.spec_events if isinstance(e, DFlashFusedKV))
    assert (fused.n_layers, fused.num_kv_heads, fused.head_dim) == (5, 8, 128)
    cap = next(e for e in la.spec_events if isinstance(e, MaxRunningRequestsCapped))
    assert (cap.value, cap.max_mamba_cache_size, cap.slots_per_request) == (12, 64, 5)
    assert cap.value == cap.max_mamba_cache_size // cap.slots_per_request
    assert la.summary.max_running_requests == cap.value
    assert la.anomalies == []


def test_ngram_has_no_draft_model_and_a_repeated_pool_is_not_a_draft():
    la = launch("synthetic-0.5.23-ngram-h200.log")
    assert la.spec_algorithm == "NGRAM" and la.speculative is True and la.has_draft_model is False
    r = la.ranks[""]
    assert r.kv_cache.num_tokens == 800000 and r.draft_kv_cache is None and r.draft_load_end is None
    assert any("no draft model" in x for x in spec_lines(la))
    # a second 'Load weight begin' under NGRAM is a reload (a new launch), never a draft load
    text = (SPEC / "synthetic-0.5.23-ngram-h200.log").read_text().splitlines()
    twice = parse_log(text + [x for x in text if "Load weight" in x])
    assert len(twice.launches) == 2
    assert not any(getattr(e, "is_draft", False) for e in twice.events)


def test_standalone_second_full_model_is_the_draft():
    la = launch("synthetic-0.5.23-standalone-h200.log")
    assert la.spec_algorithm == "STANDALONE" and la.has_draft_model is True
    r = la.ranks[""]
    loads = r.of(LoadWeightEnd)
    assert [e.is_draft for e in loads] == [False, True] and loads[1].model_class == "Qwen3ForCausalLM"
    kvs = r.of(KVCacheAllocated)
    assert [(e.k_gib, e.is_draft) for e in kvs] == [(12.21, False), (6.87, True)]
    # per-token K of each pool is its own model's geometry (to the log's 2 decimals)
    assert round(100000 * 64 * 8 * 128 * 2 / GIB, 2) == kvs[0].k_gib
    assert round(100000 * 36 * 8 * 128 * 2 / GIB, 2) == kvs[1].k_gib


def test_other_dflash_lines_and_the_first_runner_form():
    base = "[2026-12-01 12:00:00] "
    la = parse_log([base + x for x in (
        "server_args={'model_path': 'm', 'speculative_algorithm': 'DFLASH'}",
        "Initialized DFLASH draft runner. attention_backend=fa3, model=DFlashDraftModel, block_size=16",
        "DFLASH block size mismatch: using speculative_num_draft_tokens=8 but draft config block_size=16.",
        "Disable DFLASH draft cuda graph because only 1.25 GB GPU memory is available after target backend "
        "initialization.",
    )]).launches[0]
    runner, mismatch, graph = la.spec_events
    assert isinstance(runner, DFlashDraftRunner) and runner.block_size == 16 and runner.draft_window_size is None
    assert isinstance(mismatch, DFlashBlockSizeMismatch) and (mismatch.num_draft_tokens, mismatch.config_block_size) == (8, 16)
    assert isinstance(graph, DFlashDraftGraphDisabled) and graph.avail_gib == 1.25
    lines = spec_lines(la)
    assert "DFLASH runs 8 draft tokens, the draft config's block_size is 16" in lines


def test_dict_dump_parsing_and_its_version_bound():
    args, complete, unparsed = parse_dict_repr(
        "{'model_path': '/m', 'model_loader_extra_config': {'tp_size': 99}, 'tp_size': 2, 'x': None, 'l': [1, 2]}")
    assert args == {"model_path": "/m", "model_loader_extra_config": {"tp_size": 99}, "tp_size": 2, "x": None,
                    "l": [1, 2]} and complete and unparsed == []
    args, complete, _ = parse_dict_repr("{'model_path': '/m', 'tp_size': 2, 'specul")
    assert args == {"model_path": "/m", "tp_size": 2} and not complete
    from planner.logs import detect_version  # noqa: PLC0415

    assert detect_version(parse_log(["[2026-12-01 12:00:00] server_args={'tp_size': 1}"])) == ">=0.5.19"


# ----------------------------------------------------------------------------- plan check on each file


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_plan_check_gives_a_clean_result_and_says_what_it_read(path, capsys):
    gpu = "h200" if "h200" in path.name else "rtxpro6000"
    code = main(["check", str(path), "--gpu", gpu, "--model", _model_of(path)])
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    assert code in (0, 1, 2)
    if code == 2:  # a refusal (today for these algorithms): one line, naming what the log held
        assert out.err.count("\n") == 1 and "read from the log:" in out.err
    elif "38202" in path.name:  # no ServerArgs or draft line in the excerpt: what it read is the failure
        assert "Outcome in the log: failed (memory allocation failed with OOM on device 1" in out.out
        assert "Tried to allocate 4.04 GiB" in out.out
    else:
        assert "read from the log:" in out.out


def _model_of(path: Path) -> str:
    return {"synthetic-0.5.23-ngram-h200.log": "qwen3-8b",
            "synthetic-0.5.23-standalone-h200.log": "qwen3-32b"}.get(path.name, "qwen3.6-27b")


@pytest.mark.parametrize(("name", "gpu", "model", "draft_rows"), [
    ("synthetic-0.5.23-dflash-rtxpro6000.log", "rtxpro6000", "qwen3.6-27b", True),
    ("synthetic-0.5.23-standalone-h200.log", "h200", "qwen3-32b", True),
    ("synthetic-0.5.23-ngram-h200.log", "h200", "qwen3-8b", False),
])
def test_modelled_algorithms_are_checked_not_refused(name, gpu, model, draft_rows, capsys):
    """DFLASH / STANDALONE / NGRAM are modelled (issue 14): plan check re-plans the launch (exit 0 or 1, never
    the exit-2 refusal) and lists the draft pool rows the log has; an NGRAM launch has none. The synthetic
    logs' figures are invented (README), so only the rows' presence is asserted, not agreement."""
    code = main(["check", str(SPEC / name), "--gpu", gpu, "--model", model])
    out = capsys.readouterr().out
    assert code in (0, 1)
    rows = [ln for ln in out.splitlines() if ln.lstrip().startswith("draft KV K")]
    assert bool(rows) == draft_rows
