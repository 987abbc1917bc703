"""``plan --batch FILE.jsonl``: one JSON request per line, validated as a pydantic model.

A line's fields are typed and unknown keys are errors (``extra="forbid"``), so a misspelled field
never falls back to a modelled value silently. ``free_before_load_gib`` / ``free_after_load_gib``
(the names the JSON summary uses) are accepted as aliases of ``free_before_gib`` / ``free_after_gib``.
A bad line gives one ``{"id": ..., "error": ...}`` result and the batch goes on.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError
from pydantic import field_validator

from planner.errors import BadInput

_MAX_INT = 1 << 40  # far beyond any token count or request count SGLang can hold in memory


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
    search: StrictBool = True
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


ACCEPTED = sorted({*BatchRequest.model_fields, "free_before_load_gib", "free_after_load_gib"})


def validation_message(exc: ValidationError) -> str:
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


def parse_line(line: str, lineno: int) -> tuple[Any, BatchRequest]:
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
    try:
        return rid, BatchRequest.model_validate(raw)
    except ValidationError as exc:
        raise _LineError(rid, f"line {lineno}: {validation_message(exc)}") from None


class _LineError(BadInput):
    def __init__(self, rid: Any, message: str) -> None:
        super().__init__(message)
        self.rid = rid
