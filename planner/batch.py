"""``plan --batch FILE.jsonl``: one JSON request per line, validated as a pydantic model.

A line's fields are typed and unknown keys are errors (``extra="forbid"``), so a misspelled field
never falls back to a modelled value silently. ``free_before_load_gib`` / ``free_after_load_gib``
(the names the JSON summary uses) are accepted as aliases of ``free_before_gib`` / ``free_after_gib``.
A bad line gives one ``{"id": ..., "verdict": "bad_input", "error": ...}`` result and the batch goes on.

A line searches only when it says ``"search": true`` (default false: the plan of its flags alone, a fraction
of a millisecond; a search takes tens of ms). The search's own keys (``need_context`` ... ``top``) on a line
without it are that line's error, never ignored. The output's shape is planner/schema's ``batch`` kind.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Any

from planner.errors import BadInput

_MAX_INT = 1 << 40  # far beyond any token count or request count SGLang can hold in memory
SPECULATIVE = ("off", "EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK")
OBJECTIVE = ("concurrency", "kv-tokens", "headroom")


@lru_cache(maxsize=1)
def request_model() -> type:
    """The pydantic model of one line (pydantic is imported here, for the first line the fast check does not
    take: see :func:`plain_request`)."""
    from typing import Literal  # noqa: PLC0415

    from pydantic import (  # noqa: PLC0415
        AliasChoices,
        BaseModel,
        ConfigDict,
        Field,
        StrictBool,
        StrictFloat,
        StrictInt,
        StrictStr,
        field_validator,
    )

    class BatchRequest(BaseModel):
        """One line of a ``--batch`` file."""

        model_config = ConfigDict(extra="forbid", populate_by_name=True)

        id: StrictStr | StrictInt | None = Field(default=None, description="echoed in the result (default: line number)")
        gpu: StrictStr = Field(description="GPU profile id, alias or NVML name (as --gpu)")
        model: StrictStr = Field(description="catalog name, Hugging Face id, config.json or checkpoint dir (as --model)")
        flags: list[StrictStr | StrictInt | StrictFloat] = Field(default_factory=list, description="SGLang flags, one token each")
        env: dict[StrictStr, StrictStr | StrictInt | StrictFloat | StrictBool] = Field(default_factory=dict)
        free_before_gib: StrictFloat | StrictInt | None = Field(default=None, validation_alias=AliasChoices(
            "free_before_gib", "free_before_load_gib"))
        free_after_gib: StrictFloat | StrictInt | None = Field(default=None, validation_alias=AliasChoices(
            "free_after_gib", "free_after_load_gib"))
        sglang_version: StrictStr | None = None
        engine: Literal["sglang", "vllm"] = Field(default="sglang", description="whose rules (as --engine)")
        vllm_version: StrictStr | None = Field(default=None, description="vLLM release (as --vllm-version)")
        measured: dict[StrictStr, StrictFloat | StrictInt] = Field(
            default_factory=dict, description="vLLM's measured inputs under the vLLM oracle's names")
        search: StrictBool = Field(default=False, description="run the flag search (default: plan the flags only)")
        need_context: StrictInt | None = Field(default=None, ge=1, le=_MAX_INT)
        need_concurrency: StrictInt | None = Field(default=None, ge=1, le=_MAX_INT)
        speculative: Literal["off", "EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK"] | None = None
        allow_fp8_kv: StrictBool = False
        allow_bf16_ssm: StrictBool = False
        allow_no_radix: StrictBool = False
        objective: Literal["concurrency", "kv-tokens", "headroom"] = "concurrency"
        top: StrictInt = Field(default=1, ge=1, le=100)

        @field_validator("flags")
        @classmethod
        def _finite(cls, v: list[Any]) -> list[Any]:
            for x in v:
                if isinstance(x, float) and not math.isfinite(x):
                    raise ValueError(f"{x} is not a finite number")
            return v

    return BatchRequest


FIELDS = ("id", "gpu", "model", "flags", "env", "free_before_gib", "free_after_gib", "sglang_version", "engine",
          "vllm_version", "measured", "search",
          "need_context", "need_concurrency", "speculative", "allow_fp8_kv", "allow_bf16_ssm", "allow_no_radix",
          "objective", "top")
ACCEPTED = sorted({*FIELDS, "free_before_load_gib", "free_after_load_gib"})
_ALIASES = {"free_before_load_gib": "free_before_gib", "free_after_load_gib": "free_after_gib"}
# keys only the flag search reads: on a line without "search": true they are an error, not ignored
SEARCH_ONLY = ("need_context", "need_concurrency", "speculative", "allow_fp8_kv", "allow_bf16_ssm", "allow_no_radix",
               "objective", "top")


class PlainRequest:
    """A line :func:`plain_request` accepted: the fields the pydantic model would give it, with its defaults."""

    __slots__ = (*FIELDS, "given")

    def __init__(self, values: dict[str, Any]) -> None:
        self.given = frozenset(values)  # the keys the line holds (pydantic's model_fields_set)
        self.id = None
        self.flags, self.env = [], {}
        self.free_before_gib = self.free_after_gib = self.sglang_version = self.vllm_version = None
        self.engine, self.measured = "sglang", {}
        self.search = False
        self.need_context = self.need_concurrency = self.speculative = None
        self.allow_fp8_kv = self.allow_bf16_ssm = self.allow_no_radix = False
        self.objective, self.top = "concurrency", 1
        for k, v in values.items():
            setattr(self, k, v)


def given_keys(req: Any) -> frozenset[str]:
    """The fields a parsed line holds (aliases under their field's name), whichever parser read it."""
    got = getattr(req, "given", None)
    return frozenset(req.model_fields_set if got is None else got)


def _is_int(x: Any) -> bool:
    return type(x) is int and -(1 << 62) < x < 1 << 62


def _is_number(x: Any) -> bool:
    return _is_int(x) or (type(x) is float and math.isfinite(x))


_CHECKS = {
    "id": lambda v: type(v) is str or _is_int(v) or v is None,
    "gpu": lambda v: type(v) is str,
    "model": lambda v: type(v) is str,
    "flags": lambda v: type(v) is list and all(type(x) is str or _is_number(x) for x in v),
    "env": lambda v: type(v) is dict and all(type(k) is str and (type(x) in (str, bool) or _is_number(x))
                                             for k, x in v.items()),
    "free_before_gib": lambda v: v is None or _is_number(v),
    "free_after_gib": lambda v: v is None or _is_number(v),
    "sglang_version": lambda v: v is None or type(v) is str,
    "engine": lambda v: v in ("sglang", "vllm") and type(v) is str,
    "vllm_version": lambda v: v is None or type(v) is str,
    "measured": lambda v: type(v) is dict and all(type(k) is str and _is_number(x) for k, x in v.items()),
    "search": lambda v: type(v) is bool,
    "need_context": lambda v: v is None or (_is_int(v) and 1 <= v <= _MAX_INT),
    "need_concurrency": lambda v: v is None or (_is_int(v) and 1 <= v <= _MAX_INT),
    "speculative": lambda v: v is None or (type(v) is str and v in SPECULATIVE),
    "allow_fp8_kv": lambda v: type(v) is bool,
    "allow_bf16_ssm": lambda v: type(v) is bool,
    "allow_no_radix": lambda v: type(v) is bool,
    "objective": lambda v: type(v) is str and v in OBJECTIVE,
    "top": lambda v: _is_int(v) and 1 <= v <= 100,
}


def plain_request(raw: dict[str, Any]) -> PlainRequest | None:
    """The request, when every key is a field and every value one the pydantic model takes as it is (exact JSON
    types, in range); else None, and the model decides (and names the error). A test checks that whatever this
    accepts, the model accepts with the same values."""
    values: dict[str, Any] = {}
    for key, v in raw.items():
        name = _ALIASES.get(key, key)
        check = _CHECKS.get(name)
        if check is None or name in values or not check(v):
            return None
        values[name] = v
    if "gpu" not in values or "model" not in values:
        return None
    return PlainRequest(values)


def validation_message(exc) -> str:
    """One line naming the first bad field and what it accepts."""
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err["loc"]) or "line"
    if err["type"] == "extra_forbidden":
        import difflib  # noqa: PLC0415

        key = str(err["loc"][0]) if err["loc"] else "?"
        near = difflib.get_close_matches(key, ACCEPTED, n=1)
        hint = f"did you mean '{near[0]}'? " if near else ""
        return f"unknown key '{key[:60]}'; {hint}accepted: {', '.join(ACCEPTED)}"
    if err["type"] == "missing":
        return f"'{loc}': required"
    got = err.get("input")
    got_text = repr(got)
    if len(got_text) > 60:
        got_text = got_text[:57] + "..."
    return f"'{loc}': {err['msg']} (got {got_text})"


def parse_line(line: str, lineno: int) -> tuple[Any, Any]:
    """(id for the result, the request); raises BadInput naming the field. The id is the line's own when
    it has a usable one, else the line number."""
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise _LineError(lineno, f"line {lineno}: not JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer with too many digits
        raise _LineError(lineno, f"line {lineno}: not JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise _LineError(lineno, f"line {lineno}: each line must be a JSON object, got {type(raw).__name__}")
    rid = raw.get("id")
    if not isinstance(rid, (str, int)) or isinstance(rid, bool):
        rid = lineno
    req = plain_request(raw)
    if req is None:
        from pydantic import ValidationError  # noqa: PLC0415

        try:
            req = request_model().model_validate(raw)
        except ValidationError as exc:
            raise _LineError(rid, f"line {lineno}: {validation_message(exc)}") from None
    if not req.search:
        unused = [k for k in SEARCH_ONLY if k in raw]
        if unused:
            raise _LineError(rid, f"line {lineno}: '{unused[0]}' is read only by the flag search, which this line "
                             'does not run: add "search": true (a line searches only when it says so)')
    return rid, req


class _LineError(BadInput):
    def __init__(self, rid: Any, message: str) -> None:
        super().__init__(message)
        self.rid = rid
