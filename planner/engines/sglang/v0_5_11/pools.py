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

from planner.catalog.spec import DTYPE_BYTES, ModelSpec
from planner.engines.sglang.v0_5_11.mamba import MambaState
from planner.engines.sglang.v0_5_11.memory_profile import Profile, kv_dtype_name, num_kv_heads
from planner.engines.sglang.v0_5_11.server_args import ResolvedArgs


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


def _kv_pool_lines(prefix: str, label: str, layers: int, n: int, page: int, heads: int, hd: int, vhd: int,
                   dtype: str, rule: str) -> tuple[list[PoolLine], int]:
    b = DTYPE_BYTES[dtype]
    k = layers * (n + page) * heads * hd * b
    v = layers * (n + page) * heads * vhd * b
    # k_data_ptrs, v_data_ptrs (uint64, L), data_ptrs (uint64, 2L), data_strides (int64, 2L)
    idx = 8 * layers * 2 + 8 * 2 * layers * 2
    lines = [
        PoolLine(f"{prefix}kv_k", f"{label} K", k,
                 f"{layers} layers x (N {n:,} + page {page}) x {heads} heads x {hd} x {b} B", rule),
        PoolLine(f"{prefix}kv_v", f"{label} V", v,
                 f"{layers} layers x (N {n:,} + page {page}) x {heads} heads x {vhd} x {b} B", rule),
    ]
    return lines, idx


def allocate(args: ResolvedArgs, model: ModelSpec, state: MambaState | None, prof: Profile,
             draft: ModelSpec | None) -> Pools:
    n = prof.max_total_num_tokens
    r = prof.max_running_requests
    page = args.page_size
    d = args.speculative_num_draft_tokens
    tp = args.tp_size
    kv_dtype = kv_dtype_name(args, model)
    lines: list[PoolLine] = []
    index = 0

    width = args.context_len + 4 + (d or 0)
    lines.append(PoolLine("req_to_token", "req_to_token", (r + 1) * width * 4,
                          f"(R {r} + 1) x (context {args.context_len} + 4 + D {d or 0}) x int32",
                          "srt/model_executor/model_runner_kv_cache_mixin.py:199-203 @0.5.11"))
    if state is not None:
        m = prof.max_mamba_cache_size
        rule = "srt/mem_cache/memory_pool.py:258-286 @0.5.11"
        lines.append(PoolLine("mamba_conv", "mamba conv state", (m + 1) * state.conv_bytes,
                              f"{state.n_layers} layers x (M {m} + 1) x {state.conv_shape} x {state.conv_dtype}", rule))
        lines.append(PoolLine("mamba_ssm", "mamba ssm state", (m + 1) * state.ssm_bytes,
                              f"{state.n_layers} layers x (M {m} + 1) x {state.ssm_shape} x {state.ssm_dtype}", rule))
        if d is not None:
            rule = "srt/mem_cache/memory_pool.py:287-331 @0.5.11"
            lines.append(PoolLine("mamba_intermediate_ssm", "spec intermediate ssm", (r + 1) * d * state.ssm_bytes,
                                  f"{state.n_layers} layers x (R {r} + 1) x D {d} x {state.ssm_shape} x {state.ssm_dtype}",
                                  rule))
            lines.append(PoolLine("mamba_intermediate_conv", "spec intermediate conv", (r + 1) * d * state.conv_bytes,
                                  f"{state.n_layers} layers x (R {r} + 1) x D {d} x {state.conv_shape} x "
                                  f"{state.conv_dtype}", rule))
        index += 8 * m + 4 * (r + 1)  # free_slots int64 (M,), req_index_to_mamba_index_mapping int32 (R+1,)
        if args.extra_buffer:
            pingpong = 1 if args.disable_overlap_schedule else 2
            index += 4 * (r + 1) * pingpong
        n_layers = len(model.full_attention_layer_ids)
    else:
        n_layers = model.num_hidden_layers
    kv, idx = _kv_pool_lines("", "KV", n_layers, n, page, num_kv_heads(model, tp), model.head_dim,
                             model.v_head_dim, kv_dtype, "srt/mem_cache/memory_pool.py:888-913 @0.5.11")
    lines += kv
    index += idx
    index += 8 * (n // page)  # allocator free_pages int64; release_pages is empty
    lines.append(PoolLine("index_buffers", "index buffers", index,
                          "free lists, request->state mappings, K/V pointer and stride tables",
                          "srt/mem_cache/allocator.py:131-138 @0.5.11; memory_pool.py:341, 547-560, 915-934"))

    draft_known = True
    if args.spec_on:
        if model.is_mambaish and draft is None:
            # MTP draft of a hybrid model: HybridLinearKVPool with full_attention_layer_ids=[0]
            kv, idx = _kv_pool_lines("draft_", "draft KV", 1, n, page, num_kv_heads(model, tp), model.head_dim,
                                     model.v_head_dim, kv_dtype,
                                     "srt/model_executor/model_runner_kv_cache_mixin.py:503-528 @0.5.11")
            lines += kv
            lines.append(PoolLine("draft_index_buffers", "draft index buffers", idx, "draft pointer/stride tables",
                                  "srt/mem_cache/memory_pool.py:915-934 @0.5.11"))
        elif draft is not None:
            kv, idx = _kv_pool_lines("draft_", "draft KV", draft.num_hidden_layers, n, page,
                                     num_kv_heads(draft, tp), draft.head_dim, draft.v_head_dim, kv_dtype,
                                     "srt/model_executor/model_runner_kv_cache_mixin.py:530-600 @0.5.11")
            lines += kv
            lines.append(PoolLine("draft_index_buffers", "draft index buffers", idx, "draft pointer/stride tables",
                                  "srt/mem_cache/memory_pool.py:915-934 @0.5.11"))
        else:
            draft_known = False
    return Pools(lines, draft_known)
