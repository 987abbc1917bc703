"""Hybrid attention / Gated-DeltaNet models (Qwen3-Next, Qwen3.5, Qwen3.6): their layers' KV specs, the MTP
drafter's layers, and the hybrid block-size alignment, as vLLM 0.33.0 / 0.34.0 compute them.

vLLM's rules (paths under ``vllm/`` of the 0.34.0 wheel; 0.33.0 the same unless said):

* layer kinds: ``layer_types`` of the text config, else full attention every ``full_attention_interval``-th layer
  (the Qwen3-Next / Qwen3.5 model classes).
* GDN state shapes (``model_executor/layers/mamba/mamba_utils.py:280-301`` ``gated_delta_net_state_shape``):
  conv ``(conv_kernel - 1 + k, conv_dim / tp)`` with ``conv_dim = head_k x num_k_heads x 2 + head_v x
  num_v_heads``, recurrent ``(num_v_heads / tp, head_v, head_k)``; dtypes (``:106-118``): conv = the model dtype
  (``mamba_cache_dtype`` auto), recurrent = ``mamba_ssm_cache_dtype``: Qwen3.5 / 3.6 take the text config's
  ``mamba_ssm_dtype`` (``model_executor/models/config.py`` Qwen3.5 entry), Qwen3-Next keeps ``auto`` = the conv
  dtype. ``k`` = num_speculative_tokens (``num_speculative_blocks`` too, ``layers/mamba/abstract.py``
  ``get_kv_cache_spec``).
* FlashInfer GDN prefill (``layers/mamba/gdn/qwen_gdn_linear_attn.py:315-347``): SM 9.0 always, SM 10.x / 12.x with
  ``linear_key_head_dim == 128`` and CUDA >= 13; then in ``align`` mode the layers checkpoint every 64 tokens
  (``FLASHINFER_GDN_CHECKPOINT_ALIGNMENT``, ``:849-860``) and hold one prefill-checkpoint block (``:901-913``).
* ``_align_hybrid_block_size`` (``platforms/interface.py:950-1115``): ``a = max(min kernel block of the first
  attention backend, block_size)``, ``lcm(a, checkpoint alignment)`` in align mode, ``attn_block = a x
  cdiv(mamba_page, a x attn_page_1_token)`` rounded up to the lcm of every backend's smallest kernel block; the
  block size grows to it; ``mamba_block_size = block_size`` in align mode; the Mamba page is padded to the
  attention page when they differ (``mamba_page_size_padded``).
* MTP drafter (Qwen3.5 / 3.6 ``mtp_num_hidden_layers``, Qwen3-Next ``num_nextn_predict_layers``): full-attention
  layers ``mtp.layers.<j>.self_attn.attn`` with the target's attention spec, tagged ``is_draft``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.engines.vllm import grouping
from planner.engines.vllm.kv_spec import DTYPE_BYTES, FullAttentionSpec, MambaSpec, attention_shape, cdiv, \
    pp_layer_range, text_config
from planner.errors import BadInput

MAMBA2_ARCHS = {"NemotronHForCausalLM"}
GDN_ARCHS = {"Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"}
CHECKPOINT_ALIGNMENT = 64  # FLASHINFER_GDN_CHECKPOINT_ALIGNMENT, v1/attention/backends/gdn_attn.py


def is_full_attention(tc: dict, i: int) -> bool:
    lt = tc.get("layer_types")
    if lt:
        return lt[i] == "full_attention"
    return (i + 1) % tc["full_attention_interval"] == 0


def flashinfer_gdn_prefill(sm: str, cuda_version: str, head_k: int) -> bool:
    major = int(cuda_version.split(".")[0])
    if sm == "9.0":
        return True
    if (sm.startswith("10.") or sm.startswith("12.")) and head_k == 128 and major >= 13:
        return True  # SM 11.x: only the opt-in CuteDSL kernel (qwen_gdn_linear_attn.py:317-345 @0.34.0)
    return False


@dataclass(frozen=True)
class HybridLayers:
    stages: tuple[tuple[tuple[str, object], ...], ...]
    block_size: int
    mamba_block_size: int
    mamba_page_size_padded: int | None
    draft_layers: tuple[str, ...]
    draft_spec: FullAttentionSpec | None
    log: tuple[str, ...]


def align_block_size(*, block_size: int, attn_1tok: int, mamba_page: int, backends: tuple[str, ...],
                     checkpoint_alignment: int | None, mamba_cache_mode: str):
    """``_align_hybrid_block_size`` (platforms/interface.py:950-1115 @0.34.0): (block size, padded Mamba page or
    None, log lines)."""
    attn = [b for b in backends if b in grouping.KERNEL_BLOCK_SIZES]
    if not attn:
        raise BadInput(f"vLLM: attention backends {backends} are not modelled")
    mins = [min(list(grouping.KERNEL_BLOCK_SIZES[b][0]) + [m for m in [grouping.KERNEL_BLOCK_SIZES[b][1]] if m])
            for b in attn]
    a = max(mins[0], block_size)
    if mamba_cache_mode == "align":
        a = math.lcm(a, checkpoint_alignment or 1)
    attn_block = a * cdiv(mamba_page, a * attn_1tok)
    align = math.lcm(*mins)
    attn_block = align * cdiv(attn_block, align)
    log = []
    if block_size < attn_block:
        block_size = attn_block
        log.append(f"Setting attention block size to {attn_block} tokens to ensure that attention page size is >= "
                   "mamba page size.")
    attn_page = block_size * attn_1tok
    padded = attn_page if attn_page != mamba_page else None
    if padded is not None:
        log.append(f"Padding mamba page size by {100 * (attn_page - mamba_page) / mamba_page:.2f}% to ensure that "
                   "mamba page size and attention page size are exactly equal.")
    return block_size, padded, log


def mamba2_layers(raw: dict, architecture: str, *, tp: int, pp: int, block_size: int, kv_bytes: int,
                  model_dtype: str, mamba_cache_mode: str, max_model_len: int, backends: tuple[str, ...]
                  ) -> "HybridLayers":
    """NemotronH: ``hybrid_override_pattern`` ``M`` = Mamba2 mixer, ``*`` = attention (``-`` MLP and ``E`` MoE hold
    no cache). Mamba2 state (``mamba_utils.py:194-219`` ``mamba2_state_shape``): conv ``(conv_kernel - 1,
    (intermediate + 2 x n_groups' x state) / tp)`` with ``n_groups`` padded up to a TP multiple, recurrent ``(heads /
    tp, head_dim, state)``; recurrent dtype ``mamba_ssm_cache_dtype`` of the config, else float32
    (``model_executor/models/config.py`` NemotronH entry); Mamba2 layers declare no prefill-checkpoint alignment
    and hold one checkpoint block (``layers/mamba/mamba_mixer2.py`` ``get_kv_cache_spec``)."""
    tc = text_config(raw)
    pattern = tc["hybrid_override_pattern"]
    ssm_dtype = tc.get("mamba_ssm_cache_dtype") or "float32"
    if ssm_dtype not in DTYPE_BYTES or model_dtype not in DTYPE_BYTES:
        raise BadInput(f"vLLM: Mamba2 state dtype {ssm_dtype} is not modelled")
    heads, hd, state, groups = tc["mamba_num_heads"], tc["mamba_head_dim"], tc["ssm_state_size"], tc["n_groups"]
    if groups % tp:
        groups += tp - groups
    conv_dim = heads * hd + 2 * groups * state
    if conv_dim % tp or heads % tp:
        raise BadInput(f"vLLM: Mamba2 heads not divisible by TP {tp}")
    conv = (tc["conv_kernel"] - 1) * (conv_dim // tp) * DTYPE_BYTES[model_dtype]
    ssm = (heads // tp) * hd * state * DTYPE_BYTES[ssm_dtype]
    kv_heads, head = attention_shape(raw, tp)
    attn_1tok = kv_heads * 2 * head * kv_bytes
    block_size, padded, log = align_block_size(block_size=block_size, attn_1tok=attn_1tok, mamba_page=conv + ssm,
                                               backends=backends, checkpoint_alignment=None,
                                               mamba_cache_mode=mamba_cache_mode)
    mamba_block = block_size if mamba_cache_mode == "align" else max_model_len
    mspec = MambaSpec(mamba_block, (conv, ssm), mamba_cache_mode, padded, 0, 1)
    aspec = FullAttentionSpec(block_size, kv_heads, head, head, kv_bytes)
    stages = []
    for rank in range(pp):
        lo, hi = pp_layer_range(len(pattern), rank, pp)
        stages.append(tuple((f"backbone.layers.{i}.mixer", mspec) if pattern[i] == "M" else
                            (f"backbone.layers.{i}.mixer.attn", aspec) for i in range(lo, hi) if pattern[i] in "M*"))
    return HybridLayers(tuple(stages), block_size, mamba_block, padded, (), None, tuple(log))


def gdn_layers(raw: dict, architecture: str, *, tp: int, pp: int, block_size: int, kv_bytes: int, model_dtype: str,
               mamba_cache_mode: str, max_model_len: int, num_spec: int, backends: tuple[str, ...], sm: str,
               cuda_version: str) -> HybridLayers:
    tc = text_config(raw)
    if architecture == "Qwen3NextForCausalLM":
        ssm_dtype = model_dtype
    else:
        ssm_dtype = tc.get("mamba_ssm_dtype") or model_dtype
    if ssm_dtype not in DTYPE_BYTES or model_dtype not in DTYPE_BYTES:
        raise BadInput(f"vLLM: GDN state dtype {ssm_dtype} is not modelled")
    hk, nk = tc["linear_key_head_dim"], tc["linear_num_key_heads"]
    hv, nv = tc["linear_value_head_dim"], tc["linear_num_value_heads"]
    conv_dim = hk * nk * 2 + hv * nv
    if conv_dim % tp or nv % tp:
        raise BadInput(f"vLLM: GDN heads not divisible by TP {tp}")
    conv = (tc["linear_conv_kernel_dim"] - 1 + num_spec) * (conv_dim // tp) * DTYPE_BYTES[model_dtype]
    ssm = (nv // tp) * hv * hk * DTYPE_BYTES[ssm_dtype]
    mamba_page = conv + ssm
    kv_heads, head = attention_shape(raw, tp)
    attn_1tok = kv_heads * 2 * head * kv_bytes
    fi = flashinfer_gdn_prefill(sm, cuda_version, hk)
    ckpt = CHECKPOINT_ALIGNMENT if (mamba_cache_mode == "align" and fi) else None
    block_size, padded, log = align_block_size(block_size=block_size, attn_1tok=attn_1tok, mamba_page=mamba_page,
                                               backends=backends, checkpoint_alignment=ckpt,
                                               mamba_cache_mode=mamba_cache_mode)
    mamba_block = block_size if mamba_cache_mode == "align" else max_model_len
    mspec = MambaSpec(mamba_block, (conv, ssm), mamba_cache_mode, padded, num_spec, 1 if ckpt else 0)
    aspec = FullAttentionSpec(block_size, kv_heads, head, head, kv_bytes)
    n = tc["num_hidden_layers"]
    stages = []
    for rank in range(pp):
        lo, hi = pp_layer_range(n, rank, pp)
        stages.append(tuple((f"model.layers.{i}.self_attn.attn", aspec) if is_full_attention(tc, i)
                            else (f"model.layers.{i}.linear_attn", mspec) for i in range(lo, hi)))
    drafts: tuple[str, ...] = ()
    dspec = None
    if num_spec:
        if pp > 1:
            raise BadInput("vLLM: MTP with pipeline parallelism is not modelled")
        nd = tc.get("mtp_num_hidden_layers") or tc.get("num_nextn_predict_layers") or 1
        dspec = FullAttentionSpec(block_size, kv_heads, head, head, kv_bytes, is_draft=True)
        drafts = tuple(f"mtp.layers.{j}.self_attn.attn" for j in range(nd))
        stages[-1] = stages[-1] + tuple((d, dspec) for d in drafts)
    return HybridLayers(tuple(stages), block_size, mamba_block, padded, drafts, dspec, tuple(log))
