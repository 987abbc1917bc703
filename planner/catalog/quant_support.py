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


def quant_refusal(config_method: Any, flag_method: Any) -> str | None:
    """One line when the checkpoint's or the flag's quantization has no weight model, else None."""
    if config_method is None and flag_method is None:  # nothing quantized: the weight models are not needed
        return None
    from planner.catalog.quant import MODELLED_METHODS, ONLINE_METHODS  # noqa: PLC0415

    if config_method is not None and _name(config_method) not in MODELLED_METHODS:
        return (f"quantization_config.quant_method '{config_method}' in config.json: its weights are not modelled "
                f"(they would be sized as unquantized); modelled: {modelled_text()}")
    allowed = MODELLED_METHODS if config_method is not None else ONLINE_METHODS
    if flag_method is not None and _name(flag_method) not in allowed:
        return (f"--quantization {flag_method}: its weights are not modelled (they would be sized as unquantized); "
                f"modelled: {modelled_text()}")
    return None
