"""Which quantization methods the planner has a weight model for: the lists live beside the weight
models in :mod:`planner.catalog.quant` (``MODELLED_METHODS`` for checkpoints, ``ONLINE_METHODS`` for
``--quantization`` on an unquantized checkpoint); extend them there.

A checkpoint whose ``quantization_config.quant_method`` (``modelopt`` when only ``quant_algo`` is given,
as SGLang reads it) or a launch whose ``--quantization`` names a method outside those lists is refused
(one line, exit 2) instead of being sized as bf16: see :func:`quant_refusal`, called from
``planner.engines.sglang.support``.
"""

from __future__ import annotations

from typing import Any


def modelled_text() -> str:
    from planner.catalog.quant import MODELLED_METHODS, ONLINE_METHODS  # noqa: PLC0415 - imported when needed

    return (f"unquantized checkpoints; quantized checkpoints: {', '.join(MODELLED_METHODS)}; "
            f"online --quantization of an unquantized checkpoint: {', '.join(ONLINE_METHODS)}")


def _name(value: Any) -> str:
    return str(value).strip().lower()


# Checkpoint methods planned without a weight model when the free memory after the weights is measured
# (--free-after-load-gib, or the free memory a boot log records after loading: ``plan check``): then only the
# weights depend on the method. Each is registered by every release 0.5.9-0.5.23 (QUANTIZATION_METHODS /
# BASE_QUANTIZATION_METHODS, srt/layers/quantization/__init__.py: the same keys @0.5.9, 0.5.11, 0.5.16, 0.5.23),
# none has a ``kv_cache_quant_algo`` (the KV cache stays at the model dtype under --kv-cache-dtype auto:
# srt/mem_cache/kv_cache_dtype.py:49-59 @0.5.23; only fp8, modelopt, compressed-tensors, petit and nvfp4_online
# configs carry one), and ServerArgs treats none of them specially outside the MoE-runner checks of a
# non-default --moe-runner-backend. Below a method's minimum compute capability the pipeline refuses the launch
# (engines/sglang/pipeline quant_config). Not here: gguf (disables the piecewise CUDA graph: srt/server_args.py:1231-1237
# @0.5.11), petit_nvfp4 (its KV algo), methods a release lacks (fbgemm_fp8 and qoq are gone by 0.5.16), and the
# Ascend / ROCm-first ones (modelslim, quark, quark_int4fp8_moe: not checked on an NVIDIA GPU).
# auto-round in particular: AutoRoundConfig (srt/layers/quantization/auto_round.py, registered 0.5.9-0.5.23) serves
# each layer by its packing_format, per layer from extra_config (bits >= 16 stays unquantized): auto_round:auto_gptq
# with GPTQ / GPTQ-Marlin linear methods, auto_round:auto_awq with AWQ / AWQ-Marlin, MoE layers with the Marlin MoE
# methods or MoeWNA16 (apply_gptq_quant_layer / apply_awq_quant_layer, auto_round.py:220-415 @0.5.11); 0.5.11 routes
# them through the configs' schemes (layer.scheme), 0.5.23 adds the GPTQ defaults (lm_head, desc_act, dynamic ...)
# and an AMX-only CPU path. No weight model here: no published AutoRound total was found to check one against.
MEASURED_WEIGHTS_METHODS = {  # method -> its config's get_min_capability (the loader's check: model_loader/loader.py
    # :238-250 @0.5.11 raises below it); srt/layers/quantization/<method>.py @0.5.11
    "auto-round": 60, "bitsandbytes": 70, "blockwise_int8": 80, "moe_wna16": 70, "w4afp8": 90, "w8a8_fp8": 89,
    "w8a8_int8": 75,
}


def quant_refusal(config_method: Any, flag_method: Any, measured: bool = False) -> str | None:
    """One line when the checkpoint's or the flag's quantization has no weight model, else None. ``measured``: the
    free memory after the weights is given, so a checkpoint method of :data:`MEASURED_WEIGHTS_METHODS` needs none
    (a --quantization that names another method still refuses)."""
    if config_method is None and flag_method is None:  # nothing quantized: the weight models are not needed
        return None
    from planner.catalog.quant import MODELLED_METHODS, ONLINE_METHODS  # noqa: PLC0415

    if (measured and config_method is not None and _name(config_method) in MEASURED_WEIGHTS_METHODS
            and (flag_method is None or _name(flag_method) == _name(config_method))):
        return None
    if config_method is not None and _name(config_method) not in MODELLED_METHODS:
        tail = ("; or give the free memory after loading (--free-after-load-gib, or plan check with a boot log): "
                "the pools need no weight model then"
                if _name(config_method) in MEASURED_WEIGHTS_METHODS and not measured else "")
        return (f"quantization_config.quant_method '{config_method}' in config.json: its weights are not modelled "
                f"(they would be sized as unquantized); modelled: {modelled_text()}{tail}")
    allowed = MODELLED_METHODS if config_method is not None else ONLINE_METHODS
    if flag_method is not None and _name(flag_method) not in allowed:
        return (f"--quantization {flag_method}: its weights are not modelled (they would be sized as unquantized); "
                f"modelled: {modelled_text()}")
    return None
