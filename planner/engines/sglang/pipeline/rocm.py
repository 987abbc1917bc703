"""SGLang on AMD Instinct (ROCm): the ``is_hip()`` rules that change what it sizes, and the scope they are checked in.

A ROCm device is a :class:`Device` with ``hip`` set (:func:`device`): ``torch.version.cuda`` is None there, so no
``is_sm*_supported`` holds, and the GPU memory SGLang's tiers read is rocminfo's ``Pool 1`` size
(``get_amdgpu_memory_capacity``, srt/utils/common.py:1522-1552, chosen at :1766 @0.5.11; :682, chosen at :1000
@0.5.23). The rules, each named for what it does (docs/rocm.md has the table):

- :func:`default_backend`: ``aiter`` for MHA models; for MLA ``aiter`` when the KV heads per rank are 16 or 128,
  else ``triton`` (srt/server_args.py:2506-2507, 2521-2527 @0.5.11; arg_groups/model_override_base.py:326-347 @0.5.23).
  The page size stays SGLang's default 1 (server_args.py:2815-2820 @0.5.11; overrides.py:1340-1365 @0.5.23,
  whose 64 needs SGLANG_AITER_KV_CACHE_LAYOUT=vectorized_5d, refused here).
- :func:`aiter_fraction`: with the aiter backend and a context over 8,192 tokens ``mem_fraction_static`` x 0.85, the
  user's value included (server_args.py:2670-2673 @0.5.11); from 0.5.19 an explicit value is kept when
  SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION is set (arg_groups/attention_hook.py:243-268 @0.5.23).
- :func:`prefill_graph_off`: no piecewise / prefill CUDA graph, so no term for it in the reserve
  (server_args.py:1213-1215 @0.5.11, :1362 @0.5.13; the "non-CUDA hardware (HIP/NPU/CPU/MPS/XPU)" rule that disables
  tc_piecewise, server_args.py:3703-3706 @0.5.16; BREAKABLE only on CUDA, model_executor/cuda_graph_config.py:119-122
  @0.5.22-0.5.23).
- ``triton_attention_num_kv_splits`` = 16 (server_args.py:2823-2825 @0.5.11; platform_hook.py:52-55 @0.5.23): the
  Triton backend's split-KV graph buffers, :func:`graph_buffer_bytes`.
- FP8 KV (``fp8_e4m3``, ``fp8_e5m2``, an FP8 checkpoint's) is stored in the platform's fp8, ``float8_e4m3fnuz`` on
  gfx942: one byte, as on CUDA (mem_cache/kv_cache_dtype.py:49-70 @0.5.23; configure_kv_cache_dtype @0.5.11).
- aiter's workspace and the backends' graph state after the pools (:func:`workspace_bytes`, :func:`graph_buffer_bytes`).

Scope (:func:`refusal`): the releases, model families and flags checked against SGLang's own code on a simulated
MI300X (tests/golden/rocm/, scripts/oracle/rocm_cases.py); anything else on an AMD GPU is refused by name.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from planner.catalog.spec import ModelSpec

# the releases whose ROCm path was checked against SGLang's own code (tests/golden/rocm/: the curated set and fresh
# random launches); the others are refused by name until they are
RELEASES = ("0.5.11", "0.5.13", "0.5.16", "0.5.22", "0.5.23")
# the architectures checked (dense GQA, MoE GQA, DeepSeek MLA)
ARCHITECTURES = ("LlamaForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "DeepseekV3ForCausalLM")
# the launch flags checked (argparse dests; the release's own names for the graph batch sizes are mapped by rules)
FLAGS = frozenset({
    "model_path", "tokenizer_path", "tp_size", "tensor_parallel_size", "context_length", "mem_fraction_static", "max_running_requests",
    "max_total_tokens", "chunked_prefill_size", "max_prefill_tokens", "cuda_graph_max_bs", "cuda_graph_bs",
    "cuda_graph_max_bs_decode", "cuda_graph_bs_decode",  # 0.5.14+ spellings
    "disable_cuda_graph", "kv_cache_dtype", "page_size", "attention_backend", "disable_radix_cache",
    # no sizing effect
    "trust_remote_code", "host", "port", "served_model_name", "log_level", "api_key", "enable_metrics",
    "random_seed", "revision", "download_dir", "skip_server_warmup", "dtype",
})
BACKENDS = ("aiter", "triton")
KV_DTYPES = ("auto", "bfloat16", "fp8_e4m3", "fp8_e5m2")
HONOR_ENV = "SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION"
HONOR_FROM = (0, 5, 19)  # the env is new in 0.5.19 (srt/environ.py, arg_groups/attention_hook.py @0.5.19)
ENVS = (HONOR_ENV,)
# gfx target -> what torch.cuda.get_device_capability reports on ROCm (gcnArchName gfx9XY -> (9, X)); SGLang's
# sizing asks it only through is_sm*_supported, which is False without CUDA
GFX_CAPABILITY = {"gfx942": (9, 4), "gfx950": (9, 5)}
DOC = "docs/rocm.md"


def modelled_summary() -> str:
    return (f"modelled on ROCm: SGLang {', '.join(RELEASES)}; {', '.join(ARCHITECTURES)}; flags "
            f"--tp-size, --context-length, --mem-fraction-static, the caps, graph sizes, --kv-cache-dtype "
            f"{'/'.join(KV_DTYPES)}, --attention-backend {'/'.join(BACKENDS)}")


@lru_cache(maxsize=None)
def _defaults(version: str) -> tuple[tuple[str, Any], ...]:
    from planner.engines.sglang.cli_flags import parse_flags  # noqa: PLC0415
    from planner.engines.sglang.rules import RULES  # noqa: PLC0415

    return tuple(parse_flags(RULES[version].flags, ["--model-path", "x"]).items())


def refusal(raw: dict[str, Any], model: ModelSpec, version: str, env: dict[str, str], gpu_id: str) -> str | None:
    """One line when an AMD launch leaves what was checked against SGLang's ROCm code, else None."""
    head = f"--gpu {gpu_id} (SGLang's ROCm path)"
    if version not in RELEASES:
        return f"{head}: SGLang {version} is not modelled on ROCm, only {', '.join(RELEASES)} ({DOC})"
    if model.architecture not in ARCHITECTURES:
        return f"{head}: {model.architecture} is not modelled on ROCm, only {', '.join(ARCHITECTURES)} ({DOC})"
    if model.is_mambaish or model.sliding is not None:
        return f"{head}: hybrid and sliding-window models are not modelled on ROCm ({DOC})"
    quant = str(model.quant_method or "").lower()
    if quant and not (quant == "fp8" and model.architecture == "DeepseekV3ForCausalLM"):
        return f"{head}: the {quant} checkpoint of {model.name} is not modelled on ROCm ({DOC})"
    defaults = dict(_defaults(version))
    extra = sorted(k for k, v in raw.items() if k in defaults and defaults[k] != v and k not in FLAGS)
    if extra:
        shown = ", ".join("--" + k.replace("_", "-") for k in extra[:4])
        return f"{head}: {shown} not modelled on ROCm; {modelled_summary()} ({DOC})"
    backend = raw.get("attention_backend")
    if backend is not None and backend not in BACKENDS:
        return f"{head}: --attention-backend {backend} is not modelled on ROCm, only {'/'.join(BACKENDS)} ({DOC})"
    kv = raw.get("kv_cache_dtype") or "auto"
    if kv not in KV_DTYPES:
        return f"{head}: --kv-cache-dtype {kv} is not modelled on ROCm, only {'/'.join(KV_DTYPES)} ({DOC})"
    other = sorted(k for k in env if k.startswith(("SGLANG_", "SGL_")) and k not in ENVS)
    if other:
        return f"{head}: --env {other[0]} is not modelled on ROCm, only {', '.join(ENVS)} ({DOC})"
    return None


def default_backend(s: Any) -> str:
    """_get_default_attn_backend on HIP: aiter for MHA (srt/server_args.py:2506-2507 @0.5.11,
    arg_groups/model_override_base.py:326-327 @0.5.23); MLA: aiter when get_num_kv_heads(tp) is 16 or 128, else
    triton (server_args.py:2521-2527 @0.5.11, model_override_base.py:341-347 @0.5.23)."""
    if s.model.mla is None:
        return "aiter"
    heads = max(1, s.model.num_key_value_heads // s.tp)
    return "aiter" if heads in (16, 128) else "triton"


def aiter_fraction(s: Any) -> None:
    """aiter past an 8,192-token context: mem_fraction_static x 0.85, the user's value too (srt/server_args.py:
    2670-2673 @0.5.11); 0.5.23 keeps an explicit value under SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION
    (arg_groups/attention_hook.py:243-268 @0.5.23)."""
    if not s.dev.hip or s.attn != "aiter" or s.ctx <= 8192:
        return
    from planner.engines.sglang.pipeline.server_args import _env_bool  # noqa: PLC0415

    if _honoured(s.rules.version) and s.mfs_user and _env_bool(s.env, HONOR_ENV):
        s.warn.append(f"{HONOR_ENV}: the explicit mem_fraction_static {s.mfs} is kept; SGLang would otherwise "
                      "scale it by 0.85 for aiter's workspace past an 8k context (arg_groups/attention_hook.py:243-268)")
        return
    s.mfs = s.mfs * 0.85
    s.why["mem_fraction_static"] = (s.why.get("mem_fraction_static", "given") + " x 0.85 (aiter backend, context "
                                    f"{s.ctx:,} > 8192: server_args.py:2670-2673 @0.5.11, attention_hook.py:243-268 "
                                    "@0.5.23)")


def fp8_kv_dtype(sm: tuple[int, int]) -> str:
    """The platform's fp8 dtype an FP8 KV cache (fp8_e4m3, fp8_e5m2, an FP8 checkpoint's) is stored in on HIP:
    float8_e4m3fnuz on gfx942 (is_fp8_fnuz), float8_e4m3fn on gfx950 (mem_cache/kv_cache_dtype.py:49-70 @0.5.23;
    model_executor/model_runner.py configure_kv_cache_dtype @0.5.11); one byte either way."""
    return "float8_e4m3fnuz" if tuple(sm) == GFX_CAPABILITY["gfx942"] else "float8_e4m3fn"


def platform_kv_dtype(args: Any, name: str) -> str:
    """The KV dtype SGLang stores: on HIP an FP8 one is the platform's (:func:`fp8_kv_dtype`), else ``name``."""
    return fp8_kv_dtype(args.gpu_sm) if args.hip and name.startswith("float8") else name


def given_fraction_factor(args: Any) -> float:
    """What :func:`aiter_fraction` multiplies a given --mem-fraction-static by, for the resolved launch
    (:class:`ResolvedArgs`): the search tries fractions as given flags, and SGLang scales those too."""
    if not args.hip or args.attention_backend != "aiter" or args.context_len <= 8192:
        return 1.0
    from planner.engines.sglang.pipeline.server_args import _env_bool  # noqa: PLC0415

    if _honoured(args.rules.version) and _env_bool(args.env, HONOR_ENV):
        return 1.0
    return 0.85


def _honoured(version: str) -> bool:
    return tuple(int(x) for x in version.split(".")) >= HONOR_FROM


def prefill_graph_off(s: Any) -> None:
    """No piecewise / prefill graph on HIP (srt/server_args.py:1213-1215 @0.5.11; the default prefill backend is
    BREAKABLE only on CUDA, model_executor/cuda_graph_config.py:119-122 @0.5.23)."""
    if s.dev.hip:
        s.pcg_off = True
        s.prefill_graph_on = False


# -- what the ROCm backends allocate after the pools (SGLang's own buffer shapes) --------------------------------

WORKSPACE_LABEL = "aiter attention workspace"
_AITER_PARTITION = 256  # _AITER_PARTITION_SIZE_ROCM (layers/attention/aiter_backend.py:109 @0.5.11)


def workspace_bytes(args: Any, model: ModelSpec, running: Any) -> Any:
    """AiterAttnBackend's ``workspace_buffer`` for an MHA model: req_to_token_pool.size (R) x heads per rank x
    ceil(context / 256) partitions x (head_dim x 4 + 2 x 4) bytes (layers/attention/aiter_backend.py:200-223
    @0.5.11, :556-568 @0.5.23); none for MLA or another backend. ``running``: R, an int or a numpy array."""
    if not args.hip or args.attention_backend != "aiter" or model.mla is not None:
        return 0 * running
    heads = model.num_attention_heads // args.tp_size
    parts = -(-args.context_len // _AITER_PARTITION)
    return running * heads * parts * (model.head_dim * 4 + 2 * 4)


def workspace_how(args: Any, model: ModelSpec, running: int) -> str:
    heads = model.num_attention_heads // args.tp_size
    parts = -(-args.context_len // _AITER_PARTITION)
    return (f"R {running} x {heads} heads x {parts} partitions of 256 tokens x (head_dim {model.head_dim} x 4 + 8) B: "
            "AiterAttnBackend's workspace_buffer, sized by the request pool (layers/attention/aiter_backend.py:200-223 "
            "@0.5.11, :556-568 @0.5.23); SGLang's x 0.85 on mem_fraction_static past an 8k context is its reserve")


def graph_buffer_bytes(args: Any, model: ModelSpec, max_bs: Any) -> Any:
    """The attention backend's CUDA-graph state, allocated before capture for the largest captured batch
    (``init_cuda_graph_state``; tokens T = max_bs x tokens per batch): aiter: KV indices T x ceil(context / page)
    int32 + the custom mask T x context bytes (layers/attention/aiter_backend.py:1190-1234 @0.5.11); triton: the
    split-KV logits and lse T x heads x 16 splits x (v_head_dim + 1) x 4 B, KV indices T x context int64, the mask
    T x context bytes, and T int32 splits (layers/attention/triton_backend.py:468-523 @0.5.11). ``max_bs``: an int
    or a numpy array."""
    if not args.hip:
        return 0 * max_bs
    t = max_bs * ((args.speculative_num_draft_tokens or 1) if args.spec_on else 1)
    ctx = args.context_len
    if args.attention_backend == "aiter":
        return t * (-(-ctx // args.page_size)) * 4 + t * ctx
    if args.attention_backend == "triton":
        heads = max(1, model.num_attention_heads // args.tp_size)
        v = model.mla.kv_lora_rank if model.mla is not None else model.head_dim
        return t * heads * 16 * (v + 1) * 4 + t * ctx * (8 + 1) + t * 4
    return 0 * max_bs


def graph_buffer_how(args: Any) -> str:
    return (f" + the {args.attention_backend} backend's graph state for the largest captured batch (KV indices and "
            "mask over the context, init_cuda_graph_state: aiter_backend.py:1190-1234 / triton_backend.py:468-523 "
            "@0.5.11)")
