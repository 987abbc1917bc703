"""Weight bytes computed from the architecture, when no checkpoint or published total is at hand.

The count follows the tensors a Hugging Face checkpoint of each family holds: embedding and
(untied) LM head, per-layer attention (Qwen3.5/3.6 gated attention has a 2x q projection),
Gated-DeltaNet / Mamba2 mixers, dense MLP or MoE experts, norms, the MTP layer and the vision
tower when the config has them. It reproduces the published ``total_size`` of the Qwen3.5/3.6
checkpoints only approximately; the output always labels it an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.catalog.spec import DTYPE_BYTES, ModelSpec, is_dense_moe_layer


@dataclass(frozen=True)
class WeightEstimate:
    total: int
    params: int
    detail: str


def _mlp_params(spec: ModelSpec, t: dict) -> int:
    h = spec.hidden_size
    mats = 2 if spec.architecture == "NemotronHForCausalLM" else 3  # relu2 MLP: up + down only
    if spec.num_experts:
        moe = spec.moe_intermediate_size or spec.intermediate_size or 0
        shared = spec.shared_expert_intermediate_size or t.get("moe_shared_expert_intermediate_size") or 0
        return spec.num_experts * mats * h * moe + mats * h * shared + h * spec.num_experts + (h if shared else 0)
    inter = spec.intermediate_size or 4 * h
    return mats * h * inter


# model types whose checkpoints hold q_norm / k_norm (one head_dim vector each), and those whose q/k/v
# projections carry a bias (transformers' Qwen2Attention builds them with bias=True whatever the config says)
_QK_NORM_TYPES = ("qwen3", "qwen3_moe", "qwen3_vl", "qwen3_vl_moe", "qwen3_vl_text", "qwen3_vl_moe_text")
_QKV_BIAS_TYPES = ("qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl")


def _dense_mlp_params(spec: ModelSpec) -> int:
    return 3 * spec.hidden_size * (spec.intermediate_size or 4 * spec.hidden_size)


def _attn_params(spec: ModelSpec) -> int:
    h = spec.hidden_size
    q = spec.num_attention_heads * spec.head_dim
    kv = spec.num_key_value_heads * spec.head_dim
    gated = 2 if spec.hybrid == "gdn" else 1  # Qwen3-Next/3.5 q_proj carries the output gate
    extra = 0
    if spec.hybrid is None:
        mtype = str(spec.text.get("model_type") or spec.model_type)
        if mtype in _QK_NORM_TYPES:
            extra += 2 * spec.head_dim
        if mtype in _QKV_BIAS_TYPES or spec.text.get("attention_bias") is True:
            extra += q + 2 * kv
    return h * q * gated + 2 * h * kv + q * h + extra


def _mixer_params(spec: ModelSpec) -> int:
    m = spec.mamba
    if m is None:
        return 0
    h = spec.hidden_size
    conv_dim = m.intermediate_size + 2 * m.n_groups * m.state_size
    if spec.hybrid == "gdn":
        # in_proj_qkv + in_proj_z + in_proj_b + in_proj_a + conv1d + A_log + dt_bias + norm + out_proj
        return (h * conv_dim + h * m.intermediate_size + 2 * h * m.num_heads
                + conv_dim * m.conv_kernel + 2 * m.num_heads + m.head_dim + m.intermediate_size * h)
    # Mamba2: in_proj (z, x, B, C, dt) + conv1d + A, D, dt_bias + norm + out_proj
    return (h * (2 * m.intermediate_size + 2 * m.n_groups * m.state_size + m.num_heads)
            + conv_dim * m.conv_kernel + 3 * m.num_heads + m.intermediate_size + m.intermediate_size * h)


def _llama4_params(spec: ModelSpec) -> int:
    """Llama 4 (Llama4ForConditionalGeneration), as transformers' Llama4 modules hold it: per text layer q/k/v/o (no
    bias; use_qk_norm is a parameter-free L2 norm), two RMSNorms, and either the MoE block (router, the routed experts'
    fused gate_up and down, one shared expert of ``intermediate_size``) on layers ``step - 1, 2 step - 1, ...``
    (``interleave_moe_layer_step``) or a dense MLP of ``intermediate_size_mlp``; untied embeddings and lm_head; the
    vision encoder (patch linear, class and positional embeddings, pre/post LayerNorms, layers with biased
    attention and fc1/fc2, the pixel-shuffle adapter MLP) and the bias-free multi-modal projector."""
    t, h = spec.text, spec.hidden_size
    q, kv = spec.num_attention_heads * spec.head_dim, spec.num_key_value_heads * spec.head_dim
    inter, inter_mlp = spec.intermediate_size or 4 * h, int(t.get("intermediate_size_mlp") or 4 * h)
    experts, step = spec.num_experts or 0, int(t.get("interleave_moe_layer_step") or 1)
    moe_layers = set(range(step - 1, spec.num_hidden_layers, step)) if experts else set()
    attn = 2 * h * q + 2 * h * kv
    moe = experts * h + experts * (2 * inter * h + inter * h) + 3 * h * inter
    total = 2 * spec.vocab_size * h + h
    for layer in range(spec.num_hidden_layers):
        total += attn + 2 * h + (moe if layer in moe_layers else 3 * h * inter_mlp)
    vc = spec.raw.get("vision_config") or {}
    vh = int(vc.get("hidden_size") or 0)
    if vh:
        vi, patch = int(vc.get("intermediate_size") or 4 * vh), int(vc.get("patch_size") or 14)
        ch, img = int(vc.get("num_channels") or 3), int(vc.get("image_size") or 336)
        pin, pout = int(vc.get("projector_input_dim") or vh), int(vc.get("projector_output_dim") or vh)
        shuffle = float(vc.get("pixel_shuffle_ratio") or 0.5)
        positions = (img // patch) ** 2 + 1
        layer = 4 * (vh * vh + vh) + (vh * vi + vi) + (vi * vh + vh) + 4 * vh
        total += vh + positions * vh + ch * patch * patch * vh + 4 * vh
        total += int(vc.get("num_hidden_layers") or 0) * layer
        total += int(vh / (shuffle * shuffle)) * pin + pin * pout  # vision_adapter fc1, fc2 (no bias)
        total += int(vc.get("vision_output_dim") or pout) * h  # multi_modal_projector.linear_1 (no bias)
    return total


def _mla_params(spec: ModelSpec, mtp_only: bool = False) -> int:
    """An MLA model's parameters from its checkpoint tensor list (planner.catalog.quant_tensors._deepseek)."""
    from planner.catalog.quant_tensors import checkpoint_tensors, is_mtp_tensor, numel  # noqa: PLC0415

    return sum(numel(t) for t in checkpoint_tensors(spec) if not mtp_only or is_mtp_tensor(t.name, spec))


def estimate_params(spec: ModelSpec) -> int:
    if spec.mla is not None:
        return _mla_params(spec)
    if spec.architecture == "Llama4ForConditionalGeneration":
        return _llama4_params(spec)
    h = spec.hidden_size
    t = spec.text
    embed = spec.vocab_size * h
    head = 0 if spec.tie_word_embeddings else spec.vocab_size * h
    total = embed + head + h  # final norm
    full = set(spec.full_attention_layer_ids)
    mixer = set(spec.mamba_layer_ids)
    mlp = _mlp_params(spec, t)
    for layer in range(spec.num_hidden_layers):
        if spec.architecture == "NemotronHForCausalLM":
            c = spec.text.get("hybrid_override_pattern", "")[layer]
            total += h + (_attn_params(spec) if c == "*" else _mixer_params(spec) if c == "M" else mlp)
            continue
        # Gemma 2 adds pre- and post-feedforward RMSNorms to every layer (transformers Gemma2DecoderLayer)
        norms = 4 if str(t.get("model_type") or spec.model_type) == "gemma2" else 2
        total += norms * h + (_dense_mlp_params(spec) if is_dense_moe_layer(spec, t, layer) else mlp)
        total += _attn_params(spec) if layer in full else 0
        total += _mixer_params(spec) if layer in mixer else 0
    if spec.mtp_layers:
        total += spec.mtp_layers * (_attn_params(spec) + mlp + 2 * h * h + 5 * h)
    if spec.vision and spec.vision.hidden_size:
        vh = spec.vision.hidden_size
        depth = spec.vision.num_hidden_layers or spec.vision.depth or 0
        vinter = int((spec.raw.get("vision_config") or {}).get("intermediate_size") or 4 * vh)
        total += depth * (4 * vh * vh + 2 * vh * vinter)
    return total


def estimate_weight_bytes(spec: ModelSpec, params: int | None = None, source: str | None = None) -> WeightEstimate:
    per = DTYPE_BYTES.get(spec.dtype, 2)
    if params is not None:
        return WeightEstimate(params * per, params,
                              f"{params:,} parameters x {per} B ({spec.dtype}); {source}")
    n = estimate_params(spec)
    note = (f"; the checkpoint is quantized ({spec.quant_method}), so this unquantized figure is an upper bound"
            if spec.quant_method else "")
    return WeightEstimate(n * per, n, f"estimated from the architecture: ~{n/1e9:.2f}B parameters x {per} B ({spec.dtype}){note}")


def mtp_weight_bytes(spec: ModelSpec) -> int:
    """Parameters of the MTP layer(s) shipped in the checkpoint (Qwen3.5/3.6), at the model dtype."""
    if not spec.mtp_layers:
        return 0
    if spec.quant_method:  # a quantized checkpoint's MTP layer at its stored size (planner/catalog/quant.py)
        from planner.catalog.quant import UnmodelledQuantization, quantized_weights  # noqa: PLC0415
        try:
            q = quantized_weights(spec)
            if q is not None and q.mtp_memory_bytes:
                return q.mtp_memory_bytes
        except UnmodelledQuantization:
            pass
    if spec.mla is not None:  # the NextN layers of the tensor list, at the model dtype
        return _mla_params(spec, mtp_only=True) * 2
    h = spec.hidden_size
    per_layer = _attn_params(spec) + _mlp_params(spec, spec.text) + 2 * h * h + 5 * h
    per_layer += 2 * spec.head_dim  # q_norm and k_norm weights
    return spec.mtp_layers * per_layer * 2


def replicated_mla_bytes(spec: ModelSpec, tp: int) -> int:
    """Bytes per GPU above an even 1/tp split for an MLA model: SGLang builds q_a_proj + kv_a_proj_with_mqa as one
    ReplicatedLinear (``fused_qkv_a_proj_with_mqa``), and the MoE router and its correction bias replicated too
    (srt/models/deepseek_v2.py, DeepseekV2AttentionMLA / DeepseekV2MoE @0.5.23), so every GPU holds them whole.
    Their bytes as loaded: block-FP8 weight + float32 block scales when the checkpoint is fp8 with a
    weight_block_size, else the model dtype."""
    if spec.mla is None or tp <= 1:
        return 0
    from planner.catalog.quant_tensors import Linear, numel  # noqa: PLC0415

    total = 0
    for t, loaded in _mla_main_tensors(spec):
        leaf = t.name.rsplit(".", 1)[-1] if isinstance(t, Linear) else t.name.rsplit(".", 2)[-2]
        if isinstance(t, Linear) and leaf in ("q_a_proj", "kv_a_proj_with_mqa"):
            total += loaded
        elif isinstance(t, Linear) and t.name.endswith("mlp.gate"):  # the router: never block-quantized
            total += numel(t) * DTYPE_BYTES.get(spec.dtype, 2)
        elif t.name.endswith("e_score_correction_bias"):
            total += numel(t) * 4
    return total - -(-total // tp)


def _mla_main_tensors(spec: ModelSpec):
    """(tensor, its bytes as loaded) for an MLA checkpoint's tensors outside the NextN layers: a Linear of a
    block-FP8 checkpoint (fp8 with a weight_block_size) as its FP8 weight + float32 block scales, anything else at
    the model dtype."""
    from planner.catalog.quant_tensors import Linear, checkpoint_tensors, is_mtp_tensor, numel  # noqa: PLC0415

    q = spec.raw.get("quantization_config") if isinstance(spec.raw.get("quantization_config"), dict) else {}
    block = q.get("weight_block_size") if str(q.get("quant_method", "")).lower() == "fp8" else None
    per = DTYPE_BYTES.get(spec.dtype, 2)
    for t in checkpoint_tensors(spec):
        if is_mtp_tensor(t.name, spec):
            continue
        if block and isinstance(t, Linear):
            bn, bk = block
            yield t, t.out * t.inp + -(-t.out // bn) * -(-t.inp // bk) * 4
        else:
            yield t, numel(t) * per


def replicated_kv_bytes(spec: ModelSpec, tp: int) -> int:
    """Bytes per GPU above an even 1/tp split when there are fewer KV heads than GPUs.

    ``QKVParallelLinear`` gives each rank ``max(1, kv_heads // tp)`` K and V heads and replicates them
    ``tp // kv_heads`` times when ``tp >= kv_heads`` (srt/layers/linear.py:945-950 @0.5.11), so every GPU holds
    one head's k_proj / v_proj (and bias) instead of ``kv_heads / tp`` of them. Unquantized checkpoints only
    (a quantized checkpoint's k/v tensors are not sized per head here): 0 for them.
    """
    kv = spec.num_key_value_heads
    if tp <= kv or spec.quant_method:
        return 0
    per = DTYPE_BYTES.get(spec.dtype, 2)
    mtype = str(spec.text.get("model_type") or spec.model_type)
    bias = spec.head_dim if (mtype in _QKV_BIAS_TYPES or spec.text.get("attention_bias") is True) else 0
    one_head = 2 * (spec.hidden_size * spec.head_dim + bias)  # k_proj + v_proj rows of one head
    layers = len(spec.full_attention_layer_ids)
    # per GPU: one head; an even split would give kv / tp of one
    return layers * per * -(-(one_head * (tp - kv)) // tp)


def dp_attention_mla_bytes(spec: ModelSpec, tp: int, attn_dp: int) -> int:
    """Bytes per GPU above the even 1/tp split under DP attention for an MLA model: q_b_proj, kv_b_proj, o_proj
    (models/deepseek_v2.py:1591-1707 @0.5.16, split over attn_tp_size) and the vocabulary embedding
    (get_embedding_tp_kwargs, :185: use_attn_tp_group) are split over attn_tp = tp // attn_dp instead of tp.
    Bytes as loaded: block-FP8 weight + float32 block scales when the checkpoint is fp8 with a
    weight_block_size, else the model dtype."""
    if spec.mla is None or attn_dp <= 1 or tp <= 1:
        return 0
    total = sum(_mla_attn_and_embedding(spec))
    attn_tp = max(1, tp // attn_dp)
    return -(-total // attn_tp) - -(-total // tp)


def _mla_attn_and_embedding(spec: ModelSpec) -> tuple[int, int]:
    """(q / q_b / kv_b / o projections of the main layers, the embedding): an MLA checkpoint's bytes as loaded that
    DP attention splits over attn_tp."""
    from planner.catalog.quant_tensors import Linear  # noqa: PLC0415

    attn = emb = 0
    for t, loaded in _mla_main_tensors(spec):
        if isinstance(t, Linear) and t.name.rsplit(".", 1)[-1] in ("q_proj", "q_b_proj", "kv_b_proj", "o_proj") \
                and ".self_attn." in t.name + ".":
            attn += loaded
        elif "embed_tokens" in t.name:
            emb += loaded
    return attn, emb


def dp_attention_gqa_bytes(spec: ModelSpec, tp: int, attn_dp: int) -> int:
    """Bytes per GPU above what :func:`replicated_kv_bytes` and the even 1/tp split give, under DP attention for a
    GQA MoE model (Qwen3-MoE, GLM-4.x MoE, MiniMax-M2; Qwen3-Next / Qwen3.5-MoE with the gated q_proj and the Gated
    DeltaNet layers, :func:`_gdn_layer_bytes`, and Qwen3.5's vision tower, whose blocks take tp_size=attn_tp_size
    without --mm-enable-dp-encoder, models/qwen3_vl.py:112-132, 264-295 @0.5.16, as estimate_params sizes it):
    q_proj / o_proj and the vocabulary embedding are split
    over attn_tp = tp // attn_dp instead of tp, k_proj / v_proj over attn_tp with one KV head per GPU when attn_tp
    exceeds the KV heads (QKVParallelLinear with tp_size=attn_tp_size, models/qwen3_moe.py:453-496,
    glm4_moe.py:205-248, minimax_m2.py:287-330; VocabParallelEmbedding(use_attn_tp_group=
    is_dp_attention_enabled()), qwen2_moe.py:837-841, glm4_moe.py:1039-1042, minimax_m2.py:1102-1106 @0.5.16).
    Bytes as loaded: block-FP8 projections as the FP8 weight + float32 block scales, else the model dtype; the
    embedding at the model dtype."""
    if attn_dp <= 1 or tp <= 1:
        return 0
    per = DTYPE_BYTES.get(spec.dtype, 2)
    layers = len(spec.full_attention_layer_ids)
    q1, kv1, head1 = _gqa_layer_bytes(spec)
    qo = layers * q1
    if spec.hybrid == "gdn":
        qo += len(spec.mamba_layer_ids) * _gdn_layer_bytes(spec, _linear_bytes(spec), per)
    if spec.vision and spec.vision.hidden_size:  # Qwen3.5's vision tower: over attn_tp too (models/qwen3_vl.py:112-132)
        vh = spec.vision.hidden_size
        depth = spec.vision.num_hidden_layers or spec.vision.depth or 0
        vinter = int((spec.raw.get("vision_config") or {}).get("intermediate_size") or 4 * vh)
        qo += depth * (4 * vh * vh + 2 * vh * vinter) * per  # estimate_params' vision term
    kv, one_head = layers * kv1, layers * head1
    emb = spec.vocab_size * spec.hidden_size * per
    attn_tp = max(1, tp // attn_dp)
    dp_total = -(-(qo + emb) // attn_tp) + (-(-kv // attn_tp) if attn_tp <= spec.num_key_value_heads else one_head)
    return dp_total - -(-(qo + emb + kv) // tp) - replicated_kv_bytes(spec, tp)


def _linear_bytes(spec: ModelSpec):
    """A Linear's bytes as loaded: block-FP8 weight + float32 block scales, else the model dtype."""
    per = DTYPE_BYTES.get(spec.dtype, 2)
    q = spec.raw.get("quantization_config") if isinstance(spec.raw.get("quantization_config"), dict) else {}
    block = q.get("weight_block_size") if str(q.get("quant_method", "")).lower() == "fp8" else None

    def linear(out: int, inp: int) -> int:
        if block:
            bn, bk = block
            return out * inp + -(-out // bn) * -(-inp // bk) * 4
        return out * inp * per
    return linear


def _gqa_layer_bytes(spec: ModelSpec) -> tuple[int, int, int]:
    """One full-attention layer's (q_proj + o_proj, k_proj + v_proj, one KV head's k + v) bytes as loaded; q_proj
    doubled by the output gate on hybrid GDN models (models/qwen3_next.py:643-660 @0.5.16)."""
    per, linear = DTYPE_BYTES.get(spec.dtype, 2), _linear_bytes(spec)
    h, hd, heads, kvh = spec.hidden_size, spec.head_dim, spec.num_attention_heads, spec.num_key_value_heads
    mtype = str(spec.text.get("model_type") or spec.model_type)
    bias = hd * per if (mtype in _QKV_BIAS_TYPES or spec.text.get("attention_bias") is True) else 0
    gate = 2 if spec.hybrid == "gdn" and spec.text.get("attn_output_gate", True) else 1
    return (linear(gate * heads * hd, h) + heads * bias + linear(h, heads * hd),
            2 * (linear(kvh * hd, h) + kvh * bias), 2 * (linear(hd, h) + bias))


def dp_attention_draft_bytes(spec: ModelSpec, tp: int, attn_dp: int, lm_head: bool = False) -> int:
    """Bytes per GPU above the 1/tp split for the checkpoint's own MTP draft under DP attention (an estimate; the
    oracle is given the free memory, so no golden reads it): the draft's embedding over attn_tp (the NextN models
    build it with the target's layout: get_embedding_tp_kwargs, models/deepseek_nextn.py:126-131; glm4_moe_nextn.py:
    57-62 @0.5.16), its LM head over attn_tp with --enable-dp-lm-head (deepseek_nextn.py:375-381), and its MTP
    layer(s)' attention over attn_tp like the target's (one main layer's attention bytes per MTP layer)."""
    if attn_dp <= 1 or tp <= 1 or not spec.mtp_layers:
        return 0
    a = max(1, tp // attn_dp)
    emb = -(-spec.vocab_size // 64) * 64 * spec.hidden_size * DTYPE_BYTES.get(spec.dtype, 2)  # as draft_embed_head_bytes
    extra = emb // a - emb // tp
    if lm_head and not spec.tie_word_embeddings:
        extra += emb // a - emb // tp
    if spec.mla is not None:
        attn, _ = _mla_attn_and_embedding(spec)
        mains = max(1, spec.num_hidden_layers)
        layer = attn // mains
        extra += spec.mtp_layers * (-(-layer // a) - -(-layer // tp))
    else:
        q1, kv1, head1 = _gqa_layer_bytes(spec)
        kvh = spec.num_key_value_heads
        dp_layer = -(-q1 // a) + (-(-kv1 // a) if a <= kvh else head1)
        plain = -(-q1 // tp) + (-(-kv1 // tp) if tp <= kvh else head1)
        extra += spec.mtp_layers * (dp_layer - plain)
    return extra


def _gdn_layer_bytes(spec: ModelSpec, linear, per: int) -> int:
    """One Gated DeltaNet layer's projections, all split over attn_tp under DP attention (models/qwen3_next.py:
    120-232 @0.5.16: conv1d, in_proj_qkvz, in_proj_ba, out_proj with tp_size=attn_tp_size; dt_bias / A_log
    num_v_heads // attn_tp_size, :186-189)."""
    t = spec.text
    nk, nv = t["linear_num_key_heads"], t["linear_num_value_heads"]
    kd, vd = nk * t["linear_key_head_dim"], nv * t["linear_value_head_dim"]
    h = spec.hidden_size
    conv = (2 * kd + vd) * t["linear_conv_kernel_dim"] * per  # quant_config=None
    return linear(2 * kd + 2 * vd, h) + linear(2 * nv, h) + conv + linear(h, vd) + nv * (per + 4)


def dp_lm_head_bytes(spec: ModelSpec, tp: int, attn_dp: int) -> int:
    """--enable-dp-lm-head: the LM head split over attn_tp instead of tp (ParallelLMHead(use_attn_tp_group=
    enable_dp_lm_head), models/deepseek_v2.py, qwen3_moe.py:953-958, glm4_moe.py:1168-1173 @0.5.16); bytes per GPU
    above the 1/tp split, at the model dtype. 0 when the head is tied to the embedding (already counted there)."""
    if attn_dp <= 1 or tp <= 1 or spec.tie_word_embeddings:
        return 0
    lm = spec.vocab_size * spec.hidden_size * DTYPE_BYTES.get(spec.dtype, 2)
    return -(-lm // max(1, tp // attn_dp)) - -(-lm // tp)


# --- expert parallel (pipeline/expert_parallel.py): expert weights per rank -------------------------------------


def _mla_expert_bytes(spec: ModelSpec) -> tuple[int, int]:
    """(one routed expert's bytes summed over the MoE layers, the shared experts' bytes summed over the MoE layers)
    of an MLA checkpoint outside its NextN layers, as loaded (block-FP8 weight + float32 block scales when the
    checkpoint is fp8 with a weight_block_size, else the model dtype)."""
    from planner.catalog.quant_tensors import Linear  # noqa: PLC0415

    q = spec.raw.get("quantization_config") if isinstance(spec.raw.get("quantization_config"), dict) else {}
    block = q.get("weight_block_size") if str(q.get("quant_method", "")).lower() == "fp8" else None
    per = DTYPE_BYTES.get(spec.dtype, 2)
    expert = shared = 0
    for t, loaded in _mla_main_tensors(spec):
        if not isinstance(t, Linear):
            continue
        if t.expert:  # one copy of the layer's routed-expert projection (count = the layer's experts)
            if block:
                expert += loaded  # _mla_main_tensors sizes one copy of a block-FP8 expert projection
            else:
                expert += (t.out * t.inp + (t.out if t.bias else 0)) * per
        elif ".mlp.shared_experts." in t.name:
            shared += loaded
    return expert, shared


def a2a_shared_expert_bytes(spec: ModelSpec, tp: int) -> int:
    """Bytes per GPU above the even 1/tp split when an all-to-all MoE backend (DeepEP) is on: SGLang builds the
    shared experts with tp_rank 0, tp_size 1 (``_shared_expert_use_tp1``, srt/models/deepseek_v2.py:709-733
    @0.5.16, :870-895 @0.5.23), so every GPU holds them whole. Shared-expert fusion is off under DeepEP on CUDA
    (off by default for a DeepEP-class backend, determine_num_fused_shared_experts, models/deepseek_v2.py:2761-2790
    @0.5.16, :3356 @0.5.23)."""
    if spec.mla is None or tp <= 1:
        return 0
    shared = _mla_expert_bytes(spec)[1]
    return shared - -(-shared // tp)


def redundant_expert_bytes(spec: ModelSpec, tp: int, redundant: int) -> int:
    """Bytes per GPU of ``--ep-num-redundant-experts N``: the MoE layers hold E + N physical experts
    (``num_experts=num_experts_for_moe + ep_num_redundant_experts``, srt/models/deepseek_v2.py:631-633 @0.5.16,
    :749-754 @0.5.23; num_physical_experts = num_logical_experts + ep_num_redundant_experts,
    eplb/expert_location.py:229-232 @0.5.16, :236 @0.5.23), (E + N) / ep whole experts per EP rank, each TP-split
    tp / ep ways: (E + N) / tp expert-equivalents per GPU, N / tp of them above the plain split."""
    if spec.mla is None or redundant <= 0:
        return 0
    expert = _mla_expert_bytes(spec)[0]
    return -(-(expert * redundant) // max(1, tp))
