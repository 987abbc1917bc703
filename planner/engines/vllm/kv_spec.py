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
# the oracle on 0.33.0 and 0.34.0 (tests/golden/vllm/<release>/{dense,moe}).
FULL_ATTENTION_ARCHS = {
    "LlamaForCausalLM",
    "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM",
    "MixtralForCausalLM",
}


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


def model_layers(raw: dict, architecture: str, *, tp: int, pp: int, block_size: int, kv_bytes: int) -> ModelLayers:
    """Every KV-cache layer of every pipeline stage; refuses what is not modelled, by name."""
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
