"""SGLang's hybrid sliding-window (SWA) KV pool: gpt-oss's sliding layers, Llama 4's chunked ones.

A model is hybrid SWA when its architecture is in ``is_hybrid_swa_model``'s list and
``--disable-hybrid-swa-memory`` is off (``ModelConfig._derive_hybrid_model``, srt/configs/model_config.py:409-421,
1546-1558 @0.5.11). Its layers split by ``get_hybrid_layer_ids`` (planner.catalog.spec.sliding_layout) and
``HybridSWAPoolConfigurator`` (srt/model_executor/pool_configurator.py:184-282 @0.5.11; :656-921 @0.5.23) sizes:

* the cell, bytes per full-side token: ``F x full_layers + ratio x S x swa_layers`` (a float: the oracle's
  ``kv_cell_bytes_per_token`` 8294.4 for gpt-oss-120b at TP 8), ``ratio`` = ``--swa-full-tokens-ratio`` (0.8);
* ``max_total = int(available // cell)``, full tokens = it page-aligned, SWA tokens =
  ``int(full x ratio)`` page-aligned; a ``--max-total-tokens`` cap re-solves from the capped count
  (``calculate_pool_sizes_from_max_tokens``);
* 0.5.16+: an SWA pool of no more than ``sliding_window_size + page_size`` tokens fails the start
  (``validate_swa_pool_size``, pool_configurator.py:198-215 @0.5.23; absent in 0.5.11).

``SWAKVPool`` (srt/mem_cache/swa_memory_pool.py @0.5.11) then allocates a full ``MHATokenToKVPool`` over the full
layers (N + page rows) and one over the SWA layers (S + page rows), each with its K/V pointer and stride tables,
the ``full_to_swa_index_mapping`` int64 (N + page + 1), and ``SWATokenToKVPoolAllocator``'s two free lists
(N / page and S / page int64). The numbers are checked against the oracle (tests/golden/swa/).

With ``--disable-hybrid-swa-memory`` every layer goes to one plain pool (``DefaultPoolConfigurator`` over
``num_effective_layers``): the plain-attention path. 0.5.9 / 0.5.10 have no configurator: the profile uses the
plain all-layer cell and the token count is then rescaled to full tokens (:func:`rescale`). Not modelled, refused by
name in :func:`adjustments`: speculative decoding with these models; ``--enable-unified-memory`` is refused for
every non-mamba model (arg_groups/kv_cache_hook.py). 0.5.14+ with ``--disable-radix-cache`` and
``--max-running-requests``: the SWA pool is sized from the request cap (:func:`request_cap`).
"""

from __future__ import annotations

from planner.cache_kinds import FullAttention
from planner.cache_kinds.sliding import ChunkedLocalAttention, SlidingWindow, hybrid_swa_cell
from planner.catalog.spec import DTYPE_BYTES, ModelSpec
from planner.engines.sglang.pipeline.server_args import ArgState, Rejected, ResolvedArgs, _NotModelled

# Releases whose hybrid SWA rules were checked: against the oracle on 0.5.11, 0.5.13-0.5.16, 0.5.20 and 0.5.23
# (tests/golden/swa/), and by reading the SWA code of 0.5.12, 0.5.17-0.5.19, 0.5.21 and 0.5.22
# against those (HybridSWAPoolConfigurator, SWAKVPool, the SWA allocator, get_hybrid_layer_ids, the gpt-oss and
# Llama 4 adjustments: the differences are the switches below, or parts refused here). 0.5.9 / 0.5.10 size the pool
# another way (:func:`rescale`), checked against the oracle too.
VERIFIED = tuple(f"0.5.{n}" for n in range(9, 24))  # 0.5.9-0.5.23
# 0.5.14+: SWAChunkCapPoolConfigurator (0.5.14-0.5.22) / SWARequestCapPoolConfigurator (0.5.23)
_REQUEST_CAP_SINCE = (0, 5, 14)
# 0.5.16+: validate_swa_pool_size (srt/model_executor/pool_configurator.py:198-215 @0.5.23, present @0.5.16)
_VALIDATES_SINCE = (0, 5, 16)


def _v(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".")[:3] if p.isdigit())


def ratio(raw: dict) -> float:
    """--swa-full-tokens-ratio: 0.8 by default (srt/server_args.py:378 @0.5.11); 0.5.20+ an Optional that falls
    back to 0.8 (srt/arg_groups/fields/schedule.py:152-163 @0.5.20)."""
    r = raw.get("swa_full_tokens_ratio")
    return 0.8 if r is None else float(r)


def is_hybrid_swa(args: ResolvedArgs, model: ModelSpec) -> bool:
    """ModelConfig.is_hybrid_swa: a hybrid SWA architecture without --disable-hybrid-swa-memory."""
    return model.sliding is not None and not args.raw.get("disable_hybrid_swa_memory")


def kinds(args: ResolvedArgs, model: ModelSpec, kv_bytes: int) -> tuple[FullAttention, FullAttention]:
    """The full-attention and the sliding (or chunked) cache kinds of the model's layers on this launch."""
    sl = model.sliding
    full = FullAttention(len(sl.full_layer_ids), kv_bytes, model.num_key_value_heads, model.head_dim,
                         model.v_head_dim)
    # swa_head_dim / swa_v_head_dim / swa_num_key_value_heads default to the full layers' (model_config.py:499-507,
    # 765-777 @0.5.11); neither gpt-oss nor Llama 4 sets them
    if sl.kind == "chunked":
        swa: FullAttention = ChunkedLocalAttention(len(sl.swa_layer_ids), kv_bytes, model.num_key_value_heads,
                                                   model.head_dim, model.v_head_dim, chunk=sl.window)
    else:
        swa = SlidingWindow(len(sl.swa_layer_ids), kv_bytes, model.num_key_value_heads, model.head_dim,
                            model.v_head_dim, window=sl.window, sinks=sl.sinks)
    return full, swa


def _per_token(args: ResolvedArgs, model: ModelSpec, kv_bytes: int) -> tuple[int, int, int, int]:
    """(full bytes per token and layer, SWA bytes per token and layer, full layers, SWA layers) on one GPU."""
    full, swa = kinds(args, model, kv_bytes)
    tp = args.tp_size
    return (full.heads_per_gpu(tp) * (full.head_dim + full.v_head_dim) * kv_bytes,
            swa.heads_per_gpu(tp) * (swa.head_dim + swa.v_head_dim) * kv_bytes, full.layers, swa.layers)


def _before_configurator(args: ResolvedArgs) -> bool:
    """0.5.9 / 0.5.10: no HybridSWAPoolConfigurator yet; the pool is split after the plain profile (:func:`rescale`)."""
    return _v(args.rules.version) < (0, 5, 11)


def cell(args: ResolvedArgs, model: ModelSpec, kv_bytes: int) -> float | int:
    """HybridSWAPoolConfigurator._cell_size (pool_configurator.py:205-238 @0.5.11). 0.5.9 / 0.5.10 profile with the
    plain cell over every layer, ``F x full_layers + S x swa_layers`` (get_cell_size_per_token over
    num_effective_layers, model_runner_kv_cache_mixin.py:47-114, 116-149 @0.5.9; the is_hybrid_swa branch of the cell,
    :109-123 @0.5.10), an int."""
    if _before_configurator(args):
        f, sw, nf, ns = _per_token(args, model, kv_bytes)
        return f * nf + sw * ns
    full, swa = kinds(args, model, kv_bytes)
    return hybrid_swa_cell(full, swa, ratio(args.raw), args.tp_size)


def rescale(args: ResolvedArgs, model: ModelSpec, kv_bytes: int) -> tuple[int, float] | None:
    """0.5.9 / 0.5.10: the profiled (capped, page-aligned) token count N becomes the full pool's
    ``int(N x (F nf + S ns) / (F nf + r S ns))`` page-aligned, the SWA pool ``int(full x r)`` page-aligned
    (set_num_tokens_hybrid_swa, model_runner_kv_cache_mixin.py:251-336 @0.5.9; _resolve_hybrid_swa_tokens,
    :287-371 @0.5.10), before the request count (0.5.10 _resolve_max_num_reqs, 0.5.9 ModelRunner.initialize's
    N // 2). (numerator, denominator) for the sizing chain, None when it does not apply."""
    if not (_before_configurator(args) and is_hybrid_swa(args, model) and model.sliding.full_layer_ids):
        return None
    f, sw, nf, ns = _per_token(args, model, kv_bytes)
    return f * nf + sw * ns, f * nf + ratio(args.raw) * sw * ns


def swa_tokens_0_5_9(args: ResolvedArgs, model: ModelSpec, kv_bytes: int, n_capped: int) -> int:
    """0.5.9's SWA pool: ``int(full x r)`` of the full count before its page alignment
    (model_runner_kv_cache_mixin.py:324-331 @0.5.9); 0.5.10 takes the aligned one (:366-367 @0.5.10)."""
    a, dnm = rescale(args, model, kv_bytes)
    page = args.page_size
    return int(int(n_capped * a / dnm) * ratio(args.raw)) // page * page


def swa_tokens(args: ResolvedArgs, model: ModelSpec, n):
    """_solve_pool_sizes: the SWA sub-pool's tokens for N full tokens (pool_configurator.py:240-272 @0.5.11)."""
    page = args.page_size
    if not model.sliding.full_layer_ids:
        return n
    r = ratio(args.raw)
    try:
        import numpy as np  # noqa: PLC0415

        if isinstance(n, np.ndarray):
            return (np.trunc(n * r).astype(np.int64)) // page * page
    except ImportError:  # pragma: no cover
        pass
    return int(n * r) // page * page


def sliding_window_size(model: ModelSpec) -> int:
    """ModelRunner.sliding_window_size as model loading resolves it (load_model_utils.py:144-157 @0.5.23): gpt-oss's
    ``get_attention_sliding_window_size`` is ``sliding_window - 1`` (srt/models/gpt_oss.py @0.5.23), Llama 4 has
    none and takes ``attention_chunk_size``."""
    sl = model.sliding
    return sl.window - 1 if model.architecture == "GptOssForCausalLM" else sl.window


def request_cap(args: ResolvedArgs, model: ModelSpec, kv_bytes: int) -> tuple[int, int, int, int, int] | None:
    """0.5.14+: with the radix cache off and an explicit --max-running-requests, SGLang sizes the SWA sub-pool from
    the request cap instead of --swa-full-tokens-ratio and gives the rest to the full pool
    (SWAChunkCapPoolConfigurator, srt/model_executor/pool_configurator.py:339-436 @0.5.14, :461-560 @0.5.16;
    SWARequestCapPoolConfigurator + compute_swa_request_cap, :924-1042 @0.5.23; chosen first by
    create_memory_pool_configurator, :1717-1724 @0.5.23):

    * cap = (window + SGLANG_SWA_EVICTION_INTERVAL (128) + page + page) x R + chunks x chunked_prefill_size + page,
      chunks 1 with --disable-overlap-schedule else 2 (no speculative decoding: refused for these models);
    * SWA tokens = ceil_align(cap, page); full tokens = int((available - SWA x swa_cell) // full_cell) page-aligned,
      a RuntimeError when <= 0; a --max-total-tokens cap gives full = mtt page-aligned, SWA = min(SWA, mtt);
    * no validate_swa_pool_size on this path.

    Applies to a hybrid SWA model with full-attention layers whose chunked prefill is set (0.5.14-0.5.22: not None;
    0.5.23: > 0, :987-1000 @0.5.23). The radix-off / explicit R test is the sizing chain's (it varies in the
    search). Returns (per request, constant, SWA bytes per token, full bytes per token, the least R counted: 1 on
    0.5.23, ``max(1, R // dp)`` in compute_swa_request_cap, :956 @0.5.23; 0 before), or None.
    """
    if _v(args.rules.version) < _REQUEST_CAP_SINCE or not is_hybrid_swa(args, model) \
            or not model.sliding.full_layer_ids:
        return None
    cps = args.chunked_prefill_size
    if cps is None or (_v(args.rules.version) >= (0, 5, 23) and cps <= 0):
        return None
    page = args.page_size
    try:
        interval = max(1, int(args.env.get("SGLANG_SWA_EVICTION_INTERVAL", 128)))
    except ValueError:
        raise Rejected("ValueError", f'"{args.env["SGLANG_SWA_EVICTION_INTERVAL"]}" is not a valid integer value',
                       "srt/environ.py EnvInt") from None
    per_request = sliding_window_size(model) + interval + page + page
    chunks = 1 if args.disable_overlap_schedule else 2
    f, sw, nf, ns = _per_token(args, model, kv_bytes)
    return per_request, chunks * cps + page, sw * ns, f * nf, 1 if _v(args.rules.version) >= (0, 5, 23) else 0


def capped(args: ResolvedArgs) -> bool:
    """The launch asks for the request-capped SWA pool (radix cache off, explicit --max-running-requests)."""
    return bool(args.disable_radix_cache) and args.max_running_requests is not None


def request_cap_tokens(cap: tuple[int, int, int, int, int], r: int, page: int) -> int:
    """ceil_align(cap, page) (pool_configurator.py:1017-1019 @0.5.23)."""
    return -(-(cap[0] * max(r, cap[4]) + cap[1]) // page) * page


def request_cap_error(swa_tokens: int, swa_bytes: int, available: int) -> Rejected:
    """SWARequestCapPoolConfigurator.calculate_pool_sizes' RuntimeError (pool_configurator.py:1024-1031 @0.5.23;
    :412-419 @0.5.14)."""
    fixed = swa_tokens * swa_bytes
    return Rejected("RuntimeError", f"SWA pool cap ({swa_tokens} tokens, {fixed / (1 << 30):.2f} GiB) leaves no room "
                    f"for the full KV pool within the available {available / (1 << 30):.2f} GiB. Reduce "
                    "--max-running-requests, lower SGLANG_SWA_EVICTION_INTERVAL, or increase --mem-fraction-static.",
                    "srt/model_executor/pool_configurator.py:1024-1031 @0.5.23", stage="resolve_memory_pool_config")


def validate(args: ResolvedArgs, model: ModelSpec, swa: int) -> None:
    """validate_swa_pool_size (srt/model_executor/pool_configurator.py:198-215 @0.5.23), 0.5.16+."""
    if _v(args.rules.version) < _VALIDATES_SINCE or not model.sliding.full_layer_ids:
        return
    window, page = sliding_window_size(model), args.page_size
    if window + page >= swa:
        raise Rejected("ValueError", f"SWA pool ({swa} tokens) cannot hold even one request: the prefill admission "
                       f"floor is sliding_window_size ({window}) + page_size ({page}). Increase "
                       "--swa-full-tokens-ratio or the total KV budget.",
                       "srt/model_executor/pool_configurator.py:198-215 @0.5.23", stage="resolve_memory_pool_config")


def pool_bytes(args: ResolvedArgs, model: ModelSpec, kv_bytes: int, n, r, swa_override: int | None = None) -> dict:
    """SWAKVPool + SWATokenToKVPoolAllocator tensors (srt/mem_cache/swa_memory_pool.py, allocator.py @0.5.11):
    the two sub-pools' K and V (0.5.23: the two halves of one K|V tensor per layer, reported apart), the
    full->SWA index mapping, the two free lists and the K/V pointer tables of each sub-pool."""
    full, swa = kinds(args, model, kv_bytes)
    page = args.page_size
    s = swa_tokens(args, model, n) if swa_override is None else swa_override
    hf, hs = full.heads_per_gpu(args.tp_size), swa.heads_per_gpu(args.tp_size)
    out = {
        "kv_k": full.layers * (n + page) * hf * full.head_dim * kv_bytes,
        "kv_v": full.layers * (n + page) * hf * full.v_head_dim * kv_bytes,
        "kv_swa_k": swa.layers * (s + page) * hs * swa.head_dim * kv_bytes,
        "kv_swa_v": swa.layers * (s + page) * hs * swa.v_head_dim * kv_bytes,
    }
    # pointer / stride tables: 48 B per layer of each sub-pool; full_to_swa_index_mapping int64 (N + page + 1);
    # free lists int64: N / page and S / page
    out["index_buffers"] = 48 * (full.layers + swa.layers) + 8 * (n + page + 1) + 8 * (n // page) + 8 * (s // page)
    return out


def request_capacity(args: ResolvedArgs, model: ModelSpec, n):
    """How many requests the SWA sub-pool of a pool with ``n`` full tokens holds at once (numbers or arrays), by
    SGLang's own worst case per request: ``window + SGLANG_SWA_EVICTION_INTERVAL (128) + page`` trailing tokens and
    one page of decode allocation each, plus one prefill chunk in flight per overlapped batch (two, one without the
    overlap schedule) and a page (compute_swa_request_cap, srt/model_executor/pool_configurator.py:924-968 @0.5.23,
    no speculative decoding). The search's concurrency at the needed length counts no more requests than this, so a
    smaller --swa-full-tokens-ratio is never recommended past what the sliding layers can hold."""
    import numpy as np  # noqa: PLC0415

    page = args.page_size
    try:
        interval = max(1, int(args.env.get("SGLANG_SWA_EVICTION_INTERVAL", 128)))
    except ValueError:
        interval = 128
    per_request = sliding_window_size(model) + interval + page + page
    chunks = 1 if args.disable_overlap_schedule else 2
    in_flight = chunks * max(args.chunked_prefill_size or 0, 0) + page
    return np.maximum((np.asarray(swa_tokens(args, model, n)) - in_flight) // per_request, 0)


def formula(key: str, args: ResolvedArgs, model: ModelSpec, kv_bytes: int, n: int) -> str:
    """The printed formula of one SWAKVPool line."""
    full, swa = kinds(args, model, kv_bytes)
    page = args.page_size
    s = swa_tokens(args, model, n)
    cap = request_cap(args, model, kv_bytes) if capped(args) else None
    if cap is not None:  # the request-capped SWA pool (:func:`request_cap`)
        s = request_cap_tokens(cap, args.max_running_requests, page)
        mtt = args.max_total_tokens
        if mtt is not None and mtt // page * page == n:
            s = min(s, mtt)
    if key == "index_buffers":
        return (f"full_to_swa_index_mapping int64 (N {n:,} + page {page} + 1), free lists int64 (N / page, SWA "
                f"{s:,} / page), K/V pointer tables of {full.layers} + {swa.layers} layers, request maps")
    what = "K" if key.endswith("_k") else "V"
    if key.startswith("kv_swa"):
        kind = f"chunk {swa.chunk}" if isinstance(swa, ChunkedLocalAttention) else f"window {swa.window}"
        how = (f"the request cap: (window {sliding_window_size(model)} + eviction interval, page, decode "
               f"{cap[0] - sliding_window_size(model)}) x R {args.max_running_requests} + chunks {cap[1]:,}, "
               "page-aligned up" if cap is not None
               else f"int(N x ratio {ratio(args.raw)}) page-aligned")
        return (f"{swa.layers} {'chunked' if isinstance(swa, ChunkedLocalAttention) else 'sliding'} layers ({kind}) "
                f"x (SWA {s:,} = {how} + page {page}) x "
                f"{swa.heads_per_gpu(args.tp_size)} heads x {swa.head_dim} x {kv_bytes} B ({what})")
    return (f"{full.layers} full layers x (N {n:,} + page {page}) x {full.heads_per_gpu(args.tp_size)} heads x "
            f"{full.head_dim} x {kv_bytes} B ({what})")


def adjustments(s: ArgState) -> None:
    """The per-architecture ServerArgs adjustments of the hybrid SWA models (before the generic backend default).

    gpt-oss: the attention backend when none is set, trtllm_mha on SM100, fa3 on SM90, else triton; the prefill and
    decode backends must be one of SGLang's list (srt/server_args.py:1875-1920 @0.5.11; srt/arg_groups/
    model_overrides/gpt_oss.py:24-47 and model_hook.py:515-543 @0.5.23); an mxfp4 checkpoint runs in bfloat16.
    """
    a = s.a
    if s.rules.version not in VERIFIED:
        raise _NotModelled(f"--model: {s.arch} (hybrid sliding-window KV pool) on SGLang {s.rules.version} is not "
                           f"verified against its code; verified releases: {', '.join(VERIFIED)}")
    if a.get("speculative_algorithm"):
        raise _NotModelled(f"--speculative-algorithm {a['speculative_algorithm']}: speculative decoding of {s.arch} "
                           "(a draft beside the hybrid sliding-window pool) is not modelled by this planner yet")
    s.warn.append("planner assumption: the post-pool estimates (CUDA graphs, activations, workspace) are calibrated "
                  "on hybrid GDN and dense boot logs, not on hybrid sliding-window models (no public "
                  f"{'gpt-oss' if s.arch == 'GptOssForCausalLM' else 'Llama 4'} log with free memory was found); "
                  "the pools are SGLang's own sizing")
    if s.arch == "GptOssForCausalLM":
        if a["attention_backend"] is None and a["prefill_attention_backend"] is None \
                and a["decode_attention_backend"] is None:
            s.attn = "trtllm_mha" if s.dev.sm100 else "fa3" if s.dev.sm90 else "triton"
            s.why["attention_backend"] = ("gpt-oss default for the GPU (server_args.py:1875-1887 @0.5.11, "
                                          "model_overrides/gpt_oss.py:24-47 @0.5.23)")
        v = _v(s.rules.version)
        supported = ["triton", "trtllm_mha", "fa3", "fa4", "ascend"]  # 0.5.9 (srt/server_args.py:1343 @0.5.9)
        if v >= (0, 5, 13):  # added in 0.5.13 (srt/server_args.py GptOss block @0.5.13; still
            supported.append("intel_amx")  # in srt/arg_groups/model_hook.py:523-532 @0.5.23)
        if v >= (0, 5, 11):
            supported.append("intel_xpu")  # srt/server_args.py:1901-1909 @0.5.11
        if v >= (0, 5, 10):
            supported.append("aiter")  # srt/server_args.py:1709-1716 @0.5.10
        prefill = a["prefill_attention_backend"] or s.attn
        decode = a["decode_attention_backend"] or s.attn
        if prefill not in supported or decode not in supported:
            raise Rejected("AssertionError", f"GptOssForCausalLM requires one of {supported} attention backend, but "
                           f"got the following backends\n- Prefill: {prefill}\n- Decode: {decode}\n",
                           "srt/server_args.py:1901-1916 @0.5.11")
        if v < (0, 5, 10) and "trtllm_mha" in (prefill, decode):
            # 0.5.9: "support swa kv indices translation for trtllm_mha" was still a TODO: one plain pool
            # (srt/server_args.py:1354-1359 @0.5.9; gone in 0.5.10's block, :1709-1740 @0.5.10)
            s.raw = {**s.raw, "disable_hybrid_swa_memory": True}
            s.why["disable_hybrid_swa_memory"] = "gpt-oss + trtllm_mha on 0.5.9 (srt/server_args.py:1354-1359 @0.5.9)"
    if s.arch == "Llama4ForConditionalGeneration":
        # srt/server_args.py:2044-2060 @0.5.11; model_overrides/llama4.py:16-36 @0.5.23
        if a["attention_backend"] is None:
            s.attn = "trtllm_mha" if s.dev.sm100 else "fa3" if s.dev.sm90 else "triton"
            s.why["attention_backend"] = ("Llama 4 default for the GPU (server_args.py:2044-2060 @0.5.11, "
                                          "model_overrides/llama4.py:16-36 @0.5.23)")
        ascend = _v(s.rules.version) >= (0, 5, 10)  # 0.5.9 has no ascend (srt/server_args.py:1462-1468 @0.5.9)
        if s.attn not in ("fa3", "aiter", "triton", "trtllm_mha", "intel_xpu") + (("ascend",) if ascend else ()):
            listed = "fa3, aiter, triton, " + ("ascend, " if ascend else "") + "trtllm_mha or intel_xpu"
            raise Rejected("AssertionError", f"{listed} is required for Llama4 model but got {s.attn}",
                           "srt/server_args.py:2061-2067 @0.5.11")


def profile_checks(args: ResolvedArgs, model: ModelSpec, prof, inp: dict, out: dict) -> None:
    """The hybrid SWA pool's own check, on the profiled and then the capped token count, before the
    MemoryPoolConfig's (:func:`validate`); ``prof`` is memory_profile's Profile, ``inp`` / ``out`` its chain's."""
    if not is_hybrid_swa(args, model):
        return
    page = args.page_size
    profiled = max(int(int(out["available"]) // inp["cell"]), 0) // page * page
    try:
        validate(args, model, swa_tokens(args, model, profiled))
        if args.max_total_tokens is not None and 0 <= args.max_total_tokens < profiled:
            validate(args, model, swa_tokens(args, model, int(out["n"])))
    except Rejected as exc:
        exc.profile = prof
        raise
