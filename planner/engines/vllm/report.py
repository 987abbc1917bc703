"""The text report of one vLLM plan, rendered from the plan's JSON object (so text and JSON never disagree).

Blocks in order: the verdict (vLLM's own message when it refuses), the KV cache (blocks, tokens, the concurrency
at ``max_model_len``; 0.34's reserved capacity vs the blocks measured after warmup), the memory terms of
``Worker.determine_available_memory`` with the line each comes from, the KV-cache groups of hybrid models, the lines
vLLM would log (``sizing.size``'s), what was measured and what was estimated (``how``, the residual class), the
recommendation, the ``vllm serve`` line.
"""

from __future__ import annotations

from typing import Any

from planner.shell import shell_wrap

GIB = 1 << 30

# Worker.determine_available_memory's terms and the lines they come from, per release
_LINES = {
    "0.34.0": {"requested": "v1/worker/utils.py:743", "available": "v1/worker/gpu_worker.py:776-780",
               "concurrency": "v1/core/kv_cache_utils.py:1082", "measure": "v1/worker/extensible_kv_cache.py:592-618",
               "mamba": "config/compilation.py:1675"},
    "0.33.0": {"requested": "v1/worker/utils.py:724", "available": "v1/worker/gpu_worker.py:753-757",
               "concurrency": "v1/core/kv_cache_utils.py:1061", "mamba": "config/compilation.py:1526"},
}


def _gib(b: int | float | None) -> str:
    return "-" if b is None else f"{b / GIB:.2f} GiB"


def _cite(version: str, key: str) -> str:
    line = _LINES.get(version, {}).get(key)
    return f"  [{line} @{version}]" if line else ""


def _head(d: dict[str, Any]) -> list[str]:
    g, s = d["gpu"], d["summary"]
    par = f"tp {s.get('tensor_parallel_size') or 1}, pp {s.get('pipeline_parallel_size') or 1}, " \
          f"dp {s.get('data_parallel_size') or 1}"
    src = "" if d["vllm_version_source"] == "given" else f" ({d['vllm_version_source']})"
    out = [f"vLLM {d['vllm_version']}{src}: {d['model']['name']} on {g['name']} ({par})",
           f"  GPU: NVML {g['nvml_total_mib']:,.0f} MiB, CUDA total {_gib(g['cuda_total_bytes'])} "
           f"({g['cuda_total_source']}), SM {g['sm']}"]
    stage = d["summary"].get("stage")
    verdict = {"fits": "FITS: vLLM starts", "oom_risk": "OOM RISK",
               "rejected": "vLLM REFUSES THE FLAGS" if stage in ("serve_args", "engine_config")
               else f"DOES NOT START ({stage})"}[d["verdict"]]
    out.append(f"Verdict: {verdict}" + (f" -- {d['why']}" if d.get("why") else ""))
    c = d.get("confidence") or {}
    if c.get("level") == "low":
        out.append("  LOW CONFIDENCE: the estimates' error on public logs could flip it; measure a boot (plan check "
                   "on its log, or --weights-gib / --non-torch-gib / --peak-activation-gib) -- " + c["note"])
    n = d["needs"]
    if (n.get("context") or (n.get("concurrency") or 1) > 1) and d["verdict"] == "fits":
        want = ", ".join(x for x in (f"{n['context']:,}-token context" if n.get("context") else "",
                                     f"{n['concurrency']} requests at once" if (n.get("concurrency") or 1) > 1
                                     else "") if x)
        out.append(f"  needs ({want}): {'met' if n['met'] else 'NOT met'}")
    return out


def _kv(d: dict[str, Any]) -> list[str]:
    s, v = d["summary"], d["vllm_version"]
    if s.get("bytes_per_block") is None and s.get("num_gpu_blocks") is None:
        return []
    out = ["KV cache:"]
    blocks, cap = s.get("num_gpu_blocks"), s.get("num_gpu_blocks_capacity")
    if s.get("enable_extensible_kv_cache") and cap is not None:
        out.append(f"  blocks: {cap:,} reserved from the profile -> "
                   + ("vLLM stopped before measuring" if blocks is None else
                      f"{blocks:,} measured after warmup and graph capture") + _cite(v, "measure"))
        seqs = s.get("max_num_seqs") or 0
        if _mamba(s) and blocks is not None and blocks < seqs <= cap:
            out.append(f"  note: {blocks:,} blocks < max_num_seqs {seqs}: vLLM {v} checks max_num_seqs against the "
                       f"{cap:,}-block capacity, before the measurement" + _cite(v, "mamba"))
    elif blocks is not None or cap is not None:
        out.append(f"  blocks: {blocks if blocks is not None else cap:,}")
    out.append(f"  block size {s.get('block_size')} tokens, {s.get('bytes_per_block') or 0:,} B per block "
               f"(all groups), {_gib(s.get('kv_cache_bytes'))} in all, kv dtype {s.get('kv_cache_dtype')}")
    if s.get("kv_cache_size_tokens") is not None:
        out.append(f"  GPU KV cache size: {s['kv_cache_size_tokens']:,} tokens; maximum concurrency for "
                   f"{s.get('max_model_len'):,} tokens per request: {s.get('max_concurrency'):.2f}x"
                   + _cite(v, "concurrency"))
    out.append(f"  max_model_len {s.get('max_model_len'):,}, max_num_seqs {s.get('max_num_seqs')}, "
               f"max_num_batched_tokens {s.get('max_num_batched_tokens')}, prefix caching "
               f"{'on' if s.get('enable_prefix_caching') else 'off'}"
               + (f" (mamba cache mode {s['mamba_cache_mode']})" if _mamba(s) else ""))
    groups = s.get("groups") or []
    if len(groups) > 1:
        out.append(f"  {len(groups)} KV-cache groups (the hybrid allocator's):")
        for gr in groups:
            draft = f", {gr['num_draft_layers']} draft" if gr.get("num_draft_layers") else ""
            out.append(f"    {gr['group']}: {gr['type']}, {gr['num_layers']} layers{draft}, page "
                       f"{gr['page_size_bytes']:,} B, {gr['blocks_per_request']} blocks per request")
    return out


def _mamba(s: dict[str, Any]) -> bool:
    return any(g.get("type") == "MambaSpec" for g in s.get("groups") or [])


def _memory(d: dict[str, Any]) -> list[str]:
    s, v = d["summary"], d["vllm_version"]
    if s.get("requested_memory_bytes") is None:
        return []
    return [
        "Memory (Worker.determine_available_memory):",
        f"  requested = ceil(T x {s.get('gpu_memory_utilization')}) = {_gib(s['requested_memory_bytes'])}"
        + _cite(v, "requested"),
        f"  - total consumed after the profile (weights {_gib(s.get('weights_bytes'))} + non-torch) "
        f"{_gib(s.get('total_consumed_bytes'))}",
        f"  - transient peak of the profile run {_gib(s.get('transient_peak_headroom_bytes'))}",
        f"  - CUDA-graph estimate {_gib(s.get('cudagraph_memory_estimate_bytes'))} "
        f"({s.get('cudagraph_mode')}, {len(s.get('cudagraph_capture_sizes') or [])} capture sizes up to "
        f"{s.get('max_cudagraph_capture_size')})",
        f"  = Available KV cache memory: {_gib(s.get('available_kv_bytes'))}" + _cite(v, "available"),
    ]


def _inputs(d: dict[str, Any]) -> list[str]:
    out = ["Boot measurements (the vLLM oracle's names):"]
    for k, val in d["measured"].items():
        out.append(f"  {k} = {val:g}: measured (given)")
    for k, e in d["estimated"].items():
        err = f", residual {e['residual_gib']:g} GiB on {e['gpu_class']}" if e.get("residual_gib") else ""
        out.append(f"  {k} = {e['gib']:.2f}: estimated ({e['how']}{err})")
    c = d.get("confidence")
    if c:
        out.append(f"  confidence: {c['level']} -- {c['note']}")
    return out if len(out) > 1 else []


def _recommend(d: dict[str, Any]) -> list[str]:
    r = d.get("recommendation")
    if not r:
        return []
    if not r.get("found"):
        near = r.get("nearest") or {}
        line = f"No launch reaches the needs among {r['tried']} sized by vLLM's rules"
        if r.get("checked"):
            line += f" ({r['checked']})"
        out = ["Recommendation:", "  " + line]
        b = r.get("borderline")
        if b:
            out.append(f"  borderline (reaches the needs on the point estimates only): {', '.join(b['changes'])} -> "
                       f"{b['max_concurrency']:.2f}x at {b['max_model_len']:,}; measure a boot (plan check on its log) "
                       f"before relying on it: {b['command']}")
        elif near:
            out.append(f"  nearest: {', '.join(near['changes'])} -> {near.get('outcome')}"
                       + (f", {near['max_concurrency']:.2f}x" if near.get("max_concurrency") else ""))
        return out
    out = ["Recommendation (each candidate sized by vLLM's rules; the needs first, then the least change):",
           f"  change: {', '.join(r['changes'])} -> {r['num_gpu_blocks']} blocks, "
           f"{r['kv_cache_size_tokens']:,} tokens, {r['max_concurrency']:.2f}x at {r['max_model_len']:,} tokens, "
           f"max_num_seqs {r['max_num_seqs']}"]
    if _mamba(d["summary"]) and (r["num_gpu_blocks"] or 0) < (r["max_num_seqs"] or 0):
        why = ("checks max_num_seqs against the reserved capacity, before the measurement"
               if "FULL" in (r.get("cudagraph_mode") or "") else "runs no Mamba check without FULL CUDA graphs")
        out.append(f"  note: {r['num_gpu_blocks']} blocks < {r['max_num_seqs']} sequences: vLLM {d['vllm_version']} "
                   + why + _cite(d["vllm_version"], "mamba"))
    if r.get("checked"):
        out.append(f"  ({r['checked']})")
    for a in r.get("alternatives", []):
        out.append(f"  or: {', '.join(a['changes'])} -> {a['max_concurrency']:.2f}x at {a['max_model_len']:,}")
    return out


def _log(d: dict[str, Any]) -> list[str]:
    lines = d.get("log") or []
    return ["vLLM would log (compare with a boot's):", *("  " + x for x in lines)] if lines else []


def render(d: dict[str, Any]) -> str:
    """The report for the plan JSON ``d`` (planner.engines.vllm.frontend builds it)."""
    lines = _head(d)
    for block in (_kv(d), _memory(d), _log(d), _inputs(d), _recommend(d)):
        if block:
            lines += [""] + block
    lines += ["", "Launch:" if not d.get("recommendation", {}) or not d["recommendation"].get("found")
              else "Recommended launch:", "  " + d["launch"]]
    return wrap("\n".join(lines), width())


def width() -> int:
    """COLUMNS, else the real terminal's width, else 100; kept within [40, 400] (as the SGLang report)."""
    import shutil  # noqa: PLC0415

    return max(40, min(400, shutil.get_terminal_size((100, 24)).columns))


def wrap(text: str, columns: int) -> str:
    """Every line wrapped to ``columns``, continuations indented two more spaces; words (flags, numbers, quoted
    log text) are never broken. A ``vllm serve`` line wraps with `` \\`` continuations, so it still pastes."""
    import textwrap  # noqa: PLC0415

    out = []
    for line in text.split("\n"):
        if len(line) <= columns:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        if line.lstrip().startswith("vllm serve "):
            out.extend(shell_wrap(line.strip(), columns, indent).split("\n"))
            continue
        out.extend(textwrap.wrap(line, columns, subsequent_indent=indent + "  ", break_long_words=False,
                                 break_on_hyphens=False) or [line])
    return "\n".join(out)


__all__ = ["render"]
