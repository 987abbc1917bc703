"""The ``server_args=ServerArgs(...)`` dump (a dataclass repr, <=0.5.18) and the ``server_args={...}`` dict of
0.5.19+, parsed without evaluating them."""

from __future__ import annotations

import ast
import re
from typing import Any

__all__ = ["parse_dataclass_repr", "parse_dict_repr", "mistyped_field"]

_FIELD_NAME = re.compile(r"\s*([A-Za-z_]\w*)\s*=")
_DICT_KEY = re.compile(r"\s*['\"]([A-Za-z_]\w*)['\"]\s*:")
_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _skip_string(s: str, i: int) -> int:
    """``s[i]`` is a quote; return the index after the closing quote (or len(s) if unterminated)."""
    q = s[i]
    n = len(s)
    if s.startswith(q * 3, i):
        j = s.find(q * 3, i + 3)
        return n if j < 0 else j + 3
    i += 1
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == q:
            return i + 1
        i += 1
    return n


def _convert_value(raw: str) -> tuple[Any, bool]:
    s = raw.strip()
    try:
        return ast.literal_eval(s), True
    except Exception:
        pass
    low = s.lower()
    if low in ("inf", "+inf", "-inf", "nan"):
        return float(low), True
    return s, False


def parse_dataclass_repr(text: str) -> tuple[dict[str, Any], bool, list[str]]:
    """Parse a dataclass repr such as ``ServerArgs(model_path='m', tp_size=2, ...)``.

    Returns ``(fields, complete, unparsed)``: field -> Python value (``ast.literal_eval``; nested
    lists/dicts/tuples/strings/None/bools/floats work, ``inf``/``nan`` too); values that are not
    literals are kept as their raw text and their names listed in ``unparsed``. ``complete`` is
    False when the text ends before the closing parenthesis (a truncated line). Commas, ``=`` and
    brackets inside quoted strings are handled; never raises.
    """
    s = text.strip()
    m = re.match(r"[A-Za-z_][\w.]*\(", s)
    if m:
        s = s[m.end():]
    return _parse_fields(s, _FIELD_NAME)


def parse_dict_repr(text: str) -> tuple[dict[str, Any], bool, list[str]]:
    """Parse a dict repr such as ``{'model_path': 'm', 'tp_size': 2, ...}`` (0.5.19+'s
    ``server_args.resolved_dict()``), with :func:`parse_dataclass_repr`'s rules: ``complete`` is False when
    the text ends before the closing brace; never raises."""
    s = text.strip()
    if s.startswith("{"):
        s = s[1:]
    return _parse_fields(s, _DICT_KEY)


def _parse_fields(s: str, field_name: re.Pattern) -> tuple[dict[str, Any], bool, list[str]]:
    fields: dict[str, Any] = {}
    unparsed: list[str] = []
    n = len(s)
    i = 0
    complete = False

    def add(name: str, raw: str) -> None:
        val, ok = _convert_value(raw)
        fields[name] = val
        if not ok and name not in unparsed:
            unparsed.append(name)

    while i < n:
        fm = field_name.match(s, i)
        if fm is None:
            if s[i:].strip().startswith((")", "}")):
                complete = True
            break
        name = fm.group(1)
        i = start = fm.end()
        stack: list[str] = []
        ended = False
        while i < n:
            c = s[i]
            if c in "'\"":
                i = _skip_string(s, i)
                continue
            if c == "<" and not stack and not s[start:i].strip():
                j = s.find(">", i)  # <Enum.MEMBER: 1>, <function f at 0x..>
                i = n if j < 0 else j + 1
                continue
            if c in _CLOSERS:
                stack.append(_CLOSERS[c])
            elif c in ")]}":
                if not stack:  # the dataclass's own closing parenthesis
                    add(name, s[start:i])
                    complete = True
                    ended = True
                    i = n
                    break
                stack.pop()
            elif c == "," and not stack:
                add(name, s[start:i])
                i += 1
                ended = True
                break
            i += 1
        if not ended:  # ran off the end: truncated value
            add(name, s[start:n])
            if name not in unparsed and stack:
                unparsed.append(name)
            break
    return fields, complete, unparsed


# The ServerArgs fields the planner reads from a dump (planner/engines/sglang/check.py passes them back as flags; planner/logs/
# reads the speculative ones), with the Python type SGLang's ServerArgs gives each. A dump written by SGLang holds
# these types; another one means the line was damaged, and the check says so instead of planning with it.
_INT_FIELDS = ("tp_size", "chunked_prefill_size", "max_prefill_tokens", "cuda_graph_max_bs", "page_size",
               "context_length", "max_running_requests", "max_total_tokens", "max_mamba_cache_size",
               "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens")
_FLOAT_FIELDS = ("mem_fraction_static", "mamba_full_memory_ratio")
_STR_FIELDS = ("model_path", "mamba_scheduler_strategy", "mamba_ssm_dtype", "mamba_radix_cache_strategy",
               "kv_cache_dtype", "attention_backend", "speculative_algorithm", "speculative_draft_model_path")
_LIST_FIELDS = ("cuda_graph_bs",)


def _type_ok(name: str, value: Any) -> str | None:
    """None when ``value`` has the type of ServerArgs field ``name`` (or the planner does not read it), else what
    the field holds."""
    if value is None:
        return None
    if name in _INT_FIELDS and (isinstance(value, bool) or not isinstance(value, int)):
        return "a whole number or None"
    if name in _FLOAT_FIELDS and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return "a number or None"
    if name in _STR_FIELDS and not isinstance(value, str):
        return "a string or None"
    if name in _LIST_FIELDS and (not isinstance(value, list)
                                 or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)):
        return "a list of whole numbers or None"
    return None


def mistyped_field(args: dict[str, Any]) -> tuple[str, str, Any] | None:
    """(field, what it must hold, the value) of the first field the planner reads whose value has another type."""
    for name in (*_INT_FIELDS, *_FLOAT_FIELDS, *_STR_FIELDS, *_LIST_FIELDS):
        want = _type_ok(name, args.get(name))
        if want is not None:
            return name, want, args[name]
    return None
