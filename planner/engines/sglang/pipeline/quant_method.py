"""Which quant config a release builds for a ModelOpt ``config.json`` checkpoint, and what ``--kv-cache-dtype auto``
reads from it (the model's ``quant_config.kv_cache_quant_algo``).

A ModelOpt checkpoint's ``config.json`` carries ``quantization_config`` with ``quant_method: "modelopt"`` and a flat
``quant_algo`` ("flat" format); an exported ``hf_quant_config.json`` is the nested format (the catalog folds it in
as ``modelopt_fp8`` / ``modelopt_fp4``: planner/catalog/catalog.py ``with_hf_quant_config``). The releases differ in:

* how the flat MIXED_PRECISION / NVFP4 checkpoint is dispatched (``Rules.modelopt_config_json``):

  - 0.5.9: ``_parse_quant_hf_config`` parses ModelOpt only without a ``quant_method`` (srt/configs/model_config.py:
    647-659, 754-766 @0.5.9), so ``quantization`` stays "modelopt" = ModelOptFp8Config (srt/layers/quantization/
    __init__.py:57 @0.5.9), whose ``from_config`` raises for a ``quant_algo`` without "FP8"
    (srt/layers/quantization/modelopt_quant.py:460-465 @0.5.9) at model load -- unless ServerArgs sets
    ``quantization`` from the checkpoint first: on SM100 for the Qwen3-MoE / Qwen3-Next / Qwen3.5 families
    (srt/server_args.py:1558-1600 @0.5.9; "modelopt" + NVFP4 is then ModelOptFp4Config through the override,
    srt/layers/quantization/base_config.py:172-177 @0.5.9), and NemotronH on any GPU (modelopt_fp4 for
    ``quant_algo == "NVFP4"``, else modelopt_fp8: srt/server_args.py:1529-1545 @0.5.9);
  - 0.5.10-0.5.14: "modelopt" is parsed; MIXED_PRECISION becomes ``w4afp8`` except for NemotronH
    (srt/configs/model_config.py:805-816 @0.5.10, :1140-1151 @0.5.14): W4AFp8Config serves every linear layer
    with Fp8LinearMethod (srt/layers/quantization/w4afp8.py:93-106 @0.5.14), and its from_config, given the
    config.json block itself (get_quant_config, srt/model_loader/weight_utils.py:178-190 @0.5.10), sets
    is_checkpoint_fp8_serialized from "fp8" in quant_method -- False for "modelopt" (w4afp8.py:78-90) -- so the
    layers are created at the model dtype, to be quantized after loading (fp8.py:371-373 @0.5.10), which is not
    what an NVFP4 / per-tensor-FP8 layer holds -- not modelled here (refused), never sized as if it loaded
    (the oracle loads no weights: it reports SGLang's sizing, ok with a bf16 KV cache);
  - 0.5.15+: MIXED_PRECISION is ``modelopt_mixed`` when a layer is NVFP4 / W4A16_NVFP4, else ``w4afp8``
    (srt/configs/model_config.py:1148-1163 @0.5.15);

* whether the flat format's ``kv_cache_quant_algo`` key is read (``Rules.modelopt_flat_kv_algo_key``): only the
  ``kv_cache_scheme`` dict before 0.5.15 (srt/layers/quantization/modelopt_quant.py:446-458 @0.5.14), the key too
  without a scheme from 0.5.15 (:450-458, 668-677, 1295-1296 @0.5.15);

* whether the model object keeps its quant config (``Rules.vl_model_keeps_quant_config``): 0.5.9's
  Qwen3VLForConditionalGeneration -- the base of the Qwen3-VL / Qwen3.5 / Qwen3.6 ...ForConditionalGeneration
  classes -- never stores ``self.quant_config`` (srt/models/qwen3_vl.py:773-800 @0.5.9, srt/models/qwen3_5.py:
  1023-1031, 1114-1124 @0.5.9), so ``getattr(self.model, "quant_config", None)`` is None and ``auto`` keeps the
  model dtype (srt/model_executor/model_runner.py:1669-1690 @0.5.9); 0.5.10 stores it (srt/models/qwen3_vl.py:1076
  @0.5.10).
"""

from __future__ import annotations

from typing import Any

from planner.catalog.spec import ModelSpec
from planner.engines.sglang.pipeline.server_args import Rejected, ResolvedArgs, _NotModelled

# the classes built on 0.5.9's Qwen3VLForConditionalGeneration (srt/models/qwen3_vl.py:757, qwen3_vl_moe.py:172,
# qwen3_5.py:1023, 1114, interns1pro.py:191, qwen3_omni_moe.py:417 @0.5.9)
QWEN3_VL_FAMILY = frozenset({
    "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration", "InternS1ProForConditionalGeneration",
    "Qwen3OmniMoeThinkerForConditionalGeneration",
})
# 0.5.9 ServerArgs sets quantization = the checkpoint's quant_method on SM100 for these (srt/server_args.py:
# 1558-1600 @0.5.9: Qwen3MoeForCausalLM / Qwen3VLMoeForConditionalGeneration, Qwen3NextForCausalLM /
# Qwen3_5MoeForConditionalGeneration / Qwen3_5ForConditionalGeneration)
SM100_QUANT_FROM_CHECKPOINT_0_5_9 = frozenset({
    "Qwen3MoeForCausalLM", "Qwen3VLMoeForConditionalGeneration", "Qwen3NextForCausalLM",
    "Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration",
})
NVFP4_LAYER_ALGOS = ("NVFP4", "W4A16_NVFP4")


def _qcfg(model: ModelSpec) -> dict[str, Any] | None:
    q = model.raw.get("quantization_config") or model.text.get("quantization_config")
    return q if isinstance(q, dict) else None


def _flat_modelopt(q: dict[str, Any] | None) -> bool:
    """config.json's own ModelOpt block (``quant_method: modelopt`` or none, with ``quant_algo``)."""
    return q is not None and "quant_algo" in q and str(q.get("quant_method") or "modelopt").lower() == "modelopt"


class W4AFp8Dispatch(_NotModelled):
    """The release serves this MIXED_PRECISION checkpoint with W4AFp8Config: its weights are not modelled, its pools
    are (W4AFp8Config has no ``kv_cache_quant_algo``), so a launch whose free memory after loading is measured is
    planned (:func:`planner.engines.sglang.pipeline.quant_config`)."""


def reads_as_w4afp8(rules: Any, model: ModelSpec) -> bool:
    """This release builds W4AFp8Config for this config.json (srt/configs/model_config.py:805-816 @0.5.10,
    :1140-1151 @0.5.14; :1148-1163 @0.5.15 when no layer is NVFP4)."""
    q = _qcfg(model)
    if not _flat_modelopt(q) or str(q.get("quant_algo") or "").upper() != "MIXED_PRECISION":
        return False
    mode = rules.modelopt_config_json
    if mode == "v0_5_10":
        return not model.architecture.startswith("NemotronH")
    if mode == "v0_5_15":
        layers = q.get("quantized_layers") or {}
        return not any(str(v.get("quant_algo", "")).upper() in NVFP4_LAYER_ALGOS for v in layers.values()
                       if isinstance(v, dict))
    return False


def checkpoint_kv_quant_algo(args: ResolvedArgs, model: ModelSpec) -> str | None:
    """``quant_config.kv_cache_quant_algo`` as the model object carries it in this release (None: no attribute)."""
    rules = args.rules
    if not rules.vl_model_keeps_quant_config and model.architecture in QWEN3_VL_FAMILY:
        return None
    if reads_as_w4afp8(rules, model):
        return None  # W4AFp8Config has no kv_cache_quant_algo (srt/layers/quantization/w4afp8.py:41-66 @0.5.11)
    q = _qcfg(model)
    if _flat_modelopt(q) and not rules.modelopt_flat_kv_algo_key and not isinstance(q.get("kv_cache_scheme"), dict):
        return None  # only the kv_cache_scheme dict is read before 0.5.15
    return model.kv_quant_algo_for(rules.version)


def check_quant_method(args: ResolvedArgs, model: ModelSpec, sm100: bool) -> None:
    """model load's quant config (loader._get_quantization_config -> get_quant_config -> <Config>.from_config) for a
    flat ModelOpt checkpoint: SGLang's ValueError (:class:`Rejected`, stage ``runner_setup`` as the oracle names
    it), or :class:`_NotModelled` where the release serves it with a method the planner does not size."""
    q = _qcfg(model)
    if not _flat_modelopt(q):
        return
    algo = str(q.get("quant_algo") or "").upper()
    mode = args.rules.modelopt_config_json
    try:
        _dispatch(mode, algo, q, model, sm100, args.rules.version)
    except (Rejected, _NotModelled):
        if args.raw.get("quantization"):  # the user's method takes part in the dispatch (model_config.py
            raise _NotModelled(  # _verify_quantization): not modelled for these checkpoints
                f"--quantization {args.raw['quantization']}: how SGLang {args.rules.version} serves this ModelOpt "
                f"{algo} config.json checkpoint with an explicit method is not modelled by this planner") from None
        raise


def _dispatch(mode: str, algo: str, q: dict[str, Any], model: ModelSpec, sm100: bool, version: str) -> None:
    if mode == "v0_5_9":
        if "FP8" in algo:
            return
        nemotron = model.architecture.startswith("NemotronH")
        picked_fp4 = ("NVFP4" in algo or "FP4" in algo) and (
            (sm100 and model.architecture in SM100_QUANT_FROM_CHECKPOINT_0_5_9) or (nemotron and algo == "NVFP4"))
        if not picked_fp4:
            raise Rejected("ValueError", "ModelOptFp8Config only supports static FP8 quantization in SGLang. For FP4 "
                           "quantization, use ModelOptFp4Config. Check the quantization config for your model's "
                           "configuration.", "srt/layers/quantization/modelopt_quant.py:460-465 @0.5.9 "
                           "(quant_method 'modelopt' is ModelOptFp8Config, srt/layers/quantization/__init__.py:57)",
                           stage="runner_setup")
        return
    if algo != "MIXED_PRECISION" or model.architecture.startswith("NemotronH") and mode == "v0_5_10":
        return
    layers = q.get("quantized_layers") or {}
    has_nvfp4 = any(str(v.get("quant_algo", "")).upper() in NVFP4_LAYER_ALGOS for v in layers.values()
                    if isinstance(v, dict))
    if mode == "v0_5_15" and has_nvfp4:
        return
    where, later = (("srt/configs/model_config.py:805-816 @0.5.10, :1140-1151 @0.5.14",
                     "; SGLang 0.5.15+ reads one with NVFP4 layers as modelopt_mixed") if mode == "v0_5_10"
                    else ("srt/configs/model_config.py:1148-1163 @0.5.15: no NVFP4 layer", ""))
    raise W4AFp8Dispatch(f"quantization_config: SGLang {version} reads this ModelOpt MIXED_PRECISION checkpoint "
                       f"as w4afp8 ({where}), whose from_config takes quant_method 'modelopt' as not FP8-serialized "
                       f"(srt/layers/quantization/w4afp8.py:78-90 @0.5.10-0.5.15), so every linear layer is created "
                       f"at the model dtype (Fp8LinearMethod, srt/layers/quantization/fp8.py:371-373 @0.5.10) for "
                       f"NVFP4 / FP8 tensors it does not hold; not modelled by this planner (give the free memory "
                       f"after loading, measured: --free-after-load-gib or plan check, to plan its pools){later}")
