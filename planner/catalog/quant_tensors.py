"""The tensors a checkpoint holds, by name and shape, enumerated from its config.json.

Quantized weight sizing needs more than a parameter count: each scheme stores a linear layer
differently (packed ints, block scales, group scales, zero points) and each checkpoint leaves
some modules unquantized by *name* (``ignore``, ``modules_to_not_convert``, ``quantized_layers``).
So the config is expanded into the checkpoint's module list:

* :class:`Linear` — one ``nn.Linear`` of the checkpoint (``out`` x ``inp``), the unit every
  quantization scheme acts on, with its Hugging Face module name;
* :class:`Param` — any other tensor (embeddings, norms, conv1d, ``A_log``, biases of the
  vision tower's patch embedding ...) with its element count; these stay at the checkpoint dtype.

Families covered (by ``architectures[0]``): Qwen3.5 / Qwen3.6 (dense and MoE, with the vision
tower and the MTP layer), Qwen3-Next, the dense Llama / Qwen2 / Qwen3 decoders, Qwen3-MoE and MiniMax-M2. The names are
the checkpoint's (``model.language_model.layers.N.linear_attn.in_proj_qkv`` ...), so the matching
rules of each quantization config apply to them as SGLang applies them to its own prefixes.
At the config dtype, the sum reproduces the published BF16 ``total_size`` of every catalog
checkpoint of these families (tests/test_quant_weights.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from planner.catalog.spec import ModelSpec, is_dense_moe_layer


@dataclass(frozen=True)
class Linear:
    name: str
    out: int
    inp: int
    bias: bool = False
    expert: bool = False  # a routed expert's projection (FusedMoE in SGLang)
    count: int = 1  # identical copies: a layer's routed experts are one FusedMoE module in SGLang,
    #                 matched against ignore lists by the layer's ``...mlp.experts`` prefix
    unquantized: bool = False  # SGLang builds it with quant_config=None whatever the ignore lists say: the
    #                 MoE router and the shared-expert gate (srt/models/qwen2_moe.py:348-353, 386-394,
    #                 qwen3_moe.py:285-296 @0.5.23; the same since 0.5.9)


@dataclass(frozen=True)
class Param:
    name: str
    numel: int
    float32: bool = False  # stored in F32 whatever the config dtype (Qwen3.5 A_log / GDN norm)


class NotEnumerated(Exception):
    """The architecture's tensor list is not modelled."""


QWEN35_ARCHS = {"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
                "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"}
DENSE_ARCHS = {"LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM", "MistralForCausalLM",
               "Qwen3MoeForCausalLM"}  # Qwen3-MoE: the dense decoder with a routed-expert mlp in every layer


MLA_TENSOR_ARCHS = {"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM"}


def supported_architectures() -> list[str]:
    return sorted(QWEN35_ARCHS | DENSE_ARCHS | MLA_TENSOR_ARCHS | {"Qwen3NextForCausalLM", "GptOssForCausalLM", "MiniMaxM2ForCausalLM"})


def checkpoint_tensors(spec: ModelSpec) -> list[Linear | Param]:
    arch = spec.architecture
    if arch in QWEN35_ARCHS:
        vl = "ForConditionalGeneration" in arch
        return list(_qwen_hybrid(spec, "model.language_model." if vl else "model.", fused_gdn=False, vision=vl))
    if arch == "Qwen3NextForCausalLM":
        return list(_qwen_hybrid(spec, "model.", fused_gdn=True, vision=False))
    if arch in DENSE_ARCHS:
        return list(_dense(spec))
    if arch == "GptOssForCausalLM":
        return list(_gpt_oss(spec))
    if arch == "MiniMaxM2ForCausalLM":
        return list(_minimax_m2(spec))
    if arch in MLA_TENSOR_ARCHS and spec.mla is not None:
        return list(_deepseek(spec))
    raise NotEnumerated(arch)


def is_mtp_tensor(name: str, spec: ModelSpec) -> bool:
    """A tensor of the checkpoint's MTP / NextN layer(s): Qwen's ``mtp.*``; DeepSeek's extra decoder layers
    ``model.layers.{num_hidden_layers + j}.*`` (loaded only by the NEXTN draft worker)."""
    if name.startswith("mtp."):
        return True
    if spec.mla is None or not name.startswith("model.layers."):
        return False
    return int(name.split(".")[2]) >= spec.num_hidden_layers


def _deepseek_layer(spec: ModelSpec, p: str, layer: int) -> Iterator[Linear | Param]:
    """One DeepSeek-V3 / V3.2 decoder layer as the HF checkpoint stores it (DeepseekV2DecoderLayer with
    DeepseekV2AttentionMLA, srt/models/deepseek_v2.py @0.5.23): MLA projections q_a / q_b (or q_proj without
    q_lora_rank), kv_a_proj_with_mqa, kv_b_proj, o_proj and their norms; V3.2's indexer (wq_b, wk, k_norm,
    weights_proj); a dense MLP in the first ``first_k_dense_replace`` layers, else the router (bf16 weight and a
    float32 e_score_correction_bias), the routed experts and the shared experts."""
    m = spec.mla
    assert m is not None
    h, heads = spec.hidden_size, spec.num_attention_heads
    qk = m.qk_nope_head_dim + m.qk_rope_head_dim
    a = p + "self_attn."
    yield Param(p + "input_layernorm.weight", h)
    yield Param(p + "post_attention_layernorm.weight", h)
    if m.q_lora_rank:
        yield Linear(a + "q_a_proj", m.q_lora_rank, h)
        yield Param(a + "q_a_layernorm.weight", m.q_lora_rank)
        yield Linear(a + "q_b_proj", heads * qk, m.q_lora_rank)
    else:
        yield Linear(a + "q_proj", heads * qk, h)
    yield Linear(a + "kv_a_proj_with_mqa", m.kv_lora_rank + m.qk_rope_head_dim, h)
    yield Param(a + "kv_a_layernorm.weight", m.kv_lora_rank)
    yield Linear(a + "kv_b_proj", heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank)
    yield Linear(a + "o_proj", h, heads * m.v_head_dim)
    if m.dsa and m.index_head_dim and m.index_n_heads and m.q_lora_rank:
        yield Linear(a + "indexer.wq_b", m.index_n_heads * m.index_head_dim, m.q_lora_rank)
        yield Linear(a + "indexer.wk", m.index_head_dim, h)
        yield Param(a + "indexer.k_norm.weight", m.index_head_dim)
        yield Param(a + "indexer.k_norm.bias", m.index_head_dim)
        yield Linear(a + "indexer.weights_proj", m.index_n_heads, h, unquantized=True)
    if layer < m.first_k_dense_replace or not spec.num_experts:
        yield from _mlp(spec, p + "mlp.", spec.intermediate_size or 4 * h)
        return
    n = spec.num_experts
    moe = spec.moe_intermediate_size or 0
    yield Linear(p + "mlp.gate", n, h, unquantized=True)  # the router (ReplicatedLinear, quant_config None)
    yield Param(p + "mlp.gate.e_score_correction_bias", n, float32=True)
    for lin in _mlp(spec, p + "mlp.experts.", moe):
        yield Linear(lin.name, lin.out, lin.inp, expert=True, count=n)
    if m.n_shared_experts:
        yield from _mlp(spec, p + "mlp.shared_experts.", moe * m.n_shared_experts)


def _deepseek(spec: ModelSpec) -> Iterator[Linear | Param]:
    """DeepSeek-V3 / R1 / V3.2 and Kimi-K2 checkpoints: embeddings, the decoder layers, the final norm and
    lm_head, then the ``num_nextn_predict_layers`` MTP layers as extra ``model.layers.N`` (each: its own
    embed_tokens, enorm, hnorm, eh_proj and shared_head, srt/models/deepseek_nextn.py @0.5.23)."""
    h = spec.hidden_size
    yield Param("model.embed_tokens.weight", spec.vocab_size * h)
    for i in range(spec.num_hidden_layers):
        yield from _deepseek_layer(spec, f"model.layers.{i}.", i)
    yield Param("model.norm.weight", h)
    yield Linear("lm_head", spec.vocab_size, h)
    for j in range(spec.mtp_layers):
        i = spec.num_hidden_layers + j
        p = f"model.layers.{i}."
        yield Param(p + "embed_tokens.weight", spec.vocab_size * h)
        yield Param(p + "enorm.weight", h)
        yield Param(p + "hnorm.weight", h)
        yield Linear(p + "eh_proj", h, 2 * h, unquantized=True)  # nn.Linear in DeepseekModelNextN
        yield Param(p + "shared_head.norm.weight", h)
        yield Linear(p + "shared_head.head", spec.vocab_size, h, unquantized=True)  # ParallelLMHead
        yield from _deepseek_layer(spec, p, i)


def _attn(spec: ModelSpec, p: str, gated: bool, qk_norm: bool, bias: bool = False) -> Iterator[Linear | Param]:
    h, hd = spec.hidden_size, spec.head_dim
    q = spec.num_attention_heads * hd
    kv = spec.num_key_value_heads * hd
    yield Linear(p + "q_proj", q * (2 if gated else 1), h, bias)
    yield Linear(p + "k_proj", kv, h, bias)
    yield Linear(p + "v_proj", kv, h, bias)
    yield Linear(p + "o_proj", h, q)
    if qk_norm:
        yield Param(p + "q_norm.weight", hd)
        yield Param(p + "k_norm.weight", hd)


def _mlp(spec: ModelSpec, p: str, inter: int) -> Iterator[Linear]:
    h = spec.hidden_size
    yield Linear(p + "gate_proj", inter, h)
    yield Linear(p + "up_proj", inter, h)
    yield Linear(p + "down_proj", h, inter)


def _moe(spec: ModelSpec, p: str) -> Iterator[Linear | Param]:
    h = spec.hidden_size
    moe = spec.moe_intermediate_size or 0
    yield Linear(p + "gate", spec.num_experts or 0, h, unquantized=True)  # the router
    if spec.num_experts:
        for lin in _mlp(spec, f"{p}experts.", moe):
            yield Linear(lin.name, lin.out, lin.inp, expert=True, count=spec.num_experts)
    shared = spec.shared_expert_intermediate_size or 0
    if shared:
        yield from _mlp(spec, p + "shared_expert.", shared)
        yield Linear(p + "shared_expert_gate", 1, h, unquantized=True)


def _ffn(spec: ModelSpec, p: str) -> Iterator[Linear | Param]:
    if spec.num_experts:
        yield from _moe(spec, p + "mlp.")
    else:
        yield from _mlp(spec, p + "mlp.", spec.intermediate_size or 4 * spec.hidden_size)


def _gdn(spec: ModelSpec, p: str, fused: bool) -> Iterator[Linear | Param]:
    m = spec.mamba
    assert m is not None
    h = spec.hidden_size
    key_dim = m.n_groups * m.state_size
    value_dim = m.intermediate_size
    conv_dim = 2 * key_dim + value_dim
    if fused:  # Qwen3-Next: in_proj_qkvz, in_proj_ba
        yield Linear(p + "in_proj_qkvz", conv_dim + value_dim, h)
        yield Linear(p + "in_proj_ba", 2 * m.num_heads, h)
    else:
        yield Linear(p + "in_proj_qkv", conv_dim, h)
        yield Linear(p + "in_proj_z", value_dim, h)
        yield Linear(p + "in_proj_b", m.num_heads, h)
        yield Linear(p + "in_proj_a", m.num_heads, h)
    yield Param(p + "conv1d.weight", conv_dim * m.conv_kernel)
    yield Param(p + "dt_bias", m.num_heads)
    # Qwen3.5 checkpoints store A_log and the GDN norm in F32 (exactly the published totals'
    # difference to Qwen3.6: 48 x (48 + 128) x 2 B for the 27B); their text configs are the ones
    # carrying ``mlp_only_layers``.
    f32 = "mlp_only_layers" in spec.text and not fused
    yield Param(p + "A_log", m.num_heads, f32)
    yield Param(p + "norm.weight", m.head_dim, f32)
    yield Linear(p + "out_proj", h, value_dim)


def _qwen_hybrid(spec: ModelSpec, pre: str, fused_gdn: bool, vision: bool) -> Iterator[Linear | Param]:
    h = spec.hidden_size
    yield Param(pre + "embed_tokens.weight", spec.vocab_size * h)
    full = set(spec.full_attention_layer_ids)
    for i in range(spec.num_hidden_layers):
        p = f"{pre}layers.{i}."
        yield Param(p + "input_layernorm.weight", h)
        yield Param(p + "post_attention_layernorm.weight", h)
        if i in full:
            yield from _attn(spec, p + "self_attn.", gated=True, qk_norm=True)
        else:
            yield from _gdn(spec, p + "linear_attn.", fused_gdn)
        yield from _ffn(spec, p)
    yield Param(pre + "norm.weight", h)
    if not spec.tie_word_embeddings:
        yield Linear("lm_head", spec.vocab_size, h)
    # Qwen3-Next checkpoints ship one MTP layer though their config names none
    mtp_layers = spec.mtp_layers or (1 if fused_gdn else 0)
    for j in range(mtp_layers):
        p = f"mtp.layers.{j}."
        yield Param(p + "input_layernorm.weight", h)
        yield Param(p + "post_attention_layernorm.weight", h)
        yield from _attn(spec, p + "self_attn.", gated=True, qk_norm=True)
        yield from _ffn(spec, p)
    if mtp_layers:
        yield Linear("mtp.fc", h, 2 * h)
        yield Param("mtp.pre_fc_norm_embedding.weight", h)
        yield Param("mtp.pre_fc_norm_hidden.weight", h)
        yield Param("mtp.norm.weight", h)
    if vision:
        yield from _qwen_vision(spec)


def _qwen_vision(spec: ModelSpec) -> Iterator[Linear | Param]:
    vc = spec.raw.get("vision_config") or {}
    vh = int(vc.get("hidden_size") or 0)
    if not vh:
        return
    depth = int(vc.get("depth") or vc.get("num_hidden_layers") or 0)
    inter = int(vc.get("intermediate_size") or 4 * vh)
    patch = int(vc.get("patch_size") or 16)
    tp = int(vc.get("temporal_patch_size") or 2)
    ch = int(vc.get("in_channels") or 3)
    npos = int(vc.get("num_position_embeddings") or 0)
    merge = int(vc.get("spatial_merge_size") or 2)
    out = int(vc.get("out_hidden_size") or spec.hidden_size)
    v = "model.visual."
    yield Param(v + "patch_embed.proj.weight", ch * tp * patch * patch * vh)
    yield Param(v + "patch_embed.proj.bias", vh)
    if npos:
        yield Param(v + "pos_embed.weight", npos * vh)
    for b in range(depth):
        p = f"{v}blocks.{b}."
        yield Param(p + "norm1.weight", vh)
        yield Param(p + "norm1.bias", vh)
        yield Param(p + "norm2.weight", vh)
        yield Param(p + "norm2.bias", vh)
        yield Linear(p + "attn.qkv", 3 * vh, vh, bias=True)
        yield Linear(p + "attn.proj", vh, vh, bias=True)
        yield Linear(p + "mlp.linear_fc1", inter, vh, bias=True)
        yield Linear(p + "mlp.linear_fc2", vh, inter, bias=True)
    mh = vh * merge * merge
    yield Param(v + "merger.norm.weight", vh)
    yield Param(v + "merger.norm.bias", vh)
    yield Linear(v + "merger.linear_fc1", mh, mh, bias=True)
    yield Linear(v + "merger.linear_fc2", out, mh, bias=True)


def _dense(spec: ModelSpec) -> Iterator[Linear | Param]:
    h = spec.hidden_size
    t = spec.text
    qk_norm = spec.architecture in ("Qwen3ForCausalLM", "Qwen3MoeForCausalLM")
    bias = bool(t.get("attention_bias", spec.architecture == "Qwen2ForCausalLM"))
    yield Param("model.embed_tokens.weight", spec.vocab_size * h)
    for i in range(spec.num_hidden_layers):
        p = f"model.layers.{i}."
        yield Param(p + "input_layernorm.weight", h)
        yield Param(p + "post_attention_layernorm.weight", h)
        yield from _attn(spec, p + "self_attn.", gated=False, qk_norm=qk_norm, bias=bias)
        if is_dense_moe_layer(spec, t, i):  # Qwen3-MoE's mlp_only_layers / decoder_sparse_step
            yield from _mlp(spec, p + "mlp.", spec.intermediate_size or 4 * h)
        else:
            yield from _ffn(spec, p)
    yield Param("model.norm.weight", h)
    if not spec.tie_word_embeddings:
        yield Linear("lm_head", spec.vocab_size, h)


def _minimax_m2(spec: ModelSpec) -> Iterator[Linear | Param]:
    """MiniMax-M2 / M2.7 as the checkpoint names its tensors (``block_sparse_moe.experts.N.w1 / w2 / w3``, one
    per-layer QK-norm over all heads) and SGLang builds them (srt/models/minimax_m2.py @0.5.11: ``MiniMaxM2RMSNormTP``
    q_norm / k_norm of num_heads x head_dim, :277-302; the router ``gate`` a float32 ReplicatedLinear, :505-509;
    ``e_score_correction_bias`` float32, :476-485; no MTP tensors: they are skipped at load, :1403-1411)."""
    h, hd, t = spec.hidden_size, spec.head_dim, spec.text
    q, kv = spec.num_attention_heads * hd, spec.num_key_value_heads * hd
    yield Param("model.embed_tokens.weight", spec.vocab_size * h)
    for i in range(spec.num_hidden_layers):
        p = f"model.layers.{i}."
        yield Param(p + "input_layernorm.weight", h)
        yield Param(p + "post_attention_layernorm.weight", h)
        yield from _attn(spec, p + "self_attn.", gated=False, qk_norm=False)
        if t.get("use_qk_norm", True):
            yield Param(p + "self_attn.q_norm.weight", q)
            yield Param(p + "self_attn.k_norm.weight", kv)
        m = p + "block_sparse_moe."
        yield Param(m + "gate.weight", (spec.num_experts or 0) * h, float32=True)
        if t.get("use_routing_bias"):
            yield Param(m + "e_score_correction_bias", spec.num_experts or 0, float32=True)
        inter = spec.moe_intermediate_size or spec.intermediate_size or 0
        for name, out, inp in (("w1", inter, h), ("w2", h, inter), ("w3", inter, h)):
            yield Linear(f"{m}experts.{name}", out, inp, expert=True, count=spec.num_experts or 0)
    yield Param("model.norm.weight", h)
    if not spec.tie_word_embeddings:
        yield Linear("lm_head", spec.vocab_size, h)


def numel(t: Linear | Param) -> int:
    if isinstance(t, Param):
        return t.numel
    return (t.out * t.inp + (t.out if t.bias else 0)) * t.count


def _gpt_oss(spec: ModelSpec) -> Iterator[Linear | Param]:
    """gpt-oss (openai/gpt-oss-20b / 120b): every layer has q/k/v/o projections with biases and one learned sink
    logit per query head (``self_attn.sinks``), a router with a bias, and ``num_local_experts`` experts, each a fused
    ``gate_up_proj`` (2 x intermediate) and a ``down_proj``, both with biases. The checkpoint's tensor list: MXFP4
    ``*_blocks`` / ``*_scales`` for the experts, BF16 for the rest (``modules_to_not_convert``: self_attn, router,
    embed_tokens, lm_head); the names are SGLang's module prefixes (srt/models/gpt_oss.py @0.5.11)."""
    h, hd = spec.hidden_size, spec.head_dim
    q = spec.num_attention_heads * hd
    kv = spec.num_key_value_heads * hd
    inter = spec.intermediate_size or h
    experts = spec.num_experts or 0
    yield Param("model.embed_tokens.weight", spec.vocab_size * h)
    for i in range(spec.num_hidden_layers):
        p = f"model.layers.{i}."
        yield Param(p + "input_layernorm.weight", h)
        yield Param(p + "post_attention_layernorm.weight", h)
        a = p + "self_attn."
        yield Linear(a + "q_proj", q, h, bias=True)
        yield Linear(a + "k_proj", kv, h, bias=True)
        yield Linear(a + "v_proj", kv, h, bias=True)
        yield Linear(a + "o_proj", h, q, bias=True)
        yield Param(a + "sinks", spec.num_attention_heads)
        yield Linear(p + "mlp.router", experts, h, bias=True, unquantized=True)
        yield Linear(p + "mlp.experts.gate_up_proj", 2 * inter, h, bias=True, expert=True, count=experts)
        yield Linear(p + "mlp.experts.down_proj", h, inter, bias=True, expert=True, count=experts)
    yield Param("model.norm.weight", h)
    if not spec.tie_word_embeddings:
        yield Linear("lm_head", spec.vocab_size, h)
