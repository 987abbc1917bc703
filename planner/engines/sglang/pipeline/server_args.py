"""SGLang 0.5.11 flag resolution and validation: ``ServerArgs.__post_init__`` + ``check_server_args``.

Only the steps that touch memory sizing or reject a configuration are mirrored, in SGLang's order
(srt/server_args.py:782-900 @0.5.11). Every function cites the lines it reproduces. Scope: CUDA
GPUs, no DP attention, no pipeline parallelism, no PD disaggregation, no LoRA; flags outside that
scope are refused by :func:`check_scope` with a clear message rather than mis-modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from planner.catalog.spec import ModelSpec
from planner.engines.sglang.rules import RULES, Rules

# srt/configs/model_config.py:1384-1443 @0.5.11
MULTIMODAL_ARCHS = frozenset({
    "CLIPModel", "DeepseekVL2ForCausalLM", "Ernie4_5_VLMoeForConditionalGeneration",
    "Gemma3ForConditionalGeneration", "Gemma3nForConditionalGeneration",
    "Gemma4ForConditionalGeneration", "Glm4vForConditionalGeneration",
    "Glm4vMoeForConditionalGeneration", "GlmOcrForConditionalGeneration",
    "GlmAsrForConditionalGeneration", "Grok1VForCausalLM", "Grok1AForCausalLM",
    "LlavaLlamaForCausalLM", "Llama4ForConditionalGeneration", "LlavaMistralForCausalLM",
    "LlavaQwenForCausalLM", "LlavaForConditionalGeneration", "LlavaVidForCausalLM",
    "Lfm2VlForConditionalGeneration", "LightOnOCRForConditionalGeneration", "MiniCPMO",
    "MiniCPMV", "Mistral3ForConditionalGeneration", "MultiModalityCausalLM",
    "MllamaForConditionalGeneration", "MossVLForConditionalGeneration", "NemotronH_Nano_VL_V2",
    "NemotronH_Nano_Omni_Reasoning_V3", "PixtralForConditionalGeneration",
    "Qwen2AudioForConditionalGeneration", "Qwen2VLForConditionalGeneration",
    "Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration",
    "Qwen3VLMoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration", "Qwen3ASRForConditionalGeneration",
    "Qwen3OmniMoeForConditionalGeneration", "KimiVLForConditionalGeneration",
    "InternVLChatModel", "InternS1ForConditionalGeneration", "InternS1ProForConditionalGeneration",
    "Phi4MMForCausalLM", "VoxtralForConditionalGeneration", "WhisperForConditionalGeneration",
    "Step3VLForConditionalGeneration", "POINTSV15ChatModel", "DotsVLMForCausalLM",
    "DotsOCRForCausalLM", "Sarashina2VisionForCausalLM", "NVILAForConditionalGeneration",
    "NVILALiteForConditionalGeneration", "DeepseekOCRForCausalLM",
    "JetVLMForConditionalGeneration", "PaddleOCRVLForConditionalGeneration", "MiDashengLMModel",
    "StepVLForConditionalGeneration", "KimiK25ForConditionalGeneration",
})
# srt/configs/model_config.py:1446-1452 @0.5.11
PCG_DISABLED_ARCHS = frozenset({
    "DeepseekV32ForCausalLM", "Qwen3NextForCausalLM", "GlmMoeDsaForCausalLM",
    "BailingMoeV2_5ForCausalLM", "LLaDAModelLM",
})
# srt/configs/model_config.py:186-190 @0.5.11
MM_DISABLED_BY_DEFAULT = frozenset({
    "Gemma3ForConditionalGeneration", "Llama4ForConditionalGeneration", "Step3VLForConditionalGeneration",
})
# srt/configs/model_config.py:1776-1788 @0.5.16
MM_BREAKABLE_GRAPH_ARCHS = frozenset({"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"})
MM_PIECEWISE_GRAPH_ARCHS = frozenset({"Cohere2VisionForConditionalGeneration", "KimiK25ForConditionalGeneration",
                                      "MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration"})
# srt/arg_groups/overrides.py:1132-1148 @0.5.16
MAMBA_EXTRA_BUFFER_ARCHS_V0_5_16 = frozenset({
    "KimiLinearForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "Qwen3NextForCausalLM", "BailingMoeV2_5ForCausalLM", "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM",
    "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
})
FLA_CHUNK_SIZE = 64  # srt/layers/attention/fla/chunk.py (FLA_CHUNK_SIZE) @0.5.11


@dataclass(frozen=True)
class Device:
    """What SGLang asks the device about: nvidia-smi total (MiB, min over the host), SM, CUDA."""

    total_mib: float  # get_device_memory_capacity: min over every GPU of the host
    sm_major: int
    sm_minor: int
    cuda_version: tuple[int, int] = (12, 9)

    def _cuda(self, major: int, minor: int) -> bool:
        return self.cuda_version >= (major, minor)

    # srt/utils/common.py (is_sm100_supported / is_sm90_supported / is_sm120_supported) @0.5.11
    @property
    def sm100(self) -> bool:
        return self.sm_major == 10 and self._cuda(12, 8)

    @property
    def sm90(self) -> bool:
        return self.sm_major == 9 and self._cuda(12, 3)

    @property
    def sm120(self) -> bool:
        return self.sm_major == 12 and self._cuda(12, 8)

    @property
    def hopper_cuda_12_3(self) -> bool:
        return self.sm_major == 9 and self._cuda(12, 3)

    @property
    def blackwell(self) -> bool:
        return self.sm_major in (10, 11, 12) and self._cuda(12, 8)


class _NotModelled(Exception):
    """A configuration SGLang accepts but this planner does not model (reported as bad input)."""


class Rejected(Exception):
    """SGLang raised while resolving or validating the flags (before any GPU work)."""

    def __init__(self, error_type: str, message: str, rule: str, stage: str = "server_args"):
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.rule = rule
        self.stage = stage


@dataclass
class ResolvedArgs:
    """The ServerArgs fields that matter for memory, after ``__post_init__``."""

    raw: dict[str, Any]
    tp_size: int
    mem_fraction_static: float
    mem_fraction_static_user: bool
    chunked_prefill_size: int
    max_prefill_tokens: int
    cuda_graph_max_bs: int
    cuda_graph_bs: list[int]
    disable_cuda_graph: bool
    page_size: int
    attention_backend: str
    mamba_scheduler_strategy: str
    disable_radix_cache: bool
    disable_overlap_schedule: bool
    speculative_algorithm: str | None
    speculative_num_steps: int | None
    speculative_eagle_topk: int | None
    speculative_num_draft_tokens: int | None
    speculative_draft_model_path: str | None
    max_running_requests: int | None
    max_running_requests_user: bool
    max_mamba_cache_size: int | None
    mamba_full_memory_ratio: float
    mamba_ssm_dtype_flag: str | None
    max_total_tokens: int | None
    kv_cache_dtype: str
    context_len: int
    is_multimodal: bool
    disable_piecewise_cuda_graph: bool
    piecewise_cuda_graph_tokens: list[int]
    env: dict[str, str]
    rules: Rules = RULES["0.5.11"]
    defaulted: dict[str, str] = field(default_factory=dict)  # field -> why it got its value
    warnings: list[str] = field(default_factory=list)
    # --enable-unified-memory (0.5.15+): one buffer holds the KV cache and the mamba states
    unified_memory: bool = False

    @property
    def spec_on(self) -> bool:
        return self.speculative_algorithm is not None

    @property
    def extra_buffer(self) -> bool:
        # enable_mamba_extra_buffer (srt/server_args.py:6764-6765 @0.5.11; :7510-7514 @0.5.16)
        if self.rules.auto_extra_buffer:
            return not self.disable_radix_cache and self.mamba_scheduler_strategy in ("extra_buffer",
                                                                                        "extra_buffer_lazy")
        if self.rules.mamba_v0_5_13:  # srt/server_args.py:7363-7364 @0.5.13
            return self.mamba_scheduler_strategy in ("extra_buffer", "extra_buffer_lazy")
        return self.mamba_scheduler_strategy == "extra_buffer"


# Flags this planner does not model: they change the memory picture in ways we do not reproduce.
_OUT_OF_SCOPE = {
    "enable_dp_attention": "DP attention",
    "enable_lora": "LoRA",
    "lora_paths": "LoRA",
    "enable_hierarchical_cache": "hierarchical cache",
    "cpu_offload_gb": "CPU offload",
    "enable_two_batch_overlap": "two-batch overlap",
    "enable_gdn_replayssm_spec": "ReplaySSM speculative verify",
    "enable_linear_replayssm_spec": "ReplaySSM speculative verify",
    "enable_linear_replayssm": "ReplaySSM ring buffers",
    "enable_kv_cache_sharding": "KV-cache sharding",
}


def check_scope(raw: dict[str, Any], rules: Rules | None = None) -> str | None:
    """A one-line reason when the flags leave what this planner models, else None."""
    for key, what in _OUT_OF_SCOPE.items():
        if rules is not None and rules.replayssm and key in ("enable_linear_replayssm_spec", "enable_linear_replayssm"):
            continue  # modelled from 0.5.17
        val = raw.get(key)
        if val not in (None, False, 0, [], ""):
            return f"--{key.replace('_', '-')}: {what} is not modelled by this planner yet"
    if (raw.get("pipeline_parallel_size") or 1) > 1:
        return "--pp-size: pipeline parallelism is not modelled by this planner yet"
    if (raw.get("data_parallel_size") or 1) > 1:
        return "--dp-size: data parallelism is not modelled by this planner yet (plan one replica)"
    if raw.get("disaggregation_mode", "null") != "null":
        return "--disaggregation-mode: PD disaggregation is not modelled by this planner yet"
    if str(raw.get("speculative_algorithm") or "").upper() in ("NGRAM", "DFLASH", "STANDALONE", "DSPARK"):
        return (f"--speculative-algorithm {raw['speculative_algorithm']}: not modelled by this planner "
                "yet (EAGLE, EAGLE3 and NEXTN are)")
    if (raw.get("attn_dp_size") or 1) > 1:
        return "--attn-dp-size: attention data parallelism is not modelled by this planner yet"
    if raw.get("moe_a2a_backend", "none") != "none":
        return f"--moe-a2a-backend {raw['moe_a2a_backend']}: expert-parallel all-to-all buffers are not modelled yet"
    if raw.get("weight_cache_mode", "off") != "off":
        return "--weight-cache-mode: preloaded weight caches are not modelled by this planner yet"
    if raw.get("startup_weight_load_mode", "serial") != "serial":
        return "--startup-weight-load-mode overlap: not modelled (weights are committed after graph capture)"
    if str(raw.get("speculative_algorithm") or "").upper() in ("UNO", "FROZEN_KV_MTP"):
        return (f"--speculative-algorithm {raw['speculative_algorithm']}: not modelled by this planner "
                "yet (EAGLE, EAGLE3 and NEXTN are)")
    if raw.get("kv_cache_dtype") == "fp4_e2m1":
        return "--kv-cache-dtype fp4_e2m1: not modelled by this planner yet"
    if raw.get("device") not in (None, "cuda"):
        return "--device: only CUDA devices are modelled"
    return None


# (flag dest, lowest sensible value, allow None). SGLang accepts these syntactically; values below
# the bound make its own code divide by zero or size negative tensors, so they are bad input.
_BOUNDS = (
    ("tensor_parallel_size", 1), ("page_size", 1), ("context_length", 1), ("cuda_graph_max_bs", 1),
    ("speculative_num_steps", 1), ("speculative_eagle_topk", 1), ("speculative_num_draft_tokens", 1),
    ("max_total_tokens", 1), ("mamba_track_interval", 1), ("max_running_requests", 0),
    ("max_mamba_cache_size", 0), ("chunked_prefill_size", -1), ("max_prefill_tokens", 1),
)


def check_values(raw: dict[str, Any]) -> str | None:
    """A one-line reason when a flag value is nonsense (not something SGLang decides on), else None."""
    raw = {**raw, "tensor_parallel_size": raw.get("tensor_parallel_size", raw.get("tp_size"))}
    for dest, low in _BOUNDS:
        v = raw.get(dest)
        if v is not None and v < low:
            name = "tp-size" if dest == "tensor_parallel_size" else dest.replace("_", "-")
            return f"--{name}: {v} is not a valid value (must be >= {low})"
    for v in raw.get("cuda_graph_bs") or []:
        if v < 1:
            return f"--cuda-graph-bs: {v} is not a valid batch size (must be >= 1)"
    f = raw.get("mem_fraction_static")
    if f is not None and not 0 < f <= 1:
        return f"--mem-fraction-static: {f} must be in (0, 1]"
    r = raw.get("mamba_full_memory_ratio")
    if r is not None and not (r > 0 and r < float("inf")):
        return f"--mamba-full-memory-ratio: {r} must be a positive number"
    return None


def _cuda_graph_config_v0_5_16(a: dict[str, Any], arch: str, is_mm: bool, cps: int,
                               ctx_flag: int | None, rules: Rules = RULES["0.5.16"]) -> tuple[bool, bool, list[int]]:
    """Decode/prefill CUDA-graph backends and the prefill capture list, 0.5.14+.

    _parse_cuda_graph_config / _apply_cuda_graph_compatibility (srt/server_args.py:3572-3830 @0.5.16):
    decode defaults to FULL, prefill to BREAKABLE on CUDA (model_executor/cuda_graph_config.py:100-111);
    a prefill backend the user set is locked; otherwise breakable becomes tc_piecewise for validated
    multimodal archs, and each backend is disabled by its incompatibility rules.
    """
    decode = a.get("cuda_graph_backend_decode") or "full"
    prefill = a.get("cuda_graph_backend_prefill")
    if rules.v0_5_22:  # parse_cuda_graph_backend_arg (srt/model_executor/cuda_graph_config.py:237-243 @0.5.23)
        for phase, value in (("decode", a.get("cuda_graph_backend_decode")), ("prefill", prefill)):
            if value == "tc_piecewise":
                raise Rejected("SystemExit", f"sglang serve: error: argument --cuda-graph-backend-{phase}: "
                               "tc_piecewise was removed; select breakable, full, or disabled",
                               "srt/model_executor/cuda_graph_config.py:237-243 @0.5.23")
    locked = prefill is not None
    if a["disable_cuda_graph"]:
        decode, prefill, locked = "disabled", "disabled", True
    if a["disable_prefill_cuda_graph"]:
        prefill, locked = "disabled", True
    if a["disable_decode_cuda_graph"]:
        decode = "disabled"
    if prefill is None:
        prefill = rules.prefill_graph_default  # tc_piecewise in 0.5.14 (cuda_graph_config.py:90-92 @0.5.14)
    if not locked:
        if prefill == "breakable" and is_mm and arch in MM_PIECEWISE_GRAPH_ARCHS:
            prefill = "tc_piecewise"
        if prefill == "tc_piecewise":
            if (arch in PCG_DISABLED_ARCHS or a["enable_torch_compile"] or (is_mm and arch not in MM_PIECEWISE_GRAPH_ARCHS)
                    or a["load_format"] == "gguf" or a["quantization"] == "gguf" or (a["cpu_offload_gb"] or 0) > 0
                    or a["enable_deterministic_inference"] or a["enable_symm_mem"] or a["enable_eplb"]
                    or a["expert_distribution_recorder_mode"] is not None or a["debug_cuda_graph"]
                    or a["moe_a2a_backend"] != "none"):
                prefill = "disabled"
        elif prefill == "breakable":
            allowed = rules.mm_breakable_allowlist and arch in MM_BREAKABLE_GRAPH_ARCHS
            if rules.nemotron_no_breakable and arch == "NemotronHForCausalLM":  # srt/server_args.py:4452-4522 @0.5.17
                prefill = "disabled"
            elif (is_mm and not allowed) or a["moe_a2a_backend"] != "none":
                prefill = "disabled"
    # prefill max_bs and capture list (srt/server_args.py:3998-4030, 4265-4280 @0.5.16)
    pmax = a.get("cuda_graph_max_bs_prefill")
    if pmax is None:
        pmax = cps
        if a["max_total_tokens"] is not None:
            pmax = min(pmax, a["max_total_tokens"])
        if "llama-2" in str(a["model_path"]).lower():
            pmax = min(pmax, 4096)
    if ctx_flag is not None and rules.prefill_ctx_clamp:
        pmax = min(pmax, ctx_flag)
    tokens = a.get("cuda_graph_bs_prefill") or _piecewise_tokens(pmax)
    return decode != "disabled", prefill != "disabled", list(tokens)


def _generate_cuda_graph_batch_sizes(max_bs: int, spec_user: str | None, no_padding: bool,
                                     append_max: bool = True) -> list[int]:
    """srt/server_args.py:1497-1528 @0.5.11 (uses the *user's* speculative_algorithm); 0.5.9 does not
    append max_bs when the list misses it (srt/server_args.py:1079-1107 @0.5.9)."""
    if no_padding:
        bs = list(range(1, max_bs + 1))
    elif spec_user is None:
        bs = ([1, 2, 4, 8, 12] + list(range(16, 257, 8)) + list(range(272, 512, 16))
              + list(range(512, max_bs + 1, 32)))
    else:
        bs = (list(range(1, 9)) + list(range(10, 33, 2)) + list(range(40, 65, 4))
              + list(range(72, 257, 8)) + list(range(272, max_bs + 1, 16)))
    bs = [b for b in bs if b <= max_bs]
    if max_bs not in bs and append_max:
        bs.append(max_bs)
    return bs


def _piecewise_tokens(max_tokens: int) -> list[int]:
    """srt/server_args.py:1550-1568 @0.5.11."""
    sizes = (list(range(4, 33, 4)) + list(range(48, 257, 16)) + list(range(288, 513, 32))
             + list(range(576, 1025, 64)) + list(range(1280, 4097, 256))
             + list(range(4608, max_tokens + 1, 512)))
    return [s for s in sizes if s <= max_tokens]


def mamba_chunk_size(model: ModelSpec) -> int:
    """``getattr(hf_config, "mamba_chunk_size", FLA_CHUNK_SIZE)`` (srt/server_args.py:7394-7395 @0.5.13):
    NemotronH's config class sets it from ``chunk_size`` (default 256, srt/configs/nemotron_h.py:40,
    223-242 @0.5.13); the GDN configs have none, so 64."""
    raw = model.raw
    if "mamba_chunk_size" in raw:
        return int(raw["mamba_chunk_size"])
    if model.architecture == "NemotronHForCausalLM":
        return int(raw.get("chunk_size", 256))
    return FLA_CHUNK_SIZE


def vlm_factor(model: ModelSpec) -> float:
    """adjust_mem_fraction_for_vlm's factor (srt/server_args.py:7137-7173 @0.5.11).

    ``num_hidden_layers`` of the vision config, default 24 (Qwen3.5/3.6 configs say ``depth``,
    which SGLang does not read), ``hidden_size`` default 1024.
    """
    v = model.vision
    layers = v.num_hidden_layers if v and v.num_hidden_layers is not None else 24
    hidden = v.hidden_size if v and v.hidden_size is not None else 1024
    ratio = layers * hidden**2 / (24 * 1024**2)
    dyn = max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))
    return 0.95 * dyn


def normalize(raw: dict[str, Any], rules: Rules) -> dict[str, Any]:
    """Map a release's field names onto the names this pipeline reads (0.5.11's)."""
    a = dict(raw)
    a["mamba_scheduler_strategy"] = raw.get(rules.strategy_key, "auto")
    a["cuda_graph_max_bs"] = raw.get(rules.graph_max_bs_key)
    a["cuda_graph_bs"] = raw.get(rules.graph_bs_key)
    if "tensor_parallel_size" not in a:
        a["tensor_parallel_size"] = raw.get("tp_size", 1)
    for key in ("disable_piecewise_cuda_graph", "enforce_piecewise_cuda_graph", "enable_torch_compile",
                "enable_deterministic_inference", "enable_symm_mem", "debug_cuda_graph", "enable_eplb",
                "disable_cuda_graph", "disable_cuda_graph_padding", "language_only", "disable_prefill_cuda_graph",
                "disable_decode_cuda_graph"):
        a.setdefault(key, False)
    for key in ("piecewise_cuda_graph_max_tokens", "piecewise_cuda_graph_tokens", "expert_distribution_recorder_mode",
                "enable_multimodal", "cuda_graph_backend_prefill", "cuda_graph_backend_decode",
                "cuda_graph_max_bs_prefill", "cuda_graph_bs_prefill", "cpu_offload_gb"):
        a.setdefault(key, None)
    a.setdefault("moe_a2a_backend", "none")
    a.setdefault("swa_full_tokens_ratio", 0.8)
    # 0.5.20+: Optional with fallbacks (srt/arg_groups/fields/schedule.py:152-163, 203-210 @0.5.20)
    if a.get("swa_full_tokens_ratio") is None:
        a["swa_full_tokens_ratio"] = 0.8
    if a.get("mamba_full_memory_ratio") is None:
        a["mamba_full_memory_ratio"] = 0.9
    a.setdefault("linear_attn_backend", "triton")
    for key in ("linear_attn_decode_backend", "linear_attn_prefill_backend"):  # 0.5.10+ flags
        a.setdefault(key, None)
    return a


def resolve(raw: dict[str, Any], model: ModelSpec, dev: Device, env: dict[str, str],
            rules: Rules = RULES["0.5.11"]) -> ResolvedArgs:
    """Run the memory-relevant parts of ``ServerArgs.__post_init__`` and ``check_server_args``."""
    a = normalize(raw, rules)
    why: dict[str, str] = {}
    warn: list[str] = []
    arch = model.architecture
    tp = int(a["tensor_parallel_size"])
    spec_user = a["speculative_algorithm"]

    # ModelConfig._derive_context_length (srt/configs/model_config.py:452-482 @0.5.11)
    ctx = model.derived_context_len
    if a["context_length"] is not None:
        if a["context_length"] > ctx:
            msg = (f"Warning: User-specified context_length ({a['context_length']}) is greater than the derived "
                   f"context_length ({ctx}). This may lead to incorrect model outputs or CUDA errors. Note that "
                   "the derived context_length may differ from max_position_embeddings in the model's config.")
            if _env_bool(env, "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"):
                warn.append(msg)
                ctx = a["context_length"]
            else:
                raise Rejected("ValueError", msg + " To allow overriding this maximum, set the env var "
                               "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
                               "srt/configs/model_config.py:453-476 @0.5.11")
        else:
            ctx = a["context_length"]
    else:
        why["context_len"] = "derived from the model config (max_position_embeddings / rope scaling)"

    # ModelConfig.is_multimodal (srt/configs/model_config.py:184-228 @0.5.11)
    enable_mm = a.get("enable_multimodal")
    if enable_mm is None:
        enable_mm = arch not in MM_DISABLED_BY_DEFAULT
    is_mm = bool(enable_mm) and (arch in MULTIMODAL_ARCHS or "text_config" in model.raw)

    # 0.1 _handle_missing_default_values (srt/server_args.py:1060-1082 @0.5.11)
    if a["mamba_scheduler_strategy"] == "auto" and not rules.auto_extra_buffer:
        a["mamba_scheduler_strategy"] = "no_buffer"
        why["mamba_scheduler_strategy"] = "'auto' means no_buffer in 0.5.11 (server_args.py:1079-1082 @0.5.11)"

    # 0.2 _handle_piecewise_cuda_graph (srt/server_args.py:1194-1261 @0.5.11)
    pcg_off = bool(a["disable_piecewise_cuda_graph"])
    if rules.v0_5_9:  # opt-in, no auto-disable (srt/server_args.py:604, 703-798 @0.5.9)
        pcg_off = not a.get("enable_piecewise_cuda_graph", False)
    elif a["enforce_piecewise_cuda_graph"]:
        pcg_off = False
    else:
        if arch in PCG_DISABLED_ARCHS or is_mm or a["enable_torch_compile"]:
            pcg_off = True
        if rules.v0_5_10 and spec_user is not None:  # srt/server_args.py:1088-1090 @0.5.10
            pcg_off = True
        if a["enable_deterministic_inference"] or a["enable_symm_mem"] or (a["debug_cuda_graph"] and not rules.v0_5_10):
            pcg_off = True
        if a["moe_a2a_backend"] != "none" or a["load_format"] == "gguf" or a["quantization"] == "gguf":
            pcg_off = True
        if a["enable_eplb"] or a["expert_distribution_recorder_mode"] is not None:
            pcg_off = True

    # 0.3/0.4 _handle_gpu_memory_settings (srt/server_args.py:1294-1495 @0.5.11)
    gpu_mem = dev.total_mib
    cps, gmax = a["chunked_prefill_size"], a["cuda_graph_max_bs"]
    if gpu_mem < 20 * 1024:
        tier = (2048, 8)
    elif gpu_mem < 35 * 1024:
        if rules.v0_5_20:  # srt/arg_groups/memory_hook.py:101-117 @0.5.20
            tier = (4096, 48 if tp < 4 else 160)
        else:
            tier = (2048, 24 if tp < 4 else 80)
    elif gpu_mem < 60 * 1024:
        tier = (4096, 32 if tp < 4 else 160)
    elif gpu_mem < 160 * 1024:
        tier = (8192, 256 if tp < 4 else 512)
    else:
        tier = (16384, 512)
    if cps is None:
        cps = tier[0]
        why["chunked_prefill_size"] = f"GPU tier: nvidia-smi total {gpu_mem:.0f} MiB (server_args.py:1318-1381 @0.5.11)"
    if gmax is None:
        gmax = tier[1]
        why["cuda_graph_max_bs"] = f"GPU tier: nvidia-smi total {gpu_mem:.0f} MiB, tp={tp} (server_args.py:1318-1381 @0.5.11)"
        mrr_flag = a["max_running_requests"]
        if rules.v0_5_22 and mrr_flag is not None and gmax > mrr_flag:
            gmax = mrr_flag  # clipped to an explicit --max-running-requests (srt/arg_groups/memory_hook.py:182-188 @0.5.22)
            why["cuda_graph_max_bs"] = "clipped to --max-running-requests (srt/arg_groups/memory_hook.py:182-188 @0.5.22)"
    if a["cuda_graph_bs"] is None:
        graph_bs = _generate_cuda_graph_batch_sizes(gmax, spec_user, a["disable_cuda_graph_padding"],
                                                    append_max=not rules.v0_5_9)
    else:
        graph_bs = list(a["cuda_graph_bs"])
        gmax = max(graph_bs)
    pcg_max = a["piecewise_cuda_graph_max_tokens"]
    if pcg_max is None and rules.v0_5_9:
        pcg_max = cps  # non-MLA, no other cap (srt/server_args.py:1006-1013 @0.5.9)
    elif pcg_max is None:
        pcg_max = cps  # non-MLA (srt/server_args.py:1400-1418 @0.5.11)
        if a["max_total_tokens"] is not None:
            pcg_max = min(pcg_max, a["max_total_tokens"])
        if "llama-2" in str(a["model_path"]).lower():
            pcg_max = min(pcg_max, 4096)
    if rules.pcg_ctx_clamp and a["context_length"] is not None:  # srt/server_args.py:1579-1585 @0.5.13
        pcg_max = min(pcg_max, a["context_length"])
    pcg_tokens = a["piecewise_cuda_graph_tokens"] or _piecewise_tokens(pcg_max)

    decode_graph_on = not a["disable_cuda_graph"]
    prefill_graph_on = not pcg_off
    if rules.cuda_graph_config:
        decode_graph_on, prefill_graph_on, pcg_tokens = _cuda_graph_config_v0_5_16(a, arch, is_mm, cps,
                                                                                   ctx_flag=a["context_length"], rules=rules)

    mfs = a["mem_fraction_static"]
    mfs_user = mfs is not None
    if mfs is None:
        # _handle_gpu_memory_settings (srt/server_args.py:1434-1482 @0.5.11; 4040-4090 and
        # reserve_for_graph_mb 4164-4190 @0.5.16). The terms are whole or half MiB, so their float
        # sum does not depend on the order the two releases add them in.
        reserved = 512.0 + max(cps if cps > 0 else a["max_prefill_tokens"], 2048) * 1.5
        reserved += tp * 1 / 8 * 1024  # tp_size * pp_size / 8 * 1024 (pp=1)
        # 0.5.11-0.5.14 count it even with graphs disabled (srt/server_args.py:3285 @0.5.14)
        if decode_graph_on or rules.decode_term_always:
            reserved += gmax * 2
        if prefill_graph_on:
            reserved += len(pcg_tokens) * 8
        if gpu_mem > 60 * 1024:
            reserved = max(reserved, 10 * 1024)
        if spec_user is not None and not rules.cuda_graph_config:  # no speculative term since 0.5.14
            if spec_user == "STANDALONE":
                reserved += 6 * 1024
            elif spec_user != "NGRAM":  # 2 GiB in 0.5.9 (srt/server_args.py:1051-1057 @0.5.9)
                reserved += (2 if rules.v0_5_9 else 4) * 1024
        mfs = round((gpu_mem - reserved) / gpu_mem, 3)
        why["mem_fraction_static"] = (
            f"round((total {gpu_mem:.0f} MiB - reserved {reserved:g} MiB) / total, 3) = {mfs}"
            f" (_handle_gpu_memory_settings @{rules.version})")
        if is_mm and not a["language_only"] and model.raw.get("vision_config") is not None:
            f = vlm_factor(model)
            mfs = mfs * f
            why["mem_fraction_static"] += f" x multimodal ViT factor {f!r} (server_args.py:7137-7173 @0.5.11)"

    # 0.5 _handle_model_specific_adjustments -> _handle_mamba_radix_cache
    # (srt/server_args.py:2143-2241, 2366-2456 @0.5.11)
    page = a["page_size"]
    attn = a["attention_backend"]
    if a["prefill_attention_backend"] is not None and a["prefill_attention_backend"] == a["decode_attention_backend"]:
        attn = a["prefill_attention_backend"]
    radix_off = bool(a["disable_radix_cache"])
    overlap_off = bool(a["disable_overlap_schedule"])
    strat = a["mamba_scheduler_strategy"]
    extra = strat == "extra_buffer" or (rules.mamba_v0_5_13 and strat == "extra_buffer_lazy")

    def default_attn(page_now: int | None) -> str:
        # _get_default_attn_backend, MHA branch (srt/server_args.py:2464-2520 @0.5.11)
        topk = a["speculative_eagle_topk"]
        no_spec_or_topk1 = topk is None or (topk == 1 and page_now in (1, None))
        if dev.hopper_cuda_12_3 and no_spec_or_topk1:
            return "fa3"
        if dev.sm100 and no_spec_or_topk1 and (spec_user is None or topk is not None):
            if rules.asym_kv_fa4 and model.head_dim != model.v_head_dim:
                return "fa4"  # srt/server_args.py:5697-5701 @0.5.17
            return "trtllm_mha"
        return "flashinfer"

    def mamba_radix_v0_5_16() -> None:
        """_mamba_radix_cache_resolution + validations (srt/arg_groups/overrides.py:1159-1200,
        srt/server_args.py:4822-4864 @0.5.16)."""
        nonlocal overlap_off
        strategy = a["mamba_scheduler_strategy"]
        if radix_off:
            return
        supports = arch in MAMBA_EXTRA_BUFFER_ARCHS_V0_5_16 and a["linear_attn_backend"] == "triton"
        if strategy == "auto":
            if (not overlap_off or (page is not None and page > 1)) and supports:
                strategy = "extra_buffer"
            else:
                strategy = "no_buffer"
                overlap_off = True
                why["disable_overlap_schedule"] = "auto resolved to no_buffer, which turns overlap off (overrides.py:1190-1199 @0.5.16)"
            why["mamba_scheduler_strategy"] = (f"'auto' -> {strategy}: overlap {'off' if overlap_off else 'on'}, "
                                               f"page {page} (overrides.py:1190-1199 @0.5.16)")
        a["mamba_scheduler_strategy"] = strategy
        rule = "srt/server_args.py:4822-4864 @0.5.16"
        if strategy in ("extra_buffer", "extra_buffer_lazy"):
            if not supports:
                raise Rejected("AssertionError", f"extra_buffer is not supported for {arch}; use no_buffer.", rule)
            d = a["speculative_num_draft_tokens"]
            if d is not None:
                if strategy == "extra_buffer_lazy" and not rules.lazy_with_spec:  # allowed from 0.5.17
                    raise Rejected("AssertionError", "extra_buffer_lazy unsupported with spec.", rule)
                if not a["mamba_track_interval"] >= d:
                    raise Rejected("AssertionError", "", rule)
            if page is not None and a["mamba_track_interval"] % page != 0:
                raise Rejected("AssertionError", "", rule)
        else:
            if page not in (1, None):
                raise Rejected("AssertionError", "no_buffer only supports page_size=1.", rule)
            if not overlap_off:
                raise Rejected("AssertionError", "no_buffer do not support overlap schedule. Try to set "
                               "disable_overlap_schedule=True.", rule)
            if attn == "trtllm_mha":
                raise Rejected("AssertionError", "no_buffer do not support trtllm_mha attention backend.", rule)

    def mamba_radix(support_extra: bool, sm100_default: str | None) -> None:
        nonlocal attn, page, radix_off, overlap_off
        sm100_set = dev.sm100 and attn is None and sm100_default is not None
        if sm100_set:
            attn = sm100_default
        if rules.auto_extra_buffer:
            if sm100_set and arch in ("Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration",
                                      "Qwen3_5ForConditionalGeneration"):
                # _qwen3_5_hybrid_overrides sets the page size too, over the user's
                # (srt/arg_groups/overrides.py:937-960 @0.5.16)
                page = 64 if sm100_default == "trtllm_mha" else 1
                why["page_size"] = f"SM100 {sm100_default} default for {arch} (overrides.py:937-960 @0.5.16)"
            mamba_radix_v0_5_16()
            return
        if not support_extra and extra:
            raise Rejected("AssertionError", f"mamba extra_buffer is not supported for {arch} model",
                           "srt/server_args.py:2389-2391 @0.5.11")
        if rules.v0_5_10 and a["linear_attn_decode_backend"] == "flashinfer" and strat == "no_buffer":
            raise Rejected("ValueError", "FlashInfer GDN decode (--linear-attn-decode-backend flashinfer) is not "
                           "compatible with --mamba-scheduler-strategy no_buffer. Please use "
                           "--mamba-scheduler-strategy extra_buffer instead. See "
                           "https://github.com/sgl-project/sglang/issues/20791", "srt/server_args.py:2152-2163 @0.5.10")
        if extra:
            if radix_off and not rules.v0_5_9:  # 0.5.9 accepts it (srt/server_args.py:1728-1745 @0.5.9)
                raise Rejected("ValueError",
                               "mamba extra_buffer is not compatible with --disable-radix-cache"
                               + ("." if rules.mamba_v0_5_13 else "") + " "
                               "Overlap scheduling is already supported with no_buffer + disable_radix_cache. "
                               "Please use --mamba-scheduler-strategy no_buffer instead.",
                               "srt/server_args.py:2393-2399 @0.5.11, :2697-2702 @0.5.13")
            d = a["speculative_num_draft_tokens"]
            interval = a["mamba_track_interval"]
            if d is not None and strat == "extra_buffer_lazy":
                raise Rejected("AssertionError", "extra_buffer_lazy is not yet supported with speculative decoding. "
                               "Use --mamba-scheduler-strategy extra_buffer instead.", "srt/server_args.py:2707-2711 @0.5.13")
            if d is not None and not interval >= d:
                raise Rejected("AssertionError", f"mamba_track_interval {interval} must be greater than or "
                               f"equal to speculative_num_draft_tokens {d}", "srt/server_args.py:2404-2407 @0.5.11")
            if page is not None:
                if interval % page != 0:
                    raise Rejected("AssertionError", f"mamba_track_interval {interval} must be divisible by "
                                   f"page_size {page}", "srt/server_args.py:2409-2412 @0.5.11")
                if rules.mamba_v0_5_13:
                    # mamba_cache_chunk_size (srt/server_args.py:7389-7400 @0.5.13)
                    chunk = mamba_chunk_size(model)
                    if max(chunk, page) % min(chunk, page) != 0:
                        raise Rejected("AssertionError", "For SSM models, either chunk_size or page_size must be "
                                       f"divisible by the other, got chunk_size={chunk}, self.page_size={page}",
                                       "srt/server_args.py:7389-7400 @0.5.13")
                elif max(FLA_CHUNK_SIZE, page) % min(FLA_CHUNK_SIZE, page) != 0:
                    raise Rejected("AssertionError", "For SSM models with extra buffer, either FLA_CHUNK_SIZE or "
                                   f"page_size must be divisible by the other, got FLA_CHUNK_SIZE={FLA_CHUNK_SIZE}, "
                                   f"self.page_size={page}", "srt/server_args.py:2413-2418 @0.5.11")
        elif not radix_off:  # no_buffer
            if page is not None and page != 1 and not rules.v0_5_10:  # 0.5.10 keeps it (asserted at scheduler start)
                warn.append(f"{arch} with radix cache requires page_size=1 in no_buffer mode; page_size set to 1")
                page = 1
                why["page_size"] = "no_buffer + radix cache forces page_size=1 (server_args.py:2420-2426 @0.5.11)"
            if spec_user is None:
                overlap_off = True
                why["disable_overlap_schedule"] = ("mamba no_buffer + radix cache disables the overlap "
                                                   "schedule (server_args.py:2427-2432 @0.5.11)")
                if attn == "trtllm_mha":
                    radix_off = True
                    overlap_off = False
                    why["disable_radix_cache"] = "trtllm_mha cannot use page_size=1 (server_args.py:2433-2440 @0.5.11)"
            elif rules.v0_5_9:  # srt/server_args.py:1760-1764 @0.5.9
                warn.append(f"Disabling radix cache since speculative decoding for {arch} is not supported with "
                            "radix cache yet.")
                radix_off = True
                why["disable_radix_cache"] = ("speculative decoding with no_buffer turns the radix cache off "
                                              "(server_args.py:1760-1764 @0.5.9)")
            else:
                raise Rejected("ValueError",
                               f"Speculative decoding for {arch} is not compatible with radix cache when using "
                               "--mamba-scheduler-strategy no_buffer.To use radix cache with speculative decoding, "
                               "please use --mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1.",
                               "srt/server_args.py:2452-2456 @0.5.11")

    if arch == "NemotronHForCausalLM" and rules.blackwell_v0_5_19:
        # srt/arg_groups/model_overrides/nemotron_h.py:97-123 @0.5.19; the triton assert is gone
        topk_u = a["speculative_eagle_topk"]
        if dev.blackwell and attn is None and a["prefill_attention_backend"] is None \
                and a["decode_attention_backend"] is None:
            if spec_user is not None:
                if dev.sm100 and topk_u in (None, 1):
                    attn = "trtllm_mha"
                    if page is None:
                        page = 64
                    if a["mamba_scheduler_strategy"] == "auto":
                        a["mamba_scheduler_strategy"] = "extra_buffer"
                else:
                    attn = "triton"
            elif dev.sm100:
                attn = "trtllm_mha"
            why["attention_backend"] = f"NemotronH Blackwell default (model_overrides/nemotron_h.py:97-123 @0.5.19)"
        mamba_radix(True, None)
    elif arch == "NemotronHForCausalLM":
        mamba_radix(rules.mamba_v0_5_13, "flashinfer")  # srt/arg_groups/nemotron_h_hook.py:58-62 @0.5.13
        if attn == "triton":
            raise Rejected("AssertionError", "NemotronHForCausalLM does not support triton attention backend,"
                           "as the first layer might not be an attention layer", "srt/server_args.py:2178-2182 @0.5.11")
    elif arch in ("Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration"):
        sm100_default = "triton"
        if dev.sm100 and not rules.v0_5_9:  # 0.5.9: always triton (srt/server_args.py:1579-1605 @0.5.9)
            if default_attn(page) == "trtllm_mha" and not (not extra and not radix_off and spec_user is None):
                sm100_default = "trtllm_mha"
        mamba_radix(True, sm100_default)
    elif arch == "FalconH1ForCausalLM":
        mamba_radix(False, "triton")
    elif rules.strategy_needs_mamba and not radix_off and a["mamba_scheduler_strategy"] in ("extra_buffer",
                                                                                         "extra_buffer_lazy"):
        raise Rejected("ValueError", f"--mamba-radix-cache-strategy {a['mamba_scheduler_strategy']} needs mamba "
                       f"state, got {arch}.", "srt/arg_groups/model_hook.py:947-954 @0.5.21")

    # 0.6 _handle_attention_backend_compatibility (srt/server_args.py:2533-2734 @0.5.11)
    if attn is None:
        attn = default_attn(page)
        why["attention_backend"] = f"default for SM{dev.sm_major}{dev.sm_minor} (server_args.py:2464-2545 @0.5.11)"
    disable_graph = not decode_graph_on
    if attn == "torch_native":
        disable_graph = True
    if attn == "trtllm_mha" or a["decode_attention_backend"] == "trtllm_mha" or a["prefill_attention_backend"] == "trtllm_mha":
        prefill = a["prefill_attention_backend"] or attn
        decode = a["decode_attention_backend"] or attn
        if rules.v0_5_9:  # srt/server_args.py:1894-1908 @0.5.9
            if not dev.sm100:
                raise Rejected("ValueError", "TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). Please "
                               "use a different backend.", "srt/server_args.py:1894-1908 @0.5.9")
        elif rules.blackwell_v0_5_19:  # srt/arg_groups/attention_hook.py:131-157 @0.5.19
            if prefill == "trtllm_mha" and not (dev.sm90 or dev.sm100 or dev.sm120):
                raise Rejected("ValueError", "TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), "
                               "or SM120 GPUs. Please use a different prefill backend.",
                               "srt/arg_groups/attention_hook.py:131-157 @0.5.19")
            if prefill == "trtllm_mha" and dev.sm120 and a["kv_cache_dtype"] == "fp8_e4m3":
                raise Rejected("ValueError", "TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache or "
                               "skip-softmax.", "srt/arg_groups/attention_hook.py:131-157 @0.5.19")
        elif prefill == "trtllm_mha" and not dev.sm100 and not rules.v0_5_9:
            raise Rejected("ValueError", "TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100). "
                           "Please use a different prefill backend.", "srt/server_args.py:2629-2632 @0.5.11")
        if decode == "trtllm_mha" and not (dev.sm90 or dev.sm100 or dev.sm120) and not rules.v0_5_9:
            raise Rejected("ValueError", "TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell "
                           "(SM100) and (SM120) GPUs. Please use a different decode backend.",
                           "srt/server_args.py:2640-2645 @0.5.11")
        if page not in ((16, 32, 64, 128) if rules.trtllm_page128 else (16, 32, 64)):
            page = 64
            why["page_size"] = "trtllm_mha supports 16/32/64 only, so 64 (server_args.py:2647-2651 @0.5.11)"
    if attn == "fa3" and a["kv_cache_dtype"] == "fp8_e5m2":
        attn = "triton"
    fa4_roles = (attn, a["decode_attention_backend"], a["prefill_attention_backend"]) if rules.fa4_page_any \
        else (a["prefill_attention_backend"],)
    fa4_topk_ok = not rules.fa4_page_any or (a["speculative_eagle_topk"] or 0) <= 1
    if "fa4" in fa4_roles and (dev.sm100 or rules.v0_5_9) and fa4_topk_ok:  # 0.5.9: no SM100 check (:1917-1921)  # _fa4_page_constraint (overrides.py:1675-1693 @0.5.15)
        page = 128
        why["page_size"] = "fa4 prefill on SM100 needs page_size 128 (server_args.py:2661-2669 @0.5.11)"

    if rules.checks_v0_5_17:
        # _handle_mamba_backend (srt/server_args.py:5951-5959 @0.5.17), for every model
        mmsp = a.get("mamba_max_states_per_path", -1)
        if mmsp == 0 or mmsp < -1:
            raise Rejected("ValueError", "--mamba-max-states-per-path must be -1 (unlimited) or a positive "
                           f"integer, got {mmsp}.", "srt/server_args.py:5955-5959 @0.5.17")

    # 0.7 _handle_linear_attn_backend (srt/server_args.py:2855-2888 @0.5.11)
    lin_decode = a["linear_attn_decode_backend"]
    if lin_decode is None and dev.sm100 and a["mamba_ssm_dtype"] == "bfloat16" and spec_user is None \
            and not rules.v0_5_10:  # the auto default is new in 0.5.11 (srt/server_args.py:2864-2874 @0.5.11)
        lin_decode = "flashinfer"
    if (lin_decode or a["linear_attn_backend"]) == "flashinfer" and a["mamba_ssm_dtype"] != "bfloat16" \
            and dev.sm_major >= 10:
        raise Rejected("ValueError", "--linear-attn-decode-backend flashinfer on SM100+ requires "
                       f"--mamba-ssm-dtype bfloat16, got {a['mamba_ssm_dtype']!r}",
                       "srt/server_args.py:2876-2888 @0.5.11")
    if rules.replayssm and (a.get("enable_linear_replayssm") or a.get("enable_linear_replayssm_spec")):
        _replayssm_checks(a, lin_decode or a["linear_attn_backend"], radix_off, a["mamba_scheduler_strategy"], model)
    if rules.checks_v0_5_17:  # srt/server_args.py:6083-6096 @0.5.17
        verify = a.get("linear_attn_verify_backend")
        if verify is None and (lin_decode or a["linear_attn_backend"]) == "flashinfer":
            verify = "flashinfer"
        if verify == "flashinfer" and a["mamba_ssm_dtype"] != "bfloat16" and dev.sm_major >= 10:
            raise Rejected("ValueError", "--linear-attn-verify-backend flashinfer on SM100+ requires "
                           f"--mamba-ssm-dtype bfloat16, got {a['mamba_ssm_dtype']!r}",
                           "srt/server_args.py:6083-6096 @0.5.17")

    # 0.8 _handle_page_size (srt/server_args.py:2815-2820 @0.5.11)
    if page is None:
        page = 1
        why.setdefault("page_size", "default 1 (server_args.py:2815-2820 @0.5.11)")

    # 0.9 _handle_speculative_decoding (srt/server_args.py:3286-3630 @0.5.11)
    algo = spec_user
    if rules.spec_algo_registry and algo is not None:
        # 0.5.12+: a free string, upper-cased, looked up in a registry
        # (srt/arg_groups/speculative_hook.py:80-121, srt/speculative/spec_info.py:47-60 @0.5.16)
        algo = algo.upper()
        if algo not in ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK"):
            raise Rejected("ValueError", f"Unknown speculative algorithm name: {spec_user}",
                           "srt/speculative/spec_info.py:47-60 @0.5.16")
    steps, topk, ndraft = a["speculative_num_steps"], a["speculative_eagle_topk"], a["speculative_num_draft_tokens"]
    mrr = a["max_running_requests"]
    mrr_user = mrr is not None
    if algo == "NEXTN":
        algo = "EAGLE"
        why["speculative_algorithm"] = "NEXTN is an alias of EAGLE (server_args.py:3310-3311 @0.5.11)"
    if algo in ("EAGLE", "EAGLE3", "STANDALONE"):
        if mrr is None:
            mrr = 48
            why["max_running_requests"] = ("reset to 48 for speculative decoding (server_args.py:3454-3458 @0.5.11); "
                                           "it also sizes the speculative reservation")
        if not rules.spec_v2_env:
            pass  # 0.5.14+: overlap is kept (srt/arg_groups/speculative_hook.py:495-520 @0.5.16)
        elif rules.v0_5_10:
            # SGLANG_ENABLE_SPEC_V2 (default False, srt/environ.py:442 @0.5.10) forces overlap on or off
            # (srt/server_args.py:2999-3019 @0.5.10)
            if _env_bool(env, "SGLANG_ENABLE_SPEC_V2", default=False):
                overlap_off = False
                why["disable_overlap_schedule"] = "SGLANG_ENABLE_SPEC_V2 turns overlap on (server_args.py:2999-3004 @0.5.10)"
                if topk is not None and topk > 1:
                    raise Rejected("ValueError", "Spec v2 currently only supports topk = 1 for speculative decoding.",
                                   "srt/server_args.py:3005-3012 @0.5.10")
            else:
                overlap_off = True
                why["disable_overlap_schedule"] = ("spec v2 is off by default in 0.5.10, so no overlap schedule "
                                                   "(server_args.py:3013-3019 @0.5.10)")
        elif rules.spec_topk_disables_overlap and topk is not None and topk > 1 and not overlap_off:
            overlap_off = True
            why["disable_overlap_schedule"] = "spec v2 only supports topk = 1, so spec v1 (server_args.py:3461-3467 @0.5.11)"
        elif not _env_bool(env, "SGLANG_ENABLE_SPEC_V2", default=True) and not overlap_off:
            overlap_off = True
            why["disable_overlap_schedule"] = "SGLANG_ENABLE_SPEC_V2=False, so spec v1 (server_args.py:3468-3473 @0.5.11)"
        if steps is None:
            if not (topk is None and ndraft is None):
                raise Rejected("AssertionError", "", "srt/server_args.py:3518-3522 @0.5.11")
            steps, topk, ndraft = (5, 4, 8) if arch == "LlamaForCausalLM" else (3, 1, 4)
            why["speculative_num_steps"] = f"auto_choose_speculative_params -> ({steps}, {topk}, {ndraft}) " \
                                           "(server_args.py:7471-7506 @0.5.11)"
        if topk is None:
            # --speculative-num-steps given without --speculative-eagle-topk: SGLang's own
            # `speculative_eagle_topk > 1` comparison raises (srt/server_args.py:3548-3550 @0.5.11,
            # srt/arg_groups/speculative_hook.py:639-642 @0.5.16)
            raise Rejected("TypeError", "'>' not supported between instances of 'NoneType' and 'int'",
                           "srt/server_args.py:3548-3550 @0.5.11")
        if attn == "trtllm_mha" or a["decode_attention_backend"] == "trtllm_mha" \
                or a["prefill_attention_backend"] == "trtllm_mha":
            if topk > 1:
                raise Rejected("ValueError", "trtllm_mha backend only supports topk = 1 for speculative decoding.",
                               "srt/server_args.py:3529-3537 @0.5.11")
        if topk == 1 and ndraft != steps + 1:
            ndraft = steps + 1
            why["speculative_num_draft_tokens"] = ("speculative_num_steps + 1 when topk == 1 "
                                                   "(server_args.py:3539-3546 @0.5.11)")
        if rules.page_tree_triton:
            if topk > 1 and page > 1 and attn not in ("flashinfer", "fa3", "triton"):
                raise Rejected("ValueError", "speculative_eagle_topk > 1 with page_size > 1 is only supported on "
                               f"('flashinfer', 'fa3', 'triton'); got attention_backend={attn!r}. Use page_size == 1 "
                               "or one of those backends.", "srt/arg_groups/speculative_hook.py:376-386 @0.5.13")
        elif topk > 1 and page > 1 and attn not in ("flashinfer", "fa3"):
            raise Rejected("ValueError", "speculative_eagle_topk > 1 with page_size > 1 is unstable and produces "
                           "incorrect results for paged attention backends. This combination is only supported "
                           "for the 'flashinfer' backend.", "srt/server_args.py:3548-3555 @0.5.11")

    if a.get("enable_int8_mamba_checkpoint") and a.get("radix_cache_backend") is not None:
        # srt/arg_groups/mamba_hook.py:78-96 @0.5.19
        raise Rejected("ValueError", "--enable-int8-mamba-checkpoint only supports the built-in mamba radix cache; "
                       f"--radix-cache-backend={a['radix_cache_backend']!r} is not int8-aware. Omit "
                       "--radix-cache-backend.", "srt/arg_groups/mamba_hook.py:78-96 @0.5.19")
    if rules.language_model_only_check and a.get("language_model_only"):
        # _handle_language_model_only (srt/server_args.py:7657-7686 @0.5.18)
        raise Rejected("ValueError", f"--language-model-only does not support {[arch]}. Supported: "
                       "['MuseGlimmerForConditionalGeneration'].", "srt/server_args.py:7657-7686 @0.5.18")

    # 0.10 _handle_environment_variables (srt/server_args.py:3922-3926 @0.5.11)
    env = dict(env)
    if a["mamba_ssm_dtype"] is not None:
        env["SGLANG_MAMBA_SSM_DTYPE"] = a["mamba_ssm_dtype"]

    # _handle_cache_compatibility (srt/server_args.py:3946-3964 @0.5.11)
    if not (0 < a["swa_full_tokens_ratio"] <= 1.0):
        raise Rejected("ValueError", "--swa-full-tokens-ratio should be in range (0, 1.0].",
                       "srt/server_args.py:3963-3964 @0.5.11")

    unified = False
    if rules.cuda_graph_config and (a.get("enable_unified_memory") or a.get("enable_page_major_kv_layout")):
        unified = _unified_memory_checks(a, attn, algo, rules, model)

    # check_server_args (srt/server_args.py:6773-6830 @0.5.11)
    if cps > 0 and cps % page != 0:
        raise Rejected("AssertionError", "chunked_prefill_size must be divisible by page_size",
                       "srt/server_args.py:6823-6826 @0.5.11")

    return ResolvedArgs(
        raw=raw, tp_size=tp, mem_fraction_static=mfs, mem_fraction_static_user=mfs_user,
        chunked_prefill_size=cps, max_prefill_tokens=a["max_prefill_tokens"], cuda_graph_max_bs=gmax,
        cuda_graph_bs=graph_bs, disable_cuda_graph=disable_graph, page_size=page, attention_backend=attn,
        mamba_scheduler_strategy=a["mamba_scheduler_strategy"], disable_radix_cache=radix_off,
        disable_overlap_schedule=overlap_off, speculative_algorithm=algo, speculative_num_steps=steps,
        speculative_eagle_topk=topk, speculative_num_draft_tokens=ndraft,
        speculative_draft_model_path=a["speculative_draft_model_path"], max_running_requests=mrr,
        max_running_requests_user=mrr_user, max_mamba_cache_size=a["max_mamba_cache_size"],
        mamba_full_memory_ratio=a["mamba_full_memory_ratio"], mamba_ssm_dtype_flag=a["mamba_ssm_dtype"],
        max_total_tokens=a["max_total_tokens"], kv_cache_dtype=a["kv_cache_dtype"], context_len=ctx,
        is_multimodal=is_mm, disable_piecewise_cuda_graph=pcg_off, piecewise_cuda_graph_tokens=pcg_tokens,
        env=env, rules=rules, defaulted=why, warnings=warn, unified_memory=unified,
    )


def _replayssm_checks(a: dict[str, Any], decode: str, radix_off: bool, strat: str, model: ModelSpec) -> None:
    """ReplaySSM validation (srt/arg_groups/attention_hook.py:342-460 @0.5.19; srt/server_args.py:6172-6245 @0.5.17)."""
    rule = "srt/arg_groups/attention_hook.py:342-460 @0.5.19"
    if model.hybrid != "gdn":
        raise _NotModelled("--enable-linear-replayssm[-spec]: modelled for GDN models (Qwen3.5/3.6, Qwen3-Next) only")
    if a.get("enable_linear_replayssm"):
        if decode not in ("triton", "helion"):
            raise Rejected("ValueError", "--enable-linear-replayssm requires Triton, or Helion for KDA, as the "
                           f"linear-attn decode backend; got --linear-attn-decode-backend={decode!r}.", rule)
        if not radix_off and strat in ("extra_buffer", "extra_buffer_lazy"):
            raise Rejected("ValueError", "--enable-linear-replayssm requires --mamba-radix-cache-strategy no_buffer "
                           "(the default); the extra_buffer ping-pong donation path is not yet supported (follow-up). "
                           f"Got --mamba-radix-cache-strategy={strat!r}.", rule)
        if a.get("linear_replayssm_cache_len", 16) < 1:
            raise Rejected("ValueError", "--linear-replayssm-cache-len must be >= 1, got "
                           f"{a['linear_replayssm_cache_len']}.", rule)
    if a.get("enable_linear_replayssm_spec"):
        topk = a["speculative_eagle_topk"]
        if topk not in (None, 1):
            raise Rejected("ValueError", "--enable-linear-replayssm-spec requires a linear draft chain "
                           "(--speculative-eagle-topk in {None, 1}); the chunked verify kernel uses a strictly-lower "
                           f"causal mask and is invalid for EAGLE tree verify. Got --speculative-eagle-topk={topk!r}.", rule)
        if decode not in ("triton", "flashinfer"):
            raise Rejected("ValueError", "--enable-linear-replayssm-spec requires the triton or flashinfer "
                           f"linear-attn decode backend, got --linear-attn-decode-backend={decode!r}.", rule)
        if a.get("enable_linear_replayssm"):
            raise Rejected("ValueError", "--enable-linear-replayssm-spec and --enable-linear-replayssm are mutually "
                           "exclusive: they share the ring storage but drive it with incompatible cursor protocols "
                           "(per-decode-forward vs per-verify-commit advance).", rule)
        if a["mamba_ssm_dtype"] is None:  # the verify ring folds in float32 (attention_hook.py:439-450 @0.5.19)
            a["mamba_ssm_dtype"] = "float32"


def _unified_memory_checks(a: dict[str, Any], attn: str, algo: str | None, rules: Rules, model: ModelSpec) -> bool:
    """_handle_page_major_kv_layout then _handle_unified_memory_pool, per release. True when the launch runs
    with the unified pool the planner models (a hybrid mamba model, no speculative decoding); a launch SGLang
    accepts outside that is refused as not modelled."""
    mode = rules.unified_mode
    unified = bool(a.get("enable_unified_memory"))
    if mode in ("v0_5_19", "v0_5_22"):
        if not unified:  # srt/arg_groups/kv_cache_hook.py:297-303 @0.5.19
            raise Rejected("AssertionError", "--enable-page-major-kv-layout without --enable-unified-memory is "
                           "temporarily unsupported: the strided MHA K/V views were removed and the static-pool "
                           "page-major layout awaits its per-layer-view reimplementation. Run with "
                           "--enable-unified-memory, or drop --enable-page-major-kv-layout.",
                           "srt/arg_groups/kv_cache_hook.py:297-303 @0.5.19")
    else:
        backends = {b for b in (a["prefill_attention_backend"] or attn, a["decode_attention_backend"] or attn) if b}
        if not backends <= {"triton"}:
            if mode == "v0_5_15":  # srt/server_args.py:6866-6876 @0.5.16
                msg = ("--enable-page-major-kv-layout requires the Triton attention backend for the full-attention "
                       f"layers; got {sorted(backends)}. Pass --attention-backend triton.")
            else:  # srt/server_args.py:8364-8402 @0.5.18
                msg = ("--enable-page-major-kv-layout requires the Triton attention backend for the full-attention "
                       "layers (unified-memory MLA also allows the paged MLA backends); got "
                       f"{sorted(backends)}, allowed ['triton']. Pass a compatible --attention-backend.")
            raise Rejected("AssertionError", msg, "srt/server_args.py:6866-6876 @0.5.16, :8397-8402 @0.5.18")
    if unified and algo is not None:
        if mode in ("v0_5_15", "v0_5_17"):
            raise Rejected("AssertionError", "--enable-unified-memory is not yet compatible with speculative "
                           "decoding.", "srt/server_args.py:6829-6832 @0.5.16")
        if mode in ("v0_5_18", "v0_5_19") and algo != "DSPARK":
            tail = ("virtual/dense loc translation" if mode == "v0_5_18"
                    else "virtual/kernel-facing loc translation")
            raise Rejected("AssertionError", "--enable-unified-memory only supports --speculative-algorithm DSPARK "
                           "(chain draft); other speculative algorithms are not yet audited for the unified pool's "
                           f"{tail}. Got --speculative-algorithm={algo!r}.",
                           "srt/server_args.py:8313-8318 @0.5.18, srt/arg_groups/kv_cache_hook.py:224-229 @0.5.19")
    if unified and mode == "v0_5_19" and not rules.v0_5_20 and a.get("cuda_graph_backend_prefill") not in (None, "disabled"):
        # 0.5.19: prefill capture is not wired for the unified pool (srt/arg_groups/kv_cache_hook.py:265-283 @0.5.19)
        raise Rejected("ValueError", "--enable-unified-memory supports decode cuda-graph capture only; prefill capture "
                       "is not wired (the prefill graph runner bypasses the unified virtual->physical loc rebind). Got "
                       f"--cuda-graph-backend-prefill={a['cuda_graph_backend_prefill']!r}; pass "
                       "--cuda-graph-backend-prefill=disabled.", "srt/arg_groups/kv_cache_hook.py:265-283 @0.5.19")
    modelled = (unified and algo is None and model.is_mambaish and model.head_dim == model.v_head_dim
                and not a.get("enable_int8_mamba_checkpoint")
                and a.get("cuda_graph_backend_prefill") != "tc_piecewise")
    if not modelled:
        raise _NotModelled("--enable-unified-memory / --enable-page-major-kv-layout: SGLang accepts this, but it is "
                           "not modelled by this planner yet (the unified pool is, for hybrid mamba models without "
                           "speculative decoding; the page-major layout on its own is not)")
    return True


def _env_bool(env: dict[str, str], key: str, default: bool = False) -> bool:
    """EnvBool.parse (srt/environ.py:119-126 @0.5.11): true/1/yes/y or false/0/no/n, any case.

    Any other value makes SGLang raise ValueError at the first read; we raise Rejected likewise.
    """
    if key not in env:
        return default
    value = env[key].lower()
    if value in ("true", "1", "yes", "y"):
        return True
    if value in ("false", "0", "no", "n"):
        return False
    raise Rejected("ValueError", f'"{value}" is not a valid boolean value', "srt/environ.py:119-126 @0.5.11")
