"""What the explorer shows for vLLM (``plan tui --engine vllm``, or ``e`` in the app): pure functions, no Textual.

vLLM is reached as the CLI reaches it, through its front end (:mod:`planner.engines.registry` ``engine("vllm")
.plan(PlanRequest) -> PlanOutcome``); nothing here sizes anything. This module holds the knobs the form edits
(vLLM's own flags), the round trip between a flag list and the form, and the text of the panels, read from the
outcome's JSON (``verdict``, ``why``, the oracle summary's ``num_gpu_blocks`` / ``kv_cache_size_tokens`` /
``max_concurrency`` ..., ``recommendation``, ``launch``; docs/json.md "vLLM").
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any

from planner.errors import BadInput, PlannerError

UNSET = ""  # a knob left to vLLM's default
MTP = "mtp-tokens"  # the form's key for --speculative-config '{"method": "mtp", "num_speculative_tokens": N}'
PREFIX = "prefix-caching"


@dataclass(frozen=True)
class Knob:
    key: str  # the form's key: the vLLM flag, or MTP / PREFIX
    kind: str  # float | int | choice
    help: str
    choices: tuple[tuple[str, str], ...] = ()  # (label, value); UNSET = vLLM's default


KNOBS: tuple[Knob, ...] = (
    Knob("--gpu-memory-utilization", "float", "the fraction of the CUDA total vLLM may use (0.34: 1.0, 0.33: 0.92)"),
    Knob("--max-model-len", "int", "the longest request in tokens (default: the model's own)"),
    Knob("--max-num-seqs", "int", "requests running at once (CUDA graphs are captured up to it)"),
    Knob("--max-num-batched-tokens", "int", "tokens per scheduler step (the profile run's forward)"),
    Knob("--kv-cache-dtype", "choice", "KV cache dtype",
         (("auto", UNSET), ("fp8", "fp8"), ("fp8_e4m3", "fp8_e4m3"), ("fp8_e5m2", "fp8_e5m2"),
          ("bfloat16", "bfloat16"))),
    Knob("--block-size", "int", "KV block size in tokens (hybrid models: vLLM raises it to the mamba page)"),
    Knob(PREFIX, "choice", "prefix caching (--enable-prefix-caching / --no-enable-prefix-caching)",
         (("default", UNSET), ("on", "on"), ("off", "off"))),
    Knob(MTP, "int", "MTP speculative tokens: --speculative-config '{\"method\": \"mtp\", "
         "\"num_speculative_tokens\": N}' (empty: none)"),
)
KNOB_BY_KEY = {k.key: k for k in KNOBS}
LABELS = {"--gpu-memory-utilization": "--gpu-memory-util", MTP: "MTP tokens", PREFIX: "prefix caching"}


def label(knob: Knob) -> str:
    return LABELS.get(knob.key, knob.key)


def empty_form() -> dict[str, str]:
    return {k.key: UNSET for k in KNOBS}


def knob_error(knob: Knob, text: str) -> str | None:
    """One line when the field's text is not a value the knob takes (checked before vLLM sees it)."""
    text = text.strip()
    if not text or knob.kind == "choice":
        return None
    try:
        v = float(text) if knob.kind == "float" else int(text)
    except ValueError:
        return f"{label(knob)}: {text[:20]!r} is not {'a number' if knob.kind == 'float' else 'an integer'}"
    if knob.kind == "float" and not 0 < v <= 1:
        return f"{label(knob)}: {text[:20]} is outside (0, 1]"
    if knob.kind == "int" and v < (0 if knob.key == MTP else 1) and not (knob.key == "--max-model-len" and v == -1):
        return f"{label(knob)}: {text[:20]} is too small"
    return None


def flags_from_form(values: dict[str, str], extras: list[str]) -> list[str]:
    out: list[str] = []
    for knob in KNOBS:
        v = str(values.get(knob.key, UNSET)).strip()
        if not v:
            continue
        if knob.key == PREFIX:
            out.append("--enable-prefix-caching" if v == "on" else "--no-enable-prefix-caching")
        elif knob.key == MTP:
            if int(v) > 0:
                out += ["--speculative-config", json.dumps({"method": "mtp", "num_speculative_tokens": int(v)})]
        else:
            out += [knob.key, v]
    return out + list(extras)


def form_from_flags(flags: list[str]) -> tuple[dict[str, str], list[str]]:
    """(the form's values, the flags it has no field for): ``--flag v`` / ``--flag=v``; an MTP
    ``--speculative-config`` fills MTP tokens, any other speculative config stays in the extras."""
    values, extras, i = empty_form(), [], 0
    while i < len(flags):
        tok = flags[i]
        name, eq, inline = tok.partition("=")
        if name in ("--enable-prefix-caching", "--no-enable-prefix-caching") and not eq:
            values[PREFIX] = "on" if name == "--enable-prefix-caching" else "off"
            i += 1
            continue
        takes = name in KNOB_BY_KEY or name == "--speculative-config"
        if takes:
            value = inline if eq else (flags[i + 1] if i + 1 < len(flags) else None)
            step = 1 if eq else 2
            if value is not None and name == "--speculative-config":
                try:
                    spec = json.loads(value)
                except ValueError:
                    spec = None
                if (isinstance(spec, dict) and set(spec) == {"method", "num_speculative_tokens"}
                        and spec["method"] == "mtp" and isinstance(spec["num_speculative_tokens"], int)):
                    values[MTP] = str(spec["num_speculative_tokens"])
                    i += step
                    continue
            elif value is not None:
                knob = KNOB_BY_KEY[name]
                if knob.kind != "choice" or value in {v for _, v in knob.choices}:
                    values[name] = value
                    i += step
                    continue
        extras.append(tok)
        i += 1
    return values, extras


@dataclass
class VllmView:
    """One re-plan: the outcome (None when the inputs are bad) and what the panels print."""

    flags: list[str]
    outcome: Any = None  # PlanOutcome
    error: str | None = None  # one line: what is wrong with the inputs
    field_errors: dict[str, str] = field(default_factory=dict)

    @property
    def json(self) -> dict[str, Any]:
        return self.outcome.json if self.outcome is not None else {}

    @property
    def verdict(self) -> str:
        return self.outcome.verdict if self.outcome is not None else "bad_input"

    @property
    def command(self) -> str:
        return self.outcome.launch if self.outcome is not None else ""


def replan(gpu: Any, model: Any, version: str, values: dict[str, str], other: str, search: bool = False,
           need_context: int | None = None, need_concurrency: int | None = None) -> VllmView:
    """The form -> vLLM's front end's plan; bad input (a field, the other flags, a launch vLLM's rules here do not
    model) comes back as one line, never raised."""
    errors = {k: e for k, e in ((k.key, knob_error(k, str(values.get(k.key, "")))) for k in KNOBS) if e}
    try:
        extras = shlex.split(other or "")
    except ValueError as exc:
        errors["other"] = f"other flags: {exc}"
        extras = []
    if errors:
        return VllmView([], error=next(iter(errors.values())), field_errors=errors)
    flags = flags_from_form(values, extras)
    if gpu is None or model is None:
        return VllmView(flags, error="pick a GPU and a model")
    from planner.engines.interface import PlanRequest  # noqa: PLC0415
    from planner.engines.registry import engine  # noqa: PLC0415

    try:
        outcome = engine("vllm").plan(PlanRequest(gpu=gpu, model=model, flags=tuple(flags), env={}, version=version,
                                                  need_context=need_context, need_concurrency=need_concurrency,
                                                  search=search))
    except PlannerError as exc:
        return VllmView(flags, error=_one_line(str(exc)))
    except (ValueError, TypeError, KeyError) as exc:  # a value the front end did not expect: a line, not a traceback
        return VllmView(flags, error=_one_line(f"vLLM: {type(exc).__name__}: {exc}"))
    return VllmView(flags, outcome=outcome)


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]


VERDICT_TEXT = {"fits": "FITS", "rejected": "DOES NOT START", "oom_risk": "OUT-OF-MEMORY RISK"}


def verdict_text(view: VllmView) -> str:
    if view.outcome is None:
        return f"Bad input: {view.error}"
    d = view.json
    head = f"vLLM {d.get('vllm_version')}: {VERDICT_TEXT.get(view.verdict, view.verdict.upper())}"
    if d.get("why"):
        head += f"\n{d['why']}"
    needs = d.get("needs") or {}
    if view.verdict == "fits" and not needs.get("met", True):
        head += "\nStarts, but does not reach the needs"
    return head


def _n(v: Any, fmt: str = "{:,}") -> str:
    return "-" if v is None else fmt.format(v)


def capacity_rows(view: VllmView) -> list[tuple[str, str]]:
    """The KV cache and what it serves, as vLLM logs them (the oracle summary's names)."""
    if view.outcome is None:
        return []
    s = view.json.get("summary") or {}
    avail = s.get("available_kv_bytes")
    rows = [("Available KV cache memory", _n(None if avail is None else avail / 2**30, "{:.2f} GiB")),
            ("KV cache blocks", _n(s.get("num_gpu_blocks"))),
            ("block size (tokens)", _n(s.get("block_size"))),
            ("GPU KV cache size (tokens)", _n(s.get("kv_cache_size_tokens"))),
            ("max_model_len", _n(s.get("max_model_len"))),
            ("Maximum concurrency", _n(s.get("max_concurrency"), "{:.2f}x")),
            ("max_num_seqs", _n(s.get("max_num_seqs"))),
            ("max_num_batched_tokens", _n(s.get("max_num_batched_tokens"))),
            ("gpu_memory_utilization", _n(s.get("gpu_memory_utilization"), "{:g}")),
            ("kv cache dtype", _n(s.get("kv_cache_dtype"), "{}")),
            ("CUDA graphs", _n(s.get("cudagraph_mode"), "{}"))]
    return rows


def capacity_text(view: VllmView) -> str:
    rows = capacity_rows(view)
    if not rows:
        return ""
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)


def recommendation_text(view: VllmView, searching: bool = False) -> str:
    if view.outcome is None:
        return ""
    rec = view.json.get("recommendation")
    if rec is None:
        return "Searching vLLM's knobs..." if searching else "No search needed: the launch starts and meets the needs."
    if rec.get("found"):
        return (f"Recommended ({rec['tried']} launches tried; {rec['checked']}): {' '.join(rec['changes']) or '-'}\n"
                f"  {_n(rec.get('num_gpu_blocks'))} blocks, {_n(rec.get('kv_cache_size_tokens'))} tokens, "
                f"concurrency {_n(rec.get('max_concurrency'), '{:.2f}x')} at {_n(rec.get('max_model_len'))}")
    near = rec.get("nearest") or {}
    return (f"No launch found that reaches the needs ({rec['tried']} tried)"
            + (f"; nearest: {' '.join(near.get('changes') or [])}" if near else ""))


def log_text(view: VllmView) -> str:
    lines = view.json.get("log") or []
    return "\n".join(lines)


def resolve(gpu_id: str, model_ref: str) -> tuple[Any, Any, dict[str, str]]:
    """The GPU profile and the model; errors keyed by field."""
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415

    errors: dict[str, str] = {}
    gpu = model = None
    try:
        gpu = find_profile(gpu_id)
    except BadInput as exc:
        errors["gpu"] = _one_line(str(exc))
    try:
        model = resolve_model(model_ref)
    except BadInput as exc:
        errors["model"] = _one_line(str(exc))
    return gpu, model, errors


def versions() -> tuple[str, ...]:
    from planner.engines.registry import releases  # noqa: PLC0415

    return tuple(releases("vllm")[0])


def default_version(given: str | None) -> str:
    """--vllm-version (0.33 / 0.34 / x.y.z) as the CLI reads it, else the front end's default (the vllm installed
    here, else the latest modelled); BadInput for a release not modelled."""
    if given is not None:
        from planner.cli_engines import vllm_version  # noqa: PLC0415

        return vllm_version(given, None)[0]
    from planner.engines.registry import engine  # noqa: PLC0415

    return engine("vllm").default_version()[0]
