"""planner.logs: SGLang boot-log parsing (events, launches, failures, version hints).

Fixtures in tests/data/logs/: two real excerpts from public GitHub issues (source in their '#'
header) and synthetic logs written from the format strings of sglang-0.5.11-memory.md section 7.
"""

from __future__ import annotations

import gzip
import math
import os
import random
from datetime import datetime
from pathlib import Path

import pytest

from planner.logs import (
    CudaGraphBatchSizes,
    CudaGraphBegin,
    CudaGraphEnd,
    CudaOutOfMemory,
    ExceptionMessage,
    InitDistributedEnd,
    InitializationFailed,
    KVCacheAllocated,
    KVCacheDtype,
    LoadWeightBegin,
    LoadWeightEnd,
    MambaCacheAllocated,
    MaxRunningRequestsReset,
    MaxTotalTokensClamped,
    MemoryPoolEnd,
    NotEnoughMemory,
    SchedulerException,
    SchedulerSummary,
    ServerArgsDump,
    ServerReady,
    SpecVersion,
    detect_version,
    guess_version,
    interleave_reasons,
    interleaved,
    parse_dataclass_repr,
    parse_file,
    parse_line,
    parse_log,
)

DATA = Path(__file__).parent / "data" / "logs"
REAL_059 = DATA / "sglang-0.5.9-qwen3.5-397b-tp2-rtx4090.log"
REAL_DRAFT = DATA / "sglang-tp2-rtx5090-draft-kv.log"
SPEC = DATA / "synthetic-0.5.11-tp1-spec.log"
NEM = DATA / "synthetic-0.5.11-not-enough-memory.log"
OOM = DATA / "synthetic-0.5.11-tp2-capture-oom.log"
TWO = DATA / "synthetic-0.5.11-two-launches.log"
INTERLEAVED = DATA / "synthetic-0.5.11-interleaved.log"
DPTP = DATA / "synthetic-0.5.11-dp2-tp2-ms.log"
ALL = sorted(DATA.glob("*.log"))


def test_fixtures_have_source_headers():
    assert len(ALL) >= 8
    for p in ALL:
        first = p.read_text().splitlines()[0]
        assert first.startswith("# Source: github.com/") or first.startswith("# Synthetic"), p.name


# ---------------------------------------------------------------- lines


def test_parse_line_prefixes():
    ln = parse_line("[2026-02-27 17:10:27 TP0] Load weight end. x", 7)
    assert ln.lineno == 7 and ln.prefixed
    assert ln.timestamp == datetime(2026, 2, 27, 17, 10, 27)
    assert ln.rank == {"TP": 0} and ln.rank_key == "TP0"
    assert ln.text == "Load weight end. x"

    ln = parse_line("[2026-05-03 08:00:10.250 DP1 TP3] msg")
    assert ln.timestamp == datetime(2026, 5, 3, 8, 0, 10, 250000)
    assert ln.rank == {"DP": 1, "TP": 3} and ln.rank_key == "DP1 TP3"

    ln = parse_line("[2026-05-03 08:00:10 PP0 TP1] msg")
    assert ln.rank == {"PP": 0, "TP": 1}
    ln = parse_line("[2026-05-03 08:00:10 DP0 ATTN_CP1 MOE_DP2 TP3 EP4] msg")
    assert ln.rank == {"DP": 0, "ATTN_CP": 1, "MOE_DP": 2, "TP": 3, "EP": 4}

    ln = parse_line("[2026-05-01 12:00:00] Load weight begin. avail mem=94.59 GB")
    assert ln.rank == {} and ln.rank_key == "" and ln.prefixed

    ln = parse_line("sglang-1  | \x1b[32m[2026-05-01 12:00:00 TP1] Memory pool end. avail mem=1.00 GB\x1b[0m\r\n")
    assert ln.rank == {"TP": 1} and ln.text == "Memory pool end. avail mem=1.00 GB"

    ln = parse_line("  File \"x.py\", line 3, in f")
    assert not ln.prefixed and ln.timestamp is None and ln.rank == {}


# ---------------------------------------------------------------- real excerpts


def test_real_059_tp2_excerpt():
    p = parse_file(REAL_059)
    assert p.path == str(REAL_059) and p.mtime == pytest.approx(os.stat(REAL_059).st_mtime)
    assert p.mtime_datetime is not None
    assert len(p.launches) == 1
    la = p.latest
    assert la.completed and not la.failed and la.outcome == "completed"
    assert la.server_args is None and la.start_reason == "first_event"
    assert list(la.ranks) == ["TP0"]
    r = la.ranks["TP0"]
    lwe = r.load_end
    assert lwe.model_class == "Qwen3_5MoeForConditionalGeneration"
    assert lwe.dtype == "torch.bfloat16" and lwe.quant is None
    assert (lwe.elapsed_s, lwe.avail_gib, lwe.mem_usage_gib) == (653.47, 19.08, 3.76)
    assert la.of(KVCacheDtype)[0].dtype == "torch.bfloat16"
    m = r.mamba_cache
    assert (m.max_mamba_cache_size, m.conv_gib, m.ssm_gib) == (82, 0.13, 7.29)
    assert m.intermediate_ssm_gib is None and m.intermediate_conv_gib is None and not m.malformed
    kv = r.kv_cache
    assert (kv.num_tokens, kv.k_gib, kv.v_gib, kv.dtype) == (580364, 4.15, 4.15, None)
    assert kv.total_gib == pytest.approx(8.30) and kv.total_bytes == round(8.30 * 2**30)
    assert r.memory_pool_end.avail_gib == 4.02 and r.draft_kv_cache is None
    s = la.summary
    assert (s.max_total_num_tokens, s.chunked_prefill_size, s.max_prefill_tokens, s.max_running_requests,
            s.context_len, s.available_gpu_mem_gib) == (580364, 2048, 16384, 1, 8192, 3.63)
    assert la.first_timestamp == datetime(2026, 2, 27, 17, 10, 27)
    assert la.last_timestamp == datetime(2026, 2, 27, 17, 10, 29)
    assert not any(e.malformed for e in la.events)
    assert detect_version(p) == "0.5.9"  # dtype= in Load weight end
    assert not interleaved(p)


def test_real_draft_kv_excerpt():
    p = parse_file(REAL_DRAFT)
    assert len(p.launches) == 1
    la = p.latest
    assert not la.completed and not la.failed and la.outcome == "incomplete"
    t0, t1 = la.ranks["TP0"], la.ranks["TP1"]
    assert t0.kv_cache.k_gib == 3.46 and t0.kv_cache.dtype == "torch.float8_e4m3fn" and not t0.kv_cache.is_draft
    assert t0.memory_pool_end.avail_gib == 8.40
    assert t0.draft_kv_cache.k_gib == 1.08 and t0.draft_kv_cache.num_tokens == 454112
    assert t0.draft_memory_pool_end.avail_gib == 6.23
    assert t1.kv_cache.k_gib == 3.46 and t1.memory_pool_end.avail_gib == 7.63
    assert t1.draft_kv_cache is None and t1.draft_memory_pool_end is None
    assert [e.is_draft for e in la.of(KVCacheAllocated)] == [False, True, False]
    g = guess_version(p)
    assert detect_version(p) == ">=0.5.13"  # "KV Cache is allocated. dtype: ..." is not 0.5.11
    assert not g.contains("0.5.11") and g.contains("0.5.13") and g.contains("0.5.23")
    assert any("sglang-versions.md" in h.source for h in g.hints)


# ---------------------------------------------------------------- synthetic 0.5.11 spec run


def test_spec_run_tp1():
    p = parse_file(SPEC)
    assert len(p.launches) == 1
    la = p.latest
    assert la.completed and not la.failed and la.failure is None and la.failure_phase is None
    assert la.speculative is True
    sa = la.server_args
    assert sa["mem_fraction_static"] == 0.7592325781249999
    assert sa["speculative_algorithm"] == "EAGLE" and sa["speculative_num_draft_tokens"] == 4
    assert sa["max_mamba_cache_size"] == 24 and sa["mamba_ssm_dtype"] is None
    assert sa["cuda_graph_bs"][:4] == [1, 2, 4, 8] and sa["cuda_graph_bs"][-1] == 256
    assert sa["disable_radix_cache"] is False and sa["json_model_override_args"] == "{}"
    assert la.server_args_event.complete and la.server_args_event.unparsed == []

    spec = la.of(SpecVersion)
    assert len(spec) == 1 and spec[0].version == 2

    r = la.ranks[""]
    assert r.load_begin.avail_gib == 94.59 and not r.load_begin.is_draft
    assert r.load_end.model_class == "Qwen3_5ForConditionalGeneration" and r.load_end.mem_usage_gib == 51.0
    assert r.draft_load_end.model_class == "Qwen3_5ForCausalLMMTP" and r.draft_load_end.mem_usage_gib == 5.5
    assert [e.is_draft for e in la.of(LoadWeightBegin)] == [False, True]
    m = r.mamba_cache
    assert (m.max_mamba_cache_size, m.conv_gib, m.ssm_gib, m.intermediate_ssm_gib, m.intermediate_conv_gib) == (
        24, 0.07, 3.52, 2.81, 0.05)
    assert m.total_gib == pytest.approx(6.45)
    assert (r.kv_cache.num_tokens, r.kv_cache.k_gib) == (247120, 7.54) and not r.kv_cache.is_draft
    assert (r.draft_kv_cache.num_tokens, r.draft_kv_cache.k_gib) == (247120, 0.47)
    assert r.memory_pool_end.avail_gib == 22.05 and r.draft_memory_pool_end.avail_gib == 14.81
    assert la.of(MemoryPoolEnd, draft=True) == [r.draft_memory_pool_end]

    bs = la.of(CudaGraphBatchSizes)
    assert len(bs) == 1 and bs[0].batch_sizes == [1, 2, 3, 4] and bs[0].graph == "decode"
    begins = la.of(CudaGraphBegin)
    assert [(b.graph, b.avail_gib) for b in begins] == [("decode", 21.60), ("draft", 19.41)]
    ends = la.of(CudaGraphEnd)
    assert [(e.graph, e.elapsed_s, e.mem_usage_gib, e.avail_gib) for e in ends] == [
        ("decode", 7.02, 0.35, 21.25), ("draft", 4.11, 0.12, 19.29)]
    inits = la.of(InitDistributedEnd)
    assert [(i.elapsed_s, i.mem_usage_gib) for i in inits] == [(0.85, 0.51), (0.01, 0.0)]
    s = la.summary
    assert (s.max_total_num_tokens, s.max_running_requests, s.context_len, s.available_gpu_mem_gib) == (
        247120, 4, 262144, 19.29)
    ready = la.of(ServerReady)
    assert [x.how for x in ready] == ["uvicorn", "fired_up"]
    assert ready[0].url == "http://127.0.0.1:30000" and ready[0].timestamp is None and not ready[0].inherited
    assert not any(e.malformed for e in la.events)
    # Spec v2 default (>=0.5.11), KV without dtype (<=0.5.12)
    assert detect_version(p) == "0.5.11-0.5.12"
    assert guess_version(la).contains("0.5.11")
    assert not interleaved(p)


# ---------------------------------------------------------------- failures


def test_not_enough_memory():
    p = parse_file(NEM)
    assert len(p.launches) == 1
    la = p.latest
    assert la.failed and not la.completed and la.outcome == "failed"
    assert la.of(MaxRunningRequestsReset)[0].value == 48
    assert la.server_args["max_running_requests"] == 48
    assert la.events[0].kind == "max_running_requests_reset"  # warnings precede the dump
    f = la.failure
    assert isinstance(f, NotEnoughMemory)
    assert f.exc_type == "RuntimeError"
    assert f.message == "Not enough memory. Please try to increase --mem-fraction-static."
    assert f.inherited and f.timestamp == datetime(2026, 5, 1, 11, 41, 43) and f.rank == {}
    kinds = [type(x) for x in la.failures]
    assert kinds == [SchedulerException, NotEnoughMemory, InitializationFailed]
    init = la.failures[-1]
    assert init.timestamp is None and not init.inherited  # uncaught traceback of the main process
    assert la.failure_phase == "memory_pool"
    assert la.of(MambaCacheAllocated) == [] and la.of(KVCacheAllocated) == []
    assert detect_version(p) == "0.5.11-0.5.13"  # mamba_scheduler_strategy field: <=0.5.13


def test_torch_oom_during_capture_tp2():
    p = parse_file(OOM)
    assert len(p.launches) == 1
    la = p.latest
    assert la.failed and not la.completed
    f = la.failure
    assert isinstance(f, CudaOutOfMemory)
    assert f.exc_type == "torch.OutOfMemoryError"
    assert (f.tried_amount, f.tried_unit) == (1.25, "GiB") and f.tried_gib == 1.25
    assert f.tried_bytes == round(1.25 * 2**30)
    assert f.gpu_index == 0 and f.total_capacity_gib == 31.37
    assert f.free_gib == pytest.approx(812 / 1024)
    assert f.rank == {"TP": 0} and f.inherited
    assert la.failure_phase == "cuda_graph"
    ooms = la.of(CudaOutOfMemory)
    assert len(ooms) == 2
    assert ooms[1].exc_type == "Exception" and ooms[1].during_capture and ooms[1].rank == {"TP": 0}
    assert isinstance(la.failures[0], SchedulerException)
    # per-rank
    t0, t1 = la.ranks["TP0"], la.ranks["TP1"]
    assert t0.load_end.quant == "modelopt_fp4" and t0.load_end.quant_str == "quant=modelopt_fp4, fmt=e2m1"
    assert t0.load_end.dtype is None and t0.load_end.avail_gib == 21.58
    assert t1.memory_pool_end.avail_gib == 1.07 and t0.memory_pool_end.avail_gib == 1.05
    assert t0.failures and not t1.failures
    assert la.server_args["speculative_algorithm"] is None and la.speculative is False
    assert detect_version(p) == "0.5.10-0.5.12"


def test_two_launches_appended():
    p = parse_file(TWO)
    assert len(p.launches) == 2
    a, b = p.launches
    assert a.start_reason == "server_args" and b.start_reason == "server_args"
    assert a.completed and not a.failed and a.outcome == "completed"
    assert a.server_args["mem_fraction_static"] == 0.79807
    assert b.failed and not b.completed and isinstance(b.failure, NotEnoughMemory)
    assert b.server_args["mem_fraction_static"] == 0.5
    assert b.failure_phase == "memory_pool"
    assert a.last_timestamp < b.first_timestamp
    assert p.latest is b
    assert not interleaved(p)
    assert a.ranks[""].kv_cache.num_tokens == 215195 and b.ranks[""].kv_cache is None


def test_two_launches_without_dumps_split_at_load_weight_begin():
    text = "\n".join(ln for ln in TWO.read_text().splitlines() if "server_args=" not in ln)
    p = parse_log(text)
    assert len(p.launches) == 2
    assert p.launches[1].start_reason == "load_after_done"
    assert p.launches[0].completed and p.launches[1].failed
    assert [e.is_draft for e in p.events if isinstance(e, LoadWeightBegin)] == [False, False]


def test_failed_then_retried_launch_takes_its_warnings():
    p = parse_log(NEM.read_text() + SPEC.read_text())
    assert [la.outcome for la in p.launches] == ["failed", "completed"]
    second = p.launches[1]
    assert isinstance(second.events[0], SpecVersion)  # moved in front of its own dump
    assert not p.launches[0].of(SpecVersion)[1:]  # the first launch keeps only its own one
    assert len(p.launches[0].of(SpecVersion)) == 1


def test_killed_during_load_then_relaunched_without_dump():
    text = "\n".join([
        "[2026-05-01 08:00:22] Load weight begin. avail mem=95.09 GB",
        "[2026-05-01 08:05:00] Load weight begin. avail mem=95.09 GB",
        "[2026-05-01 08:06:20] Load weight end. elapsed=78.01 s, type=Qwen3_5ForConditionalGeneration, "
        "avail mem=44.09 GB, mem usage=51.00 GB.",
    ])
    p = parse_log(text)
    assert [la.start_reason for la in p.launches] == ["first_event", "reload"]
    assert not p.launches[1].ranks[""].load_end.is_draft
    assert not interleaved(p)


def test_failure_after_completed_starts_new_launch():
    text = TWO.read_text().splitlines()[:16]  # first launch only (up to the decode stats)
    text += [
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py", line 2397, in f',
        "ValueError: mamba extra_buffer is not compatible with --disable-radix-cache Overlap scheduling "
        "is already supported with no_buffer + disable_radix_cache. Please use --mamba-scheduler-strategy "
        "no_buffer instead.",
    ]
    p = parse_log(text)
    assert len(p.launches) == 2
    assert p.launches[0].outcome == "completed"
    b = p.launches[1]
    assert b.start_reason == "failure_after_completed" and b.server_args is None
    assert isinstance(b.failure, ExceptionMessage) and b.failure.exc_type == "ValueError"
    assert b.failure.message.startswith("mamba extra_buffer is not compatible")
    assert b.failure_phase == "server_args"
    assert detect_version(b) == "0.5.10-0.5.13"


def test_runtime_failure_after_start_stays_in_launch():
    text = TWO.read_text().splitlines()[:16] + [
        "[2026-05-01 09:20:00] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "x.py", line 1, in f',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity "
        "of 95.59 GiB of which 100.00 MiB is free.",
    ]
    p = parse_log(text)
    assert len(p.launches) == 1
    la = p.latest
    assert la.completed and la.failed and la.outcome == "failed_after_start"
    assert la.failure.tried_gib == pytest.approx(0.5) and la.failure_phase == "serving"


def test_exception_lines_and_warnings():
    text = "\n".join([
        "[2026-05-01 10:00:00] Spec v1 is used for eagle/eagle3/standalone speculative decoding because "
        "speculative_eagle_topk > 1.",
        "AssertionError: mamba_track_interval 2 must be greater than or equal to speculative_num_draft_tokens 4",
        "AssertionError",
        "RuntimeError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes.",
        "    raise ValueError('indented source lines are not failures')",
        "CustomException: not one of ours",
    ])
    p = parse_log(text)
    la = p.latest
    sv = la.of(SpecVersion)[0]
    assert sv.version == 1 and sv.reason == "speculative_eagle_topk > 1"
    ex = la.of(ExceptionMessage)
    assert [(e.exc_type, e.message[:21]) for e in ex] == [
        ("AssertionError", "mamba_track_interval "), ("AssertionError", ""), ("RuntimeError", "The memory capacity i")]
    assert la.failure is ex[0]


def test_older_torch_oom_text_and_cuda_error():
    ln = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 1; 23.65 GiB total "
          "capacity; 22.80 GiB already allocated; 3.06 MiB free; 22.90 GiB reserved in total by PyTorch)")
    f = parse_log(ln).latest.failure
    assert isinstance(f, CudaOutOfMemory)
    assert f.exc_type == "torch.cuda.OutOfMemoryError" and f.tried_unit == "MiB"
    assert f.tried_gib == pytest.approx(20 / 1024) and f.gpu_index == 1
    assert f.total_capacity_gib == 23.65 and f.free_gib == pytest.approx(3.06 / 1024)
    f = parse_log("RuntimeError: CUDA error: out of memory").latest.failure
    assert isinstance(f, CudaOutOfMemory) and f.tried_amount is None and f.exc_type == "RuntimeError"


# ---------------------------------------------------------------- interleaving


def test_interleaved_two_servers_one_file():
    p = parse_file(INTERLEAVED)
    assert interleaved(p)
    reasons = interleave_reasons(p)
    assert any("'Load weight end' lines for 1 'Load weight begin'" in r for r in reasons)
    assert any("'max_total_num_tokens=' lines" in r for r in reasons)


def test_interleaved_by_overlapping_time_ranges():
    a = SPEC.read_text().splitlines()
    b = TWO.read_text().splitlines()[:16]
    # run B's lines (08:00-08:01) rewritten into the middle of run A's time range (12:00-12:02)
    b = [ln.replace("2026-05-01 08:0", "2026-05-01 12:0") for ln in b]
    p = parse_log(a + b)
    assert len(p.launches) == 2
    assert interleaved(p)
    assert any("overlap in time" in r for r in interleave_reasons(p))


def test_sequential_launches_not_interleaved():
    for path in (TWO, SPEC, NEM, OOM, DPTP, REAL_059, REAL_DRAFT):
        assert not interleaved(parse_file(path)), path.name


# ---------------------------------------------------------------- DP/TP prefixes, milliseconds


def test_dp_tp_prefixes_and_milliseconds():
    p = parse_file(DPTP)
    assert len(p.launches) == 1
    la = p.latest
    assert set(la.ranks) == {"", "DP0 TP0", "DP1 TP1"}
    assert la.ranks["DP1 TP1"].rank == {"DP": 1, "TP": 1}
    assert la.first_timestamp == datetime(2026, 5, 3, 8, 0, 0, 15000)
    assert la.last_timestamp == datetime(2026, 5, 3, 8, 1, 5, 999000)
    assert la.ranks["DP1 TP1"].load_begin.timestamp.microsecond == 251000
    assert la.ranks["DP0 TP0"].memory_pool_end.avail_gib == 22.80
    assert la.ranks["DP1 TP1"].memory_pool_end.avail_gib == 22.83
    assert la.of(MemoryPoolEnd, rank="DP1 TP1")[0].avail_gib == 22.83
    assert not any(e.is_draft for e in la.of(KVCacheAllocated))
    assert la.summary.max_running_requests == 53 and la.completed
    assert la.server_args["enable_dp_attention"] is True


# ---------------------------------------------------------------- other line forms


def test_line_variants():
    lines = [
        "[2026-01-01 00:00:00] KV Cache is allocated. #tokens: 1000, KV size: 2.50 GB",  # MLA
        "[2026-01-01 00:00:01] SWA KV Cache is allocated. dtype: torch.bfloat16, #tokens: 10, K size: 0.01 GB, "
        "V size: 0.01 GB",
        "[2026-01-01 00:00:02] KV Cache VA upper bound. dtype: torch.bfloat16, #tokens: 10, K size: 0.02 GB, "
        "V size: 0.02 GB",
        "[2026-01-01 00:00:03] Post-capture KV sizing: KV cache allocated. dtype: torch.bfloat16, #tokens: 99, "
        "KV size: 1.25 GB, avail mem=3.50 GB",
        "[2026-01-01 00:00:04] max_total_tokens=500000 is larger than the profiled value 253340. Use the profiled "
        "value instead.",
        "[2026-01-01 00:00:05] Load weight end. Committed real weights after CUDA graph capture in 12.50 s "
        "(capture overlap window 3.00 s, startup overlap total 15.50 s)",
        "[2026-01-01 00:00:06] Memory baseline taken. mem usage=0.55 GB",
        "[2026-01-01 00:00:07] Capture piecewise CUDA graph begin. avail mem=10.00 GB",
        "[2026-01-01 00:00:08] Capture piecewise CUDA graph end. Time elapsed: 30.12 s. mem usage=1.10 GB. "
        "avail mem=8.90 GB.",
        "[2026-01-01 00:00:09] Capture draft extend cuda graph end. Time elapsed: 1.00 s. mem usage=0.10 GB. "
        "avail mem=8.80 GB.",
        "[2026-01-01 00:00:10] max_total_num_tokens=100, chunked_prefill_size=-1, max_prefill_tokens=16384, "
        "max_running_requests=2, context_len=4096, available_cpu_mem=100.00 GB",
        "[2026-01-01 00:00:11] Load weight end. elapsed=1.00 s, type=DeepseekV3ForCausalLM, quant=fp8, "
        "fmt=e4m3, avail mem=10.00 GB, mem usage=5.00 GB.",
    ]
    la = parse_log(lines).latest
    kvs = la.of(KVCacheAllocated)
    assert kvs[0].kv_gib == 2.5 and kvs[0].total_gib == 2.5 and kvs[0].k_gib is None and not kvs[0].malformed
    assert kvs[1].label == "SWA" and kvs[1].dtype == "torch.bfloat16" and not kvs[1].is_draft
    assert kvs[2].va_upper_bound and kvs[2].label is None
    assert kvs[3].post_capture and kvs[3].kv_gib == 1.25 and kvs[3].avail_gib == 3.5
    c = la.of(MaxTotalTokensClamped)[0]
    assert (c.requested, c.profiled) == (500000, 253340)
    lwes = la.of(LoadWeightEnd)
    assert lwes[0].variant == "overlap" and lwes[0].elapsed_s == 12.5 and not lwes[0].malformed
    assert lwes[1].quant == "fp8" and lwes[1].quant_str == "quant=fp8, fmt=e4m3"
    assert la.of(InitDistributedEnd)[0].variant == "baseline"
    assert la.of(InitDistributedEnd)[0].mem_usage_gib == 0.55
    assert [e.graph for e in la.of(CudaGraphEnd)] == ["piecewise", "draft_extend"]
    assert la.of(CudaGraphBegin)[0].graph == "piecewise"
    s = la.summary
    assert s.chunked_prefill_size == -1 and s.available_cpu_mem_gib == 100.0 and s.available_gpu_mem_gib is None
    g = guess_version(la)
    assert "memory_baseline_line" in [h.key for h in g.hints]  # lines of mixed versions: contradictory


def test_malformed_known_lines_are_flagged_not_dropped():
    lines = [
        "[2026-01-01 00:00:00] Load weight begin. avail mem=?? GB",
        "[2026-01-01 00:00:01] Load weight end. elapsed=3.0 s, type=X, avail mem=oops",
        "[2026-01-01 00:00:02] Mamba Cache is allocated. max_mamba_cache_size: 10, conv_state size: 0.1GB",
        "[2026-01-01 00:00:03] KV Cache is allocated. #tokens: many",
        "[2026-01-01 00:00:04] Memory pool end.",
        "[2026-01-01 00:00:05] Capture cuda graph bs [1, 2,",
        "[2026-01-01 00:00:06] Capture cuda graph end. Time elapsed: s.",
        "[2026-01-01 00:00:07] max_total_num_tokens=abc",
        "[2026-01-01 00:00:08] server_args=ServerArgs(",
        "[2026-01-01 00:00:09] something we do not know about",
        "garbage \x00\xff line",
    ]
    evs = parse_log(lines).events
    assert len(evs) == 9
    assert all(e.malformed for e in evs), [(e.kind, e.malformed) for e in evs]
    lwe = next(e for e in evs if isinstance(e, LoadWeightEnd))
    assert lwe.elapsed_s == 3.0 and lwe.model_class == "X" and lwe.avail_gib is None
    m = next(e for e in evs if isinstance(e, MambaCacheAllocated))
    assert m.max_mamba_cache_size == 10 and m.conv_gib == 0.1 and m.ssm_gib is None


def test_never_raises_on_truncated_or_random_lines():
    rng = random.Random(1234)
    for path in ALL:
        for ln in path.read_text().splitlines():
            for cut in range(0, len(ln) + 1, max(1, len(ln) // 40)):
                parse_log([ln[:cut]])
    alphabet = "[]()=,.:' \"<>{}0123456789TPDGBabcKVMmemory avail\\\n#-"
    for _ in range(300):
        parse_log("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 200))))
    # shuffled real lines: any order is accepted
    lines = [ln for p in ALL for ln in p.read_text().splitlines()]
    for _ in range(20):
        rng.shuffle(lines)
        parse_log(lines)


# ---------------------------------------------------------------- ServerArgs repr


def test_server_args_tricky_values():
    dump = (
        "[2026-05-01 12:00:01] server_args=ServerArgs(model_path='/models/a,b=c (v2)', chat_template=\"it's, x=1\", "
        "json_model_override_args='{\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 4.0}}', "
        "mem_fraction_static=0.7592325781249999, lora_paths={'a': '/x=1,(y)', 'b': None, 'c': [1, {'d': (2, 3)}]}, "
        "cuda_graph_bs=[1, 2, 4], speculative_algorithm=None, enable_x=True, disable_y=False, "
        "algo_enum=<SpeculativeAlgorithm.EAGLE: 1>, torch_dtype=torch.bfloat16, "
        "nested=LoRAConfig(r=8, alpha=16, name='q,=)'), tup=(1, 'a)'), neg=-1, sci=1e-05, big=1.5e+20, "
        "inf_val=inf, empty='', esc='a\\'b', unicode='\u00e9\u4e2d', last=None)"
    )
    ev = parse_log([dump]).latest.server_args_event
    a = ev.args
    assert ev.complete and not ev.malformed
    assert a["model_path"] == "/models/a,b=c (v2)"
    assert a["chat_template"] == "it's, x=1"
    assert a["json_model_override_args"] == '{"rope_scaling": {"type": "yarn", "factor": 4.0}}'
    assert a["mem_fraction_static"] == 0.7592325781249999
    assert a["lora_paths"] == {"a": "/x=1,(y)", "b": None, "c": [1, {"d": (2, 3)}]}
    assert a["cuda_graph_bs"] == [1, 2, 4]
    assert a["speculative_algorithm"] is None and a["enable_x"] is True and a["disable_y"] is False
    assert a["algo_enum"] == "<SpeculativeAlgorithm.EAGLE: 1>"
    assert a["torch_dtype"] == "torch.bfloat16"
    assert a["nested"] == "LoRAConfig(r=8, alpha=16, name='q,=)')"
    assert a["tup"] == (1, "a)")
    assert a["neg"] == -1 and a["sci"] == 1e-05 and a["big"] == 1.5e20
    assert math.isinf(a["inf_val"])
    assert a["empty"] == "" and a["esc"] == "a'b" and a["unicode"] == "\u00e9\u4e2d"
    assert a["last"] is None
    assert list(a)[-1] == "last" and len(a) == 21
    assert sorted(ev.unparsed) == ["algo_enum", "nested", "torch_dtype"]


def test_server_args_truncated_and_long():
    fields, complete, unparsed = parse_dataclass_repr("ServerArgs(model_path='x', tp_size=2, cuda_graph_bs=[1, 2")
    assert not complete
    assert fields["model_path"] == "x" and fields["tp_size"] == 2
    assert fields["cuda_graph_bs"] == "[1, 2" and unparsed == ["cuda_graph_bs"]
    fields, complete, _ = parse_dataclass_repr("ServerArgs(a='unterminated, b=1")
    assert not complete and fields == {"a": "'unterminated, b=1"}
    fields, complete, unparsed = parse_dataclass_repr("ServerArgs()")
    assert complete and fields == {} and unparsed == []

    body = ", ".join(f"f{i}={[i, str(i) + ',=)']!r}" for i in range(3000))
    fields, complete, unparsed = parse_dataclass_repr(f"ServerArgs({body})")
    assert complete and len(fields) == 3000 and not unparsed
    assert fields["f2999"] == [2999, "2999,=)"]


def test_duplicate_dump_is_one_launch():
    dump = "[2026-05-01 12:00:01] server_args=ServerArgs(model_path='m', tp_size=1)"
    p = parse_log([dump, dump, "[2026-05-01 12:00:05] Load weight begin. avail mem=10.00 GB"])
    assert len(p.launches) == 1 and len(p.latest.of(ServerArgsDump)) == 2


# ---------------------------------------------------------------- versions


def test_version_hints():
    base = "[2026-01-01 00:00:00] "
    mk = lambda *xs: parse_log([base + x for x in xs])  # noqa: E731
    kv13 = "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 10, K size: 0.01 GB, V size: 0.01 GB"
    assert detect_version(mk(kv13)) == ">=0.5.13"
    assert detect_version(mk(kv13, "server_args=ServerArgs(mamba_radix_cache_strategy='auto')")) == ">=0.5.14"
    assert detect_version(mk(kv13, "server_args=ServerArgs(mamba_full_memory_ratio=None, "
                                   "mamba_max_states_per_path=-1)")) == ">=0.5.20"
    assert detect_version(mk(kv13, "Max concurrent requests (per dp worker): 12")) == "0.5.13"
    # contradictory evidence -> None, and the guess says so
    p = mk(kv13, "Load weight end. elapsed=1.00 s, type=X, dtype=torch.bfloat16, avail mem=1.00 GB, mem usage=1.00 GB.")
    assert detect_version(p) is None and guess_version(p).contradictory
    assert detect_version(parse_log("nothing here")) is None
    assert str(guess_version(parse_log(""))) == "unknown"
    assert detect_version(mk("server_args=ServerArgs(speculative_algorithm='DFLASH')")) == ">=0.5.11"
    # latest launch with evidence wins
    p = parse_log(REAL_059.read_text().splitlines() + [base + "server_args=ServerArgs(tp_size=1)", base + kv13])
    assert len(p.launches) == 2 and detect_version(p) == ">=0.5.13"
    assert detect_version(p.launches[0]) == "0.5.9"


FLAGS = Path(__file__).parent.parent / "planner" / "engines" / "sglang" / "flags"


@pytest.mark.parametrize("minor", [9, 11, 12, 13, 16, 23])
def test_version_from_full_server_args_field_set(minor):
    """A dump holding every field of a release pins it (field sets from the argparse dumps)."""
    import json

    path = FLAGS / f"v0_5_{minor}.json"
    if not path.exists():
        pytest.skip("argparse dumps not available")
    actions = json.loads(path.read_text())["actions"]
    fields = ", ".join(f"{a['dest']}={a.get('default')!r}" for a in actions if a.get("dest") not in (None, "help"))
    p = parse_log([f"[2026-01-01 00:00:00] server_args=ServerArgs({fields})"])
    assert p.latest.server_args_event.complete
    g = guess_version(p)
    assert g.contains(f"0.5.{minor}") and not g.contradictory
    if minor in (9, 11, 12, 13, 16):
        assert detect_version(p) == f"0.5.{minor}"


def test_parse_file_gz(tmp_path):
    gz = tmp_path / "boot.log.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write(REAL_059.read_text())
    p = parse_file(gz)
    assert p.latest.summary.max_total_num_tokens == 580364 and p.mtime is not None
    assert p.num_lines == len(REAL_059.read_text().splitlines())


def test_misc_event_fields():
    la = parse_file(SPEC).latest
    assert isinstance(la.of(KVCacheDtype)[0], KVCacheDtype)
    assert la.ranks[""].load_end.mem_usage_bytes == 51 * 2**30
    assert la.end_lineno > la.start_lineno
    assert isinstance(la.summary, SchedulerSummary)
