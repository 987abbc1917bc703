"""planner.engines.vllm.logs.read_log on the committed public vLLM boot logs and on the vLLM oracle's own log lines.

tests/data/calibration/vllm/index.json lists every excerpt with the facts it shows (written from the excerpt by hand);
each must come out of read_log exactly. The oracle's logs (vLLM's own logger calls, tests/data/calibration/vllm/oracle/)
must give back the summary's figures as vLLM rounds them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.engines.vllm.logs import read_log

DIR = Path(__file__).parent / "data" / "calibration" / "vllm"
INDEX = json.loads((DIR / "index.json").read_text(encoding="utf-8"))["logs"]
GIB = 1 << 30


def test_index_lists_every_log_once():
    files = sorted(p.name for p in DIR.glob("*.log"))
    listed = [e["file"] for e in INDEX]
    assert sorted(listed) == files
    assert len(set(listed)) == len(listed)
    assert len(files) >= 15


@pytest.mark.parametrize("entry", INDEX, ids=[e["file"] for e in INDEX])
def test_every_log_names_its_public_source(entry):
    head = (DIR / entry["file"]).read_text(encoding="utf-8").splitlines()
    assert head[0].startswith("# Source: https://github.com/")
    assert entry["source"] in head[0]
    assert any(line.startswith("# Shows:") for line in head[:4])
    assert entry["outcome"] in ("booted", "failed", "unknown")


@pytest.mark.parametrize("entry", INDEX, ids=[e["file"] for e in INDEX])
def test_reader_extracts_every_listed_fact(entry):
    facts = read_log((DIR / entry["file"]).read_text(encoding="utf-8"))
    got = facts.as_dict()
    for key, want in entry["expect"].items():
        if key == "failure":
            assert facts.failure is not None and facts.failure.kind == want, (key, facts.failure)
        elif key in ("max_num_seqs", "mamba_blocks", "needed_gib", "available_gib", "estimated_max_model_len",
                     "tried_mib") and facts.failure is not None and key in facts.failure.numbers:
            assert facts.failure.numbers[key] == want, key
        else:
            assert got[key] == want, (key, got[key], want)
    if entry["outcome"] == "failed":
        assert facts.failure is not None and facts.booted is False
    else:
        assert facts.failure is None and facts.booted is not False


def test_the_corpus_covers_every_listed_line_and_failure():
    """Between them the committed logs show every fact the brief lists (issue #26 item 4)."""
    seen: set[str] = set()
    kinds: set[str] = set()
    for e in INDEX:
        f = read_log((DIR / e["file"]).read_text(encoding="utf-8"))
        seen |= {k for k, v in f.as_dict().items() if v not in (None, {}, [])}
        if f.failure:
            kinds.add(f.failure.kind)
    for fact in ("version", "model", "args", "tp", "weights_gib", "available_kv_gib", "kv_tokens", "concurrency",
                 "cudagraph_estimate_gib", "cudagraph_actual_gib", "graph_capture_s", "init_engine_s", "consumed_gib",
                 "peak_activation_gib", "cuda_total_gib"):
        assert fact in seen, fact
    assert {"mamba_blocks", "max_model_len", "no_kv_memory", "cuda_oom"} <= kinds
    classes = {e["gpu_class"] for e in INDEX if e["gpu_class"]}
    assert {"sm86", "sm90", "sm100", "sm12x"} <= classes


ORACLE = [json.loads(line) for line in (DIR / "oracle" / "reference_logs.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("case", ORACLE, ids=[f"{c['vllm_version']}-{c['id']}" for c in ORACLE])
def test_reader_on_the_oracles_own_log_lines(case):
    s = case["summary"]
    lines = list(case["vllm_log"])
    if s["outcome"] == "startup_failed":  # the engine core prints the exception last
        lines.append(f"(EngineCore_DP0 pid=1) ERROR 12-01 10:00:00 [core.py:1] {s['error_type']}: {s['error_message']}")
    f = read_log("\n".join(lines))
    if s["available_kv_bytes"] is not None:
        assert f.available_kv_gib == round(s["available_kv_bytes"] / GIB, 2)
    if s["outcome"] == "ok":
        assert f.kv_tokens == s["kv_cache_size_tokens"]
        assert f.concurrency == round(s["max_concurrency"], 2)
        assert f.concurrency_tokens == s["max_model_len"] == f.max_model_len
        assert f.failure is None and f.booted
    else:
        assert f.failure is not None and f.booted is False
        msg = s["error_message"]
        if "Mamba cache blocks" in msg:
            assert f.failure.kind == "mamba_blocks"
            assert f"({f.failure.numbers['mamba_blocks']})" in msg
        elif "To serve at least one request" in msg:
            assert f.failure.kind == "max_model_len"
            assert f.failure.numbers["max_model_len"] == s["max_model_len"]
        elif "No available memory" in msg:
            assert f.failure.kind == "no_kv_memory"


PREFIXES = (
    "",
    "(EngineCore_DP0 pid=123) INFO 12-01 10:00:00 [gpu_worker.py:460] ",
    "(Worker_TP1 pid=9) INFO 05-09 10:37:04 [gpu_worker.py:460] ",
    "2026-07-08T22:40:06.098303108Z (EngineCore pid=542) INFO 07-08 22:40:06 [gpu_worker.py:508] ",
    "(EngineCore_DP0 pid=181642) [Stage-0] INFO 02-02 18:25:03 [gpu_worker.py:358] ",
    "vllm-1  | (APIServer pid=1) INFO 08-06 10:08:29 [utils.py:233] ",
    "> ",
)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_prefixes_do_not_matter(prefix):
    text = "\n".join(prefix + line for line in (
        "Model loading took 15.27 GiB memory and 4.2 seconds",
        "Available KV cache memory: 61.7 GiB",
        "GPU KV cache size: 484,864 tokens, Maximum concurrency for 131,072 tokens per request: 3.70x",
        "Graph capturing finished in 7 secs, took 0.61 GiB",
        "CUDA graph pool memory: 0.6 GiB (actual), 0.89 GiB (estimated), difference: 0.29 GiB (48.3%).",
        "init engine (profile, create kv cache, warmup model) took 41.22 s",
        "non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'tensor_parallel_size': 2, "
        "'compilation_config': CompilationConfig(mode=<CompilationMode.VLLM_COMPILE: 3>), 'max_num_seqs': 32}",
    ))
    f = read_log(text)
    assert (f.weights_gib, f.available_kv_gib, f.kv_tokens, f.concurrency, f.concurrency_tokens) == (
        15.27, 61.7, 484864, 3.7, 131072)
    assert (f.graph_capture_s, f.cudagraph_actual_gib, f.cudagraph_estimate_gib, f.init_engine_s) == (7.0, 0.61, 0.89, 41.22)
    assert f.model == "meta-llama/Llama-3.1-8B-Instruct" and f.tp == 2 and f.max_num_seqs == 32
    assert f.booted and f.failure is None


def test_first_rank_is_the_fact_and_every_rank_is_kept():
    f = read_log("(Worker_TP0 pid=1) INFO Available KV cache memory: 11.06 GiB\n"
                 "(Worker_TP1 pid=2) INFO Available KV cache memory: 11.04 GiB\n")
    assert f.available_kv_gib == 11.06 and f.per_rank["available_kv_gib"] == [11.06, 11.04] and f.tp == 2


def test_nothing_is_invented_from_an_unrelated_log():
    f = read_log("INFO 12-01 starting\nWARNING something else entirely\n")
    assert f.weights_gib is None and f.failure is None and f.booted is None and f.args == {}
