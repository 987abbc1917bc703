"""Message text -> events: the recognisers for each SGLang log message (see :mod:`planner.logs.events`).

Nothing here raises on odd input; unknown lines give no event.
"""

from __future__ import annotations

import ast
import functools
import math
import re

from planner.logs.events import (
    _UNIT_GIB,
    CudaGraphBatchSizes,
    CudaGraphBegin,
    CudaGraphEnd,
    CudaOutOfMemory,
    DFlashBlockSizeMismatch,
    DFlashDraftGraphDisabled,
    DFlashDraftRunner,
    DFlashFusedKV,
    Event,
    ExceptionMessage,
    InitDistributedEnd,
    InitializationFailed,
    KVCacheAllocated,
    KVCacheDtype,
    LoadWeightBegin,
    LoadWeightEnd,
    MambaCacheAllocated,
    MaxRunningRequestsCapped,
    MaxRunningRequestsReset,
    MaxTotalTokensClamped,
    MemoryPoolEnd,
    SWAPoolAllocated,
    NotEnoughMemory,
    SchedulerException,
    SchedulerSummary,
    ServerArgsDump,
    ServerReady,
    SpecVersion,
    VersionMarker,
)
from planner.logs.lines import LogLine
from planner.logs.release_hints import _TEXT_HINTS
from planner.logs.server_args import parse_dataclass_repr, parse_dict_repr

#: graph kinds: "decode" (``Capture cuda graph``), "draft", "draft_extend", "piecewise"
_GRAPH_KINDS = {
    "cuda graph": "decode",
    "draft cuda graph": "draft",
    "draft extend cuda graph": "draft_extend",
    "piecewise cuda graph": "piecewise",
}


_NUM = r"(-?\d+(?:\.\d+)?|-?inf|nan)"


def _num(pattern: str, text: str) -> float | None:
    m = re.search(pattern, text)
    if m is None:
        return None
    try:
        return float(m.group(1))
    except (TypeError, ValueError):
        return None


def _int(pattern: str, text: str) -> int | None:
    m = re.search(pattern, text)
    if m is None:
        return None
    try:
        return int(m.group(1))
    except (TypeError, ValueError):
        return None


_AVAIL = r"avail mem=" + _NUM + r"\s*GB"
_MEM_USAGE = r"mem usage=" + _NUM + r"\s*GB"
_GRAPH_RE = re.compile(r"^Capture (draft extend cuda graph|draft cuda graph|piecewise cuda graph|cuda graph) (begin|end)\b",
                       re.I)
_GRAPH_BS_RE = re.compile(r"^Capture (?:(draft extend|draft|piecewise) )?cuda graph (?:bs|num tokens)\s*(.*)$", re.I)
_KV_RE = re.compile(r"^(?:(?P<label>\S.*?) )?KV Cache (?P<verb>is allocated|VA upper bound)\b")
_EXC_RE = re.compile(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*(?:ValueError|AssertionError|RuntimeError|Exception))(?::\s?(?P<msg>.*))?$")
_EXC_PREFIX_RE = re.compile(r"^((?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception)):\s?")
_OOM_RE = re.compile(r"CUDA out of memory|CUDA error: out of memory")
# torch's CUDACachingAllocator.cpp warning (printed before the OutOfMemoryError is raised), e.g.
# "memory allocation failed with OOM on device 1 while trying to allocate 4334813184 bytes (free: 3779919872,
# total: 287431131136)." (sgl-project/sglang#38202)
_ALLOC_OOM_RE = re.compile(r"memory allocation failed with OOM on device (?P<dev>\d+) while trying to allocate "
                           r"(?P<tried>\d+) bytes \(free: (?P<free>\d+), total: (?P<total>\d+)\)")
GIB_BYTES = 2**30
_UNIT = r"\s*([KMGT]i?B|B|bytes)"


def _split_exc(text: str) -> tuple[str | None, str]:
    m = _EXC_PREFIX_RE.match(text)
    if m:
        return m.group(1), text[m.end():]
    return None, text


@functools.lru_cache(maxsize=1)
def _text_hint_re() -> re.Pattern:
    return re.compile("|".join(re.escape(needle) for _, needle, _, _, _ in _TEXT_HINTS))


def _hints_for_line(ln: LogLine, base: dict) -> list[Event]:
    out: list[Event] = []
    for key, needle, lo, hi, source in _TEXT_HINTS:
        if needle in ln.text:
            out.append(VersionMarker(**base, key=key, lo=lo, hi=hi, source=source))
    return out


def _parse_events(ln: LogLine, base: dict) -> list[Event]:
    """Events for one line (usually 0 or 1; a version marker may come in addition)."""
    t = ln.text
    ts = t.strip()
    if not ts:
        return []
    evs: list[Event] = []
    ev = _parse_event(ts, base)
    if ev is not None:
        evs.append(ev)
    if _text_hint_re().search(ts):
        evs.extend(_hints_for_line(ln, base))
    return evs


def _server_args_event(t: str, base: dict) -> Event | None:
    """L1: the ``server_args=ServerArgs(...)`` dump (<=0.5.18: ``logger.info(f"{server_args=}")``,
    entrypoints/engine.py:225 @0.5.16), or the ``server_args={'model_path': ...}`` dict of 0.5.19+
    (``server_args.resolved_dict()``, entrypoints/engine.py:265 @0.5.19, :311 @0.5.23)."""
    j = t.find("server_args={")
    if j >= 0:
        args, complete, unparsed = parse_dict_repr(t[j + len("server_args="):])
        return ServerArgsDump(**base, args=args, complete=complete, unparsed=unparsed, malformed=not args,
                              form="dict")
    i = t.find("server_args=ServerArgs(")
    if i >= 0 or t.startswith("ServerArgs("):
        body = t[i + len("server_args="):] if i >= 0 else t
        try:
            args, complete, unparsed = parse_dataclass_repr(body)
        except Exception:  # pragma: no cover - parse_dataclass_repr does not raise
            args, complete, unparsed = {}, False, []
        return ServerArgsDump(**base, args=args, complete=complete, unparsed=unparsed,
                              malformed=not args)
    return None


def _failure_event(t: str, base: dict) -> Event | None:
    """Failures: not enough memory, CUDA OOM, initialization failed, scheduler exceptions, ``XError: ...``."""
    if "Not enough memory. Please try to increase --mem-fraction-static" in t:
        exc, msg = _split_exc(t)
        return NotEnoughMemory(**base, exc_type=exc, message=msg,
                               mem_fraction_static=_num(r"mem_fraction_static=" + _NUM, t))
    am = _ALLOC_OOM_RE.search(t)
    if am:  # c10 CUDACachingAllocator's warning: byte counts, no exception type
        def gib_of(x: str) -> float:
            return int(x) / GIB_BYTES

        return CudaOutOfMemory(**base, exc_type=None, message=t[am.start():], tried_amount=float(am.group("tried")),
                               tried_unit="B", gpu_index=int(am.group("dev")),
                               total_capacity_gib=gib_of(am.group("total")), free_gib=gib_of(am.group("free")))
    if _OOM_RE.search(t):
        exc, msg = _split_exc(t)
        tried = re.search(r"Tried to allocate " + _NUM + _UNIT, t)
        total = re.search(r"total capacity of " + _NUM + _UNIT, t) or re.search(_NUM + _UNIT + r" total capacity", t)
        free = re.search(r"of which " + _NUM + _UNIT + r" is free", t) or re.search(_NUM + _UNIT + r" free\b", t)

        def gib(m: re.Match | None) -> float | None:
            if m is None or m.group(2) not in _UNIT_GIB:
                return None
            try:
                return float(m.group(1)) * _UNIT_GIB[m.group(2)]
            except ValueError:
                return None

        return CudaOutOfMemory(
            **base, exc_type=exc, message=msg,
            tried_amount=float(tried.group(1)) if tried else None,
            tried_unit=tried.group(2) if tried else None,
            gpu_index=_int(r"GPU (\d+)", t),
            total_capacity_gib=gib(total), free_gib=gib(free),
            during_capture="capture" in t.lower() and "graph" in t.lower(),
        )
    if "Initialization failed" in t:
        exc, msg = _split_exc(t)
        return InitializationFailed(**base, exc_type=exc, message=msg)
    if "Scheduler hit an exception" in t:
        j = t.find("Scheduler hit an exception")
        msg = t[j + len("Scheduler hit an exception"):].lstrip(": ").strip()
        return SchedulerException(**base, exc_type=None, message=msg)
    m = _EXC_RE.match(t)
    if m:
        return ExceptionMessage(**base, exc_type=m.group("type"), message=(m.group("msg") or "").strip())
    return None


def _weights_event(t: str, base: dict) -> Event | None:
    """L4/L5: ``Load weight begin`` / ``Load weight end`` (serial or 0.5.18+ overlap form)."""
    if t.startswith("Load weight begin"):
        avail = _num(_AVAIL, t)
        return LoadWeightBegin(**base, avail_gib=avail, malformed=avail is None)
    if t.startswith("Load weight end"):
        if "Committed real weights" in t:
            el = _num(r"\bin " + _NUM + r"\s*s\b", t)
            return LoadWeightEnd(**base, elapsed_s=el, variant="overlap", malformed=el is None)
        elapsed = _num(r"elapsed=" + _NUM + r"\s*s\b", t)
        mc = re.search(r"type=([\w.]+)", t)
        dt = re.search(r"(?:^|[ ,])dtype=([\w.]+)", t)
        qs = re.search(r"type=[\w.]+, (quant=.*?), avail mem=", t)
        quant_str = qs.group(1) if qs else None
        quant = None
        if quant_str:
            qm = re.match(r"quant=([^,\s]+)", quant_str)
            quant = qm.group(1) if qm else None
        avail = _num(_AVAIL, t)
        usage = _num(_MEM_USAGE, t)
        return LoadWeightEnd(**base, elapsed_s=elapsed, model_class=mc.group(1) if mc else None,
                             dtype=dt.group(1) if dt else None, quant=quant, quant_str=quant_str,
                             avail_gib=avail, mem_usage_gib=usage,
                             malformed=None in (elapsed, avail, usage) or mc is None)
    return None


def _pool_event(t: str, base: dict) -> Event | None:
    """L6-L9: KV cache dtype, mamba cache, KV cache (all forms), memory pool end."""
    if t.startswith("Using KV cache dtype"):
        m2 = re.match(r"Using KV cache dtype:\s*(\S+)", t)
        return KVCacheDtype(**base, dtype=m2.group(1) if m2 else None, malformed=m2 is None)
    if "Mamba Cache is allocated" in t:
        size = _int(r"max_mamba_cache_size:\s*(\d+)", t)
        conv = _num(r"(?<!_)conv_state size:\s*" + _NUM + r"\s*GB", t)
        ssm = _num(r"(?<!_)ssm_state size:\s*" + _NUM + r"\s*GB", t)
        iss = _num(r"intermediate_ssm_state_cache size:\s*" + _NUM + r"\s*GB", t)
        icw = _num(r"intermediate_conv_window_cache size:\s*" + _NUM + r"\s*GB", t)
        return MambaCacheAllocated(**base, max_mamba_cache_size=size, conv_gib=conv, ssm_gib=ssm,
                                   intermediate_ssm_gib=iss, intermediate_conv_gib=icw,
                                   malformed=None in (size, conv, ssm) or ((iss is None) != (icw is None)))
    if t.startswith("Post-capture KV sizing: KV cache allocated"):
        dtm = re.search(r"dtype:\s*([\w.]+)", t)
        n = _int(r"#tokens:\s*(\d+)", t)
        kv = _num(r"KV size:\s*" + _NUM + r"\s*GB", t)
        return KVCacheAllocated(**base, dtype=dtm.group(1) if dtm else None, num_tokens=n, kv_gib=kv,
                                avail_gib=_num(_AVAIL, t), post_capture=True, malformed=None in (n, kv))
    km = _KV_RE.match(t)
    if km:
        label = km.group("label")
        dtm = re.search(r"dtype:\s*([\w.]+)", t)
        n = _int(r"#tokens:\s*(\d+)", t)
        k = _num(r"(?<![A-Za-z])K size:\s*" + _NUM + r"\s*GB", t)
        v = _num(r"(?<![A-Za-z])V size:\s*" + _NUM + r"\s*GB", t)
        kv = _num(r"KV size:\s*" + _NUM + r"\s*GB", t)
        ok = n is not None and (kv is not None or (k is not None and v is not None))
        return KVCacheAllocated(**base, dtype=dtm.group(1) if dtm else None, num_tokens=n, k_gib=k, v_gib=v,
                                kv_gib=kv, label=label, va_upper_bound=km.group("verb") == "VA upper bound",
                                malformed=not ok)
    if t.startswith("SWAKVPool "):
        swa, full = _int(r"swa size:\s*(\d+)", t), _int(r"full size:\s*(\d+)", t)
        return SWAPoolAllocated(**base, gib=_num(r"SWAKVPool[^:]*:\s*" + _NUM + r"\s*GB", t), swa_size=swa,
                                full_size=full, malformed=None in (swa, full))
    if t.startswith("Memory pool end"):
        avail = _num(_AVAIL, t)
        return MemoryPoolEnd(**base, avail_gib=avail, malformed=avail is None)
    return None


def _scheduler_event(t: str, base: dict) -> Event | None:
    """L16/L17: the scheduler summary and the profiled-value clamp."""
    if t.startswith("max_total_num_tokens="):
        vals: dict[str, float] = {}
        for k_, v_ in re.findall(r"(\w+)=" + _NUM, t):
            try:
                vals[k_] = float(v_)
            except ValueError:
                pass

        def iv(name: str) -> int | None:
            x = vals.pop(name, None)
            return None if x is None or not math.isfinite(x) else int(x)

        ev = SchedulerSummary(
            **base,
            max_total_num_tokens=iv("max_total_num_tokens"),
            chunked_prefill_size=iv("chunked_prefill_size"),
            max_prefill_tokens=iv("max_prefill_tokens"),
            max_running_requests=iv("max_running_requests"),
            context_len=iv("context_len"),
            available_gpu_mem_gib=vals.pop("available_gpu_mem", None),
            available_cpu_mem_gib=vals.pop("available_cpu_mem", None),
        )
        ev.extra = vals
        ev.malformed = ev.max_total_num_tokens is None or ev.max_running_requests is None
        return ev
    if t.startswith("max_total_tokens=") and "profiled value" in t:
        req = _int(r"max_total_tokens=(\d+)", t)
        prof = _int(r"profiled value (\d+)", t)
        return MaxTotalTokensClamped(**base, requested=req, profiled=prof, malformed=None in (req, prof))
    return None


def _graph_event(t: str, base: dict) -> Event | None:
    """L10-L15: CUDA graph batch sizes, capture begin and end."""
    if t[:8].lower() == "capture ":
        gm = _GRAPH_RE.match(t)
        if gm:
            graph = _GRAPH_KINDS[gm.group(1).lower()]
            avail = _num(_AVAIL, t)
            if gm.group(2).lower() == "begin":
                return CudaGraphBegin(**base, graph=graph, avail_gib=avail, malformed=avail is None)
            el = _num(r"Time elapsed:\s*" + _NUM + r"\s*s\b", t)
            usage = _num(_MEM_USAGE, t)
            return CudaGraphEnd(**base, graph=graph, elapsed_s=el, mem_usage_gib=usage, avail_gib=avail,
                                malformed=None in (el, usage, avail))
        bm = _GRAPH_BS_RE.match(t)
        if bm:
            graph = {"draft extend": "draft_extend", "draft": "draft", "piecewise": "piecewise"}.get(
                (bm.group(1) or "").lower(), "decode")
            bs: list[int] | None = None
            try:
                val = ast.literal_eval(bm.group(2).strip())
                if isinstance(val, (list, tuple)) and all(isinstance(x, int) for x in val):
                    bs = list(val)
            except Exception:
                bs = None
            return CudaGraphBatchSizes(**base, graph=graph, batch_sizes=bs, malformed=bs is None)
    return None


def _init_event(t: str, base: dict) -> Event | None:
    """L3: ``Init torch distributed ends`` (<=0.5.20) or ``Memory baseline taken`` (0.5.21+)."""
    if t.startswith("Init torch distributed ends"):
        el = _num(r"elapsed=" + _NUM + r"\s*s\b", t)
        usage = _num(_MEM_USAGE, t)
        return InitDistributedEnd(**base, elapsed_s=el, mem_usage_gib=usage, malformed=usage is None)
    if t.startswith("Memory baseline taken"):
        usage = _num(_MEM_USAGE, t)
        return InitDistributedEnd(**base, mem_usage_gib=usage, variant="baseline", malformed=usage is None)

    return None


def _milestone_event(t: str, base: dict) -> Event | None:
    """L19/L20 and readiness: spec warnings, ``fired up``, ``Uvicorn running``."""
    if "Max running requests is reset to" in t:
        val = _int(r"Max running requests is reset to (\d+)", t)
        return MaxRunningRequestsReset(**base, value=val, malformed=val is None)
    if "Spec v1 is used" in t:
        m3 = re.search(r"Spec v1 is used\b.*?\bbecause (.*?)\.?\s*$", t)
        return SpecVersion(**base, version=1, reason=m3.group(1) if m3 else None)
    if "Spec v2 is enabled" in t:
        return SpecVersion(**base, version=2)
    if "The server is fired up and ready to roll" in t:
        return ServerReady(**base, how="fired_up")
    if "Uvicorn running on" in t:
        m4 = re.search(r"Uvicorn running on (\S+)", t)
        return ServerReady(**base, how="uvicorn", url=m4.group(1) if m4 else None)
    return None


_KV_PAIR_RE = re.compile(r"([A-Za-z_]\w*)=([^,\s]+?)(?=,|\s|$)")


def _opt_int(x: str | None) -> int | None:
    try:
        return int(x) if x is not None else None
    except ValueError:
        return None


def _spec_event(t: str, base: dict) -> Event | None:
    """Speculative-decoding lines that bear on memory: the DFLASH draft runner (its D and draft window), a
    D different from the draft config's, the draft's own KV geometry, the draft graph switched off for lack
    of memory, and the mamba pool capping max_running_requests (DFLASH's extra_buffer slots)."""
    if t.startswith("Initialized DFLASH draft runner"):
        kv = dict(_KV_PAIR_RE.findall(t.split(".", 1)[1] if "." in t else ""))
        cc = kv.pop("compact_cache", None)
        ev = DFlashDraftRunner(**base, attention_backend=kv.pop("attention_backend", None),
                               model_class=kv.pop("model", None), block_size=_opt_int(kv.pop("block_size", None)),
                               draft_window_size=_opt_int(kv.pop("draft_window_size", None)),
                               compact_cache=None if cc is None else cc == "True")
        ev.extra = kv
        ev.malformed = ev.block_size is None
        return ev
    if t.startswith("DFLASH block size mismatch"):
        n = _int(r"speculative_num_draft_tokens=(\d+)", t)
        b = _int(r"block_size=(\d+)", t)
        return DFlashBlockSizeMismatch(**base, num_draft_tokens=n, config_block_size=b, malformed=None in (n, b))
    if t.startswith("DFLASH fused KV materialization enabled"):
        lay, heads, hd = _int(r"n_layers=(\d+)", t), _int(r"num_kv_heads=(\d+)", t), _int(r"head_dim=(\d+)", t)
        return DFlashFusedKV(**base, n_layers=lay, num_kv_heads=heads, head_dim=hd, malformed=None in (lay, heads, hd))
    if t.startswith("Disable DFLASH draft cuda graph because"):
        avail = _num(r"only " + _NUM + r"\s*GB", t)
        reason = t[len("Disable DFLASH draft cuda graph because"):].strip().rstrip(".")
        return DFlashDraftGraphDisabled(**base, avail_gib=avail, reason=reason)
    if t.startswith("max_running_requests is capped to"):
        v = _int(r"capped to (\d+)", t)
        return MaxRunningRequestsCapped(**base, value=v, max_mamba_cache_size=_int(r"max_mamba_cache_size=(\d+)", t),
                                        slots_per_request=_int(r"(\d+) state slots per request", t),
                                        malformed=v is None)
    return None


#: recognisers tried in this order; the first that returns an event wins
_RECOGNISERS = (_server_args_event, _failure_event, _weights_event, _pool_event, _scheduler_event,
                _graph_event, _init_event, _milestone_event, _spec_event)


def _parse_event(t: str, base: dict) -> Event | None:
    """The event for one message text, or None when no recogniser knows it."""
    for recognise in _RECOGNISERS:
        ev = recognise(t, base)
        if ev is not None:
            return ev
    return None
