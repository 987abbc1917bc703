"""Weight bytes computed from the architecture, when no checkpoint or published total is at hand.

The count follows the tensors a Hugging Face checkpoint of each family holds: embedding and
(untied) LM head, per-layer attention (Qwen3.5/3.6 gated attention has a 2x q projection),
Gated-DeltaNet / Mamba2 mixers, dense MLP or MoE experts, norms, the MTP layer and the vision
tower when the config has them. It reproduces the published ``total_size`` of the Qwen3.5/3.6
checkpoints only approximately; the output always labels it an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.catalog.spec import DTYPE_BYTES, ModelSpec


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


def _attn_params(spec: ModelSpec) -> int:
    h = spec.hidden_size
    q = spec.num_attention_heads * spec.head_dim
    kv = spec.num_key_value_heads * spec.head_dim
    gated = 2 if spec.hybrid == "gdn" else 1  # Qwen3-Next/3.5 q_proj carries the output gate
    return h * q * gated + 2 * h * kv + q * h


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


def estimate_params(spec: ModelSpec) -> int:
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
        total += 2 * h + mlp
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
    h = spec.hidden_size
    per_layer = _attn_params(spec) + _mlp_params(spec, spec.text) + 2 * h * h + 5 * h
    per_layer += 2 * spec.head_dim  # q_norm and k_norm weights
    return spec.mtp_layers * per_layer * 2
