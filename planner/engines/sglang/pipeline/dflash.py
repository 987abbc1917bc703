"""DFLASH: what the draft's config decides, per release (pure; the config is already read).

* D, the verify block: ``--speculative-dflash-block-size``, else ``--speculative-num-draft-tokens``, else the
  draft config's ``dflash_config.block_size`` / top-level ``block_size``, else 16
  (srt/server_args.py:3358-3420 @0.5.11; speculative/dflash_utils.py parse_dflash_draft_config :313-390 @0.5.11).
* The target's per-token cell pays for the draft's KV pool, which holds the same token slots:
  0.5.11-0.5.17 by the layer ratio, ``ceil(cell x (L + Ld) / L)`` with L the target's full-attention layers and
  Ld the draft's layers (speculative/dflash_utils.py:51-89 @0.5.11, model_executor/pool_configurator.py:95-111
  @0.5.11); 0.5.18+ from the draft's own geometry, ``cell + kv_heads(draft, tp) x (head_dim + v_head_dim) x Ld x
  dtype`` (model_runner_components/spec_aux_hidden_state.py:175-223 @0.5.18, speculative/dflash_utils.py:121-134
  @0.5.23, mem_cache/draft_kv_budget.py @0.5.23, pool_configurator.py:316-338 @0.5.23).
* The draft's weights: its decoder layers, the fc over the captured target hidden states, and two norms;
  it has no embedding or LM head of its own (it borrows the target's: models/dflash.py:336-372 @0.5.16).
  A DSPARK head adds its Markov head and, only under a non-static SGLANG_RAGGED_VERIFY_MODE, a float32
  confidence head (:func:`head_weights`, the one count the pipeline and the catalog use).
"""

from __future__ import annotations


from planner.catalog.draft_heads import DSPARK_ARCHITECTURES, draft_layers, head_weights
from planner.catalog.spec import CONTEXT_KEYS, DTYPE_BYTES, ModelSpec
from planner.engines.sglang.pipeline.server_args import Rejected

DEFAULT_BLOCK = 16  # srt/server_args.py:3414-3420 @0.5.11

# A public launch of the catalog's reconstructed DSpark head (RadixArk/Qwen3.8-27B-DSpark) on SGLang at the
# target's 262,144 tokens, no SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN: "After a DSpark boot: grep ...
# context_len=... -- expect DSPARK, block 7, 262144" (a DGX Spark serving README, code corpus id 63043395797).
_PUBLISHED_CONTEXT = {"qwen3.8-27b-dspark": (262144, "a public launch README of this head reports "
                                                     "context_len=262144: code corpus id 63043395797")}


def context_stated(draft: ModelSpec) -> bool:
    """Whether the draft's config states a context length (a key get_context_length reads)."""
    return any(draft.text.get(k) is not None for k in CONTEXT_KEYS)  # the same keys in 0.5.23 (common.py:668-694)


def unrecorded_draft_context(draft: ModelSpec) -> tuple[int, str] | None:
    """(context, why) for a catalog draft whose config is reconstructed field by field (configs/SOURCES.md level
    R) without a context key: the file SGLang reads is the published one, whose value the record lacks, so the
    transformers default the planner would otherwise derive (Qwen3Config's 32768) is not what SGLang sees. The
    published head's context where a public launch shows it, else None (SGLang's rule on the record applies).

    SGLang's rule itself: the DFLASH / DSPARK draft's ModelConfig is built with the target's context_len
    (speculative/draft_worker_common.py:96-101 @0.5.23 -> managers/tp_worker.py:465-482), and
    _derive_context_length compares it with get_context_length(hf_text_config) (configs/model_config.py:1291-1316
    @0.5.23); a config.json without any of CONTEXT_KEYS gets its transformers config class's default
    (max_position_embeddings = 32768 for model_type qwen3: transformers/models/qwen3/configuration_qwen3.py:70
    @5.19.0, the release 0.5.23 pins), so a longer target context is refused unless
    SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set, which overrides the draft's max_position_embeddings."""
    if context_stated(draft):
        return None
    from planner.catalog.catalog import find_entry  # noqa: PLC0415 - only for a draft without a context key

    entry = find_entry(draft.name)
    if entry is None or not entry.draft or entry.verbatim != "R":
        return None
    return _PUBLISHED_CONTEXT.get(entry.id)


def dflash_block_size(draft: ModelSpec | None) -> tuple[int, str]:
    """(D, how): the draft config's block size (``dflash_config.block_size`` first, then the top-level one),
    else 16 (parse_dflash_draft_config, speculative/dflash_utils.py:333-342 @0.5.11)."""
    if draft is None:
        return DEFAULT_BLOCK, "the draft config is not known here: SGLang's default 16"
    cfg = draft.raw.get("dflash_config") or {}
    raw = cfg.get("block_size", draft.raw.get("block_size")) if isinstance(cfg, dict) else draft.raw.get("block_size")
    if raw is None:
        return DEFAULT_BLOCK, f"the draft {draft.name} has no block_size: SGLang's default 16"
    return int(raw), f"the draft {draft.name}'s block_size"


_DRAFT_BACKENDS = {"0.5.15": ("flashinfer", "fa3", "fa4", "triton", "ascend"),
                   "0.5.18": ("flashinfer", "fa3", "fa4", "triton", "trtllm_mha", "ascend"),
                   "0.5.23": ("flashinfer", "fa3", "fa4", "triton", "ascend", "trtllm_mha", "intel_xpu")}


def dflash_draft_backend(rule: str, target_backend: str | None, draft: ModelSpec | None, sm100: bool) -> str | None:
    """_resolve_dflash_draft_attention_backend: the draft worker's attention backend from the target's prefill (or
    only) backend; --speculative-draft-attention-backend is refused by the flag audit, so it is never given here.
    ``rule`` "" (<= 0.5.14): the target's; "0.5.15": trtllm_mha or an unsupported one -> flashinfer
    (srt/arg_groups/speculative_hook.py:433-475 @0.5.16); "0.5.18": trtllm_mha kept only when every draft layer is
    sliding or the draft is causal, else flashinfer (:520-590 @0.5.18); "0.5.23": then fa4 on SM100
    (srt/arg_groups/speculative_hook.py:886-990 @0.5.23)."""
    if not rule:
        return target_backend
    if target_backend is None:
        return "flashinfer"
    if target_backend not in _DRAFT_BACKENDS[rule]:
        return "flashinfer"
    if target_backend == "trtllm_mha":
        if rule == "0.5.15":
            return "flashinfer"
        raw = draft.raw if draft is not None else {}
        types = raw.get("layer_types")
        sliding = bool(types) and len(types) == raw.get("num_hidden_layers") and set(types) == {"sliding_attention"}
        if sliding or raw.get("is_causal") is True:
            return "trtllm_mha"
        return "fa4" if rule == "0.5.23" and sm100 else "flashinfer"
    return target_backend


def draft_kv_dtype_bytes(draft: ModelSpec, kv_cache_dtype: str, fa4_own_dtype: bool = False) -> int:
    """configure_kv_cache_dtype for the draft worker (model=None, is_dflash=True): ``auto`` is the draft's own
    dtype, an explicit --kv-cache-dtype is kept, except that an fa4 draft keeps its own dtype (0.5.16+)
    (mem_cache/kv_cache_dtype.py:22-101 @0.5.18)."""
    d = draft.dtype.replace("torch.", "")
    own = DTYPE_BYTES.get("bfloat16" if d == "float32" else d, 2)
    if kv_cache_dtype == "auto" or fa4_own_dtype:
        return own
    return 1 if kv_cache_dtype.startswith("fp8") else 2


def draft_kv_bytes(args, draft: ModelSpec) -> int:
    """The DFLASH draft pool's element size for this launch."""
    fa4 = args.rules.dflash_fa4_draft_kv_model_dtype and args.dflash_draft_backend == "fa4"
    return draft_kv_dtype_bytes(draft, args.kv_cache_dtype, fa4)


def draft_cell_bytes(draft: ModelSpec, tp: int, dtype_bytes: int) -> int:
    """dflash_draft_cell_size_per_token (speculative/dflash_utils.py:121-134 @0.5.23): the draft's own KV bytes
    per token over all its layers."""
    heads = max(1, draft.num_key_value_heads // tp)
    return heads * (draft.head_dim + draft.v_head_dim) * draft_layers(draft) * dtype_bytes


def dflash_cell(cell: int, n_layers: int, draft: ModelSpec | None, args) -> int:
    """The target's cell with the draft's KV term (scale_kv_cell_size_per_token_for_dflash,
    speculative/dflash_utils.py:51-89 @0.5.11, :137-175 @0.5.23)."""
    if draft is None or n_layers <= 0 or cell <= 0:
        return cell
    if args.rules.dflash_draft_cell_own_geometry:
        extra = draft_cell_bytes(draft, args.tp_size, draft_kv_bytes(args, draft))
        if extra > 0:
            return int(cell) + int(extra)
    ld = draft_layers(draft)
    if ld <= 0:
        return cell
    return (int(cell) * (n_layers + ld) + n_layers - 1) // n_layers


def draft_weight_bytes(draft: ModelSpec, tp: int, env: dict[str, str] | None = None) -> tuple[int, str]:
    """(bytes per GPU, how) of a DFLASH / DSPARK draft's weights at its dtype (:func:`head_weights`)."""
    w = head_weights(draft, tp, env)
    name = "DSPARK" if draft.architecture in DSPARK_ARCHITECTURES or draft.draft_kind == "DSPARK" else "DFLASH"
    return w.per_gpu_bytes, (f"{name} draft {draft.name}: {w.how}; {w.params / 1e9:.2f}B parameters "
                             f"({w.params_per_gpu / 1e9:.2f}B per GPU at tp {tp}, the fc not sharded) x {w.dtype_bytes} B"
                             f"{f' + {w.f32_bytes:,} B float32' if w.f32_bytes else ''}; no embedding / LM head of its "
                             "own (models/dflash.py:336-372 @0.5.16)")


def check_target_layer_ids(model: ModelSpec, draft: ModelSpec) -> None:
    """DFlashDraftConfig.resolve_target_layer_ids: every id in the draft's dflash_config.target_layer_ids must be a
    layer of the target (hf_text_config.num_hidden_layers) (speculative/dflash_utils.py:296-310 @0.5.11, :556-585
    @0.5.23; called from ModelRunner.__init__, model_runner.py:431-460 @0.5.11)."""
    ids = (draft.raw.get("dflash_config") or {}).get("target_layer_ids")
    n = int(model.num_hidden_layers)
    for idx, val in enumerate(ids or []):
        if val < 0 or val >= n:
            raise Rejected("ValueError", "DFLASH target_layer_ids contains an out-of-range layer id. "
                           f"target_layer_ids[{idx}]={val}, target_num_layers={n}.",
                           "srt/speculative/dflash_utils.py:296-310 @0.5.11", stage="runner_setup")


def dflash_cost(plan) -> str | None:
    """One line: D and what it costs this launch (a plan with a DFLASH draft that reached the pools), with how
    each figure was computed. None for any other plan."""
    a, prof, pools = plan.args, plan.profile, plan.pools
    if a is None or a.speculative_algorithm != "DFLASH" or prof is None or prof.max_total_num_tokens is None:
        return None
    d = a.speculative_num_draft_tokens
    why = a.defaulted.get("speculative_num_draft_tokens", "--speculative-num-draft-tokens")
    parts = [f"D = {d} draft tokens per verify ({why})"]
    s = prof.mamba_cache_per_req_bytes
    if s and prof.mamba_ratio and a.rules.mamba_solve == "classic":  # <= 0.5.12: reserved for max_running_requests
        parts.append(f"the speculative states are reserved up front for max_running_requests {a.max_running_requests}: "
                     f"S {s / 2**20:.1f} MiB x {a.max_running_requests} x D {d} = "
                     f"{(prof.spec_reserved_bytes or 0) / 2**30:.2f} GiB; each running request also takes "
                     f"mamba ratio {prof.mamba_ratio} x S of the mamba share")
    elif s and prof.mamba_ratio:
        per = (prof.mamba_ratio + d) * s
        parts.append(f"each running request takes (mamba ratio {prof.mamba_ratio} + D {d}) x S {s / 2**20:.1f} MiB = "
                     f"{per / 2**30:.2f} GiB of the mamba share; speculative states reserved "
                     f"{(prof.spec_reserved_bytes or 0) / 2**30:.2f} GiB")
    if pools is not None:
        dkv = sum(x.bytes for x in pools.lines if x.key.startswith("draft_kv"))
        target = sum(x.bytes for x in pools.lines if x.key in ("kv_k", "kv_v"))
        if dkv:
            parts.append(f"the draft's KV pool {dkv / 2**30:.2f} GiB next to the target's {target / 2**30:.2f} GiB "
                         f"(same {prof.max_total_num_tokens:,} token slots; cell {prof.kv_cell_bytes_per_token:,} B/token)")
    w = next((n for n in plan.needs if n.label == "draft model weights"), None)
    if w is not None:
        parts.append(f"draft weights {w.bytes / 2**30:.2f} GiB after the pools")
    else:
        w = next((x for x in plan.assumptions if x.name == "draft worker's load per GPU"), None)
        if w is not None:
            parts.append(f"draft weights {w.value} loaded before sizing")
    return "; ".join(parts)
