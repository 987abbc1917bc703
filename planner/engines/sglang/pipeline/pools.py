"""What SGLang 0.5.11's ``_init_pools`` really allocates, tensor by tensor, once M, N and R are known.

srt/model_executor/model_runner_kv_cache_mixin.py:194-667 @0.5.11 builds, for the target:

* ``ReqToTokenPool`` / ``HybridReqToTokenPool``: ``req_to_token`` (R+1, context_len + 4 + D) int32
  (srt/mem_cache/memory_pool.py:130-151 @0.5.11);
* ``MambaPool`` (memory_pool.py:225-345 @0.5.11): conv (L, M+1, conv_dim/tp, K-1), ssm
  (L, M+1, H/tp, dv, dk); under speculative decoding also the intermediates (L, R+1, D, ...)
  for ssm and conv window; ``free_slots`` int64 (M,);
* the request-to-mamba mappings (R+1,) int32, and (R+1, pingpong) int32 with extra_buffer
  (memory_pool.py:547-560 @0.5.11);
* ``MHATokenToKVPool`` K and V per full-attention layer, (N + page, kv_heads/tp, head_dim)
  (memory_pool.py:888-913 @0.5.11) plus its pointer/stride tables;
* the token allocator's ``free_pages`` int64 (N / page) (srt/mem_cache/allocator.py:131-138, 505-515 @0.5.11);

and for the draft worker its own KV pool (1 layer for a mambaish MTP draft, kv_cache_mixin.py:503-528
@0.5.11), sharing the target's request pool and allocator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.catalog.spec import DTYPE_BYTES, ModelSpec
from planner.engines.sglang.pipeline.dflash import draft_kv_bytes
from planner.engines.sglang.pipeline import own_mtp
from planner.engines.sglang.pipeline.mamba import MambaState
from planner.engines.sglang.pipeline.memory_profile import Profile, kv_dtype_name, num_kv_heads
from planner.engines.sglang.pipeline.server_args import ResolvedArgs


@dataclass(frozen=True)
class PoolLine:
    key: str  # summary field name without the pool_ prefix / _bytes suffix
    label: str
    bytes: int
    formula: str
    rule: str


@dataclass
class Pools:
    lines: list[PoolLine]
    draft_kv_known: bool

    def get(self, key: str) -> int:
        return sum(line.bytes for line in self.lines if line.key == key)

    @property
    def total(self) -> int:
        return sum(line.bytes for line in self.lines)


@dataclass(frozen=True)
class KvGeometry:
    layers: int
    heads: int
    head_dim: int
    v_head_dim: int
    dtype_bytes: int
    ptr_bytes_per_layer: int = 48  # MHA: k/v data_ptrs + data_ptrs + data_strides; MLA: data_ptrs only (8)
    indexer_bytes_per_token_layer: int = 0  # DSA: index_k_with_scale_buffer (cache_kinds/indexer.py)

    @property
    def token_bytes(self) -> int:
        """K and V bytes of one token over every layer (the unified pool's full entry, F)."""
        return self.layers * self.heads * (self.head_dim + self.v_head_dim) * self.dtype_bytes


@dataclass(frozen=True)
class SwaGeometry(KvGeometry):
    """A hybrid SWA model's SWAKVPool (pipeline/swa.py): ``layers`` are its full-attention layers; the sliding
    sub-pool is the model's ``sliding`` layers, sized from the same N by --swa-full-tokens-ratio."""

    model: ModelSpec | None = None


def geometries(args: ResolvedArgs, model: ModelSpec, state: MambaState | None,
               draft: ModelSpec | None) -> tuple[KvGeometry, KvGeometry | None]:
    """The target KV pool and the draft's own KV pool (None when there is none or it is unknown)."""
    tp = args.tp_size // args.attn_dp_size  # KV heads per attention-TP rank (pipeline/dp_attention.py attn_tp)
    b = DTYPE_BYTES[kv_dtype_name(args, model)]
    if model.sliding is not None:
        from planner.engines.sglang.pipeline import swa  # noqa: PLC0415

        if swa.is_hybrid_swa(args, model):  # no draft: speculative decoding is refused for these models
            return SwaGeometry(len(model.sliding.full_layer_ids), num_kv_heads(model, tp), model.head_dim,
                               model.v_head_dim, b, model=model), None
    layers = len(model.full_attention_layer_ids) if state is not None else model.num_hidden_layers
    if model.mla is not None:  # one latent "head" of kv_lora_rank + rope per layer (pipeline/mla.py)
        from planner.engines.sglang.pipeline import mla  # noqa: PLC0415

        latent, indexer = mla.kinds(model, kv_dtype_name(args, model), args.gpu_sm[0], args.rules.version)
        per_index = indexer.per_token_layer if indexer is not None else 0
        own = mla.own_draft_layers(model, args)  # the NextN draft worker's own MLA pool (same latent layout)
        return (KvGeometry(latent.layers, 1, latent.dim, 0, latent.dtype_bytes, 8, per_index),
                KvGeometry(own, 1, latent.dim, 0, latent.dtype_bytes, 8, per_index) if own else None)
    target = KvGeometry(layers, num_kv_heads(model, tp), model.head_dim, model.v_head_dim, b)
    d = None
    if args.spec_on and args.speculative_algorithm != "NGRAM":  # NGRAM: no draft model, no draft KV pool
        if model.is_mambaish and draft is None:
            # MTP draft of a hybrid model: HybridLinearKVPool with full_attention_layer_ids=[0]
            # (srt/model_executor/model_runner_kv_cache_mixin.py:503-528 @0.5.11)
            d = KvGeometry(1, num_kv_heads(model, tp), model.head_dim, model.v_head_dim, b)
        elif own_mtp.own_draft_layers(model, args, draft):
            # GLM-4.x's own NextN layer: the draft worker's MHATokenToKVPool over num_nextn_predict_layers layers
            # with the target's kv heads (pipeline/own_mtp.py)
            d = KvGeometry(model.mtp_layers, num_kv_heads(model, tp), model.head_dim, model.v_head_dim, b)
        elif draft is not None:  # an EAGLE head's own MHATokenToKVPool (…kv_cache_mixin.py:530-600 @0.5.11)
            from planner.engines.sglang.pipeline.standalone import draft_pool_layers  # noqa: PLC0415

            db = draft_kv_bytes(args, draft) if args.speculative_algorithm == "DFLASH" else b  # DFLASH: its own dtype
            # a hybrid draft (STANDALONE Qwen3.5 / NemotronH): one layer (kv_cache_configurator.py:1276-1283 @0.5.16)
            d = KvGeometry(draft_pool_layers(draft), num_kv_heads(draft, tp), draft.head_dim, draft.v_head_dim, db)
    return target, d


def req_to_token_extra(args: ResolvedArgs) -> int:
    """Columns of req_to_token beyond the context length: 4 + D (…kv_cache_mixin.py:199-203 @0.5.11).

    0.5.13-0.5.15: spec with page > 1 and topk > 1 keeps max(4 + D, 2 x alloc_len)
    (srt/mem_cache/common.py:154-210 @0.5.13); 0.5.16+: any spec with page > 1 keeps
    max(4 + D, 2 x alloc_len + page - 1) (srt/mem_cache/allocation_sizing.py:9-62 @0.5.16).
    """
    d = args.speculative_num_draft_tokens or 0
    extra = 4 + d
    mode = args.rules.req_to_token_headroom
    steps, topk = args.speculative_num_steps or 1, args.speculative_eagle_topk or 1
    if mode == "none" or not args.spec_on or args.page_size <= 1 or (mode == "topk_gt1" and topk <= 1):
        return extra
    # get_alloc_len_per_decode; 0.5.14+ NGRAM writes no draft KV, so no per-topk page rounding
    # (srt/mem_cache/allocation_sizing.py:40-45 @0.5.23, srt/speculative/spec_info.py:174-178 @0.5.23)
    if topk == 1 or (args.rules.ngram_alloc_without_draft_kv and args.speculative_algorithm == "NGRAM"):
        alloc = max(steps * topk, d)
    else:
        alloc = max((((args.page_size - 1) + steps + args.page_size - 1) // args.page_size) * args.page_size * topk, d)
    return max(extra, 2 * alloc + (args.page_size - 1 if mode == "page" else 0))


def int8_checkpoint_bytes(args: ResolvedArgs, state: MambaState, m):
    """--enable-int8-mamba-checkpoint (0.5.14+): an int8 copy of cached states, allocated after sizing and
    not charged to the KV budget: ``--int8-mamba-ckpt-size`` or 2 x M slots, + 1 reserved; per layer and slot
    int8 (H, dv, dk) + a scale (H, 1, dk) in the ssm dtype + the conv window
    (MambaCheckpointPool.estimate_mem_usage_bytes and maybe_init_int8_mamba_checkpoint_pool,
    srt/mem_cache/mamba_checkpoint_pool.py:263-294, 301-360 @0.5.19)."""
    slots = (args.raw.get("int8_mamba_ckpt_size") or 2 * m) + 1
    h, dv, dk = state.ssm_shape
    per_slot = h * dv * dk + h * dk * DTYPE_BYTES[state.ssm_dtype] + state.conv_bytes_per_layer
    return state.n_layers * slots * per_slot


def replayssm_ring_tensors(state: MambaState, slots, rec: int, layout: str) -> dict:
    """The ReplaySSM ring tensors, each (layers, slots, heads, rec[, dim]) (srt/mem_cache/memory_pool.py:625-740
    @0.5.19, :635-763 @0.5.20): "per_slot" (0.5.17-0.5.19 verify): rawv, rawk in the conv dtype, g, beta fp32;
    "fixed" (0.5.20+ verify): d, k in the conv dtype, g fp32, and rawv, rawk (the bf16 low parts) unless the conv
    dtype is fp32; "decode" (--enable-linear-replayssm): d, k in the ssm dtype, g fp32."""
    hv, hk, v, k = state.gdn_heads()
    lay = state.n_layers
    cb = DTYPE_BYTES[state.conv_dtype]
    if layout == "decode":
        sb = DTYPE_BYTES[state.ssm_dtype]
        return {"replayssm_d": lay * slots * hv * rec * v * sb, "replayssm_k": lay * slots * hk * rec * k * sb,
                "replayssm_g": lay * slots * hv * rec * 4}
    out = {"replayssm_g": lay * slots * hv * rec * 4}
    if layout == "per_slot":
        out["replayssm_rawv"] = lay * slots * hv * rec * v * cb
        out["replayssm_rawk"] = lay * slots * hk * rec * k * cb
        out["replayssm_beta"] = lay * slots * hv * rec * 4
    else:
        out["replayssm_d"] = lay * slots * hv * rec * v * cb
        out["replayssm_k"] = lay * slots * hk * rec * k * cb
        if state.conv_dtype != "float32":
            out["replayssm_rawv"] = lay * slots * hv * rec * v * cb
            out["replayssm_rawk"] = lay * slots * hk * rec * k * cb
    return out


def unified_pool_bytes(args: ResolvedArgs, state: MambaState, g: KvGeometry, n, r, m, available) -> dict:
    """--enable-unified-memory (0.5.15+), hybrid mamba model, no speculative decoding: one uint8 buffer holds
    the full-attention KV and the mamba states (both are views of it); two MultiEndedAllocators index it.

    * total T = N x F + M x S (srt/mem_cache/unified_memory_pool.py:880 @0.5.15, :1163-1166 @0.5.18); 0.5.19+:
      the profiled budget floored to 4096 B plus M x S unless a --max-total-tokens cap re-derived the pool
      (:1238-1244 @0.5.19; kv_cache_configurator.py:2193-2208 @0.5.19); the buffer adds a page x F view tail
      pad in 0.5.19-0.5.21 (:346-351 @0.5.19). F = full-attention bytes per token, S = mamba bytes per slot.
    * each allocator maps every slot the whole buffer could hold: int64 virtual->physical and back
      ((T // entry) / page + 1 each) and a free list past the reserved slot-0 sink, max(F, S) (0.5.15-0.5.16)
      or max(F, S, page x F) (multi_ended_allocator.py:158-164, 283 @0.5.18; unified_memory_pool.py:269-292
      @0.5.19).
    * per request row: req_generation int64 (0.5.16+), the request->mamba map int32, and with extra_buffer
      an int64 ping-pong map (unified_memory_pool.py:1043-1055 @0.5.18); the K/V pointer and stride tables
      (48 x full layers) except in 0.5.19-0.5.20 (:499-513 @0.5.18, :596-598 @0.5.19).
    * req_to_token keeps 4 + D columns (kv_cache_configurator.py:615-618 @0.5.19).
    """
    import numpy as np  # noqa: PLC0415

    rules = args.rules
    page = args.page_size
    f = g.token_bytes
    s_ = state.per_req_bytes
    n, r, m = np.asarray(n), np.asarray(r), np.asarray(m)
    total = n * f + m * s_
    if rules.unified_budget_total and available is not None:
        available = np.asarray(available)
        budget_total = available - available % 4096 + m * s_
        if args.max_total_tokens is None:
            total = budget_total
        else:
            total = np.where(args.max_total_tokens < available // f // page * page, total, budget_total)
    floor = max(f, s_) if rules.unified_mode == "v0_5_15" else max(f, s_, page * f)
    nf = total // f // page
    mm = total // s_
    min_page_f = -(-(-(-floor // f)) // page)
    index = 16 * (nf + 1) + 8 * (nf - min_page_f) + 16 * (mm + 1) + 8 * (mm - (-(-floor // s_)))
    if rules.req_generation:
        index = index + 8 * (r + 1)
    index = index + 4 * (r + 1)
    if args.extra_buffer:
        index = index + 8 * (r + 1) * (1 if args.disable_overlap_schedule else 2)
    if rules.unified_tables:
        index = index + 48 * g.layers
    return {"req_to_token": (r + 1) * (args.context_len + 4 + (args.speculative_num_draft_tokens or 0)) * 4,
            "unified": total + (page * f if rules.unified_pad else 0), "index_buffers": index,
            "_unified_total": total}


def pool_bytes(args: ResolvedArgs, state: MambaState | None, target: KvGeometry, draft: KvGeometry | None,
               n, r, m, available=None, swa_tokens=None) -> dict:
    """Bytes of every tensor group ``_init_pools`` allocates; n, r, m may be numpy arrays.

    Keys follow the summary's ``pool_*_bytes`` names without the prefix and suffix.
    """
    if args.unified_memory and state is not None:
        out = unified_pool_bytes(args, state, target, n, r, m, available)
        out.pop("_unified_total")
        return out
    if getattr(args, "disaggregation_mode", "null") == "decode":  # the decode role's pools (pipeline/disaggregation.py)
        from planner.engines.sglang.pipeline.disaggregation import decode_pool_sizes  # noqa: PLC0415

        r, m = decode_pool_sizes(args, r, m, state is not None)
    page = args.page_size
    d = args.speculative_num_draft_tokens or 0
    # 0.5.10: (R, ...) (srt/mem_cache/memory_pool.py:145 @0.5.10); 0.5.11+: (R + 1, ...)
    rows = r + 1 if args.rules.request_pool_padding_row else r
    out = {"req_to_token": rows * (args.context_len + req_to_token_extra(args)) * 4}
    index = 0
    rules = args.rules
    if rules.req_generation:
        index = index + 8 * (r + 1)
    if state is not None:
        out["mamba_conv"] = (m + 1) * state.conv_bytes
        out["mamba_ssm"] = (m + 1) * state.ssm_bytes
        replay = args.rules.replayssm
        if replay and args.raw.get("enable_linear_replayssm_spec"):
            # the verify ring replaces intermediate_ssm (srt/mem_cache/memory_pool.py:625-740 @0.5.19,
            # :635-763, 921-935 @0.5.20): (M + 1) slots of ring(D) in 0.5.17-0.5.19; (R + 1) request rows of
            # ring(cache len) plus three cursors (int32, int32, int8) from 0.5.20
            cache_len = args.raw.get("linear_replayssm_cache_len", 16)
            if replay == "per_slot":
                out.update(replayssm_ring_tensors(state, m + 1, d or cache_len, "per_slot"))
            else:
                out.update(replayssm_ring_tensors(state, r + 1, cache_len, "fixed"))
                index = index + 9 * (r + 1)
        if replay and args.raw.get("enable_linear_replayssm"):
            # decode ring in the ssm dtype, not charged to the budget: d, k, g fp32, write_pos int32 on M + 1 slots
            # (srt/mem_cache/memory_pool.py:625-740 @0.5.19)
            out.update(replayssm_ring_tensors(state, m + 1, args.raw.get("linear_replayssm_cache_len", 16), "decode"))
            index = index + 4 * (m + 1)
        conv_only = any(k.startswith("replayssm_") for k in out) and bool(args.raw.get("enable_linear_replayssm_spec"))
        if args.speculative_num_draft_tokens is not None and not conv_only:
            out["mamba_intermediate_ssm"] = (r + 1) * d * state.ssm_bytes
        if args.speculative_num_draft_tokens is not None:
            if rules.conv_window_dedup and (args.speculative_eagle_topk is None or args.speculative_eagle_topk <= 1):
                # one (D + K - 1)-wide window per slot (srt/mem_cache/memory_pool.py:380-410 @0.5.16)
                dim, win = state.conv_shape
                out["mamba_intermediate_conv"] = ((r + 1) * state.n_layers * dim * (d + win - 1)
                                                  * DTYPE_BYTES[state.conv_dtype])
            else:
                out["mamba_intermediate_conv"] = (r + 1) * d * state.conv_bytes
        # free_slots int64 (M,), req_index_to_mamba_index_mapping int32 (R+1,), ping-pong (R+1, 1|2)
        # 0.5.10 sizes the mapping and ping-pong with M rows (srt/mem_cache/memory_pool.py:511-521 @0.5.10)
        map_rows = r + 1 if rules.request_pool_padding_row else m
        index = index + 8 * m + 4 * map_rows
        if args.extra_buffer:
            if rules.pingpong_width_by_draft:  # width 2 if no draft tokens else 1 (srt/mem_cache/memory_pool.py:453-455 @0.5.9)
                width = 2 if args.speculative_num_draft_tokens is None else 1
            else:
                width = 1 if args.disable_overlap_schedule else 2
            index = index + rules.pingpong_bytes * map_rows * width
    if state is not None and args.raw.get("enable_int8_mamba_checkpoint"):
        out["mamba_int8_checkpoint"] = int8_checkpoint_bytes(args, state, m)
    g = target
    if isinstance(g, SwaGeometry):  # SWAKVPool: the full and the sliding sub-pools (pipeline/swa.py)
        from planner.engines.sglang.pipeline import swa  # noqa: PLC0415

        out.update(swa.pool_bytes(args, g.model, g.dtype_bytes, n, r, swa_tokens))
        out["index_buffers"] = out["index_buffers"] + index
        return out
    # 0.5.23 stores equal K and V rows as the two halves of one (2, rows, heads, dim) tensor per layer
    # (srt/mem_cache/memory_pool.py:2630-2645 @0.5.23; rows are whole pages, so no padding) and still reports
    # them apart: get_kv_size_bytes sizes the k_buffer and v_buffer views (:2753-2767), the log prints
    # "K size: X GB, V size: Y GB" (:2082-2091); kv_k and kv_v are those views, their sum the tensor
    out["kv_k"] = g.layers * (n + page) * g.heads * g.head_dim * g.dtype_bytes
    out["kv_v"] = g.layers * (n + page) * g.heads * g.v_head_dim * g.dtype_bytes
    # k/v data_ptrs (uint64, L each), data_ptrs (uint64, 2L), data_strides (int64, 2L); free_pages int64
    out["index_buffers"] = index + g.ptr_bytes_per_layer * g.layers + 8 * (n // page)
    if g.indexer_bytes_per_token_layer:  # DSA indexer keys: whole pages + 1 (cache_kinds/indexer.py)
        out["indexer"] = g.layers * (n // page + 1) * page * g.indexer_bytes_per_token_layer
    if draft is not None:
        out["draft_kv_k"] = draft.layers * (n + page) * draft.heads * draft.head_dim * draft.dtype_bytes
        out["draft_kv_v"] = draft.layers * (n + page) * draft.heads * draft.v_head_dim * draft.dtype_bytes
        out["draft_index_buffers"] = draft.ptr_bytes_per_layer * draft.layers
        if draft.indexer_bytes_per_token_layer:  # the draft pool's own indexer keys (its own buffer list)
            out["draft_indexer"] = draft.layers * (n // page + 1) * page * draft.indexer_bytes_per_token_layer
    return out


_LABELS = {
    "req_to_token": ("req_to_token", "srt/model_executor/model_runner_kv_cache_mixin.py:199-203 @0.5.11"),
    "mamba_conv": ("mamba conv state", "srt/mem_cache/memory_pool.py:258-286 @0.5.11"),
    "mamba_ssm": ("mamba ssm state", "srt/mem_cache/memory_pool.py:258-286 @0.5.11"),
    "mamba_intermediate_ssm": ("spec intermediate ssm", "srt/mem_cache/memory_pool.py:287-331 @0.5.11"),
    "mamba_intermediate_conv": ("spec intermediate conv", "srt/mem_cache/memory_pool.py:287-331 @0.5.11"),
    "kv_k": ("KV K", "srt/mem_cache/memory_pool.py:888-913 @0.5.11; from 0.5.23 the K half of one K|V tensor (:2630-2645)"),
    "kv_v": ("KV V", "srt/mem_cache/memory_pool.py:888-913 @0.5.11; from 0.5.23 the V half of one K|V tensor (:2630-2645)"),
    "index_buffers": ("index buffers", "srt/mem_cache/allocator.py:131-138 @0.5.11; memory_pool.py:341, 547-560, "
                      "915-934"),
    "kv_swa_k": ("sliding-window KV K", "srt/mem_cache/swa_memory_pool.py SWAKVPool @0.5.11; the SWA sub-pool"),
    "kv_swa_v": ("sliding-window KV V", "srt/mem_cache/swa_memory_pool.py SWAKVPool @0.5.11; the SWA sub-pool"),
    "draft_kv_k": ("draft KV K", "srt/model_executor/model_runner_kv_cache_mixin.py:503-600 @0.5.11"),
    "draft_kv_v": ("draft KV V", "srt/model_executor/model_runner_kv_cache_mixin.py:503-600 @0.5.11"),
    "draft_index_buffers": ("draft index buffers", "srt/mem_cache/memory_pool.py:915-934 @0.5.11"),
    "draft_indexer": ("draft indexer k-cache", "srt/mem_cache/memory_pool.py:1915-1930 @0.5.11 (the NextN draft pool)"),
    "indexer": ("indexer k-cache", "srt/mem_cache/memory_pool.py:1915-1930 @0.5.11 (index_k_with_scale_buffer)"),
    "mamba_int8_checkpoint": ("int8 mamba checkpoint", "srt/mem_cache/mamba_checkpoint_pool.py:263-360 @0.5.19"),
    "unified": ("unified KV + mamba buffer", "srt/mem_cache/unified_memory_pool.py:1189-1265 @0.5.19"),
    "replayssm_d": ("ReplaySSM d", "srt/mem_cache/memory_pool.py:625-740 @0.5.19, :635-763 @0.5.20"),
    "replayssm_k": ("ReplaySSM k", "srt/mem_cache/memory_pool.py:625-740 @0.5.19, :635-763 @0.5.20"),
    "replayssm_g": ("ReplaySSM g", "srt/mem_cache/memory_pool.py:625-740 @0.5.19, :635-763 @0.5.20"),
    "replayssm_rawv": ("ReplaySSM rawv", "srt/mem_cache/memory_pool.py:625-740 @0.5.19, :635-763 @0.5.20"),
    "replayssm_rawk": ("ReplaySSM rawk", "srt/mem_cache/memory_pool.py:625-740 @0.5.19, :635-763 @0.5.20"),
    "replayssm_beta": ("ReplaySSM beta", "srt/mem_cache/memory_pool.py:625-740 @0.5.19, :635-763 @0.5.20"),
}


def _formula(key: str, args: ResolvedArgs, state: MambaState | None, g: KvGeometry, dg: KvGeometry | None,
             n: int, r: int, m: int | None) -> str:
    d = args.speculative_num_draft_tokens or 0
    page = args.page_size
    if isinstance(g, SwaGeometry) and key in ("kv_k", "kv_v", "kv_swa_k", "kv_swa_v", "index_buffers"):
        from planner.engines.sglang.pipeline import swa  # noqa: PLC0415

        return swa.formula(key, args, g.model, g.dtype_bytes, n)
    if key == "req_to_token":
        return f"(R {r} + 1) x (context {args.context_len} + {req_to_token_extra(args)}) x int32"
    if key in ("mamba_conv", "mamba_ssm"):
        shape, dt = (state.conv_shape, state.conv_dtype) if key == "mamba_conv" else (state.ssm_shape, state.ssm_dtype)
        return f"{state.n_layers} layers x (M {m} + 1) x {shape} x {dt}"
    if key.startswith("mamba_intermediate"):
        shape, dt = (state.conv_shape, state.conv_dtype) if key.endswith("conv") else (state.ssm_shape, state.ssm_dtype)
        return f"{state.n_layers} layers x (R {r} + 1) x D {d} x {shape} x {dt}"
    if key.endswith(("kv_k", "kv_v")):
        geo = dg if key.startswith("draft") else g
        hd = geo.head_dim if key.endswith("_k") else geo.v_head_dim
        if geo.ptr_bytes_per_layer == 8 and key.endswith("kv_k"):  # the MLA latent buffer (cache_kinds/mla.py)
            return (f"{geo.layers} layers x (N {n:,} + page {page}) x latent {hd} (kv_lora_rank + rope) x "
                    f"{geo.dtype_bytes} B, not split by tp")
        one = args.rules.kv_one_tensor and geo.head_dim == geo.v_head_dim
        half = (" (the K half of one (2, rows, heads, dim) tensor per layer)" if key.endswith("_k")
                else " (the V half of one (2, rows, heads, dim) tensor per layer)") if one else ""
        return (f"{geo.layers} layer{'s' if geo.layers != 1 else ''} x "
                f"(N {n:,} + page {page}) x {geo.heads} heads x {hd} x {geo.dtype_bytes} B{half}")
    if key == "draft_indexer":
        return (f"{dg.layers} layer x (N {n:,} // page {page} + 1) x page x {dg.indexer_bytes_per_token_layer} B")
    if key == "indexer":
        return (f"{g.layers} layers x (N {n:,} // page {page} + 1) x page x {g.indexer_bytes_per_token_layer} B "
                "(FP8 index key + float32 scale per 128)")
    if key == "mamba_int8_checkpoint":
        slots = args.raw.get("int8_mamba_ckpt_size") or 2 * m
        return (f"{state.n_layers} layers x ({'--int8-mamba-ckpt-size ' if args.raw.get('int8_mamba_ckpt_size') else '2 x M '}"
                f"{slots} + 1) x (int8 {state.ssm_shape} + scale + conv); not charged to the KV budget")
    if key.startswith("replayssm_"):
        cache_len = args.raw.get("linear_replayssm_cache_len", 16)
        if args.raw.get("enable_linear_replayssm"):
            return f"decode ring: {state.n_layers} layers x (M {m} + 1) x {cache_len} steps (ssm dtype); not charged"
        if args.rules.replayssm == "per_slot":
            return (f"verify ring: {state.n_layers} layers x (M {m} + 1) x D {args.speculative_num_draft_tokens or cache_len}"
                    " steps; replaces the intermediate ssm states")
        return f"verify ring: {state.n_layers} layers x (R {r} + 1) x {cache_len} steps; replaces the intermediate ssm states"
    if key == "unified":
        total = "budget floored to 4096 B + M x S" if args.rules.unified_budget_total else "N x F + M x S"
        pad = " + page x F view pad" if args.rules.unified_pad else ""
        return f"{total}{pad} (F = full-attention bytes per token, S = mamba state per slot); N {n:,}, M {m}"
    if key == "index_buffers" and args.unified_memory:
        return "the two allocators' virtual/physical maps and free lists (slots the whole buffer could hold), request maps"
    if key == "index_buffers":
        return "free lists, request->state mappings, K/V pointer and stride tables"
    return "draft K/V pointer and stride tables"


def allocate(args: ResolvedArgs, model: ModelSpec, state: MambaState | None, prof: Profile,
             draft: ModelSpec | None) -> Pools:
    n, r, m = prof.max_total_num_tokens, prof.max_running_requests, prof.max_mamba_cache_size
    if prof.pool_requests is not None:  # 0.5.9: the pools are sized for R_pool
        r = prof.pool_requests
    g, dg = geometries(args, model, state, draft)
    sizes = pool_bytes(args, state, g, dg, n, r, m if m is not None else 0, prof.available_kv_bytes, prof.swa_tokens)
    labels = dict(_LABELS)
    if isinstance(g, SwaGeometry):  # the two sub-pools of SWAKVPool, named as the report shows them
        labels["kv_k"] = ("full-attention KV K", labels["kv_k"][1])
        labels["kv_v"] = ("full-attention KV V", labels["kv_v"][1])
    if model.mla is not None:  # one latent buffer per layer, filed under K as the oracle does (V is 0)
        sizes.pop("kv_v", None)
        sizes.pop("draft_kv_v", None)
        labels["draft_kv_k"] = ("draft MLA latent KV (NextN)", labels["draft_kv_k"][1])
        labels["kv_k"] = ("MLA latent KV", "srt/mem_cache/memory_pool.py:1536-1569 @0.5.11, :4793-4870 @0.5.23 "
                          "(MLATokenToKVPool kv_buffer)")
    rf, mf = r, m
    if args.disaggregation_mode == "decode":  # the formulas show the decode role's rows and slots as allocated
        from planner.engines.sglang.pipeline.disaggregation import decode_pool_sizes  # noqa: PLC0415

        rf, mf = decode_pool_sizes(args, r, m if m is not None else 0, state is not None)
        labels["req_to_token"] = (labels["req_to_token"][0] + f" (R {r} + {args.decode_extra_slots} extra decode "
                                  "slots)", labels["req_to_token"][1])
    lines = [PoolLine(k, labels[k][0], int(v), _formula(k, args, state, g, dg, n, rf, mf), labels[k][1])
             for k, v in sizes.items()]
    return Pools(lines, not (args.spec_on and dg is None and args.speculative_algorithm != "NGRAM"))


def beyond_budget_bytes(args: Any, model: Any, state: Any, prof: Any, draft: Any, pools_total: int) -> int:
    """What the decode role's pools allocate beyond the same pools sized as the budget charged them (R rows, M mamba
    slots): the extra request slots' req_to_token rows, mamba slots and speculative states. 0 off the decode role."""
    if getattr(args, "disaggregation_mode", "null") != "decode":
        return 0
    from dataclasses import replace  # noqa: PLC0415

    charged = allocate(replace(args, disaggregation_mode="null"), model, state, prof, draft)
    return pools_total - charged.total
