"""GPU profiles: one TOML file per GPU in ``hwprofiles/``, loaded into frozen dataclasses (checked by hand: no pydantic import).

A profile states what a card *should* have: the NVML name strings it reports, the NVML total
in MiB (the number SGLang keys its defaults on, ``nvidia-smi --query-gpu=memory.total``), the
memory the driver typically keeps back, its compute capability and bandwidth, and whether its
memory is unified with the host, and how its GPUs talk to each other (``interconnect``: what the
planner charges for NCCL / custom all-reduce at tp > 1, ``planner.engines.sglang.plan.comm_buffer_mib``). Every
number or fact carries a source (``[sources]`` table).

Lookup (``find_profile``) accepts any alias, the profile id, or any NVML name string of a
profile, case-insensitively; unknown names raise :class:`planner.errors.BadInput` listing the
near matches.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal


from planner.datafiles import load_toml
from planner.errors import BadInput

MIB = 1 << 20

# Fields whose value is a number (or a fact) that must name where it came from.
_SOURCED_FIELDS = (
    "memory_total_mib",
    "driver_reserved_mib",
    "cuda_total_mib",
    "system_memory_mib",
    "compute_capability",
    "memory_bandwidth_gbps",
    "interconnect",
)

# ``interconnect``: how the profile's GPUs reach each other at tp > 1, which picks the NCCL / custom all-reduce
# figure charged before the weights (planner.engines.sglang.plan.comm_buffer_mib). Only "pcie" takes the PCIe figure; every other
# value takes the NVLink one, the larger and so the conservative side.
INTERCONNECTS = {
    "pcie": "every variant is a PCIe card without NVSwitch (an optional 2-way NVLink bridge is not assumed)",
    "nvlink": "NVLink / NVSwitch between the GPUs (SXM, HGX, NVL bridges, NVL72)",
    "mixed": "the profile covers both PCIe-only and NVLink variants (e.g. A100 SXM4 and PCIe)",
    "other": "neither (AMD Infinity Fabric, a single-GPU module); no log of its class",
    "unknown": "not stated (the default for a profile without the field)",
}
INTERCONNECT_DEFAULT = "unknown"


class ProfileInvalid(ValueError):
    """A profile field that breaks the schema: ``loc`` names it, the message says how."""

    def __init__(self, loc: str, msg: str):
        super().__init__(f"{loc}: {msg}")
        self.loc, self.msg = loc, msg


# field -> (types accepted, default (REQUIRED: none), constraint); a frozen dataclass checked by hand rather
# than a pydantic model, so the default command does not import pydantic (about as long as numpy's import)
REQUIRED = object()
_SCHEMA: dict[str, tuple[tuple[type, ...], Any, str]] = {
    "id": ((str,), REQUIRED, ""),
    "display_name": ((str,), REQUIRED, ""),
    "vendor": ((str,), REQUIRED, "nvidia|amd"),
    "nvml_names": ((list,), REQUIRED, "non-empty list of str"),
    "aliases": ((list,), (), "list of str"),
    "memory_total_mib": ((int, type(None)), None, "> 0"),
    "memory_total_estimated": ((bool,), False, ""),
    "driver_reserved_mib": ((int, type(None)), None, ">= 0"),
    "cuda_total_mib": ((int, type(None)), None, "> 0"),
    "system_memory_mib": ((int, type(None)), None, "> 0"),
    "compute_capability": ((str, type(None)), None, "major.minor"),
    "gfx_arch": ((str, type(None)), None, ""),
    "memory_bandwidth_gbps": ((float, int, type(None)), None, "> 0"),
    "unified_memory": ((bool,), False, ""),
    "interconnect": ((str,), INTERCONNECT_DEFAULT, "interconnect"),
    "notes": ((str,), "", ""),
    "sources": ((dict,), (), "str -> str"),
}


_MAX_NUMBER = 1 << 30  # MiB (1 PiB) or GB/s: more than any GPU has


def _check_field(name: str, value: Any) -> Any:
    """The value as the profile keeps it (an int bandwidth as float, lists as lists), or ProfileInvalid."""
    types, _, rule = _SCHEMA[name]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        want = " or ".join("none" if t is type(None) else t.__name__ for t in types)
        raise ProfileInvalid(name, f"expected {want}, got {type(value).__name__} {value!r}"[:200])
    if value is None:
        return None
    if rule == "nvidia|amd" and value not in ("nvidia", "amd"):
        raise ProfileInvalid(name, f"expected 'nvidia' or 'amd', got {value!r}")
    if rule in ("> 0", ">= 0") and not (value > 0 or (rule == ">= 0" and value == 0)):
        raise ProfileInvalid(name, f"must be {rule}, got {value!r}")
    if rule in ("> 0", ">= 0") and not value <= _MAX_NUMBER:  # inf, nan, or a size the int64 sizing overflows
        raise ProfileInvalid(name, f"must be a finite number up to {_MAX_NUMBER:,}, got {value!r}"[:200])
    if rule == "interconnect" and value not in INTERCONNECTS:
        near = difflib.get_close_matches(value, list(INTERCONNECTS), n=1)
        hint = f"did you mean '{near[0]}'? " if near else ""
        raise ProfileInvalid(name, f"unknown value {value!r}; {hint}expected one of: {', '.join(INTERCONNECTS)}")
    if rule == "major.minor" and not re.fullmatch(r"\d+\.\d+", value):
        raise ProfileInvalid(name, f"expected 'major.minor' (e.g. '12.0'), got {value!r}")
    if rule.endswith("list of str"):
        if not all(isinstance(x, str) for x in value):
            raise ProfileInvalid(name, "expected a list of strings")
        if rule.startswith("non-empty") and not value:
            raise ProfileInvalid(name, "expected at least 1 item")
        return list(value)
    if rule == "str -> str":
        bad = [k for k, v in value.items() if not isinstance(v, str)]
        if bad:
            raise ProfileInvalid(f"{name}.{bad[0]}", "expected a string")
        return dict(value)
    if name == "memory_bandwidth_gbps":
        return float(value)
    return value


@dataclass(frozen=True, kw_only=True)
class GpuProfile:
    """What one GPU model has, with a source for every number (the fields: ``_SCHEMA``)."""

    id: str  # file stem, lower case, e.g. 'rtxpro6000'
    display_name: str
    vendor: Literal["nvidia", "amd"]
    nvml_names: list[str]  # exact NVML / nvidia-smi name strings
    aliases: list[str] = field(default_factory=list)
    memory_total_mib: int | None = None  # NVML memory.total in MiB; None on unified-memory parts
    memory_total_estimated: bool = False  # true when no real NVML reading was found for memory_total_mib
    driver_reserved_mib: int | None = None  # typical NVML 'Reserved' memory (total - CUDA-visible)
    cuda_total_mib: int | None = None  # cudaMemGetInfo total where a real reading exists
    system_memory_mib: int | None = None  # unified-memory parts: memory the CUDA runtime sees
    compute_capability: str | None = None  # '12.0'; None for AMD parts
    gfx_arch: str | None = None  # AMD gfx target, e.g. 'gfx942'
    memory_bandwidth_gbps: float | None = None
    unified_memory: bool = False
    interconnect: str = INTERCONNECT_DEFAULT  # a key of INTERCONNECTS: the NCCL figure at tp > 1
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for f in fields(self):
            object.__setattr__(self, f.name, _check_field(f.name, getattr(self, f.name)))
        self._check()

    @classmethod
    def validate(cls, data: Any) -> "GpuProfile":
        """A profile from a TOML table: unknown or missing fields, wrong types and broken rules raise
        ProfileInvalid naming the field."""
        if not isinstance(data, dict):
            raise ProfileInvalid("profile", "expected a table")
        for k in data:
            if k not in _SCHEMA:
                raise ProfileInvalid(str(k), "extra inputs are not permitted (unknown field)")
        for k, (_, default, _) in _SCHEMA.items():
            if default is REQUIRED and k not in data:
                raise ProfileInvalid(k, "field required")
        return cls(**data)

    def _check(self) -> None:
        for name in _SOURCED_FIELDS:  # a value other than the field's default needs a source
            if getattr(self, name) != _SCHEMA[name][1] and not self.sources.get(name, "").strip():
                raise ProfileInvalid("profile", f"field '{name}' has a value but no entry in [sources]")
        unknown = set(self.sources) - set(_SOURCED_FIELDS)
        if unknown:
            raise ProfileInvalid("profile", f"[sources] names unknown fields: {sorted(unknown)}")
        if self.unified_memory:
            if self.system_memory_mib is None:
                raise ProfileInvalid("profile", "unified_memory profiles need system_memory_mib")
        elif self.memory_total_mib is None:
            raise ProfileInvalid("profile", "memory_total_mib is required unless unified_memory = true")
        if self.vendor == "nvidia" and self.compute_capability is None:
            raise ProfileInvalid("profile", "NVIDIA profiles need compute_capability")

    # ---- derived facts -------------------------------------------------------------------
    @property
    def capacity_mib(self) -> int:
        """The total SGLang's ``get_device_memory_capacity`` would see, in MiB.

        NVML total on discrete cards; on unified-memory parts nvidia-smi prints ``[N/A]`` and
        SGLang falls back to ``torch.cuda.mem_get_info()[1] // 2**20``
        (srt/utils/common.py:1595-1630 @0.5.11), which we take as ``system_memory_mib``.
        """
        if self.memory_total_mib is not None:
            return self.memory_total_mib
        assert self.system_memory_mib is not None
        return self.system_memory_mib

    @property
    def sm_major(self) -> int | None:
        return None if self.compute_capability is None else int(self.compute_capability.split(".")[0])

    @property
    def names(self) -> list[str]:
        return [self.id, *self.aliases, *self.nvml_names]


def _profile_dirs() -> list[Path]:
    """Where profiles live: the checkout's ``hwprofiles/``, else the installed copy."""
    dirs: list[Path] = []
    here = Path(__file__).resolve().parents[2] / "hwprofiles"
    if here.is_dir():
        dirs.append(here)
    # the package's own directory (what importlib.resources.files("planner") names for an installed package;
    # found from this file, so the command does not import importlib.resources and what it pulls in)
    installed = Path(__file__).resolve().parents[1] / "hwprofiles"
    if installed.is_dir() and installed not in dirs:
        dirs.append(installed)
    return dirs


def load_profile(path: Path) -> GpuProfile:
    """Load one TOML profile; a bad file is a BadInput naming the file and the field."""
    try:
        data = load_toml(path)  # parsed once per content (planner.datafiles)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:  # a directory, bytes not UTF-8, bad TOML
        raise BadInput(f"hwprofile {path.name}: cannot read TOML ({str(exc)[:160]})") from None
    try:
        return GpuProfile.validate(data)
    except ProfileInvalid as exc:
        raise BadInput(f"hwprofile {path.name}: {exc.loc}: {exc.msg}") from None


@lru_cache(maxsize=1)
def load_profiles() -> tuple[GpuProfile, ...]:
    """All built-in profiles, sorted by id (first directory wins on duplicate ids)."""
    seen: dict[str, GpuProfile] = {}
    for d in _profile_dirs():
        for path in sorted(d.glob("*.toml")):
            prof = load_profile(path)
            if prof.id != path.stem:
                raise BadInput(f"hwprofile {path.name}: id '{prof.id}' must equal the file stem")
            seen.setdefault(prof.id, prof)
    return tuple(sorted(seen.values(), key=lambda p: p.id))


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def _squash(s: str) -> str:
    return _norm(s).replace(" ", "").replace("-", "").replace("_", "")


# A family name several cards answer to is a question, not an answer: squashed name -> (the profiles it could
# mean, cards of that name without a profile). "rtx 6000" is printed on three generations: the RTX 6000 Ada
# (48 GB), the RTX PRO 6000 Blackwell (96 GB) and the Turing Quadro RTX 6000 (24 GB).
AMBIGUOUS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "a100": (("a100-40gb", "a100-80gb"), ()),
    "rtx6000": (("rtx6000-ada", "rtxpro6000"), ("Quadro RTX 6000 (Turing, 24 GB)",)),
    "nvidiartx6000": (("rtx6000-ada", "rtxpro6000"), ("Quadro RTX 6000 (Turing, 24 GB)",)),
    "6000": (("rtx6000-ada", "rtxpro6000"), ("Quadro RTX 6000 (Turing, 24 GB)", "RTX A6000 (Ampere, 48 GB)")),
}
# Cards a user may name that have no profile: squashed name -> what it is (the answer says so instead of a
# near match to another card).
UNPROFILED = {
    "quadrortx6000": "Quadro RTX 6000 (Turing, 24 GB)",
    "nvidiaquadrortx6000": "Quadro RTX 6000 (Turing, 24 GB)",
    "a6000": "RTX A6000 (Ampere, 48 GB)",
    "rtxa6000": "RTX A6000 (Ampere, 48 GB)",
    "nvidiartxa6000": "RTX A6000 (Ampere, 48 GB)",
}


def find_profile(name: str) -> GpuProfile:
    """Resolve ``--gpu NAME`` as a user types it: id, alias or NVML name string, case-insensitive, with or
    without spaces / dashes ("rtx-pro-6000" ~ "rtxpro6000", "4090" ~ "rtx4090"). A name several cards answer
    to (``a100``: 40 or 80 GB; ``rtx6000``: Ada, PRO Blackwell or Quadro) is bad input that asks which one."""
    if not isinstance(name, str) or not name.strip():
        raise BadInput("--gpu: empty; give a GPU profile id (e.g. rtxpro6000), an alias or an NVML name")
    key = _norm(name)
    squash = _squash(name)
    if squash in AMBIGUOUS:
        ids, others = AMBIGUOUS[squash]
        raise BadInput(ambiguous_gpu_message(name, [p for p in load_profiles() if p.id in ids], others))
    if squash in UNPROFILED:
        raise BadInput(f"--gpu: the {UNPROFILED[squash]} has no profile yet; on that machine, plan probe "
                       "--write-profile writes one (see plan gpus for the profiled cards)")
    for prof in load_profiles():
        if key in {_norm(n) for n in prof.names}:
            return prof
    for prof in load_profiles():
        if squash in {_squash(n) for n in prof.names}:
            return prof
    # a part of a name as typed ("4090", "6000 ada", "h200 nvl"): one card, or ask which
    if len(squash) >= 3:
        hits = [p for p in load_profiles() if any(squash in _squash(n) for n in p.names)]
        if len(hits) == 1:
            return hits[0]
        if 1 < len(hits) <= 6:
            raise BadInput(ambiguous_gpu_message(name, hits))
    raise BadInput(unknown_gpu_message(name))


def _short_name(p: GpuProfile) -> str:
    return p.display_name.removeprefix("NVIDIA ").split(" (")[0]


def ambiguous_gpu_message(name: str, hits: list[GpuProfile], unprofiled: tuple[str, ...] = ()) -> str:
    opts = [f"{p.id} ({_short_name(p)}, {p.capacity_mib:,} MiB)" for p in hits]
    opts += [f"the {c[:-1]}; no profile)" if c.endswith(")") else f"the {c} (no profile)" for c in unprofiled]
    shown = name if len(name) <= 64 else name[:60] + "..."
    listed = ", ".join(opts[:-1]) + f" or {opts[-1]}" if len(opts) > 1 else opts[0]
    return f"--gpu: '{shown}' is ambiguous: it matches {listed}; say which (e.g. --gpu {hits[0].id})"


def is_profile_name(name: str) -> bool:
    """Whether ``name`` names a profile (or several): ``--gpu 4090`` is the card, not NVML index 4090."""
    try:
        find_profile(name)
    except BadInput as exc:
        return "ambiguous" in str(exc)
    return True


def unknown_gpu_message(name: str) -> str:
    candidates = {n.lower(): p.id for p in load_profiles() for n in [p.id, *p.aliases]}
    near = difflib.get_close_matches(name.lower(), list(candidates), n=5, cutoff=0.4) if len(name) <= 64 else []
    if len(name) > 64:
        name = name[:60] + "..."
    near_ids = list(dict.fromkeys(candidates[n] for n in near))
    hint = f"did you mean: {', '.join(near_ids)}?" if near_ids else (
        "known: " + ", ".join(p.id for p in load_profiles())
    )
    return f"--gpu: unknown GPU '{name}'; {hint} (or add a TOML file to hwprofiles/)"
