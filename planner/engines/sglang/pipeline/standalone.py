"""STANDALONE speculative decoding: a full separate draft model (e.g. Qwen3-8B drafting Qwen3-32B).

What SGLang does with the draft named by ``--speculative-draft-model-path``, per release:

* **The draft's ModelConfig.** ``_config_draft_model`` rewrites some architectures to their MTP class when the
  config is a draft's, whatever the algorithm (srt/configs/model_config.py:320-337 @0.5.9, :585-665 @0.5.16):
  a Qwen3.5/3.6 (``Qwen3_5[Moe]ForConditionalGeneration``), Qwen3-Next or NemotronH draft is loaded as its MTP
  head (``num_nextn_predict_layers = 1``), from 0.5.13 also ``Qwen3MoeForCausalLM`` (:477-479 @0.5.13), from 0.5.17
  the text-only ``Qwen3_5[Moe]ForCausalLM`` (:668-676 @0.5.17). So Qwen3.5-9B "drafting" Qwen3.6-27B runs the
  9B's one MTP layer (with its own embedding and LM head), not the 9B model. The KV cell reads
  ``hf_text_config.num_nextn_predict_layers``: for a config with a ``text_config`` (Qwen3.5/3.6) the 1 is set
  there only from 0.5.18 (:728 @0.5.18); before, the cell counts ``max(num_hidden_layers,
  num_attention_layers)`` of the draft (model_runner.py:431-455 @0.5.14).
* **Its weights.** Nothing is shared with the target (speculative/standalone_worker_v2.py:128 @0.5.16: "we don't
  share embeddings and lm_head"): the whole checkpoint (TP-split like the target), or for an MTP-rewritten draft
  its MTP layer(s) + its own embedding and LM head. Loaded after the pools up to 0.5.13, before them from
  0.5.14 (managers/scheduler.py:846-853 @0.5.16).
* **Its KV.** The draft worker's own pool, with the target's token count (draft_runner_cache_size,
  model_runner_kv_cache_mixin.py:402-415 @0.5.9): the draft's layers, KV heads and head dims; a hybrid draft
  gets a HybridLinearKVPool with ``full_attention_layer_ids=[0]``, one layer (kv_cache_configurator.py:1276-1283
  @0.5.16). Up to 0.5.13 the target's budget does not count it (it comes out of the reserve that
  mem_fraction_static leaves, +6 GiB for STANDALONE: srt/server_args.py:1051-1054 @0.5.9); from 0.5.14 the
  target's cell is scaled by ``1 + draft_layers / target_layers``, which assumes the draft's per-layer KV equals
  the target's (pool_configurator.py:129-146 @0.5.14). :func:`kv_budget_note` says by how much that is off.
"""

from __future__ import annotations

from planner.catalog.spec import DTYPE_BYTES, ModelSpec

GIB = 1 << 30

# architectures[0] -> the switch of Rules that enables the rewrite (None: every modelled release)
_MTP_REWRITES = {
    "Qwen3NextForCausalLM": None,
    "Qwen3_5ForConditionalGeneration": None,
    "Qwen3_5MoeForConditionalGeneration": None,
    "NemotronHForCausalLM": None,
    "Qwen3MoeForCausalLM": "draft_mtp_rewrite_qwen3_moe",
    "NemotronHPuzzleForCausalLM": "draft_mtp_rewrite_qwen3_moe",  # same release (model_config.py:493-498 @0.5.13)
    "Qwen3_5ForCausalLM": "draft_mtp_rewrite_qwen3_5_text",
    "Qwen3_5MoeForCausalLM": "draft_mtp_rewrite_qwen3_5_text",
}


def loaded_as_mtp(draft: ModelSpec, rules) -> bool:
    """Whether this release's ``_config_draft_model`` turns the draft into its MTP class."""
    if draft.architecture not in _MTP_REWRITES:
        return False
    switch = _MTP_REWRITES[draft.architecture]
    if switch == "draft_mtp_rewrite_qwen3_moe":
        return rules.draft_mtp_rewrite_qwen3_moe
    if switch == "draft_mtp_rewrite_qwen3_5_text":
        return rules.draft_mtp_rewrite_qwen3_5_text
    return True


def config_nextn(draft: ModelSpec, rules) -> int | None:
    """The draft ModelConfig's ``num_nextn_predict_layers`` (read from hf_text_config,
    srt/configs/model_config.py:993-995 @0.5.16), after the MTP rewrite."""
    raw = draft.text.get("num_nextn_predict_layers")
    if not loaded_as_mtp(draft, rules):
        return None if raw is None else int(raw)
    has_text_config = "text_config" in draft.raw
    if not has_text_config or (draft.architecture.startswith("Qwen3_5") and rules.draft_nextn_on_text_config):
        return 1
    return None if raw is None else int(raw)


def draft_pool_layers(draft: ModelSpec) -> int:
    """Layers of the draft worker's own KV pool: one for a hybrid draft (HybridLinearKVPool with
    full_attention_layer_ids=[0], srt/mem_cache/kv_cache_configurator.py:1276-1283 @0.5.16), else all."""
    return 1 if draft.is_mambaish else draft.num_hidden_layers


def weight_load(draft: ModelSpec, tp: int, rules, checkpoint: tuple[int, str] | None) -> tuple[int, str]:
    """Bytes per GPU the STANDALONE draft worker keeps, and how they were found.

    ``checkpoint``: the draft checkpoint's total bytes and where they come from (catalog / safetensors index /
    headers / estimate), as the planner resolves the name given to --speculative-draft-model-path."""
    from planner.catalog.weights import estimate_weight_bytes, mtp_weight_bytes  # noqa: PLC0415

    if loaded_as_mtp(draft, rules):
        layer = mtp_weight_bytes(draft) // tp
        eh = _embed_head_bytes(draft, tp)
        return layer + eh, (f"SGLang loads {draft.name} ({draft.architecture}) as its MTP head "
                            f"(srt/configs/model_config.py _config_draft_model @{rules.version}): "
                            f"{draft.mtp_layers} MTP layer(s) {layer / GIB:.2f} GiB + its own embedding/LM head "
                            f"{eh / GIB:.2f} GiB (vocab {draft.vocab_size:,} x hidden {draft.hidden_size}, / tp {tp}), "
                            "not shared with the target")
    if checkpoint is None:
        est = estimate_weight_bytes(draft)
        checkpoint = (est.total, est.detail)
    total, how = checkpoint
    per = -(-total // tp)
    return per, (f"the whole draft {draft.name}: {how}: {total:,} B" + (f" / tp {tp}" if tp > 1 else "")
                 + " (embedding and LM head not shared with the target, standalone_worker_v2.py:128 @0.5.16)")


def _embed_head_bytes(draft: ModelSpec, tp: int) -> int:
    """The MTP head's own embed_tokens + lm_head (one tensor when tied), vocab padded to 64 and split over TP, at
    the model dtype (as headroom.draft_embed_head_bytes; models/qwen3_5_mtp.py:86-118 @0.5.16)."""
    d = draft.dtype.replace("torch.", "")
    wbytes = DTYPE_BYTES.get(d, 2) if d != "float32" else 2
    vocab = -(-draft.vocab_size // 64) * 64
    return (1 if draft.tie_word_embeddings else 2) * (vocab // tp) * draft.hidden_size * wbytes


def _per_layer_bytes(spec: ModelSpec, tp: int, dtype_bytes: int) -> int:
    return max(1, spec.num_key_value_heads // tp) * (spec.head_dim + spec.v_head_dim) * dtype_bytes


def kv_budget_note(plan, draft: ModelSpec, dl: int, kv_dtype: str) -> list[str]:
    """What the report says about the STANDALONE draft's KV, with how it was computed, and a WARNING where the
    draft's KV pool is larger than what SGLang's sizing charged for it. ``dl``: the draft layers the target's cell
    pays for (memory_profile.draft_kv_layers); ``kv_dtype``: the KV cache dtype."""
    a, prof, pools = plan.args, plan.profile, plan.pools
    if a is None or a.speculative_algorithm != "STANDALONE" or draft is None:
        return []
    rules, tp, model = a.rules, a.tp_size, plan.model.spec
    notes = []
    if pools is None or prof is None or prof.max_total_num_tokens is None:
        return notes
    n = prof.max_total_num_tokens
    pool = pools.get("draft_kv_k") + pools.get("draft_kv_v")
    b = DTYPE_BYTES.get(kv_dtype, 2)
    layers = draft_pool_layers(draft)
    d_layer = _per_layer_bytes(draft, tp, b)
    t_layer = _per_layer_bytes(model, tp, b)
    what = (f"STANDALONE draft KV: its own pool, {layers} layer(s) x {d_layer:,} B per token per layer "
            f"({max(1, draft.num_key_value_heads // tp)} KV heads x (K {draft.head_dim} + V {draft.v_head_dim}) x {b} B)"
            f" x (N {n:,} + page) tokens = {pool / GIB:.2f} GiB")
    if layers == 1 and draft.is_mambaish:
        what += " (one layer: SGLang gives a hybrid draft a HybridLinearKVPool with full_attention_layer_ids=[0])"
    notes.append(what)
    if not rules.draft_layers_in_cell:
        notes.append(f"WARNING: SGLang {rules.version} does not count the draft's KV in the KV budget: its "
                     f"{pool / GIB:.2f} GiB come out of what mem_fraction_static leaves (the STANDALONE heuristic "
                     "reserves 6 GiB for the draft's weights, KV and graphs, srt/server_args.py:1051-1054 @0.5.9)")
        return notes
    full_layers = len(model.full_attention_layer_ids)
    cell_target = t_layer * full_layers
    charged = (prof.kv_cell_bytes_per_token - cell_target) * n
    notes.append(f"SGLang budgets the draft's KV in the target's cell: {prof.kv_cell_bytes_per_token:,} B per token = "
                 f"{cell_target:,} B x (1 + {dl} draft layer(s) / {full_layers}) (pool_configurator.py:129-146 "
                 f"@0.5.14), {charged / GIB:.2f} GiB of the KV budget for N {n:,} tokens")
    if d_layer != t_layer or layers != dl:
        gap = pool - charged
        if gap > 0:
            notes.append(
                f"WARNING: SGLang under-budgets by {gap / GIB:.2f} GiB ({gap:,} B) the draft's KV: the cell charges "
                f"it as {dl} layer(s) of the target's {t_layer:,} B per token per layer (pool_configurator.py:129-146 "
                f"@0.5.14 assumes the draft's per-layer KV is the target's), {charged / GIB:.2f} GiB for N {n:,} "
                f"tokens, but the draft pool is {layers} x {d_layer:,} B: {pool / GIB:.2f} GiB; the difference "
                "comes out of the memory mem_fraction_static leaves")
        else:
            notes.append(f"The cell charges the draft {charged / GIB:.2f} GiB ({dl} layer(s) x {t_layer:,} B), "
                         f"more than its pool takes ({pool / GIB:.2f} GiB): {-gap / GIB:.2f} GiB of KV budget unused")
    return notes
