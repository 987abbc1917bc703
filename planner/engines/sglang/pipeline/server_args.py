"""ServerArgs for the pipeline: the fields, the device, the errors, scope and value checks, and normalization.

The resolution itself (``ServerArgs.__post_init__``, hook by hook) is :mod:`.arg_groups`; this module holds
what every hook shares: :class:`ArgState` (the ServerArgs being resolved), :class:`ResolvedArgs` (the
result), :class:`Device`, :class:`Rejected`, and the architecture lists SGLang keys on. Every function cites
the lines it reproduces. Scope: CUDA
GPUs, no DP attention, no pipeline parallelism, no PD disaggregation, no LoRA; flags outside that
scope are refused by :func:`check_scope` with a clear message rather than mis-modelled.
"""

from __future__ import annotations

from functools import lru_cache

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
    # a ROCm device (pipeline/rocm.py): torch.version.hip set, torch.version.cuda None, so no is_sm*_supported
    # holds; total_mib is then rocminfo's 'Pool 1' size (get_amdgpu_memory_capacity)
    hip: bool = False

    def _cuda(self, major: int, minor: int) -> bool:
        return not self.hip and self.cuda_version >= (major, minor)

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
    dflash_draft_backend: str | None = None  # DFLASH: the draft worker's attention backend, resolved
    # the prefill CUDA graph (piecewise / breakable) is captured: 0.5.10-0.5.13 the piecewise switch, 0.5.14+ the
    # CudaGraphConfig's prefill backend (pipeline/arg_groups/cuda_graph_hook.py)
    prefill_graph_on: bool = False
    gpu_sm: tuple[int, int] = (0, 0)  # the device's compute capability: the CUDA-graph estimate's GPU class
    # SGLANG_ENABLE_POST_CAPTURE_KV_SIZING's gate holds (pipeline/post_capture.py): the KV pool is sized after capture
    post_capture_kv: bool = False
    # pre_capture_activation_reserve_mb for this launch (srt/arg_groups/overrides.py:194-210 @0.5.23); 0 when off
    post_capture_reserve_mib: float = 0.0
    attn_dp_size: int = 1  # DP attention: the attention-DP width (pipeline/dp_attention.py); 1 without it
    # PD disaggregation (pipeline/disaggregation.py): the role, and the decode role's extra request slots
    disaggregation_mode: str = "null"
    decode_extra_slots: int = 0
    hip: bool = False  # a ROCm device (pipeline/rocm.py): the post-pool estimates take the AMD class

    @property
    def spec_on(self) -> bool:
        return self.speculative_algorithm is not None

    @property
    def extra_buffer(self) -> bool:
        # enable_mamba_extra_buffer (srt/server_args.py:6764-6765 @0.5.11; :7510-7514 @0.5.16)
        if self.rules.auto_extra_buffer:
            return not self.disable_radix_cache and self.mamba_scheduler_strategy in ("extra_buffer",
                                                                                        "extra_buffer_lazy")
        if self.rules.extra_buffer_lazy:  # srt/server_args.py:7363-7364 @0.5.13
            return self.mamba_scheduler_strategy in ("extra_buffer", "extra_buffer_lazy")
        return self.mamba_scheduler_strategy == "extra_buffer"


# Flags this planner does not model: they change the memory picture in ways we do not reproduce.
_OUT_OF_SCOPE = {
    "enable_lora": "LoRA",
    "lora_paths": "LoRA",
    "enable_hierarchical_cache": "hierarchical cache",
    "enable_two_batch_overlap": "two-batch overlap",
    "enable_gdn_replayssm_spec": "ReplaySSM speculative verify",
    "enable_linear_replayssm_spec": "ReplaySSM speculative verify",
    "enable_linear_replayssm": "ReplaySSM ring buffers",
    "enable_kv_cache_sharding": "KV-cache sharding",
}


def standalone_dp_attention(raw: dict[str, Any]) -> bool:
    """--- STANDALONE ---: DP attention with dp > 1, which SGLang rejects for STANDALONE (dp_size 1 turns
    enable_dp_attention off first: srt/server_args.py:2110-2111, 2355-2360 @0.5.9)."""
    dp = raw.get("data_parallel_size") or raw.get("dp_size") or 1
    return (str(raw.get("speculative_algorithm") or "").upper() == "STANDALONE" and bool(raw.get("enable_dp_attention"))
            and dp > 1)


def check_scope(raw: dict[str, Any], rules: Rules | None = None) -> str | None:
    """A one-line reason when the flags leave what this planner models, else None."""
    if standalone_dp_attention(raw):
        return None  # --- STANDALONE ---: SGLang rejects it itself (srt/arg_groups/speculative_hook.py:261-268 @0.5.14)
    for key, what in _OUT_OF_SCOPE.items():
        if rules is not None and rules.replayssm and key in ("enable_linear_replayssm_spec", "enable_linear_replayssm"):
            continue  # modelled from 0.5.17
        val = raw.get(key)
        if val not in (None, False, 0, [], ""):
            return f"--{key.replace('_', '-')}: {what} is not modelled by this planner yet"
    if (raw.get("pipeline_parallel_size") or 1) > 1:
        return "--pp-size: pipeline parallelism is not modelled by this planner yet"
    dp = raw.get("data_parallel_size") or raw.get("dp_size") or 1
    if dp > 1 and not raw.get("enable_dp_attention"):
        return "--dp-size: data parallelism is not modelled by this planner yet (plan one replica)"
    if raw.get("enable_dp_attention") or (raw.get("attn_dp_size") or 1) > 1:
        from planner.engines.sglang.pipeline.dp_attention import scope_refusal  # noqa: PLC0415

        why = scope_refusal(raw, rules)
        if why:
            return why
    if raw.get("disaggregation_mode", "null") != "null":
        from planner.engines.sglang.pipeline.disaggregation import scope_refusal  # noqa: PLC0415

        why = scope_refusal(raw, rules.version if rules is not None else None)
        if why:
            return why
    from planner.engines.sglang.pipeline.expert_parallel import scope_refusal as ep_scope  # noqa: PLC0415

    why = ep_scope(raw, rules)  # DeepEP, the other all-to-all backends, redundant experts
    if why:
        return why
    if raw.get("weight_cache_mode", "off") != "off":
        return "--weight-cache-mode: preloaded weight caches are not modelled by this planner yet"
    if raw.get("startup_weight_load_mode", "serial") != "serial":
        return "--startup-weight-load-mode overlap: not modelled (weights are committed after graph capture)"
    if str(raw.get("speculative_algorithm") or "").upper() in ("UNO", "FROZEN_KV_MTP"):
        return (f"--speculative-algorithm {raw['speculative_algorithm']}: not modelled by this planner "
                "yet (EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM, DFLASH and DSPARK are)")
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


def _generate_cuda_graph_batch_sizes(max_bs: int, spec_user: str | None, no_padding: bool,
                                     append_max: bool = True) -> list[int]:
    """srt/server_args.py:1497-1528 @0.5.11 (uses the *user's* speculative_algorithm); 0.5.9 does not
    append max_bs when the list misses it (srt/server_args.py:1079-1107 @0.5.9). A new list each call (the
    caller may change it); the list itself is built once per input."""
    if not isinstance(max_bs, int) or max_bs > _CACHED_UP_TO:
        return _build_cuda_graph_batch_sizes(max_bs, spec_user, no_padding, append_max)
    return list(_cuda_graph_batch_sizes(max_bs, spec_user, no_padding, append_max))


_CACHED_UP_TO = 1 << 20  # lists for larger sizes are built each time, never kept


@lru_cache(maxsize=256)
def _cuda_graph_batch_sizes(max_bs: int, spec_user: str | None, no_padding: bool, append_max: bool) -> tuple[int, ...]:
    return tuple(_build_cuda_graph_batch_sizes(max_bs, spec_user, no_padding, append_max))


def _build_cuda_graph_batch_sizes(max_bs: int, spec_user: str | None, no_padding: bool,
                                  append_max: bool = True) -> list[int]:
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
    """srt/server_args.py:1550-1568 @0.5.11 (a new list each call; built once per ``max_tokens``)."""
    if not isinstance(max_tokens, int) or max_tokens > _CACHED_UP_TO:
        return _build_piecewise_tokens(max_tokens)
    return list(_piecewise_tokens_cached(max_tokens))


@lru_cache(maxsize=256)
def _piecewise_tokens_cached(max_tokens: int) -> tuple[int, ...]:
    return tuple(_build_piecewise_tokens(max_tokens))


def _build_piecewise_tokens(max_tokens: int) -> list[int]:
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



@dataclass
class ArgState:
    """The ServerArgs being resolved: what ``__post_init__`` reads and rewrites, stage after stage.

    :func:`planner.engines.sglang.pipeline.arg_groups.resolve` creates one per launch and passes it through
    the hooks in SGLang's order; each hook reads the fields earlier hooks set and sets its own (the names
    are ServerArgs' or, for intermediate values, say what they hold). Nothing outside one ``resolve`` call
    sees it: the result is the frozen-in-practice :class:`ResolvedArgs`.
    """

    raw: dict[str, Any]  # the release's argparse namespace, as given
    a: dict[str, Any]  # the same, normalized to the names this pipeline reads (:func:`normalize`)
    model: ModelSpec
    dev: Device
    env: dict[str, str]
    rules: Rules
    why: dict[str, str] = field(default_factory=dict)  # field -> why it got its value
    warn: list[str] = field(default_factory=list)
    draft: Any = None  # DFLASH: the --speculative-draft-model-path config (ModelSpec); its block size sets D
    dflash_draft_backend: str | None = None  # DFLASH: _resolve_dflash_draft_attention_backend's answer
    ctx: int = 0  # context_len
    is_mm: bool = False
    pcg_off: bool = False  # disable_piecewise_cuda_graph
    cps: int = 0  # chunked_prefill_size
    gmax: int = 0  # cuda_graph_max_bs
    graph_bs: list[int] = field(default_factory=list)
    pcg_tokens: list[int] = field(default_factory=list)
    decode_graph_on: bool = True
    prefill_graph_on: bool = True
    mfs: float | None = None  # mem_fraction_static
    mfs_user: bool = False
    page: int | None = None
    attn: str | None = None
    radix_off: bool = False
    overlap_off: bool = False
    strat: str = ""  # the strategy as it stood before the mamba radix resolution
    extra: bool = False  # extra buffer, as it stood then
    disable_graph: bool = False
    lin_decode: str | None = None
    algo: str | None = None
    steps: int | None = None
    topk: int | None = None
    ndraft: int | None = None
    mrr: int | None = None
    mrr_user: bool = False
    unified: bool = False
    post_capture_kv: bool = False  # post_capture_kv_sizing_planned at the fraction's step (pipeline/post_capture.py)
    pd_mode: str = "null"  # --disaggregation-mode (pipeline/disaggregation.py)
    pd_extra: int = 0  # the decode role's disaggregation_decode_extra_slots, resolved

    @property
    def arch(self) -> str:
        return self.model.architecture

    @property
    def tp(self) -> int:
        return int(self.a["tensor_parallel_size"])

    @property
    def spec_user(self) -> str | None:
        return self.a["speculative_algorithm"]


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