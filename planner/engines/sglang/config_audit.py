"""The config audit: every config.json key classified, and the keys that may change memory refused by name.

``config_audit.toml`` (beside ``flag_audit.toml``) puts each key name the supported architectures' configs
hold in one class: ``modelled`` (the ModelSpec field or rule that reads it), ``no_effect`` (why it does not
change what SGLang allocates at startup) or ``refused`` (may change it and is not modelled).
:func:`config_refusal`, called from ``support.unmodelled`` for the target and the draft, returns one line for the
first key of a config (top level, then ``text_config``) that is:

* **refused**, with a value that is set (not null / false / 0 / "" / [] / {}) and not in the group's ``allow``
  (e.g. ``moe_latent_size`` 1024 of Nemotron-3-Super: latent MoE experts the planner would size at hidden width);
* **unknown** (in no group), unless it cannot size anything. The rule for a key the audit has never seen:

  - a value that turns nothing on passes: null, false, 0, "", [] and {} (a feature that is off, or an empty
    setting, allocates nothing that the same config without the key would not);
  - a name that is metadata by one of the audit's ``[unknown] harmless`` patterns passes whatever its value:
    token ids, tokenizer and chat-template settings, dropout / epsilon / initialiser values, rope details, loss
    coefficients, scaling constants (``*_scale``, ``*_multiplier``, ``*_alpha`` ...), versions, transformers'
    private ``_*`` keys and ``output_*`` / ``return_*`` switches;
  - anything else is refused by name: a positive integer (a size, a count, a layer index), a true, a string
    (a layout, a dtype, a kind), a non-empty list or object, or a number, is what an architecture's code reads
    to shape tensors, and the planner would ignore it. The user's fix is one of: remove the key if it is
    metadata, or report it so it is audited.

The contents of the blocks audited as one key (``quantization_config``, ``vision_config``, ``rope_scaling``, the
draft heads' configs) are checked where they are read (planner/catalog/config_file.py, quant.py, drafts.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from planner.catalog.spec import ModelSpec
from planner.datafiles import load_toml
from planner.engines.sglang.memo import per_object

_HERE = Path(__file__).resolve().parent
CLASSES = ("modelled", "no_effect", "refused")


@dataclass(frozen=True)
class KeyAudit:
    key: str
    cls: str  # modelled | no_effect | refused
    group: str
    why: str
    modelled: str | None = None
    allow: tuple[Any, ...] = ()


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, KeyAudit], tuple[re.Pattern[str], ...]]:
    data = load_toml(_HERE / "config_audit.toml")
    out: dict[str, KeyAudit] = {}
    for g in data["group"]:
        for key in g["keys"]:
            out[key] = KeyAudit(key, g["class"], g["name"], g["why"], g.get("modelled"), tuple(g.get("allow", ())))
    harmless = tuple(re.compile(p) for p in data["unknown"]["harmless"])
    return out, harmless


def config_audit() -> dict[str, KeyAudit]:
    """key -> its audit entry (config_audit.toml)."""
    return _table()[0]


def is_harmless_name(key: str) -> bool:
    """The key's name is metadata by the audit's ``[unknown] harmless`` patterns."""
    return any(p.fullmatch(key) for p in _table()[1])


def is_off(value: Any) -> bool:
    """A value that turns nothing on: null, false, 0, "", [] or {}."""
    if value is None or value is False:
        return True
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value == 0
    return isinstance(value, (str, list, dict)) and len(value) == 0


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else f"'{value}'"
    return text if len(text) <= 40 else text[:37] + "..."


def key_refusal(key: str, value: Any, where: str = "") -> str | None:
    """Why this one key stops the plan (the text after the flag name), or None."""
    name = f"{where}{key}"
    entry = config_audit().get(key)
    if entry is not None:
        if entry.cls != "refused" or is_off(value) or any(value == a and type(value) is type(a) for a in entry.allow):
            return None
        return (f"config.json key '{name}' = {_shown(value)} is not modelled by this planner ({entry.why}); "
                f"the plan stops rather than size the model without it")
    if is_off(value) or is_harmless_name(key):
        return None
    return (f"config.json key '{name}' = {_shown(value)} is not in the planner's config audit "
            "(planner/engines/sglang/config_audit.toml), so its memory effect is unknown and the plan stops rather "
            "than ignore it; remove it if it is metadata, or report it to have it audited")


@per_object
def config_refusal(spec: ModelSpec) -> str | None:
    """The first key of ``spec``'s config (top level, then text_config) that :func:`key_refusal` refuses, as the
    text after the flag name; None when every key is modelled, without effect, or off (once per spec: frozen)."""
    raw = spec.raw
    for key, value in raw.items():
        problem = key_refusal(key, value)
        if problem:
            return problem
    text = raw.get("text_config")
    if isinstance(text, dict):
        for key, value in text.items():
            problem = key_refusal(key, value, "text_config.")
            if problem:
                return problem
    return None


__all__ = ["CLASSES", "KeyAudit", "config_audit", "config_refusal", "is_harmless_name", "is_off", "key_refusal"]
