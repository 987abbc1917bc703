"""``VllmConfig`` as the sizing chain needs it: the effective values after vLLM's argument resolution.

The field names are the vLLM oracle's ``summary`` names (``../shared/tools/vllm-oracle/README.md``, "Output"), so a
resolved config compares field by field with vLLM's own. :func:`resolve` is vLLM's ``AsyncEngineArgs.from_cli_args
(...).create_engine_config(usage_context=OPENAI_API_SERVER)`` for one release: the defaults by GPU memory tier,
``max_model_len``, prefix caching, the Mamba cache mode, the attention backends, the CUDA-graph mode and sizes, and
vLLM's own validation errors (raised as :class:`VllmRejected` with vLLM's message).

Citations are ``file:line @release`` of the vllm 0.34.0 / 0.33.0 wheels (``vllm/...``). What is not modelled (a
model family, a flag with a memory effect, an environment variable, a device the backend choice was not checked
on) is refused by name with :class:`planner.errors.BadInput`; golden cases: tests/golden/vllm_config/.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.engines.vllm.config_graphs import GraphSizeError, capture_sizes
from planner.engines.vllm.flags import VllmRejected, check_modelled, parse_serve_flags
from planner.engines.vllm.inputs import VERSIONS, VllmLaunch
from planner.errors import BadInput

__all__ = ["VllmConfig", "VllmRejected", "resolve"]


@dataclass(frozen=True)
class VllmConfig:
    version: str
    architecture: str
    model_runner: str  # "v1" | "v2"
    dtype: str
    kv_cache_dtype: str
    max_model_len: int  # -1 is kept as -1 here: the auto-fit happens when the KV cache is sized
    max_num_seqs: int
    max_num_batched_tokens: int
    enable_prefix_caching: bool
    enable_chunked_prefill: bool
    gpu_memory_utilization: float  # resolved_gpu_memory_utilization
    enable_extensible_kv_cache: bool  # 0.34
    tensor_parallel_size: int
    pipeline_parallel_size: int
    data_parallel_size: int
    block_size: int | None  # the user's --block-size, or None (the platform / hybrid alignment decides)
    mamba_cache_mode: str | None  # align | none, as vLLM's CacheConfig holds it ("none" also for models without Mamba)
    attention_backends: tuple[str, ...]
    cudagraph_mode: str  # after the KV-cache initialisation (e.g. PIECEWISE for chunked local attention)
    cudagraph_capture_sizes: tuple[int, ...]
    max_cudagraph_capture_size: int | None
    speculative_method: str | None
    num_speculative_tokens: int | None
    kv_cache_memory_bytes: int | None  # --kv-cache-memory-bytes (no profiling)
    num_gpu_blocks_override: int | None
    enforce_eager: bool
    cpu_offload_gb: float
    quantization: str | None
    # added by the resolution (defaults keep the contract's constructor working)
    derived_max_model_len: int | None = None  # the model config's value (what -1 starts the auto-fit from)
    cudagraph_mode_engine_config: str | None = None  # create_engine_config's mode, before the KV-cache init
    extensible_requested: bool | None = None  # 0.34: the flag as given (None: vLLM's default)
    enable_expert_parallel: bool = False  # MoE experts split over TP x DP ranks instead of TP-sharded (weights)


GIB = 1 << 30
_PYDANTIC_URL = "https://errors.pydantic.dev/2.14/v/"  # pydantic 2.14, what both releases' oracle venvs carry
# the model families whose resolution is checked against the oracle (tests/golden/vllm_config/)
_FAMILIES = {
    "LlamaForCausalLM": "dense", "Qwen3ForCausalLM": "dense", "Qwen3MoeForCausalLM": "moe",
    "MixtralForCausalLM": "moe", "Qwen3_5ForConditionalGeneration": "gdn", "Qwen3_5MoeForConditionalGeneration": "gdn",
    "Qwen3NextForCausalLM": "gdn", "NemotronHForCausalLM": "mamba2", "GptOssForCausalLM": "gpt_oss",
    "Llama4ForConditionalGeneration": "llama4", "DeepseekV3ForCausalLM": "mla",
}
_HYBRID = ("gdn", "mamba2")
# the model's own MTP layers (config keys the MTP drafters read): Qwen3.5/3.6 / Qwen3-Next, DeepSeek-V3
_MTP_KEYS = ("mtp_num_hidden_layers", "num_nextn_predict_layers")
_MTP_ALIASES = ("deepseek_mtp", "qwen3_next_mtp", "qwen3_5_mtp")  # in MTPModelTypes of both releases
# CacheConfig.cache_dtype's allowed values (config/cache.py _validate_cache_dtype, KV_CACHE_DTYPES @0.34.0)
KV_CACHE_DTYPES_034 = ['auto', 'float16', 'bfloat16', 'fp8', 'fp8_e4m3', 'fp8_e5m2', 'fp8_inc', 'fp8_ds_mla',
                       'nvfp4_ds_mla', 'turboquant_k8v4', 'turboquant_4bit_nc', 'turboquant_k3v4_nc',
                       'turboquant_3bit_nc', 'octave_k3v4', 'octave_k3v3', 'octave_k3v3_compact', 'ultraquant_4bit',
                       'int4_per_token_head', 'int8_per_token_head', 'fp8_per_token_head', 'nvfp4', 'nvfp4_4over6']
_KV_MODELLED = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16", "float16")
_DTYPES = {"auto": None, "half": "float16", "float16": "float16", "bfloat16": "bfloat16", "float": "float32",
           "float32": "float32"}
# environment variables whose effect on sizing is modelled; any other VLLM_* variable is refused by name (others,
# e.g. CUDA_VISIBLE_DEVICES, reach resolve through the Device: its count is the visible devices)
_ENV_MODELLED = ("VLLM_USE_V2_MODEL_RUNNER", "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "TORCH_COMPILE_DISABLE")
_CG_MODES = ("NONE", "PIECEWISE", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE", "FULL")
_CC_KEYS = ("cudagraph_mode", "cudagraph_capture_sizes", "max_cudagraph_capture_size")


def _text(raw: dict[str, Any]) -> dict[str, Any]:
    """hf_text_config: the language model's config (text_config of the multimodal wrappers)."""
    return raw.get("text_config") or raw.get("llm_config") or raw


def _sm_major(sm: str) -> int:
    return int(str(sm).split(".")[0])


def _rejected(stage: str, error_type: str, message: str, rule: str) -> VllmRejected:
    return VllmRejected(stage, error_type, message, rule)


def _field_errors(model: str, errs: list[tuple[str, str, str, Any]], rule: str) -> None:
    """pydantic's ValidationError text for field constraints of one config class (pydantic 2.14, as vLLM's
    dataclasses report them): ``N validation error(s) for Model`` then, per field, its name, the message with
    ``[type=..., input_value=..., input_type=...]`` and the documentation line."""
    if not errs:
        return
    body = "\n".join(f"{field}\n  {msg} [type={kind}, input_value={value!r}, input_type={type(value).__name__}]\n"
                     f"    For further information visit {_PYDANTIC_URL}{kind}" for field, msg, kind, value in errs)
    n = len(errs)
    head = f"{n} validation error{'s' if n > 1 else ''} for {model}"
    raise _rejected("engine_config", "ValidationError", f"{head}\n{body}", rule)


def derived_max_len(text: dict[str, Any]) -> tuple[float, str | None]:
    """derive_max_model_len_and_key (transformers_utils/model_arch_config_convertor.py:375-405 @0.34.0)."""
    derived, key = float("inf"), None
    for k in ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
              "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len"):
        v = text.get(k)
        if v is not None:
            if v < derived:
                key = k
            derived = min(derived, v)
    if text.get("model_max_length"):
        key, derived = "model_max_length", text["model_max_length"]
    return derived, key


def _rope_factor(text: dict[str, Any]) -> float:
    """The RoPE scaling factor _get_and_verify_max_len applies (config/model.py:2642-2678 @0.34.0): none for
    su / longrope / llama3 / yarn variants (max_position_embeddings already scaled)."""
    rp = text.get("rope_parameters") or text.get("rope_scaling")
    if not rp:
        return 1.0
    rope_type = rp.get("rope_type") or rp.get("type") or "default"
    if rope_type == "longrope":
        raise BadInput("vLLM: LongRoPE models (max_model_len from original_max_position_embeddings) are not modelled")
    if rope_type in ("su", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"):
        return 1.0
    f = rp.get("factor", 1.0)
    return 1.0 if f is None else float(f)


def _max_model_len(args: dict, text: dict, env: dict[str, str]) -> tuple[int, int]:
    """(max_model_len as given or derived, the derived value) -- _get_and_verify_max_len
    (config/model.py:2589-2728 @0.34.0, same @0.33.0)."""
    user = args.get("max_model_len")
    if user is not None and user < -1:  # ModelConfig.max_model_len: Field(ge=-1)
        _field_errors("ModelConfig", [("max_model_len", "Input should be greater than or equal to -1",
                                       "greater_than_equal", user)], "config/model.py:263 @0.34.0")
    if user == 0:
        raise _rejected("engine_config", "ValidationError", "max_model_len must be a positive integer, got int: 0. "
                        "Example: max_model_len=2048", "config/model.py:1090-1095 @0.34.0")
    derived, key = derived_max_len(text)
    if derived == float("inf"):
        derived = 2048  # config/model.py:2630-2638
    derived = derived * _rope_factor(text)
    user = args.get("max_model_len")
    if user is None or user == -1:
        return (-1 if user == -1 else int(derived)), int(derived)
    if user > derived:
        mml = text.get("model_max_length")
        if mml is None or user > mml:
            if env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "").lower() in ("1", "true"):
                return int(user), int(derived)
            raise _rejected(
                "engine_config", "ValidationError",
                f"User-specified max_model_len ({user}) is greater than the derived max_model_len ({key}="
                f"{float(derived) if isinstance(derived, (int, float)) else derived} or model_max_length={mml} in "
                "model's config.json). To allow overriding this maximum, set the env var "
                "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. "
                "If the model uses relative position encoding (RoPE), positions exceeding derived_max_model_len lead "
                "to nan. If the model uses absolute position encoding, positions exceeding derived_max_model_len will "
                "cause a CUDA array out-of-bounds error.", "config/model.py:2700-2727")
    return int(user), int(derived)


def _dtype(args: dict, raw: dict, text: dict) -> str:
    """_get_and_verify_dtype (config/model.py @0.34.0): 'auto' keeps the checkpoint's float16 / bfloat16 and
    takes bfloat16 for a float32 (or missing) config dtype."""
    want = args.get("dtype", "auto")
    if want not in _DTYPES:
        raise BadInput(f"vLLM --dtype {want} is not modelled")
    cfg = text.get("torch_dtype") or text.get("dtype") or raw.get("torch_dtype") or raw.get("dtype") or "float32"
    if _DTYPES[want] is not None:
        return _DTYPES[want]
    return cfg if cfg in ("float16", "bfloat16") else "bfloat16"


def _checkpoint_kv_dtype(q: dict | None) -> str | None:
    """get_kv_cache_quant_algo_string (utils/torch_utils.py:463-515 @0.34.0, same @0.33.0): a ModelOpt
    checkpoint's KV scheme ({dynamic: false, num_bits: 8, type: float} or "FP8") is vLLM's fp8_e4m3."""
    if not isinstance(q, dict):
        return None
    method = q.get("quant_method") or ""
    if not method.startswith("modelopt"):
        if q.get("kv_cache_quant_algo") or q.get("kv_cache_scheme"):
            raise BadInput(f"vLLM: a {method or 'quantized'} checkpoint that quantizes its KV cache is not modelled")
        return None
    inner = q.get("quantization", q)
    algo = (inner.get("kv_cache_scheme") or q.get("kv_cache_scheme") or inner.get("kv_cache_quant_algo")
            or q.get("kv_cache_quant_algo"))
    if algo is None:
        return None
    if isinstance(algo, dict):
        if algo.get("dynamic") is False and algo.get("num_bits") == 8 and algo.get("type") == "float":
            algo = "fp8"
        else:
            raise BadInput(f"vLLM: the checkpoint's KV cache scheme {algo} is not modelled")
    if str(algo).lower() != "fp8":
        raise BadInput(f"vLLM: the checkpoint's KV cache quantization {algo} is not modelled")
    return "fp8_e4m3"


def _quantization(args: dict, raw: dict, text: dict) -> str | None:
    """ModelConfig._verify_quantization: the checkpoint's quant_method as vLLM names it (gpt-oss' mxfp4 is
    renamed gpt_oss_mxfp4 by GptOssForCausalLMConfig, model_executor/models/config.py:819-835 @0.34.0; ModelOpt
    MIXED_PRECISION is modelopt_mixed, model_executor/layers/quantization/modelopt.py:1775-1781 @0.34.0), or
    --quantization fp8 on an unquantized checkpoint."""
    q = raw.get("quantization_config") or text.get("quantization_config")
    method = q.get("quant_method") if isinstance(q, dict) else None
    flag = args.get("quantization")
    if flag is not None:
        if flag != "fp8":
            raise BadInput(f"vLLM --quantization {flag} is not modelled (modelled: fp8)")
        if method in (None, "fp8"):
            return "fp8"
        # on an MXFP4 (gpt-oss) or ModelOpt mixed checkpoint the checkpoint's method wins (cases rnd4-094,
        # rnd5-048, both releases); others are not checked
        mixed = method == "modelopt" and str(q.get("quant_algo", "")).upper() == "MIXED_PRECISION"
        if not (method == "mxfp4" or mixed):
            raise BadInput(f"vLLM --quantization fp8 on a {method} checkpoint is not modelled")
    if method is None:
        return None
    if method == "mxfp4":
        return "gpt_oss_mxfp4"
    if method == "fp8":
        return "fp8"
    if method == "modelopt" and str(q.get("quant_algo", "")).upper() == "MIXED_PRECISION":
        return "modelopt_mixed"
    raise BadInput(f"vLLM: checkpoint quantization {method} {q.get('quant_algo') or ''} is not modelled".rstrip())


def _env(launch: VllmLaunch, version: str) -> dict[str, str]:
    env = dict(launch.env or {})
    bad = [k for k in env if k.startswith("VLLM_") and k not in _ENV_MODELLED]
    if bad:
        raise BadInput(f"vLLM {version}: environment variable(s) not modelled: {', '.join(sorted(bad))}")
    return env


def _model_runner(version: str, env: dict[str, str]) -> str:
    """0.34 removed Model Runner V1 (platforms/interface.py:1480-1490 @0.34.0); 0.33 picks V2 unless
    VLLM_USE_V2_MODEL_RUNNER=0 (config/vllm.py:731-767 @0.33.0: the unsupported features that force V1 are
    refused flags)."""
    v = env.get("VLLM_USE_V2_MODEL_RUNNER")
    off = v is not None and v.strip().lower() in ("0", "false")
    if version == "0.34.0":
        if off:
            raise _rejected("engine_config", "ValueError", "VLLM_USE_V2_MODEL_RUNNER=0 is no longer supported: "
                            "Model Runner V1 has been removed. Unset this variable.",
                            "platforms/interface.py:1480-1490 @0.34.0")
        return "v2"
    return "v1" if off else "v2"


# vLLM's rejection of a drafter without num_speculative_tokens and without n_predict in its config
_NO_N_PREDICT = ("num_speculative_tokens must be provided with speculative model unless the draft model config "
                 "contains an n_predict parameter.", "config/speculative.py:1651-1658 @0.34.0, 1944-1951 @0.33.0")


def _num_tokens(sc: dict, missing: tuple[str, str]) -> int:
    """num_speculative_tokens from --speculative-config: absent, vLLM's own rejection ``missing`` (its message,
    its citation), which differs by method; present, an integer >= 1 (other values are not modelled)."""
    k = sc.get("num_speculative_tokens")
    if k is None:
        raise _rejected("engine_config", "ValidationError", *missing)
    if not isinstance(k, int) or k < 1:
        raise BadInput("vLLM --speculative-config: num_speculative_tokens (an integer >= 1) is required here")
    return k


def _speculative(args: dict, raw: dict, text: dict, family: str, version: str,
                 draft=None) -> tuple[str | None, int | None]:
    """--speculative-config: the model's own MTP layers (method "mtp", num_speculative_tokens), and EAGLE3 with a
    drafter config (``_eagle3``) are modelled (config/speculative.py @0.34.0); every other method or key is
    refused by name."""
    sc = args.get("speculative_config")
    if sc is None:
        return None, None
    if not isinstance(sc, dict):
        raise BadInput("vLLM --speculative-config must be a JSON object here")
    if sc.get("method") == "eagle3":
        return _eagle3(sc, raw, draft)
    if sc.get("method") == "ngram":
        return _ngram(sc, family)
    extra = sorted(set(sc) - {"method", "num_speculative_tokens"})
    if extra:
        raise BadInput(f"vLLM --speculative-config key(s) not modelled: {', '.join(extra)}")
    method = sc.get("method")
    if method in _MTP_ALIASES:
        # deprecated model-type names are rewritten to "mtp" (config/speculative.py:1375-1379 @0.34.0,
        # 1246-1250 @0.33.0); only those of the modelled families are accepted here
        method = "mtp"
    if method != "mtp":
        raise BadInput(f"vLLM speculative method {method!r} is not modelled (modelled: mtp, eagle3, ngram)")
    # the MTP drafters' configs carry no n_predict (cases q36-rtxpro-mtp-nok, dsv3-h200-mtp-nok)
    k = _num_tokens(sc, _NO_N_PREDICT)
    # Qwen3-Next builds its MTP module without a config key (Qwen3NextMTP; oracle case qnext-h200-tp2-mtp2)
    if not any(text.get(key) or raw.get(key) for key in _MTP_KEYS) and raw.get("architectures") != [
            "Qwen3NextForCausalLM"]:
        # 0.33's SpeculativeConfig finds no MTP model type (config/speculative.py:1470-1500 @0.33.0); 0.34 takes
        # the method and builds the target's layers again as the drafter's, failing while loading the model
        # (oracle case rej-mtp-llama)
        if version == "0.33.0":
            raise _rejected("engine_config", "NotImplementedError", "Unsupported speculative method: 'mtp'",
                            "config/speculative.py:1496-1501 @0.33.0")
        attn = {"dense": "self_attn", "moe": "self_attn", "gpt_oss": "attn"}.get(family)
        if attn is None:
            raise BadInput(f"vLLM 0.34 MTP on a {family} model without MTP layers is not modelled")
        raise _rejected("load_model", "ValueError", f"Duplicate layer name: model.layers.0.{attn}.attn",
                        "tests/golden/vllm_config rej-mtp-llama, gptoss20b-h100-mtp @0.34.0")
    if family not in ("gdn", "mla"):
        raise BadInput(f"vLLM MTP on {family} models is not modelled")
    return "mtp", k


def _eagle3(sc: dict, raw: dict, draft) -> tuple[str, int]:
    """EAGLE3 as the oracle checked it (tests/golden/vllm/<release>/dense/eagle3*.jsonl): a Llama-architecture
    EAGLE3 head (the SpecForge configs) on Llama / Qwen3 dense targets, num_speculative_tokens given."""
    extra = sorted(set(sc) - {"method", "model", "num_speculative_tokens"})
    if extra:
        raise BadInput(f"vLLM --speculative-config key(s) not modelled with eagle3: {', '.join(extra)}")
    target = (raw.get("architectures") or [""])[0]
    if target not in ("LlamaForCausalLM", "Qwen3ForCausalLM"):
        raise BadInput(f"vLLM EAGLE3 on {target or '(no architecture)'} is not modelled (modelled: Llama, Qwen3 "
                       "dense)")
    if draft is None or "model" not in sc:
        raise BadInput("vLLM EAGLE3: the drafter's config is needed (--speculative-config's \"model\": a catalog "
                       "draft such as llama3-8b-eagle3)")
    arch = (draft.raw.get("architectures") or [""])[0]
    if arch != "LlamaForCausalLMEagle3" or draft.raw.get("n_predict") is not None:
        raise BadInput(f"vLLM EAGLE3 drafter {arch or '(no architecture)'} is not modelled (modelled: "
                       "LlamaForCausalLMEagle3 without n_predict)")
    # oracle, both releases (v1/worker/gpu/spec_decode/speculator_config.py:223-227 @0.34.0,
    # config/speculative.py:1614-1618 @0.33.0)
    k = _num_tokens(sc, ("A speculative model was provided, but `num_speculative_tokens` was not provided",
                         "v1/worker/gpu/spec_decode/speculator_config.py:223-227 @0.34.0"))
    return "eagle3", k


def _ngram(sc: dict, family: str) -> tuple[str, int]:
    """Prompt-lookup (n-gram) drafting: no drafter layers, the k + 1 query length of the decode graphs only
    (tests/golden/vllm/<release>/<family>/ngram.jsonl); the hybrids (their Mamba state holds k speculative blocks)
    are not checked."""
    extra = sorted(set(sc) - {"method", "num_speculative_tokens", "prompt_lookup_max", "prompt_lookup_min"})
    if extra:
        raise BadInput(f"vLLM --speculative-config key(s) not modelled with ngram: {', '.join(extra)}")
    if family not in ("dense", "moe", "gpt_oss", "llama4", "mla"):
        raise BadInput(f"vLLM ngram speculation on {family} models is not modelled")
    lo, hi = sc.get("prompt_lookup_min"), sc.get("prompt_lookup_max")
    if any(x is not None and (not isinstance(x, int) or x < 1) for x in (lo, hi)) or (
            lo is not None and hi is not None and lo > hi):
        raise BadInput("vLLM ngram: prompt_lookup_min / prompt_lookup_max other than integers min <= max are not "
                       "modelled")
    k = _num_tokens(sc, _NO_N_PREDICT)  # no config with n_predict: the oracle's answer on both releases
    return "ngram", k


def _batch_defaults(device, usage_throughput: bool) -> tuple[int, int]:
    """get_batch_defaults for OPENAI_API_SERVER (engine/arg_utils.py:2977-3076 @0.34.0, same @0.33.0): the tier
    is NVML's total memory (get_device_total_memory), A100 and GB10 (SM 12.1) stay on the small tier."""
    mem = int(device.gpu_total_mib) * (1 << 20)
    if mem >= 160 * GIB:
        mbt, seqs = 16384, 1024
    elif mem >= 70 * GIB and "a100" not in device.name.lower() and str(device.sm) != "12.1":
        mbt, seqs = 8192, 1024
    else:
        mbt, seqs = 2048, 256
    return mbt, seqs


def _attention_backends(family: str, sm: str, kv_dtype: str, dtype: str, flashinfer: str,
                        layer_order: list[str], device_name: str = "", block_size: int | None = None) -> tuple:
    """The distinct backends of the layers, in layer order, as vLLM picks them: the first valid one of
    platforms/cuda.py:81-178 _get_backend_priorities @0.34.0 (SM 10.x: FLASHINFER, FLASH_ATTN, TRITON_ATTN; else
    FLASH_ATTN, FLASHINFER, TRITON_ATTN; MLA: FLASH_ATTN_MLA on SM 9.0, FLASHINFER_MLA on SM 10.x). FlashAttention
    takes an fp8 (e4m3) KV cache only as FA3 on SM 9.0 (v1/attention/backends/fa_utils.py), never fp8_e5m2 nor a
    float32 model; attention sinks (gpt-oss) need FA3, else FlashInfer (SM 10 / 12), else Triton. Each branch is
    an oracle case (tests/golden/vllm_config); the combinations no case checked are refused."""
    major = _sm_major(sm)
    # 10.3 (B300): the same choices as 10.0 (is_device_capability_family(100); tests/golden/vllm/*/*/b300.jsonl)
    if str(sm) not in ("8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0"):
        raise BadInput(f"vLLM attention backend choice on SM {sm} is not modelled (checked: 8.0, 8.9, 9.0, 10.0, 10.3, "
                       "12.0)")
    fp8, e5m2 = kv_dtype.startswith("fp8"), kv_dtype == "fp8_e5m2"
    if dtype == "float32" and (major != 9 or family in ("mla", "gpt_oss")):
        raise BadInput(f"vLLM attention backend for a float32 model on SM {sm} / {family} is not modelled "
                       "(checked: SM 9.0)")
    if family == "mla":
        if major not in (9, 10):
            raise BadInput(f"vLLM MLA attention backend on SM {sm} is not modelled (checked: 9.0, 10.0)")
        if e5m2 and major == 9:  # no MLA backend takes it (cases rnd1-067, rnd3-030): vLLM fails building the model
            raise VllmRejected("load_model", "ValueError", "No valid attention backend found for cuda with "
                               f"AttentionSelectorConfig(head_size=576, dtype=torch.{dtype}, kv_cache_dtype=fp8_e5m2, "
                               f"block_size={block_size}, use_mla=True", "platforms/cuda.py:512-516 @0.34.0")
        # SM 9.0 with an fp8 cache: FLASH_ATTN_MLA takes none, FLASHMLA takes blocks of 64 (mla/flashmla.py:57-58),
        # TRITON_MLA the rest (tests/golden/vllm/*/mla: 14 cases FLASHMLA without --block-size, 16 / 32 TRITON_MLA)
        sm9_fp8 = kv_dtype == "fp8" and major == 9 and (block_size is None or block_size % 64 != 0)
        if fp8 and not (major == 10 and not e5m2) and not sm9_fp8:
            raise BadInput(f"vLLM MLA with a {kv_dtype} KV cache on SM {sm}"
                           f"{'' if block_size is None else f' and --block-size {block_size}'} is not modelled "
                           "(checked: fp8 on SM 10.0; on SM 9.0 without --block-size or one not a multiple of 64)")
        # the first backend whose kernel block sizes take a user's --block-size (FLASHINFER_MLA [32, 64],
        # CUTLASS_MLA [128], FLASH_ATTN_MLA / TRITON_MLA multiples of 16: v1/attention/backends/mla/*.py @0.34.0)
        if block_size is not None and block_size % 16:
            raise BadInput(f"vLLM MLA with --block-size {block_size} on SM {sm} is not modelled")
        if sm9_fp8:
            attn = "FLASHMLA" if block_size is None else "TRITON_MLA"
        elif major == 9:
            attn = "FLASH_ATTN_MLA"
        else:
            # FLASHINFER_MLA (first on SM 10.x) takes multiples of 32: 128 too (kernel 64; cases mla-b200-r14,
            # mla-mtp-b200-r1 / r13); 16 / 48 fall to TRITON_MLA (mla-b200-r8, rnd4-058)
            attn = "FLASHINFER_MLA" if block_size is None or block_size % 32 == 0 else "TRITON_MLA"
    elif dtype == "float32":
        attn = "TRITON_ATTN"  # neither FlashAttention nor FlashInfer runs float32 (case qwen3-8b-h100-fp32)
    elif major == 10:
        attn = "FLASHINFER"
    elif family == "gpt_oss":
        if fp8 and major == 12:
            raise BadInput(f"vLLM gpt-oss with a {kv_dtype} KV cache on SM {sm} is not modelled")
        if major == 9:  # FA3 takes sinks and an e4m3 KV cache, not e5m2 (cases rnd3-065, rnd3-070)
            attn = "FLASHINFER" if e5m2 else "FLASH_ATTN"
        else:
            attn = "FLASHINFER" if major == 12 else "TRITON_ATTN"
    elif e5m2 or (fp8 and major != 9):
        attn = "FLASHINFER"
    else:
        attn = "FLASH_ATTN"
    if attn.startswith("FLASHINFER") and flashinfer != "cubin":
        attn = _without_flashinfer(attn, family, major, fp8, flashinfer, sm, device_name)
    if block_size is not None and family != "mla" and block_size % 16:
        # checked: 16, 32, 48, 64, 128, 256 keep the backend chosen above (every random case)
        raise BadInput(f"vLLM --block-size {block_size} (not a multiple of 16) is not modelled")
    if attn == "TRITON_ATTN" and fp8 and str(sm) in ("8.0", "8.6"):
        # TritonAttentionImpl: an fp8 KV cache needs native fp8e4nv, SM 8.9+ (v1/attention/backends/
        # triton_attn.py:513-527 @0.34.0; cases nofi-nemo-a100-fp8kv, rnd4-046)
        raise VllmRejected("load_model", "ValueError", "FP8 KV cache is not supported by the Triton attention backend "
                           f"on {device_name} (compute capability {sm}); native FP8 (fp8e4nv) requires SM89+. Re-run "
                           "with --kv-cache-dtype bfloat16.", "v1/attention/backends/triton_attn.py:513-527 @0.34.0")
    return tuple(dict.fromkeys(attn if t == "attention" else t for t in layer_order))


def _without_flashinfer(attn: str, family: str, major: int, fp8: bool, flashinfer: str, sm: str,
                        device_name: str) -> str:
    """The next valid backend when FlashInfer is not installed (the oracle's flashinfer=absent set,
    tests/golden/vllm_config/noflashinfer.jsonl): FLASH_ATTN on SM 10.x, CUTLASS_MLA for MLA on SM 10.x, else
    TRITON_ATTN (whose fp8 KV cache needs SM 8.9+: checked by the caller). 'jit' (the python package
    without its cubins) works or not depending on nvcc: refused."""
    if flashinfer != "absent":
        raise BadInput(f"vLLM with FlashInfer installed as {flashinfer!r} is not modelled (modelled: cubin, absent)")
    if family == "mla":
        return "CUTLASS_MLA"
    if major == 10:
        if fp8:
            raise BadInput("vLLM without FlashInfer, fp8 KV cache on SM 10.x is not modelled")
        return "FLASH_ATTN"
    return "TRITON_ATTN"


def _is_moe(text: dict) -> bool:
    """ModelConfig.is_moe: the config names a positive number of experts."""
    return any((text.get(k) or 0) > 0 for k in ("num_experts", "num_local_experts", "n_routed_experts",
                                                 "moe_num_experts"))


def _layer_kinds(family: str, text: dict) -> list[str]:
    """The backend kinds in layer order: GDN_ATTN / MAMBA2_ATTN for the state layers of the hybrids."""
    if family == "gdn":
        types = text.get("layer_types")
        if types:
            return ["GDN_ATTN" if t == "linear_attention" else "attention" for t in types]
        return ["GDN_ATTN", "attention"]  # Qwen3-Next: full attention every full_attention_interval-th layer
    if family == "mamba2":
        pattern = text.get("hybrid_override_pattern", "")
        return ["MAMBA2_ATTN" if c == "M" else "attention" for c in pattern if c in "M*"]
    return ["attention"]


def _scheduler(args: dict, device, eff_len: int, chunked: bool) -> tuple[int, int, str]:
    """(max_num_batched_tokens, max_num_seqs, performance_mode) and the SchedulerConfig checks."""
    # engine/arg_utils.py:3188-3285 @0.34.0 (same @0.33.0)
    tier_mbt, tier_seqs = _batch_defaults(device, False)
    perf = args.get("performance_mode") or "balanced"
    seqs_given, mbt_given = args.get("max_num_seqs"), args.get("max_num_batched_tokens")
    mbt = tier_mbt if mbt_given is None else mbt_given
    seqs = tier_seqs if seqs_given is None else seqs_given
    if perf == "throughput":
        mbt = mbt * 2 if mbt_given is None else mbt
        seqs = seqs * 2 if seqs_given is None else seqs
    if mbt_given is None:
        if not chunked:
            mbt = max(eff_len, mbt)
        mbt = min(seqs * eff_len, mbt)
    if seqs_given is None:
        seqs = min(seqs, mbt)
    # SchedulerConfig fields (config/scheduler.py:47,61 @0.34.0) and verify_max_model_len (361-380)
    _field_errors("SchedulerConfig", [(n, "Input should be greater than or equal to 1", "greater_than_equal", x)
                                      for n, x in (("max_num_batched_tokens", mbt), ("max_num_seqs", seqs)) if x < 1],
                  "config/scheduler.py:47,61 @0.34.0")
    if mbt < eff_len and not chunked:
        raise _rejected("engine_config", "ValidationError",
                        f"max_num_batched_tokens ({mbt}) is smaller than max_model_len ({eff_len}). This effectively "
                        "limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer "
                        "sequences. Please increase max_num_batched_tokens or decrease max_model_len.",
                        "config/scheduler.py:361-373 @0.34.0")
    if mbt < seqs:
        raise _rejected("engine_config", "ValidationError",
                        f"max_num_batched_tokens ({mbt}) must be greater than or equal to max_num_seqs ({seqs}).",
                        "config/scheduler.py:375-380 @0.34.0")

    return mbt, seqs, perf


def _compilation_flags(args: dict) -> tuple[list[int] | None, int | None, str]:
    """(cudagraph_capture_sizes, max_cudagraph_capture_size, cudagraph_mode) as the user gave them, with vLLM's
    mutual-exclusion errors."""
    # engine/arg_utils.py:2871-2886 @0.34.0
    cc = args.get("compilation_config")
    cc = dict(cc) if isinstance(cc, dict) else {}  # the default is CompilationConfig() (the dump keeps its repr)
    extra = sorted(set(cc) - set(_CC_KEYS))
    if extra:
        raise BadInput(f"vLLM --compilation-config key(s) not modelled: {', '.join(extra)}")
    user_sizes, user_max = cc.get("cudagraph_capture_sizes"), cc.get("max_cudagraph_capture_size")
    if args.get("cudagraph_capture_sizes") is not None:
        if user_sizes is not None:
            raise _rejected("engine_config", "ValueError", "cudagraph_capture_sizes and compilation_config."
                            "cudagraph_capture_sizes are mutually exclusive", "engine/arg_utils.py:2871-2876 @0.34.0")
        user_sizes = list(args["cudagraph_capture_sizes"])
    if args.get("max_cudagraph_capture_size") is not None:
        if user_max is not None:
            raise _rejected("engine_config", "ValueError", "max_cudagraph_capture_size and compilation_config."
                            "max_cudagraph_capture_size are mutually exclusive",
                            "engine/arg_utils.py:2878-2883 @0.34.0")
        user_max = int(args["max_cudagraph_capture_size"])
    if user_sizes is not None and not (isinstance(user_sizes, list) and user_sizes
                                       and all(isinstance(x, int) and x >= 0 for x in user_sizes)):
        raise BadInput(f"vLLM cudagraph_capture_sizes {user_sizes} (empty, or a size below 0) is not modelled")
    if user_max is not None and not isinstance(user_max, int):
        raise BadInput(f"vLLM max_cudagraph_capture_size {user_max!r} is not modelled")
    mode = cc.get("cudagraph_mode")
    mode = "FULL_AND_PIECEWISE" if mode is None else str(mode).upper()  # the O2 default (config/vllm.py:339-360)
    if mode not in _CG_MODES:
        raise BadInput(f"vLLM cudagraph_mode {mode} is not modelled (modelled: {', '.join(_CG_MODES)})")

    return user_sizes, user_max, mode


def _extensible(v: str, args: dict, device, kv_bytes, override) -> tuple[bool, bool | None]:
    """(enable_extensible_kv_cache, the flag as given)."""
    # extensible KV cache (0.34: config/vllm.py:3180-3269, cache.py:495-501; the worker falls back to
    # estimate-based sizing where the driver has no VMM)
    requested = args.get("enable_extensible_kv_cache") if v == "0.34.0" else None
    if v == "0.34.0":
        unsupported = None
        if kv_bytes is not None:
            unsupported = "it sizes the KV cache from measured memory, which kv_cache_memory_bytes overrides"
        elif override is not None:
            unsupported = "it sizes the KV cache from measured memory, which num_gpu_blocks_override overrides"
        if requested and unsupported:
            raise _rejected("engine_config", "ValidationError", f"enable_extensible_kv_cache: {unsupported}.",
                            "config/vllm.py:3262-3263 @0.34.0")
        ext = (unsupported is None) if requested is None else bool(requested)
        if ext and not device.vmm:
            if requested:
                raise BadInput("vLLM 0.34 --enable-extensible-kv-cache on a driver without VMM is not modelled")
            ext = False
    else:
        ext = False
    return ext, requested


def _graphs(v: str, family: str, mode: str, enforce_eager: bool, major: int, seqs: int, mbt: int, k: int,
            spec_method: str | None, perf: str, user_sizes, user_max) -> tuple[str, str, list[int], int]:
    """(final cudagraph mode, create_engine_config's mode, capture sizes, their max)."""
    if enforce_eager:
        mode = "NONE"  # config/vllm.py:1697-1712, 1916-1919 @0.34.0
    if mode != "NONE":
        try:
            sizes, max_size = capture_sizes(
                v, sm_major=major, max_num_seqs=seqs, max_num_batched_tokens=mbt, num_spec=k,
                spec_method=spec_method, performance_mode=perf, mixed_mode_none=mode == "FULL_DECODE_ONLY",
                user_sizes=user_sizes, user_max=user_max, gpt_oss=family == "gpt_oss")
        except GraphSizeError as e:
            raise _rejected("engine_config", "ValidationError", str(e),  # raised in VllmConfig.__post_init__
                            "config/vllm.py:2509-2523 @0.34.0, 2610-2624 @0.33.0") from None
        if not sizes:
            mode = "NONE"
    else:
        sizes, max_size = [], 0
    engine_mode = mode
    if family == "llama4" and mode in ("FULL_AND_PIECEWISE", "FULL_DECODE_ONLY"):
        # chunked local attention's backend supports no FULL graph: resolve_cudagraph_mode_and_sizes lowers the
        # mode at the KV-cache initialisation (oracle README "Model families"; case llama4-b200-tp8-len64k)
        mode = "PIECEWISE"  # FULL_DECODE_ONLY too (case rnd1-056-Llama-4-Scout-17B-16E-Instruct-b200)

    return mode, engine_mode, sizes, max_size


def _verify_model(args: dict, text: dict, family: str, tp: int, dp: int, prefix: bool, chunked: bool, kv: str,
                  dtype: str, quantization: str | None) -> str:
    """VllmConfig.__post_init__'s model checks in vLLM's order and the Mamba cache mode."""
    if kv in ("float16", "bfloat16") and kv != dtype:  # _reject_mismatched_float_kv_cache (config/vllm.py:1431-1447)
        allowed = f"`auto` or `{dtype}`" if dtype in ("float16", "bfloat16") else "`auto`"
        raise _rejected("engine_config", "ValidationError", f'kv_cache_dtype="{kv}" is incompatible with '
                        f'dtype="{dtype}". Please set `--kv-cache-dtype` to {allowed}.',
                        "config/vllm.py:1431-1447 @0.34.0")
    heads = int(text.get("num_attention_heads") or 0)
    if heads % tp:
        raise _rejected("engine_config", "ValidationError", f"Total number of attention heads ({heads}) must be "
                        f"divisible by tensor parallel size ({tp}).", "config/model.py:1578-1584 @0.34.0")
    if args.get("enable_expert_parallel"):
        if not _is_moe(text):
            if family not in ("dense", "gdn"):  # NemotronH's config class has expert defaults the JSON lacks
                raise BadInput(f"vLLM --enable-expert-parallel on {family} models is not modelled")
            raise _rejected("engine_config", "ValidationError", "Number of experts in the model must be greater than "
                            "0 when expert parallelism is enabled.", "config/model.py:1518-1523 @0.34.0")
        if dp > 1:
            raise BadInput("vLLM --enable-expert-parallel with --data-parallel-size > 1 is not modelled")
    if kv == "fp8_e5m2" and quantization == "modelopt_mixed":
        # a checkpoint with KV scales (model_executor/layers/attention/attention.py:216-235 @0.34.0; rnd4-067)
        raise _rejected("load_model", "ValueError", "fp8_e5m2 kv-cache is not supported with fp8 checkpoints.",
                        "model_executor/layers/attention/attention.py:216-235 @0.34.0")
    if kv == "fp8_e5m2" and quantization == "fp8" and args.get("quantization") is None and family != "mla":
        raise BadInput("vLLM fp8_e5m2 KV cache with an FP8 checkpoint is not modelled")
    if quantization is not None and dtype != "bfloat16" and not (quantization == "fp8" and dtype == "float16"):
        # the quantization config's supported activation dtypes (VllmConfig._get_quantization_config)
        if quantization == "gpt_oss_mxfp4":
            raise _rejected("engine_config", "ValidationError", f"torch.{dtype} is not supported for quantization "
                            "method gpt_oss_mxfp4. Supported dtypes: [torch.bfloat16]",
                            "config/vllm.py:899-905 @0.34.0")
        raise BadInput(f"vLLM {quantization} weights with a {dtype} model dtype are not modelled")
    if family in _HYBRID:
        # MambaModelConfig.verify_and_update_config (model_executor/models/config.py:1081-1110 @0.34.0): the
        # deprecated --mamba-cache-mode has no effect; prefix caching decides
        mamba_mode = "align" if prefix else "none"  # args["mamba_cache_mode"] is ignored (deprecated)
        if prefix and not chunked:
            raise _rejected("engine_config", "ValidationError", "Assertion failed, Chunked prefill is required for "
                            "Mamba prefix caching.", "model_executor/models/config.py:1103-1105 @0.34.0")
    else:
        mamba_mode = "none"  # CacheConfig.mamba_cache_mode's default
    return mamba_mode


def resolve(launch: VllmLaunch) -> VllmConfig:
    """vLLM's argument resolution for ``launch.version`` (raises :class:`VllmRejected`, or BadInput for what is
    not modelled)."""
    v = launch.version
    if v not in VERSIONS:
        raise BadInput(f"vLLM {v} is not modelled (modelled: {', '.join(VERSIONS)})")
    args = parse_serve_flags(v, launch.flags)
    check_modelled(v, args)
    env = _env(launch, v)
    raw = launch.spec.raw
    text = _text(raw)
    archs = raw.get("architectures") or []
    arch = archs[0] if archs else ""
    family = _FAMILIES.get(arch)
    if family is None:
        raise BadInput(f"vLLM: model architecture {arch or '(none)'} is not modelled")
    device = launch.device
    major = _sm_major(device.sm)

    # --- ModelConfig (config/model.py @0.34.0) ---
    dtype = _dtype(args, raw, text)
    quantization = _quantization(args, raw, text)
    max_model_len, derived = _max_model_len(args, text, env)
    eff_len = derived if max_model_len == -1 else max_model_len
    enforce_eager = bool(args.get("enforce_eager"))

    # --- defaults: chunked prefill and prefix caching (engine/arg_utils.py:3078-3147 @0.34.0): generative
    #     decoder and hybrid models support both ---
    chunked = True if args.get("enable_chunked_prefill") is None else bool(args["enable_chunked_prefill"])
    prefix = True if args.get("enable_prefix_caching") is None else bool(args["enable_prefix_caching"])

    # --- CacheConfig (config/cache.py:188, 216, 503-510 @0.34.0): pydantic reports every bad field at once ---
    kv = args.get("kv_cache_dtype") or "auto"
    if kv == "auto":  # resolve_kv_cache_dtype_string (utils/torch_utils.py:518-536 @0.34.0)
        kv = _checkpoint_kv_dtype(raw.get("quantization_config") or text.get("quantization_config")) or "auto"
    util = args.get("gpu_memory_utilization")
    block_size = args.get("block_size")
    errs = []
    if block_size is not None and block_size <= 0:
        errs.append(("block_size", "Input should be greater than 0", "greater_than", block_size))
    if util is not None and not 0 < util <= 1:
        errs.append(("gpu_memory_utilization", *(("Input should be less than or equal to 1", "less_than_equal")
                     if util > 1 else ("Input should be greater than 0", "greater_than")), util))
    if kv not in KV_CACHE_DTYPES_034:
        errs.append(("cache_dtype", f"Value error, Invalid kv_cache_dtype: {kv!r}. Valid values are: "
                     f"{KV_CACHE_DTYPES_034}", "value_error", kv))
    _field_errors("CacheConfig", errs, "config/cache.py:188,216,503-510 @0.34.0")
    if kv not in _KV_MODELLED:
        raise BadInput(f"vLLM --kv-cache-dtype {kv} is not modelled")
    kv_bytes = args.get("kv_cache_memory_bytes")
    override = args.get("num_gpu_blocks_override")

    # --- ParallelConfig (config/parallel.py:148-155, 1147-1170 @0.34.0) ---
    tp = int(args.get("tensor_parallel_size") or 0)
    pp = int(args.get("pipeline_parallel_size") or 0)
    dp = int(args.get("data_parallel_size") or 0)
    _field_errors("ParallelConfig", [(n, "Input should be greater than or equal to 1", "greater_than_equal", x)
                                     for n, x in (("pipeline_parallel_size", pp), ("tensor_parallel_size", tp),
                                                  ("data_parallel_size", dp)) if x < 1],
                  "config/parallel.py:148-155 @0.34.0")
    if tp * pp * dp > 1 and tp * pp > device.count:
        raise _rejected("engine_config", "ValidationError",
                        f"World size ({tp * pp}) is larger than the number of available GPUs ({device.count}) in this "
                        "node. If this is intentional and you are using:\n- ray, set '--distributed-executor-backend "
                        "ray'.\n- multiprocessing, set '--nnodes' appropriately.",
                        "config/parallel.py:1159-1170 @0.34.0")
    if pp > 1 and family not in ("dense", "moe", "gdn"):
        raise BadInput(f"vLLM pipeline parallelism on {family} models is not modelled")

    spec_method, num_spec = _speculative(args, raw, text, family, v, getattr(launch, "draft", None))
    k = num_spec or 0

    mbt, seqs, perf = _scheduler(args, device, eff_len, chunked)
    user_sizes, user_max, mode = _compilation_flags(args)
    offload = float(args.get("cpu_offload_gb") or 0.0)
    _field_errors("UVAOffloadConfig", [("cpu_offload_gb", "Input should be greater than or equal to 0",
                                        "greater_than_equal", offload)] if offload < 0 else [],
                  "config/offload.py:23 @0.34.0")

    # --- VllmConfig.__post_init__ (config/vllm.py:1449-2262 @0.34.0) ---
    model_runner = _model_runner(v, env)
    mamba_mode = _verify_model(args, text, family, tp, dp, prefix, chunked, kv, dtype, quantization)
    if env.get("TORCH_COMPILE_DISABLE") == "1" and not enforce_eager:
        # compilation mode NONE (config/vllm.py:1717-1723 @0.34.0), and a mode that needs piecewise compilation
        # loses it (_normalize_piecewise_cudagraph_mode, 1050-1070); checked on dense, MoE, GDN, Mamba2, gpt-oss
        if family not in ("dense", "moe", "gdn", "mamba2", "gpt_oss"):
            raise BadInput(f"vLLM TORCH_COMPILE_DISABLE=1 on {family} models is not modelled")
        if family != "gdn" or v == "0.33.0":  # 0.34's GDN hybrids keep it: breakable CUDA graphs (rnd3-086)
            mode = {"FULL_AND_PIECEWISE": "FULL_DECODE_ONLY", "PIECEWISE": "NONE"}.get(mode, mode)
    mode, engine_mode, sizes, max_size = _graphs(
        v, family, mode, enforce_eager, major, seqs, mbt, k, spec_method, perf, user_sizes, user_max)

    ext, requested = _extensible(v, args, device, kv_bytes, override)
    resolved_util = util if util is not None else (1.0 if ext else 0.92)  # config/cache.py:495-501 @0.34.0

    backends = _attention_backends(family, device.sm, kv, dtype, device.flashinfer, _layer_kinds(family, text),
                                   device.name, block_size)
    if mode == "FULL" and not (family in ("dense", "moe") and backends == ("FLASH_ATTN",) and major == 9):
        # FULL stays FULL where the backend captures full graphs of any batch (FA3: case edge-cg-full); others
        # lower it at the KV-cache initialisation in ways not checked here
        raise BadInput(f"vLLM cudagraph_mode FULL with {', '.join(backends)} on SM {device.sm} is not modelled")
    return VllmConfig(
        version=v, architecture=arch, model_runner=model_runner, dtype=dtype, kv_cache_dtype=kv,
        max_model_len=max_model_len, max_num_seqs=seqs, max_num_batched_tokens=mbt, enable_prefix_caching=prefix,
        enable_chunked_prefill=chunked, gpu_memory_utilization=resolved_util, enable_extensible_kv_cache=ext,
        tensor_parallel_size=tp, pipeline_parallel_size=pp, data_parallel_size=dp, block_size=block_size,
        mamba_cache_mode=mamba_mode, attention_backends=backends, cudagraph_mode=mode,
        cudagraph_capture_sizes=tuple(sizes), max_cudagraph_capture_size=max_size,
        speculative_method=spec_method, num_speculative_tokens=num_spec, kv_cache_memory_bytes=kv_bytes,
        num_gpu_blocks_override=override, enforce_eager=enforce_eager,
        cpu_offload_gb=offload, quantization=quantization,
        derived_max_model_len=derived, cudagraph_mode_engine_config=engine_mode, extensible_requested=requested,
        enable_expert_parallel=bool(args.get("enable_expert_parallel")),
    )
