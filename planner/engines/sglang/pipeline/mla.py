"""Multi-head latent attention (DeepSeek-V3 / R1, Kimi-K2) and DeepSeek-V3.2's sparse-attention indexer on SGLang.

What SGLang does differently for a model whose ``ModelConfig.attention_arch`` is MLA (``use_mla_backend()``),
release by release; each rule below is called from the hook that runs it in SGLang (one branch there):

* the attention backend default: fa3 on Hopper, flashinfer on SM100, triton elsewhere
  (``_get_default_attn_backend``, srt/server_args.py:2522-2533 @0.5.11; srt/arg_groups/model_override_base.py:
  316-331 @0.5.23), and DeepSeek-V3's trtllm_mla on SM100 when no backend is given
  (srt/server_args.py:1766-1777 @0.5.11; srt/arg_groups/model_overrides/deepseek_v2.py @0.5.23);
* the page sizes the MLA backends force: flashmla 64, cutlass_mla 128, trtllm_mla 32 / 64 else 64, and
  trtllm_mla only on Blackwell (srt/server_args.py:2580-2612 @0.5.11; arg_groups/overrides.py:1143-1170 @0.5.23);
* the prefill CUDA graph: its capture list stops at 2,048 tokens (srt/server_args.py:1006-1013 @0.5.9,
  :1258-1262 @0.5.10, :1407-1414 @0.5.11, :4019-4024 @0.5.16) or min(8192, chunked prefill)
  (srt/arg_groups/memory_hook.py:233-237 @0.5.23); 0.5.15 / 0.5.16 disable the breakable prefill graph for MLA
  (``_disable_breakable_cudagraph_if_incompatible``, srt/server_args.py:3352 @0.5.15, :3772-3774 @0.5.16), 0.5.17
  for non-DSA MLA only (:4464-4471 @0.5.17); where it is on, mem_fraction_static reserves a flat 1.5 GiB for it
  instead of 8 MiB per captured size (srt/server_args.py:1308-1312 @0.5.10, :1457-1463 @0.5.11, :4187-4194 @0.5.16;
  srt/arg_groups/memory_hook.py:384-389 @0.5.23); 0.5.9's opt-in piecewise graph keeps the 8 MiB per size
  (srt/server_args.py:1043-1046 @0.5.9);
* DeepSeek-V3.2 (DSA, ``index_topk`` set): attention backend nsa (0.5.9-0.5.12) / dsa (0.5.13+), page size 64, the KV
  dtype ``auto`` -> fp8_e4m3 on SM >= 10 else bfloat16 and only bf16 / fp8_e4m3 accepted
  (srt/server_args.py:1681-1756, 1570-1596 @0.5.11; srt/arg_groups/overrides.py:491-545 @0.5.23); its
  piecewise graph is off on 0.5.11 (``is_piecewise_cuda_graph_disabled_model``, srt/configs/model_config.py:
  259-262 @0.5.11), on again on 0.5.13 (:330-332 @0.5.13);
* post-capture KV sizing never applies to MLA (srt/arg_groups/overrides.py:1802-1812 @0.5.23);
* the pools: one latent buffer per layer and the indexer's key cache (:mod:`planner.cache_kinds.mla`,
  :mod:`planner.cache_kinds.indexer`); the token pool's pointer table is one uint64 per layer
  (``data_ptrs``, srt/mem_cache/memory_pool.py:1545-1549 @0.5.11).

Releases: the rules were read in, and the pools checked against the oracle of every release 0.5.9-0.5.23
(0.5.11, 0.5.16, 0.5.23: the shared oracle; the others: the repository's adapters; tests/golden/mla/). A release
outside the table is refused for MLA models by name (:func:`release_refusal`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from planner.cache_kinds.indexer import IndexerKeys
from planner.cache_kinds.mla import MLALatent
from planner.catalog.spec import DTYPE_BYTES, ModelSpec

if TYPE_CHECKING:
    from planner.engines.sglang.pipeline.server_args import ArgState

# release -> how its MLA prefill-graph defaults read (see the module docstring for the lines)
@dataclass(frozen=True)
class _MlaRules:
    """What one release does differently for MLA (each field's lines are in the module docstring)."""

    capture: str  # the MLA prefill graph's largest size: "2048" or "min_8192" (min(8192, chunked prefill))
    prefill_graph: bool | str  # the prefill (piecewise / breakable) graph allowed for MLA; "dsa": for DSA models only
    flat_reserve: bool  # mem_fraction_static reserves 1.5 GiB for it instead of 8 MiB per size
    dsa_name: str  # the DSA attention backend's name
    cell_charges_layout: bool  # the cell charges DSA's scaled FP8 latent where it is allocated
    scaled_fp8_any_sm: bool  # DSA's FP8 KV takes flashmla_kv (scaled latent) on every GPU, not only below SM100
    dsa_pcg_disabled: bool  # is_piecewise_cuda_graph_disabled_model names DSA models
    trtllm_kv: tuple[str, ...]  # the kv-cache-dtype values trtllm_mla accepts (the flag as given)
    nextn: bool  # NEXTN / EAGLE on the own MTP layer checked against the oracle


_FP4 = ("fp8_e4m3", "fp4_e2m1", "bf16", "auto")
_RULES = {
    "0.5.9": _MlaRules("2048", True, False, "nsa", False, True, False, _FP4, True),
    "0.5.10": _MlaRules("2048", True, True, "nsa", False, False, True, _FP4, True),
    "0.5.11": _MlaRules("2048", True, True, "nsa", False, False, True, _FP4, True),
    "0.5.12": _MlaRules("2048", True, True, "nsa", False, False, True, _FP4, True),
    "0.5.13": _MlaRules("2048", True, True, "dsa", False, False, False, _FP4, True),
    "0.5.14": _MlaRules("2048", True, True, "dsa", False, False, False, _FP4, True),
    # 0.5.15: its breakable prefill graph is off for "MLA attention" (srt/server_args.py:3352 @0.5.15)
    "0.5.15": _MlaRules("2048", False, True, "dsa", False, False, False, _FP4, False),
    "0.5.16": _MlaRules("2048", False, True, "dsa", False, False, False, _FP4, True),
    # 0.5.15 / 0.5.20 / 0.5.21: the oracle's draft worker could not resolve DeepseekV3ForCausalLMNextN (an oracle gap), so
    # NEXTN is not verified there
    # 0.5.17: the breakable prefill graph off for "MLA attention (non-DSA)" (srt/server_args.py:4464-4471 @0.5.17)
    "0.5.17": _MlaRules("2048", "dsa", True, "dsa", True, False, False, _FP4, True),
    "0.5.18": _MlaRules("2048", True, True, "dsa", True, False, False, _FP4, True),
    "0.5.19": _MlaRules("2048", True, True, "dsa", True, False, False, _FP4, True),
    "0.5.20": _MlaRules("2048", True, True, "dsa", True, False, False, _FP4, False),
    "0.5.21": _MlaRules("2048", True, True, "dsa", True, False, False, ("fp8_e4m3", "bf16", "auto"), False),
    "0.5.22": _MlaRules("2048", True, True, "dsa", True, False, False, ("fp8_e4m3", "bf16", "auto"), True),
    "0.5.23": _MlaRules("min_8192", True, True, "dsa", True, False, False, ("fp8_e4m3", "bf16", "auto"), True),
}


def rules_of(version: str) -> _MlaRules:
    return _RULES[version]


VERIFIED = tuple(_RULES)
# model types a release reads only through the checkpoint's remote code (the oracle, without the .py files,
# stops at transformers' "contains custom code" error): 0.5.11 for Kimi-K2's kimi_k2
_REMOTE_CODE_BEFORE = {"0.5.9": ("kimi_k2",), "0.5.10": ("kimi_k2",), "0.5.11": ("kimi_k2",)}
# what the user may give as --attention-backend for an MLA model (the others are refused by name)
USER_BACKENDS = ("fa3", "flashinfer", "triton", "trtllm_mla", "flashmla", "cutlass_mla")
MLA_PAGE_RULE = "srt/server_args.py:2580-2612 @0.5.11; srt/arg_groups/overrides.py:1143-1170 @0.5.23"


def is_mla(model: ModelSpec) -> bool:
    return model.mla is not None


def is_dsa(model: ModelSpec) -> bool:
    return model.mla is not None and model.mla.dsa


def release_refusal(model: ModelSpec, version: str) -> str | None:
    """One line for a release whose MLA rules were not verified against its code (``version`` as 0.5.23 or as the
    flag table's directory name, v0_5_23)."""
    version = version[1:].replace("_", ".") if version.startswith("v") else version
    if model.mla is None:
        return None
    mtype = str(model.text.get("model_type") or model.model_type)
    if version in _REMOTE_CODE_BEFORE and mtype in _REMOTE_CODE_BEFORE[version]:
        return (f"--sglang-version {version}: {model.name} (model_type {mtype}) on SGLang {version} loads its config "
                f"through the checkpoint's remote code (auto_map; SGLang {version}'s own config registry has no "
                f"{mtype}), which is not verified against its code; modelled for it: 0.5.16, 0.5.23")
    if version in VERIFIED:
        return None
    kind = "DeepSeek sparse attention (DSA)" if model.mla.dsa else "multi-head latent attention (MLA)"
    return (f"--sglang-version {version}: {model.architecture} ({kind}) on SGLang {version} is not verified against "
            f"its code; modelled for MLA: {', '.join(VERIFIED)}")


# ---------------------------------------------------------------- server args


def prefill_graph_allowed(s: "ArgState") -> bool:
    """False where the release disables the MLA prefill (breakable) graph (0.5.16; 0.5.17 for non-DSA MLA only)."""
    allowed = _RULES[s.rules.version].prefill_graph
    return allowed is True or (allowed == "dsa" and is_dsa(s.model))


def arch_pcg_disabled(s: "ArgState") -> bool:
    """``is_piecewise_cuda_graph_disabled_model`` for the DeepSeek family: 0.5.11 disables DSA models
    (``or is_deepseek_nsa``, srt/configs/model_config.py:259-262 @0.5.11); 0.5.13's list no longer names them
    (srt/configs/model_config.py:330-332, 1579-1585 @0.5.13); DeepSeek-V3 itself is in neither."""
    return is_dsa(s.model) and _RULES[s.rules.version].dsa_pcg_disabled


def flat_prefill_reserve(s: "ArgState") -> bool:
    """True where mem_fraction_static reserves 1.5 GiB for an MLA prefill graph instead of 8 MiB per size."""
    return _RULES[s.rules.version].flat_reserve


def prefill_capture_max(s: "ArgState", cps: int) -> int:
    """The MLA prefill graph's largest capture size before the max_total_tokens cap."""
    return 2048 if _RULES[s.rules.version].capture == "2048" else min(8192, cps)


PREFILL_RESERVE_MIB = 1.5 * 1024  # "MLA backend overhead is much higher than expected with fa3"


def default_backend(s: "ArgState") -> str:
    """_get_default_attn_backend, MLA branch."""
    dev = s.dev
    if dev.hopper_cuda_12_3:
        return "fa3"
    if dev.sm100:
        return "flashinfer"
    return "triton"


def model_adjustments(s: "ArgState") -> None:
    """_handle_model_specific_adjustments for the DeepSeek family (run where SGLang runs it, before the
    attention-backend compatibility step)."""
    from planner.engines.sglang.pipeline.server_args import Rejected, _NotModelled  # noqa: PLC0415

    a, dev = s.a, s.dev
    for key in ("attention_backend", "prefill_attention_backend", "decode_attention_backend"):
        value = a.get(key)
        allowed = (_RULES[s.rules.version].dsa_name,) if is_dsa(s.model) else USER_BACKENDS
        if dev.hip and not is_dsa(s.model):  # ROCm: aiter is its default for MLA too (pipeline/rocm.py)
            allowed = (*allowed, "aiter")
        if value is not None and value not in allowed:
            raise _NotModelled(f"--{key.replace('_', '-')} {value}: not modelled by this planner for "
                               f"{s.model.architecture}; modelled: {', '.join(allowed)} (or leave it out)")
    unset = s.attn is None and a["prefill_attention_backend"] is None and a["decode_attention_backend"] is None
    if not is_dsa(s.model):
        if dev.sm100 and unset:
            s.attn = "trtllm_mla"
            s.why["attention_backend"] = ("DeepSeek-V3 family on SM100 (srt/server_args.py:1766-1777 @0.5.11; "
                                          "arg_groups/model_overrides/deepseek_v2.py @0.5.23)")
        return
    if a.get("prefill_attention_backend") is not None or a.get("decode_attention_backend") is not None:
        raise _NotModelled(f"--prefill/--decode-attention-backend with {s.model.architecture}: not modelled by this "
                           "planner; modelled: the DSA default, or --attention-backend "
                           f"{_RULES[s.rules.version].dsa_name}")
    if unset:
        s.attn = _RULES[s.rules.version].dsa_name
        s.why["attention_backend"] = "DeepSeek DSA (srt/server_args.py:1702-1704 @0.5.11; deepseek_v2.py @0.5.23)"
    s.page = 64
    s.why["page_size"] = "DeepSeek DSA on CUDA: 64 (srt/server_args.py:1749-1752 @0.5.11; deepseek_v2.py @0.5.23)"
    kv = a["kv_cache_dtype"]
    if kv == "auto":
        kv = "fp8_e4m3" if dev.sm_major >= 10 else "bfloat16"
        s.why["kv_cache_dtype"] = (f"DeepSeek DSA on SM{dev.sm_major}: {kv} (srt/server_args.py:1570-1596 @0.5.11; "
                                   "arg_groups/overrides.py:491-545 @0.5.23)")
    if kv == "bf16":
        kv = "bfloat16"
    if kv not in ("bfloat16", "fp8_e4m3"):
        raise Rejected("AssertionError", "DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype",
                       "srt/server_args.py:1592-1596 @0.5.11; srt/arg_groups/overrides.py:540-543 @0.5.23")
    for key in ("nsa_prefill_backend", "nsa_decode_backend", "dsa_prefill_backend", "dsa_decode_backend"):
        if a.get(key) is not None:  # they pick the latent's FP8 layout (scaled_fp8_latent): only the defaults modelled
            raise _NotModelled(f"--{key.replace('_', '-')} {a[key]}: not modelled by this planner (it decides the FP8 "
                               "latent layout); modelled: the release's default DSA backends")
    a["kv_cache_dtype"] = kv


def page_constraints(s: "ArgState") -> None:
    """The MLA backends' page sizes, and trtllm_mla's device check (in _handle_attention_backend_compatibility)."""
    from planner.engines.sglang.pipeline.server_args import Rejected  # noqa: PLC0415

    a, dev = s.a, s.dev
    roles = (s.attn, a["decode_attention_backend"])
    if "flashmla" in roles:
        s.page = 64
        s.why["page_size"] = f"FlashMLA only supports a page_size of 64 ({MLA_PAGE_RULE})"
    if "cutlass_mla" in roles:
        s.page = 128
        s.why["page_size"] = f"Cutlass MLA only supports a page_size of 128 ({MLA_PAGE_RULE})"
    if "trtllm_mla" in roles:
        if not dev.blackwell:
            raise Rejected("ValueError", "TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x). "
                           "Please use a different backend.", "srt/server_args.py:2603-2606 @0.5.11")
        allowed = list(_RULES[s.rules.version].trtllm_kv)
        if a["kv_cache_dtype"] not in allowed:  # the flag as given: "bfloat16" is not in the list
            listed = ", ".join(allowed[:-1]) + ", or auto"
            raise Rejected("ValueError", f"TensorRT-LLM MLA backend only supports kv-cache-dtype of {listed}.",
                           "srt/server_args.py:2613-2616 @0.5.11; srt/arg_groups/overrides.py:1761-1764 @0.5.16, "
                           "1214-1217 @0.5.23")
        if s.page not in (32, 64):
            s.page = 64
            s.why["page_size"] = f"TensorRT-LLM MLA only supports page_size of 32 or 64, so 64 ({MLA_PAGE_RULE})"


def own_draft_layers(model: ModelSpec, args) -> int:
    """The MTP layers the NEXTN / EAGLE draft worker builds from the model's own checkpoint
    (DeepseekV3ForCausalLMNextN, ``num_nextn_predict_layers``), 0 without speculative decoding."""
    if model.mla is None or not args.spec_on or args.speculative_algorithm != "EAGLE":
        return 0
    return model.mtp_layers


# ---------------------------------------------------------------- cell and pools


def scaled_fp8_latent(model: ModelSpec, kv_dtype: str, sm_major: int, version: str = "") -> bool:
    """DSA with an fp8_e4m3 KV where the default NSA / DSA backends are not trtllm: flashmla_kv below SM100
    (srt/server_args.py:1617-1628 @0.5.11), and on every GPU in 0.5.9 (flashmla_auto / flashmla_kv for any FP8 KV,
    srt/server_args.py:1158-1163 @0.5.9). The latent is then stored as ``kv_lora_rank`` FP8 + one float32 scale per
    128 + the rope dims in bf16 (``override_kv_cache_dim``, srt/model_executor/model_runner_kv_cache_mixin.py:
    212-249 @0.5.9, :133-177 @0.5.11; srt/mem_cache/kv_cache_configurator.py:3425-3475 @0.5.23)."""
    return bool(model.mla is not None and model.mla.dsa and kv_dtype == "float8_e4m3fn"
                and (sm_major < 10 or (version in _RULES and _RULES[version].scaled_fp8_any_sm)))


def kinds(model: ModelSpec, kv_dtype: str, sm_major: int = 10,
          version: str = "") -> tuple[MLALatent, IndexerKeys | None]:
    """The latent cache (in the KV dtype; DSA's scaled FP8 layout where it applies) and, for DSA, the indexer
    keys (uint8) over every layer."""
    m = model.mla
    assert m is not None
    layers = model.num_hidden_layers
    if scaled_fp8_latent(model, kv_dtype, sm_major, version):
        # 512 fp8 + 512 // 128 x 4 B of scales + 64 rope x 2 B (bf16) = 656 one-byte elements
        latent = MLALatent(layers, 1, m.kv_lora_rank + m.kv_lora_rank // 128 * 4, m.qk_rope_head_dim * 2)
    else:
        latent = MLALatent(layers, DTYPE_BYTES[kv_dtype], m.kv_lora_rank, m.qk_rope_head_dim)
    indexer = IndexerKeys(layers, 1, m.index_head_dim) if m.dsa and m.index_head_dim else None
    return latent, indexer


def cell(model: ModelSpec, kv_dtype: str, tp: int, sm_major: int, version: str) -> int:
    """The pool configurator's cell: the latent plus the indexer keys of one token over every layer. 0.5.11 and
    0.5.16 (and 0.5.9) charge the plain ``kv_lora_rank + rope`` latent even where the buffer holds the scaled FP8 layout
    (srt/model_executor/pool_configurator.py:122-149 @0.5.11, :187-214 @0.5.16); 0.5.23 charges the layout it
    allocates (calculate_mla_kv_cache_dim, srt/model_executor/pool_configurator.py:378-386 @0.5.23)."""
    charged = _RULES[version].cell_charges_layout
    latent, indexer = kinds(model, kv_dtype, sm_major, version) if charged else kinds(model, kv_dtype)
    return latent.bytes_per_token(tp) + (indexer.bytes_per_token(tp) if indexer is not None else 0)


__all__ = ["VERIFIED", "is_mla", "is_dsa", "release_refusal", "default_backend", "model_adjustments",
           "page_constraints", "prefill_graph_allowed", "prefill_capture_max", "PREFILL_RESERVE_MIB", "kinds", "cell"]
