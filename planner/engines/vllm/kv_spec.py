"""Each layer's KV-cache spec, as vLLM 0.33.0 / 0.34.0's ``vllm/v1/kv_cache_interface.py`` declares it.

One small class per cache kind, answering what vLLM's own class answers: the page (bytes of one block of one
layer), the bytes one request at ``max_model_len`` needs, and a copy with another block size. Only the kinds whose
goldens agree with the vLLM oracle are here; :func:`model_layers` refuses every other architecture by name.

Rules (paths under ``vllm/`` of the 0.34.0 wheel; 0.33.0 the same unless said):

* ``AttentionSpec.page_size_bytes = num_kv_heads x block_size x (head_size + head_size_v) x dtype bytes``, or
  ``page_size_padded`` when set (``v1/kv_cache_interface.py:595-613``; 0.33 ``:585-601``).
* ``FullAttentionSpec.max_memory_usage_bytes = cdiv(max_model_len, block_size) x page``
  (``v1/kv_cache_interface.py:654-659``; 0.33 ``:643-648``); no decode context parallelism is modelled.
* the layer's KV heads on one rank: ``max(1, total_kv_heads // tp)`` (``config/model.py`` ``get_num_kv_heads``),
  head size ``head_dim`` or ``hidden_size // num_attention_heads`` (``get_head_size``).
* KV dtype: ``auto`` is the model dtype; ``fp8`` / ``fp8_e4m3`` / ``fp8_e5m2`` one byte
  (``utils/torch_utils.py`` ``STR_DTYPE_TO_TORCH_DTYPE``).
* pipeline parallel: each stage builds ``get_pp_indices(num_hidden_layers, rank, pp)`` layers
  (``distributed/utils.py`` ``get_pp_indices``: the remainder goes to the stages before the last).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from planner.errors import BadInput

DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4,
               "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1}

# Architectures whose every layer is full attention with one KV spec (dense and MoE decoders), verified against
# the oracle on 0.33.0 and 0.34.0 (tests/golden/vllm/<release>/{dense,moe}). The hybrid GDN / Mamba2 models are in
# hybrid.py.
FULL_ATTENTION_ARCHS = {
    "LlamaForCausalLM",
    "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM",
    "MixtralForCausalLM",
}


# Architectures with sliding-window layers by ``layer_types`` (gpt-oss: alternating sliding / full, with attention
# sinks, which hold no KV tokens), verified on both releases (tests/golden/vllm/<release>/swa).
SLIDING_ARCHS = {"GptOssForCausalLM"}
# Llama 4: chunked local attention on the RoPE layers, full attention on the NoPE layers (every 4th by default,
# ``no_rope_layers``), verified on both releases (tests/golden/vllm/<release>/chunked).
# Multi-head latent attention (DeepSeek-V3, Kimi-K2), verified on both releases (tests/golden/vllm/<release>/mla)
MLA_ARCHS = {"DeepseekV3ForCausalLM"}
CHUNKED_ARCHS = {"Llama4ForConditionalGeneration", "Llama4ForCausalLM"}


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class FullAttentionSpec:
    """``FullAttentionSpec`` (``v1/kv_cache_interface.py:630``)."""

    block_size: int
    num_kv_heads: int
    head_size: int
    head_size_v: int
    dtype_bytes: int
    page_size_padded: int | None = None
    is_draft: bool = field(default=False, compare=False)

    type_name = "FullAttentionSpec"

    @property
    def unpadded_page_size_bytes(self) -> int:
        return self.num_kv_heads * self.block_size * (self.head_size + self.head_size_v) * self.dtype_bytes

    @property
    def page_size_bytes(self) -> int:
        return self.page_size_padded if self.page_size_padded is not None else self.unpadded_page_size_bytes

    def max_memory_usage_bytes(self, max_model_len: int) -> int:
        return cdiv(max_model_len, self.block_size) * self.page_size_bytes

    def with_block_size(self, block_size: int) -> "FullAttentionSpec":
        return replace(self, block_size=block_size)


@dataclass(frozen=True)
class SlidingWindowSpec(FullAttentionSpec):
    """``SlidingWindowSpec`` (``v1/kv_cache_interface.py:915-970``, 0.33 the same): a request holds at most
    ``cdiv(min(sliding_window - 1 + max_in_flight_tokens, max_model_len), block_size) + 1`` blocks, with
    ``max_in_flight_tokens = max_concurrent_batches x max_num_batched_tokens`` (``config/vllm.py:560-577``:
    ``pp + 1`` batches with async scheduling)."""

    sliding_window: int = 0
    max_in_flight_tokens: int = 0

    type_name = "SlidingWindowSpec"

    def max_memory_usage_bytes(self, max_model_len: int) -> int:
        tokens = min(self.sliding_window - 1 + self.max_in_flight_tokens, max_model_len)
        return (cdiv(tokens, self.block_size) + 1) * self.page_size_bytes


@dataclass(frozen=True)
class ChunkedLocalAttentionSpec(FullAttentionSpec):
    """``ChunkedLocalAttentionSpec`` (``v1/kv_cache_interface.py:875-912``): a request holds at most
    ``cdiv(min(attention_chunk_size + max_in_flight_tokens, max_model_len), block_size)`` blocks."""

    attention_chunk_size: int = 0
    max_in_flight_tokens: int = 0

    type_name = "ChunkedLocalAttentionSpec"

    def max_memory_usage_bytes(self, max_model_len: int) -> int:
        tokens = min(self.attention_chunk_size + self.max_in_flight_tokens, max_model_len)
        return cdiv(tokens, self.block_size) * self.page_size_bytes


@dataclass(frozen=True)
class MLAAttentionSpec(FullAttentionSpec):
    """``MLAAttentionSpec`` (``v1/kv_cache_interface.py:741-790``): one latent vector per token (``kv_lora_rank +
    qk_rope_head_dim``, one KV head on every TP rank, ``head_size_v`` 0); a full-attention spec otherwise."""

    type_name = "MLAAttentionSpec"


@dataclass(frozen=True)
class MambaSpec:
    """``MambaSpec`` (``v1/kv_cache_interface.py:1121-1175``; 0.33 ``:1100-1141``): the page is the states' bytes
    (each rounded to ``state_alignment``, 1 without FlashInfer ReplaySSM) or ``page_size_padded``; one request holds
    ``2 + num_speculative_blocks + num_prefill_checkpoint_blocks`` pages in ``align`` mode, ``1 +
    num_speculative_blocks`` otherwise."""

    block_size: int
    state_bytes: tuple[int, ...]
    mamba_cache_mode: str
    page_size_padded: int | None = None
    num_speculative_blocks: int = 0
    num_prefill_checkpoint_blocks: int = 0
    is_draft: bool = field(default=False, compare=False)

    type_name = "MambaSpec"

    @property
    def page_size_bytes(self) -> int:
        return self.page_size_padded if self.page_size_padded is not None else sum(self.state_bytes)

    def max_memory_usage_bytes(self, max_model_len: int) -> int:
        if self.mamba_cache_mode == "align":
            return self.page_size_bytes * (2 + self.num_speculative_blocks + self.num_prefill_checkpoint_blocks)
        return self.page_size_bytes * (1 + self.num_speculative_blocks)


def kv_dtype_bytes(kv_cache_dtype: str, model_dtype: str) -> int:
    name = model_dtype if kv_cache_dtype == "auto" else kv_cache_dtype
    if name not in DTYPE_BYTES:
        raise BadInput(f"vLLM: KV cache dtype {kv_cache_dtype!r} (model dtype {model_dtype}) is not modelled")
    return DTYPE_BYTES[name]


def text_config(raw: dict) -> dict:
    return raw.get("text_config") or raw


def pp_layer_range(num_layers: int, rank: int, pp: int) -> tuple[int, int]:
    """``get_pp_indices`` without ``VLLM_PP_LAYER_PARTITION`` (``distributed/utils.py``)."""
    parts = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        parts[-i] += 1
    start = sum(parts[:rank])
    return start, start + parts[rank]


@dataclass(frozen=True)
class ModelLayers:
    """The KV-cache layers each pipeline stage builds, in vLLM's layer order (``(name, spec)``), with the block
    size already applied."""

    stages: tuple[tuple[tuple[str, object], ...], ...]
    family: str


def attention_shape(raw: dict, tp: int) -> tuple[int, int]:
    """(KV heads on one rank, head size) of a plain attention layer."""
    tc = text_config(raw)
    total_kv = tc.get("num_key_value_heads") or tc["num_attention_heads"]
    head = tc.get("head_dim") or tc["hidden_size"] // tc["num_attention_heads"]
    return max(1, total_kv // tp), head


def model_layers(raw: dict, architecture: str, *, tp: int, pp: int, block_size: int, kv_bytes: int,
                 max_in_flight_tokens: int) -> ModelLayers:
    """Every KV-cache layer of every pipeline stage; refuses what is not modelled, by name."""
    if architecture in CHUNKED_ARCHS:
        return _chunked_layers(raw, tp=tp, pp=pp, block_size=block_size, kv_bytes=kv_bytes,
                               max_in_flight_tokens=max_in_flight_tokens)
    if architecture in MLA_ARCHS:
        return _mla_layers(raw, pp=pp, block_size=block_size, kv_bytes=kv_bytes)
    if architecture in SLIDING_ARCHS:
        return _sliding_layers(raw, tp=tp, pp=pp, block_size=block_size, kv_bytes=kv_bytes,
                               max_in_flight_tokens=max_in_flight_tokens)
    if architecture not in FULL_ATTENTION_ARCHS:
        raise BadInput(f"vLLM: the KV-cache sizing of architecture {architecture} is not modelled yet")
    tc = text_config(raw)
    if tc.get("use_sliding_window") or (tc.get("sliding_window") and "use_sliding_window" not in tc):
        raise BadInput(f"vLLM: sliding-window attention of {architecture} is not modelled yet")
    kv_heads, head = attention_shape(raw, tp)
    spec = FullAttentionSpec(block_size, kv_heads, head, head, kv_bytes)
    n = tc["num_hidden_layers"]
    stages = []
    for rank in range(pp):
        lo, hi = pp_layer_range(n, rank, pp)
        stages.append(tuple((f"model.layers.{i}.self_attn.attn", spec) for i in range(lo, hi)))
    family = "moe" if architecture in ("Qwen3MoeForCausalLM", "MixtralForCausalLM") else "dense"
    return ModelLayers(tuple(stages), family)


def _sliding_layers(raw: dict, *, tp: int, pp: int, block_size: int, kv_bytes: int,
                    max_in_flight_tokens: int) -> ModelLayers:
    tc = text_config(raw)
    kv_heads, head = attention_shape(raw, tp)
    full = FullAttentionSpec(block_size, kv_heads, head, head, kv_bytes)
    swa = SlidingWindowSpec(block_size, kv_heads, head, head, kv_bytes, sliding_window=tc["sliding_window"],
                            max_in_flight_tokens=max_in_flight_tokens)
    kinds = tc["layer_types"]
    stages = []
    for rank in range(pp):
        lo, hi = pp_layer_range(tc["num_hidden_layers"], rank, pp)
        stages.append(tuple((f"model.layers.{i}.attn.attn", swa if kinds[i] == "sliding_attention" else full)
                            for i in range(lo, hi)))
    return ModelLayers(tuple(stages), "swa")


def _chunked_layers(raw: dict, *, tp: int, pp: int, block_size: int, kv_bytes: int,
                    max_in_flight_tokens: int) -> ModelLayers:
    tc = text_config(raw)
    n = tc["num_hidden_layers"]
    kv_heads, head = attention_shape(raw, tp)
    full = FullAttentionSpec(block_size, kv_heads, head, head, kv_bytes)
    chunked = ChunkedLocalAttentionSpec(block_size, kv_heads, head, head, kv_bytes,
                                        attention_chunk_size=tc["attention_chunk_size"],
                                        max_in_flight_tokens=max_in_flight_tokens)
    # transformers' Llama4TextConfig default: RoPE (chunked) unless (i + 1) % 4 == 0
    rope = tc.get("no_rope_layers") or [int((i + 1) % 4 != 0) for i in range(n)]
    stages = []
    for rank in range(pp):
        lo, hi = pp_layer_range(n, rank, pp)
        stages.append(tuple((f"language_model.model.layers.{i}.self_attn.attn", chunked if rope[i] else full)
                            for i in range(lo, hi)))
    return ModelLayers(tuple(stages), "chunked")


def _mla_layers(raw: dict, *, pp: int, block_size: int, kv_bytes: int) -> ModelLayers:
    tc = text_config(raw)
    if tc.get("index_topk") is not None:
        raise BadInput("vLLM: DeepSeek sparse attention (DSA indexer) is not modelled")
    spec = MLAAttentionSpec(block_size, 1, tc["kv_lora_rank"] + tc["qk_rope_head_dim"], 0, kv_bytes)
    n = tc["num_hidden_layers"]
    stages = []
    for rank in range(pp):
        lo, hi = pp_layer_range(n, rank, pp)
        stages.append(tuple((f"model.layers.{i}.self_attn.attn", spec) for i in range(lo, hi)))
    return ModelLayers(tuple(stages), "mla")
