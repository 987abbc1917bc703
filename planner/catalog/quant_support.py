"""Which quantization methods the planner has a weight model for (the one list; extend it here).

A checkpoint whose ``quantization_config.quant_method`` (``modelopt`` when only ``quant_algo`` is given,
as SGLang reads it) or a launch whose ``--quantization`` names a method outside
:data:`MODELLED_QUANT_METHODS` is refused (one line, exit 2) instead of being sized as bf16: see
:func:`quant_refusal`, called from ``planner.engines.sglang.support``. Today no method is modelled:
only unquantized checkpoints (bf16 / fp16 / fp32 as config.json says) are sized.

The helper that adds a weight model for a method adds the method's name here, with the module that
sizes it, in the same change.
"""

from __future__ import annotations

from typing import Any

# method name (as SGLang spells it, lower case) -> where its weight model lives
MODELLED_QUANT_METHODS: dict[str, str] = {}


def modelled_text() -> str:
    extra = ", ".join(sorted(MODELLED_QUANT_METHODS))
    return "unquantized checkpoints" + (f" and {extra}" if extra else "")


def _name(value: Any) -> str:
    return str(value).strip().lower()


def quant_refusal(config_method: Any, flag_method: Any) -> str | None:
    """One line when the checkpoint's or the flag's quantization has no weight model, else None."""
    if config_method is not None and _name(config_method) not in MODELLED_QUANT_METHODS:
        return (f"quantization_config.quant_method '{config_method}' in config.json: its weights are not modelled "
                f"(they would be sized as unquantized); modelled: {modelled_text()}")
    if flag_method is not None and _name(flag_method) not in MODELLED_QUANT_METHODS:
        return (f"--quantization {flag_method}: its weights are not modelled (they would be sized as unquantized); "
                f"modelled: {modelled_text()}")
    return None
