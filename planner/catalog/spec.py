"""Model specs: what the planner needs from a Hugging Face ``config.json``.

``ModelSpec.from_hf_config`` reads a config (top level, or nested ``text_config`` for the
multimodal Qwen3.5/3.6 wrappers) and derives what SGLang 0.5.11 derives from it: which layers
are full attention and which are linear / mamba (by SGLang's own rule for each architecture, not
by ``layer_types``), the KV head count and head dims, the linear-attention state dims, the
ssm dtype from the config, the MTP layers, the vision tower, the dtype and the quantization.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from dataclasses import dataclass, replace

from planner.errors import BadInput

# Architectures whose hybrid layout SGLang reads through ``hybrid_gdn_config``
# (srt/model_executor/model_runner.py:2123-2136 @0.5.11) and through ``mamba2_config``
# (srt/model_executor/model_runner.py:2110-2121 @0.5.11).
GDN_ARCHS = {
    "Qwen3NextForCausalLM",
    "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration",
    "Qwen3_5ForCausalLM",
    "Qwen3_5MoeForCausalLM",
}
MAMBA2_ARCHS = {"NemotronHForCausalLM", "FalconH1ForCausalLM"}

DTYPE_BYTES = {
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "float8_e4m3fnuz": 1,  # ROCm gfx942's FP8 (planner/engines/sglang/pipeline/rocm.py)
}


@dataclass(frozen=True, kw_only=True)
class MambaShape:
    """Inputs of ``Mamba2StateShape.create`` (srt/configs/mamba_utils.py:141-175 @0.5.11)."""

    intermediate_size: int
    n_groups: int
    num_heads: int
    head_dim: int
    state_size: int
    conv_kernel: int


# Architectures SGLang's ModelConfig builds as multi-head latent attention (``AttentionArch.MLA``) whose pools,
# defaults and weights the planner models (srt/configs/model_config.py:1366-1420 @0.5.23, :690-720 @0.5.11).
MLA_ARCHS = {"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM"}


@dataclass(frozen=True, kw_only=True)
class MLAShape:
    """What ModelConfig reads for MLA (srt/configs/model_config.py:1395-1412 @0.5.23): the latent cache is
    ``kv_lora_rank + qk_rope_head_dim`` per token and layer; ``index_*`` are DeepSeek-V3.2's sparse-attention
    (DSA / NSA) indexer keys, set when ``is_deepseek_dsa`` holds (``index_topk`` present; model_config.py:191-212)."""

    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None  # None: a plain q_proj (DeepSeek-V2-Lite style)
    first_k_dense_replace: int
    n_shared_experts: int
    index_head_dim: int | None = None
    index_n_heads: int | None = None
    index_topk: int | None = None

    @property
    def latent_dim(self) -> int:
        return self.kv_lora_rank + self.qk_rope_head_dim

    @property
    def dsa(self) -> bool:
        return self.index_topk is not None


@dataclass(frozen=True, kw_only=True)
class VisionSpec:
    num_hidden_layers: int | None  # None when the config has no such key (Qwen3.5: 'depth')
    depth: int | None
    hidden_size: int | None


@dataclass(frozen=True, kw_only=True)
class SlidingLayout:
    """Sliding-window / chunked local attention layers, as SGLang's ``get_hybrid_layer_ids`` splits them
    (srt/configs/model_config.py:1561-1621 @0.5.11) for an architecture it sizes with the hybrid SWA pool.

    ``kind``: "sliding" (a window of ``window`` tokens: gpt-oss ``sliding_window``) or "chunked" (Llama 4's
    ``attention_chunk_size``); ``sinks``: learned per-head attention sinks (gpt-oss ``self_attn.sinks``, model
    parameters, no KV entry). ``swa_layer_ids`` / ``full_layer_ids``: SGLang's split, not ``layer_types`` verbatim
    (Llama 4: every 4th layer is full, the others chunked, whatever ``no_rope_layers`` says)."""

    kind: Literal["sliding", "chunked"]
    window: int
    swa_layer_ids: tuple[int, ...]
    full_layer_ids: tuple[int, ...]
    sinks: bool = False


# architectures SGLang's is_hybrid_swa_model lists whose split the planner models (model_config.py:1546-1558 @0.5.11,
# :1903-1925 @0.5.16, :2651-2675 @0.5.23: GptOss and Llama4ForConditionalGeneration in all three)
HYBRID_SWA_ARCHS = ("GptOssForCausalLM", "Llama4ForConditionalGeneration")


def sliding_layout(arch: str, text: dict[str, Any], n_layers: int, where: str) -> SlidingLayout | None:
    """get_hybrid_layer_ids (srt/configs/model_config.py:1561-1621 @0.5.11): gpt-oss from ``layer_types``
    ("sliding_attention" / "full_attention"), Llama 4 every ``(i + 1) % 4 == 0`` layer full."""
    if arch == "GptOssForCausalLM":
        types = text.get("layer_types")
        if not isinstance(types, list) or len(types) != n_layers or not all(
                t in ("sliding_attention", "full_attention") for t in types):
            raise BadInput(f"config.json: GptOssForCausalLM needs 'layer_types' in {where}: one 'sliding_attention' or "
                           f"'full_attention' per layer ({n_layers})")
        window = _req(text, "sliding_window", where)
        return SlidingLayout(kind="sliding", window=window,
                             swa_layer_ids=tuple(i for i, t in enumerate(types) if t == "sliding_attention"),
                             full_layer_ids=tuple(i for i, t in enumerate(types) if t == "full_attention"),
                             sinks=True)
    if arch == "Llama4ForConditionalGeneration":
        chunk = _req(text, "attention_chunk_size", where)
        return SlidingLayout(kind="chunked", window=chunk,
                             swa_layer_ids=tuple(i for i in range(n_layers) if (i + 1) % 4 != 0),
                             full_layer_ids=tuple(i for i in range(n_layers) if (i + 1) % 4 == 0))
    return None


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """One model as SGLang sizes it. Derived values are plain fields, computed once (by :func:`_parse`, which
    checks the config; a frozen dataclass rather than a pydantic model, so importing it costs nothing)."""

    name: str
    architecture: str
    model_type: str
    hybrid: Literal["gdn", "mamba2"] | None
    num_hidden_layers: int
    hidden_size: int
    vocab_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    v_head_dim: int
    full_attention_layer_ids: tuple[int, ...]
    mamba_layer_ids: tuple[int, ...]
    mamba: MambaShape | None
    config_mamba_ssm_dtype: str | None  # ``mamba_ssm_dtype`` of the (text) config, verbatim
    derived_context_len: int
    dtype: str
    quant_method: str | None
    kv_cache_quant_algo: str | None  # the config's ``kv_cache_quant_algo`` key, verbatim
    # What SGLang's quant config sets as ``kv_cache_quant_algo`` from this checkpoint (read by
    # ``--kv-cache-dtype auto``), where it comes from, and the first release that reads it so.
    checkpoint_kv_quant_algo: str | None = None
    checkpoint_kv_source: str | None = None
    checkpoint_kv_since: str | None = None
    mtp_layers: int
    vision: VisionSpec | None
    tie_word_embeddings: bool
    intermediate_size: int | None
    moe_intermediate_size: int | None
    num_experts: int | None
    shared_expert_intermediate_size: int | None
    raw: dict[str, Any]
    # Set on a draft by planner.catalog.drafts (--speculative-draft-model-path): its kind (EAGLE3 | DFLASH |
    # DSPARK | STANDALONE ...) and its weight bytes with where they come from (checkpoint index / headers,
    # the head's tensors from its config, the catalog); None on a target.
    draft_kind: str | None = None
    checkpoint_weight_bytes: int | None = None
    checkpoint_weight_source: str | None = None
    # sliding-window / chunked attention layers of a hybrid SWA architecture (None: every layer attends fully)
    sliding: SlidingLayout | None = None
    mla: MLAShape | None = None  # multi-head latent attention (MLA_ARCHS), else None

    def model_copy(self, update: dict[str, Any] | None = None) -> "ModelSpec":
        """A copy with ``update``'s fields changed (pydantic's name, for code written against the pydantic model)."""
        return replace(self, **(update or {}))

    def kv_quant_algo_for(self, version: str | None) -> str | None:
        """``quant_config.kv_cache_quant_algo`` as SGLang ``version`` resolves it from this checkpoint."""
        if self.checkpoint_kv_quant_algo is None:
            return None
        if self.checkpoint_kv_since and version and _vtuple(version) < _vtuple(self.checkpoint_kv_since):
            return None
        return self.checkpoint_kv_quant_algo

    @property
    def is_mambaish(self) -> bool:
        return self.hybrid is not None

    @property
    def text(self) -> dict[str, Any]:
        """The text config: a nested ``text_config`` dict, else the top level (as :func:`_parse` reads it; a
        ``text_config`` that is not a dict is not one)."""
        t = self.raw.get("text_config")
        return t if isinstance(t, dict) and t else self.raw

    @classmethod
    def from_hf_config(cls, cfg: dict[str, Any], name: str = "model", source: str = "config.json") -> "ModelSpec":
        """The spec of a parsed config; ``source`` names it in a bad-input line (a file, or a Hub id's config)."""
        return _parse(cfg, name, source)

    @classmethod
    def from_file(cls, path: Path, name: str | None = None) -> "ModelSpec":
        from planner.catalog.config_file import read_json_file  # noqa: PLC0415

        return _parse(read_json_file(path), name or path.parent.name or path.stem, str(path))


def _vtuple(v: str) -> tuple[int, ...]:
    out = []
    for part in v.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits or 0))
    return tuple(out)


# Releases where compressed-tensors' config exposes ``kv_cache_quant_algo`` (a property returning
# "FP8" for a supported ``kv_cache_scheme``): present in 0.5.19-0.5.23
# (srt/layers/quantization/compressed_tensors/compressed_tensors.py:137-146 @0.5.19, :142-151 @0.5.23),
# absent in 0.5.9-0.5.18 (no such attribute: configure_kv_cache_dtype falls back to the model dtype).
CT_KV_ALGO_SINCE = "0.5.19"
# Fp8Config reads the config's ``kv_cache_quant_algo`` from 0.5.18 (srt/layers/quantization/fp8.py:326-327 @0.5.18;
# no such attribute in 0.5.9-0.5.17, so --kv-cache-dtype auto keeps the model dtype there).
FP8_KV_ALGO_SINCE = "0.5.18"


def implied_kv_quant_algo(qcfg: dict[str, Any] | None) -> tuple[str | None, str | None, str | None]:
    """(algo, source, first release) of the ``kv_cache_quant_algo`` SGLang's quant config derives.

    ``configure_kv_cache_dtype`` (srt/mem_cache/kv_cache_dtype.py:49-59 @0.5.23;
    srt/model_executor/model_runner.py:2210-2220 @0.5.11) gives ``--kv-cache-dtype auto`` an fp8_e4m3
    pool when it is "FP8", the model dtype otherwise.
    """
    if not isinstance(qcfg, dict):
        return None, None, None
    method = str(qcfg.get("quant_method") or ("modelopt" if "quant_algo" in qcfg else "")).lower()
    scheme = qcfg.get("kv_cache_scheme")
    key = qcfg.get("kv_cache_quant_algo")
    if method.startswith("modelopt"):
        if isinstance(scheme, dict):
            if scheme.get("type") == "float" and scheme.get("num_bits") == 8:
                return ("FP8", "quantization_config.kv_cache_scheme (float, 8 bits): ModelOpt*Config.from_config "
                        "(srt/layers/quantization/modelopt_quant.py:481-488, 857-863 @0.5.23)", None)
            if scheme.get("type") == "float" and scheme.get("num_bits") == 4:
                return ("NVFP4", "quantization_config.kv_cache_scheme (float, 4 bits): not 'FP8', so "
                        "--kv-cache-dtype auto keeps the model dtype (modelopt_quant.py:864-868 @0.5.23)", None)
            return None, None, None
        if isinstance(key, str):
            return key.upper(), "quantization_config.kv_cache_quant_algo (modelopt_quant.py:489-490 @0.5.23)", None
        return None, None, None
    if method in ("fp8", "mxfp8"):
        if isinstance(key, str):
            return (key.upper(), "quantization_config.kv_cache_quant_algo: Fp8Config.from_config (fp8.py:366-368 "
                    "@0.5.23; Fp8Config has no kv_cache_quant_algo before 0.5.18)", FP8_KV_ALGO_SINCE)
        return None, None, None
    if method == "compressed-tensors" and isinstance(scheme, dict):
        if (scheme.get("type") == "float" and scheme.get("num_bits") == 8
                and scheme.get("strategy", "tensor") == "tensor" and scheme.get("symmetric", True)
                and not scheme.get("dynamic", False)):
            return ("FP8", "quantization_config.kv_cache_scheme (static fp8 per tensor): CompressedTensorsConfig."
                    "kv_cache_quant_algo (compressed_tensors.py:142-151 @0.5.23)", CT_KV_ALGO_SINCE)
    return None, None, None


def _req(d: dict[str, Any], key: str, where: str, typ: type = int) -> Any:
    val = d.get(key)
    if val is None:
        raise BadInput(f"config.json: missing '{key}' in {where}; it is required for this architecture")
    if typ is int and (isinstance(val, bool) or not isinstance(val, int)):
        if isinstance(val, float) and val.is_integer():
            return int(val)
        raise BadInput(f"config.json: '{key}' in {where} must be an integer, got {val!r}")
    if typ is int and val <= 0:
        raise BadInput(f"config.json: '{key}' in {where} must be positive, got {val!r}")
    if typ is int and val > _MAX_COUNTS.get(key, val):  # a count no model has: the layer lists would not fit in memory
        raise BadInput(f"config.json: '{key}' in {where} is {val:,}, more than any model has "
                       f"(at most {_MAX_COUNTS[key]:,}); check the file")
    return val


_MAX_COUNTS = {"num_hidden_layers": 100_000}


def _opt_int(d: dict[str, Any], key: str) -> int | None:
    val = d.get(key)
    if isinstance(val, bool) or not isinstance(val, (int, float)):
        return None
    if isinstance(val, float) and not val.is_integer():
        return None
    return int(val)


# the keys get_context_length reads, in its order (srt/utils/hf_transformers/common.py:356-382 @0.5.11)
CONTEXT_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")


def context_length(text: dict[str, Any]) -> int:
    """``get_context_length`` (srt/utils/hf_transformers/common.py:356-382 @0.5.11)."""
    rope_scaling = text.get("rope_scaling")
    factor: float = 1
    if isinstance(rope_scaling, dict) and rope_scaling:
        factor = rope_scaling.get("factor", 1)
        if "original_max_position_embeddings" in rope_scaling:
            factor = 1
        if rope_scaling.get("rope_type", None) == "llama3":
            factor = 1
    for key in CONTEXT_KEYS:
        val = text.get(key)
        if val is not None:
            if not isinstance(val, (int, float)) or isinstance(val, bool):
                raise BadInput(f"config.json: '{key}' must be a number, got {val!r}")
            ctx = int(factor * val)
            if not 1 <= ctx <= _MAX_CONTEXT:  # 0 tokens divides by zero in the sizing; past this int64 bytes overflow
                scaled = f" x rope_scaling.factor {factor}" if factor != 1 else ""
                raise BadInput(f"config.json: '{key}' {val}{scaled} gives a context length of {ctx:,} tokens; "
                               f"a model has from 1 to {_MAX_CONTEXT:,}")
            return ctx
    # no key in the file: transformers' config class fills max_position_embeddings with its own default, which
    # SGLang then reads (Qwen3Config / Qwen2Config / Qwen3MoeConfig 32768, MistralConfig / MixtralConfig 4096 * 32,
    # LlamaConfig 2048: transformers/models/*/configuration_*.py); 2048 is get_context_length's own fallback
    return _HF_DEFAULT_MAX_POSITIONS.get(str(text.get("model_type") or ""), 2048)


_MAX_CONTEXT = 1 << 34
_TIED_BY_DEFAULT = ("gemma2",)  # transformers/models/gemma2/configuration_gemma2.py: tie_word_embeddings=True
_HF_DEFAULT_MAX_POSITIONS = {"qwen3": 32768, "qwen2": 32768, "qwen3_moe": 32768, "mistral": 131072,
                             "mixtral": 131072, "llama": 2048}


_Layout = tuple[Literal["gdn", "mamba2"] | None, int, list[int], list[int], "MambaShape | None"]


def _gdn_layout(text: dict[str, Any], where: str) -> _Layout:
    """Qwen3-Next / Qwen3.5 / Qwen3.6: Gated-DeltaNet layers between full-attention ones."""
    n_layers = _req(text, "num_hidden_layers", where)
    interval = _req(text, "full_attention_interval", where)
    # layer l is full attention iff (l+1) % full_attention_interval == 0
    # (srt/configs/qwen3_next.py:254-280 @0.5.11); ``layer_types`` is not read.
    full_ids = [l for l in range(n_layers) if (l + 1) % interval == 0]
    mamba_ids = [l for l in range(n_layers) if (l + 1) % interval != 0]
    # mamba2_cache_params (srt/configs/qwen3_next.py:282-302 @0.5.11)
    mamba = MambaShape(
        intermediate_size=_req(text, "linear_value_head_dim", where)
        * _req(text, "linear_num_value_heads", where),
        n_groups=_req(text, "linear_num_key_heads", where),
        num_heads=_req(text, "linear_num_value_heads", where),
        head_dim=_req(text, "linear_value_head_dim", where),
        state_size=_req(text, "linear_key_head_dim", where),
        conv_kernel=_req(text, "linear_conv_kernel_dim", where),
    )
    return "gdn", n_layers, full_ids, mamba_ids, mamba


def _nemotron_h_layout(text: dict[str, Any], where: str) -> _Layout:
    """NemotronH: the layer pattern string, 'M' mamba2 and '*' attention."""
    pattern = text.get("hybrid_override_pattern")
    if not isinstance(pattern, str) or not pattern:
        raise BadInput("config.json: NemotronH needs 'hybrid_override_pattern' (e.g. 'M-M*-...')")
    n_layers = len(pattern)
    # mamba layers are the 'M' positions, attention the '*' positions
    # (srt/configs/nemotron_h.py:401-416 @0.5.11)
    full_ids = [i for i, c in enumerate(pattern) if c == "*"]
    mamba_ids = [i for i, c in enumerate(pattern) if c == "M"]
    heads = _req(text, "mamba_num_heads", where)
    hd = _req(text, "mamba_head_dim", where)
    mamba = MambaShape(  # srt/configs/nemotron_h.py:417-433 @0.5.11
        intermediate_size=heads * hd,
        n_groups=_opt_int(text, "n_groups") or _opt_int(text, "mamba_n_groups") or 8,
        num_heads=heads,
        head_dim=hd,
        state_size=_opt_int(text, "ssm_state_size") or 128,
        conv_kernel=_opt_int(text, "conv_kernel") or _opt_int(text, "mamba_d_conv") or 4,
    )
    return "mamba2", n_layers, full_ids, mamba_ids, mamba


def _falcon_h1_layout(text: dict[str, Any], where: str) -> _Layout:
    """Falcon-H1: attention and mamba2 in every layer."""
    n_layers = _req(text, "num_hidden_layers", where)
    # every layer has both attention and mamba (srt/configs/falcon_h1.py:286-299 @0.5.11)
    full_ids = list(range(n_layers))
    mamba_ids = list(range(n_layers))
    heads = _req(text, "mamba_n_heads", where)
    d_head = _req(text, "mamba_d_head", where)
    mamba = MambaShape(  # srt/configs/falcon_h1.py:301-315 @0.5.11
        intermediate_size=_opt_int(text, "mamba_d_ssm") or heads * d_head,
        n_groups=_opt_int(text, "mamba_n_groups") or 1,
        num_heads=heads,
        head_dim=d_head,
        state_size=_opt_int(text, "mamba_d_state") or 256,
        conv_kernel=_opt_int(text, "mamba_d_conv") or 4,
    )
    return "mamba2", n_layers, full_ids, mamba_ids, mamba


def _shared_expert_intermediate(text: dict[str, Any]) -> int | None:
    """Width of the shared expert(s): Qwen2/3.5-MoE name it; GLM-4.x MoE checkpoints hold one shared MLP of
    ``moe_intermediate_size * n_shared_experts`` (transformers' Glm4MoeMoE, as the HF checkpoint stores it)."""
    named = _opt_int(text, "shared_expert_intermediate_size")
    if named:
        return named
    n, moe = _opt_int(text, "n_shared_experts"), _opt_int(text, "moe_intermediate_size")
    return n * moe if n and moe else None


def _layer_layout(arch: str, text: dict[str, Any], where: str) -> _Layout:
    """(hybrid kind, layers, full-attention layer ids, mamba layer ids, mamba shape) for an architecture."""
    if arch in GDN_ARCHS:
        return _gdn_layout(text, where)
    if arch == "NemotronHForCausalLM":
        return _nemotron_h_layout(text, where)
    if arch == "FalconH1ForCausalLM":
        return _falcon_h1_layout(text, where)
    n_layers = _req(text, "num_hidden_layers", where)
    return None, n_layers, list(range(n_layers)), [], None


def _parse(cfg: Any, name: str, source: str = "config.json") -> ModelSpec:
    """The one entry point where a config becomes a ModelSpec: every key the planner reads is checked here
    (planner.catalog.config_file), so no later stage sees a value of the wrong type; a missing or impossible
    value is one line naming ``source``."""
    from planner.catalog.config_file import validate_config  # noqa: PLC0415

    cfg = validate_config(cfg, source)
    try:
        return _parse_valid(cfg, name)
    except BadInput as exc:
        text = str(exc)
        if source != "config.json" and text.startswith("config.json: "):
            text = f"--model: {source}: {text[len('config.json: '):]}"
        raise BadInput(text) from None


def _parse_valid(cfg: dict[str, Any], name: str) -> ModelSpec:
    arch = cfg["architectures"][0]
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg
    where = "text_config" if text is not cfg else "config"

    hybrid, n_layers, full_ids, mamba_ids, mamba = _layer_layout(arch, text, where)

    hidden = _req(text, "hidden_size", where)
    heads = _req(text, "num_attention_heads", where)
    # get_total_num_kv_heads (srt/configs/model_config.py:736-754 @0.5.11)
    kv_heads = None
    for key in ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num",
                "num_attention_groups"):
        if text.get(key) is not None:
            kv_heads = _opt_int(text, key)
            break
    if kv_heads is None:
        kv_heads = heads
    if kv_heads <= 0:
        raise BadInput("config.json: 'num_key_value_heads' must be a positive integer")
    # _derive_model_shapes (srt/configs/model_config.py:486-497 @0.5.11)
    head_dim = _opt_int(text, "head_dim") or hidden // heads
    v_head_dim = _opt_int(text, "v_head_dim") or head_dim

    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or text.get("torch_dtype")
                or text.get("dtype") or "bfloat16")
    qcfg = cfg.get("quantization_config") or text.get("quantization_config")
    quant_method = None
    kv_algo = None
    if isinstance(qcfg, dict):
        quant_method = qcfg.get("quant_method") or ("modelopt" if "quant_algo" in qcfg else None)
        kv_algo = qcfg.get("kv_cache_quant_algo")

    kv_implied = implied_kv_quant_algo(qcfg if isinstance(qcfg, dict) else None)

    mtp = _opt_int(text, "mtp_num_hidden_layers") or _opt_int(text, "num_nextn_predict_layers") or 0

    vision = None
    vc = cfg.get("vision_config")
    if isinstance(vc, dict):
        vision = VisionSpec(
            num_hidden_layers=_opt_int(vc, "num_hidden_layers"),
            depth=_opt_int(vc, "depth"),
            hidden_size=_opt_int(vc, "hidden_size"),
        )

    ssm = text.get("mamba_ssm_dtype")
    ctx = context_length(text)
    vocab = _opt_int(text, "vocab_size") or _opt_int(cfg, "vocab_size") or 0
    # a config without the key takes its transformers class's default: True for Gemma 2 (Gemma2Config)
    tie = bool(text.get("tie_word_embeddings", cfg.get("tie_word_embeddings",
                                                       str(text.get("model_type")) in _TIED_BY_DEFAULT)))

    sliding = sliding_layout(arch, text, n_layers, where) if hybrid is None else None
    if hybrid is not None and not full_ids:
        raise BadInput(f"config.json: {arch} has no full-attention layer; check its layer layout")
    mla = _mla_shape(text, where) if arch in MLA_ARCHS else None
    return ModelSpec(
        name=name,
        architecture=arch,
        model_type=str(cfg.get("model_type", "")),
        hybrid=hybrid,
        num_hidden_layers=n_layers,
        hidden_size=hidden,
        vocab_size=vocab,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        v_head_dim=v_head_dim,
        full_attention_layer_ids=tuple(full_ids),
        mamba_layer_ids=tuple(mamba_ids),
        mamba=mamba,
        config_mamba_ssm_dtype=ssm if isinstance(ssm, str) else None,
        derived_context_len=ctx,
        dtype=dtype,
        quant_method=quant_method,
        kv_cache_quant_algo=kv_algo if isinstance(kv_algo, str) else None,
        checkpoint_kv_quant_algo=kv_implied[0],
        checkpoint_kv_source=kv_implied[1],
        checkpoint_kv_since=kv_implied[2],
        mtp_layers=mtp,
        vision=vision,
        tie_word_embeddings=tie,
        intermediate_size=_opt_int(text, "intermediate_size"),
        moe_intermediate_size=_opt_int(text, "moe_intermediate_size"),
        # routed experts: Qwen3-MoE 'num_experts', DeepSeek / GLM-4.x 'n_routed_experts', Mixtral 'num_local_experts'
        num_experts=(_opt_int(text, "num_experts") or _opt_int(text, "n_routed_experts")
                     or _opt_int(text, "num_local_experts")),
        shared_expert_intermediate_size=_shared_expert_intermediate(text),
        raw=cfg,
        sliding=sliding,
        mla=mla,
    )


def _mla_shape(text: dict[str, Any], where: str) -> MLAShape:
    """The MLA keys SGLang reads (srt/configs/model_config.py:1395-1412 @0.5.23); DSA when ``index_topk`` is
    set (is_deepseek_dsa, model_config.py:191-212 @0.5.23), its head dim from ``index_head_dim``
    (get_dsa_index_head_dim, :421-423)."""
    dsa = text.get("index_topk") is not None
    return MLAShape(
        kv_lora_rank=_req(text, "kv_lora_rank", where),
        qk_rope_head_dim=_req(text, "qk_rope_head_dim", where),
        qk_nope_head_dim=_req(text, "qk_nope_head_dim", where),
        v_head_dim=_req(text, "v_head_dim", where),
        q_lora_rank=_opt_int(text, "q_lora_rank"),
        first_k_dense_replace=_opt_int(text, "first_k_dense_replace") or 0,
        n_shared_experts=_opt_int(text, "n_shared_experts") or 0,
        index_head_dim=_req(text, "index_head_dim", where) if dsa else None,
        index_n_heads=_req(text, "index_n_heads", where) if dsa else None,
        index_topk=_req(text, "index_topk", where) if dsa else None,
    )


def is_dense_moe_layer(spec: ModelSpec, t: dict, layer: int) -> bool:
    """A MoE model's dense layers: the first ``first_k_dense_replace`` (GLM-4.x MoE, DeepSeek) and Qwen-MoE's
    ``mlp_only_layers`` / ``decoder_sparse_step``, as the HF checkpoints of those families lay them out
    (planner.catalog.weights counts their parameters, planner.catalog.quant_tensors lists their tensors)."""
    if not spec.num_experts:
        return False
    first_k = t.get("first_k_dense_replace")
    if isinstance(first_k, int) and layer < first_k:
        return True
    only = t.get("mlp_only_layers")
    if isinstance(only, list) and layer in only:
        return True
    step = t.get("decoder_sparse_step")
    return isinstance(step, int) and step > 1 and (layer + 1) % step != 0
