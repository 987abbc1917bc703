"""The weights of a DFLASH / DSPARK draft head, counted once for every engine and the catalog.

Moved from ``planner/engines/sglang/pipeline/dflash.py`` (issue #26): the catalog's draft sizes
(:mod:`planner.catalog.drafts`) and SGLang's draft-worker load both read this one count, and the weights stay in
one place both engines use. The citations are SGLang's modules, whose layout the checkpoint follows.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.catalog.spec import DTYPE_BYTES, ModelSpec


def draft_layers(draft: ModelSpec) -> int:
    """DFlashDraftConfig.require_num_layers: the draft's num_hidden_layers (dflash_utils.py:270-276 @0.5.11)."""
    return int(draft.num_hidden_layers)


#: the DSpark architectures the pipeline sizes (DSparkDraftModel = DSparkDraftMixin + DFlashDraftModel,
#: srt/models/dspark.py:513-545, 995 @0.5.23); the catalog passes ``dspark=True`` for the others it names
DSPARK_ARCHITECTURES = ("Qwen3DSparkModel", "DSparkDraftModel")
#: SGLANG_RAGGED_VERIFY_MODE values that build the DSpark confidence head (the default "static" does not:
#: srt/environ.py:1572 @0.5.23, speculative/ragged_verify.py:13-27, models/dspark.py:487-489)
CONFIDENCE_MODES = ("cap-accept", "compact")


def context_features(draft: ModelSpec) -> int:
    """How many target-layer hidden states ``fc`` concatenates: ``len(target_layer_ids)``
    (srt/models/dflash.py:750-760 @0.5.23; SGLang derives the ids from the layer counts when absent)."""
    raw = draft.raw
    cfg = {**(raw.get("dflash_config") or {}), **(raw.get("dspark_config") or {})}
    ids = cfg.get("target_layer_ids") or raw.get("target_layer_ids") or raw.get("dspark_target_layer_ids")
    if isinstance(ids, list) and ids:
        return len(ids)
    return draft_layers(draft)


@dataclass(frozen=True)
class HeadWeights:
    """What a DFLASH / DSPARK head holds (:func:`head_weights`): parameters at the draft's dtype, in all and
    per GPU, and the float32 tensors (DSpark's confidence head, when built: replicated on every GPU)."""

    params: int
    params_per_gpu: int
    dtype_bytes: int
    f32_bytes: int
    how: str

    @property
    def total_bytes(self) -> int:
        return self.params * self.dtype_bytes + self.f32_bytes

    @property
    def per_gpu_bytes(self) -> int:
        return self.params_per_gpu * self.dtype_bytes + self.f32_bytes


def head_weights(draft: ModelSpec, tp: int = 1, env: dict[str, str] | None = None,
                 dspark: bool | None = None) -> HeadWeights:
    """The one count of a DFLASH / DSPARK head's weights (the pipeline's draft load and the catalog's draft size).

    DFlashDraftModel (models/dflash.py:728-772 @0.5.23, :336-372 @0.5.16): per layer qkv + o (+ q/k norms), the
    MLP and two norms, sharded by tp (KV heads replicated below one per GPU); the fc (len(target_layer_ids) x
    hidden -> hidden, an nn.Linear, not sharded), the final norm and hidden_norm. No embedding or LM head: the
    target's are attached (models/dspark.py:547-551 @0.5.23).
    DSPARK adds (models/dspark.py @0.5.23; the same in 0.5.16-0.5.21) the Markov head built from the top-level
    ``markov_rank``, ``markov_head_type`` and ``vocab_size`` (build_markov_head :385-405): ``markov_w1``
    nn.Embedding(vocab, rank) + ``markov_w2`` nn.Linear(rank, vocab) (:198-199), ``gate_proj`` Linear(h + rank,
    rank) for "gated" (:313), ``joint_proj`` Linear(2 rank + h, 3 rank) for "rnn" (:345), plain modules, whole on
    every GPU; and the confidence head (build_confidence_head :487-510), only when SGLANG_RAGGED_VERIFY_MODE is
    not the default "static": a float32 nn.Linear(h + rank if confidence_head_with_markov (default rank > 0)
    else h, 1) with bias and a float32 scalar buffer ``sts_temperatures`` (:424-440). The config's
    ``enable_confidence_head`` is not read there (only its absence warned about)."""
    if dspark is None:
        dspark = draft.architecture in DSPARK_ARCHITECTURES or draft.draft_kind == "DSPARK"
    t, raw = draft.text, draft.raw
    h = draft.hidden_size
    nq = int(t.get("num_attention_heads") or raw.get("num_attention_heads") or draft.num_attention_heads)
    nkv = draft.num_key_value_heads
    hd = draft.head_dim
    inter = int(t.get("intermediate_size") or raw.get("intermediate_size") or draft.intermediate_size or 4 * h)
    layers = draft_layers(draft)
    feats = context_features(draft)
    attn = h * nq * hd + 2 * h * nkv * hd + nq * hd * h + 2 * hd
    mlp = 3 * h * inter
    fc = feats * h * h
    total = layers * (attn + mlp + 2 * h) + fc + 2 * h
    kv_rep = max(1, nkv // tp) * tp  # replicated KV heads when tp > nkv
    attn_gpu = (h * nq * hd + nq * hd * h) // tp + 2 * h * (kv_rep // tp) * hd + 2 * hd
    per_gpu = layers * (attn_gpu + mlp // tp + 2 * h) + fc + 2 * h
    how = f"{layers} draft layers + norm + fc ({feats} x {h} -> {h}) + hidden_norm"
    f32 = 0
    if dspark:
        rank = int(raw.get("markov_rank") or 0)
        vocab = int(raw.get("vocab_size") or draft.vocab_size)
        kind = str(raw.get("markov_head_type") or "vanilla").lower()
        markov = 2 * vocab * rank + {"gated": (h + rank) * rank + rank,
                                     "rnn": (2 * rank + h) * 3 * rank + 3 * rank}.get(kind, 0) if rank else 0
        total, per_gpu = total + markov, per_gpu + markov
        how += f" + {kind} Markov head (2 x {vocab:,} x rank {rank}{', + its projection' if kind != 'vanilla' else ''})"
        mode = (env or {}).get("SGLANG_RAGGED_VERIFY_MODE", "static")
        if mode in CONFIDENCE_MODES:
            with_markov = bool(raw.get("confidence_head_with_markov", rank > 0))
            f32 = ((h + (rank if with_markov else 0)) + 1 + 1) * 4  # Linear(in, 1) weight + bias, sts_temperatures
            how += f" + float32 confidence head ({f32:,} B: SGLANG_RAGGED_VERIFY_MODE={mode})"
        else:
            how += " (no confidence head: SGLANG_RAGGED_VERIFY_MODE is static)"
    return HeadWeights(total, per_gpu, DTYPE_BYTES.get(draft.dtype.replace("torch.", ""), 2), f32, how)
