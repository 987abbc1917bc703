"""GPU profiles: one TOML file per GPU in ``hwprofiles/``, loaded into pydantic models.

A profile states what a card *should* have: the NVML name strings it reports, the NVML total
in MiB (the number SGLang keys its defaults on, ``nvidia-smi --query-gpu=memory.total``), the
memory the driver typically keeps back, its compute capability and bandwidth, and whether its
memory is unified with the host. Every number carries a source (``[sources]`` table).

Lookup (``find_profile``) accepts any alias, the profile id, or any NVML name string of a
profile, case-insensitively; unknown names raise :class:`planner.errors.BadInput` listing the
near matches.
"""

from __future__ import annotations

import difflib
import tomllib
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

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
)


class GpuProfile(BaseModel):
    """What one GPU model has, with a source for every number."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="file stem, lower case, e.g. 'rtxpro6000'")
    display_name: str
    vendor: Literal["nvidia", "amd"]
    nvml_names: list[str] = Field(min_length=1, description="exact NVML / nvidia-smi name strings")
    aliases: list[str] = Field(default_factory=list)
    memory_total_mib: int | None = Field(
        default=None, gt=0, description="NVML memory.total in MiB; None on unified-memory parts"
    )
    memory_total_estimated: bool = Field(
        default=False, description="true when no real NVML reading was found for memory_total_mib"
    )
    driver_reserved_mib: int | None = Field(
        default=None, ge=0, description="typical NVML 'Reserved' memory (total - CUDA-visible)"
    )
    cuda_total_mib: int | None = Field(
        default=None, gt=0, description="cudaMemGetInfo total where a real reading exists"
    )
    system_memory_mib: int | None = Field(
        default=None, gt=0, description="unified-memory parts: memory the CUDA runtime sees"
    )
    compute_capability: str | None = Field(
        default=None, pattern=r"^\d+\.\d+$", description="'12.0'; None for AMD parts"
    )
    gfx_arch: str | None = Field(default=None, description="AMD gfx target, e.g. 'gfx942'")
    memory_bandwidth_gbps: float | None = Field(default=None, gt=0)
    unified_memory: bool = False
    notes: str = ""
    sources: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> "GpuProfile":
        for name in _SOURCED_FIELDS:
            if getattr(self, name) is not None and not self.sources.get(name, "").strip():
                raise ValueError(f"field '{name}' has a value but no entry in [sources]")
        unknown = set(self.sources) - set(_SOURCED_FIELDS)
        if unknown:
            raise ValueError(f"[sources] names unknown fields: {sorted(unknown)}")
        if self.unified_memory:
            if self.system_memory_mib is None:
                raise ValueError("unified_memory profiles need system_memory_mib")
        elif self.memory_total_mib is None:
            raise ValueError("memory_total_mib is required unless unified_memory = true")
        if self.vendor == "nvidia" and self.compute_capability is None:
            raise ValueError("NVIDIA profiles need compute_capability")
        return self

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
    try:
        installed = Path(str(resources.files("planner") / "hwprofiles"))
        if installed.is_dir() and installed not in dirs:
            dirs.append(installed)
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - defensive
        pass
    return dirs


def load_profile(path: Path) -> GpuProfile:
    """Load one TOML profile; a bad file is a BadInput naming the file and the field."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(f"hwprofile {path.name}: cannot read TOML ({exc})") from None
    try:
        return GpuProfile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or "profile"
        raise BadInput(f"hwprofile {path.name}: {loc}: {err['msg']}") from None


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


# A bare family name that names cards of different memory sizes is a question, not an answer.
AMBIGUOUS = {"a100": ("a100-40gb", "a100-80gb")}


def find_profile(name: str) -> GpuProfile:
    """Resolve ``--gpu NAME`` as a user types it: id, alias or NVML name string, case-insensitive, with or
    without spaces / dashes ("rtx-pro-6000" ~ "rtxpro6000", "4090" ~ "rtx4090"). A name that fits several
    cards of different memory sizes (``a100``: 40 or 80 GB) is bad input that asks which one."""
    if not isinstance(name, str) or not name.strip():
        raise BadInput("--gpu: empty; give a GPU profile id (e.g. rtxpro6000), an alias or an NVML name")
    key = _norm(name)
    if key in AMBIGUOUS:
        raise BadInput(ambiguous_gpu_message(name, [p for p in load_profiles() if p.id in AMBIGUOUS[key]]))
    for prof in load_profiles():
        if key in {_norm(n) for n in prof.names}:
            return prof
    squash = _squash(name)
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


def ambiguous_gpu_message(name: str, hits: list[GpuProfile]) -> str:
    opts = ", ".join(f"{p.id} ({p.capacity_mib:,} MiB)" for p in hits)
    return f"--gpu: '{name}' is ambiguous: it matches {opts}; say which (e.g. --gpu {hits[0].id})"


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
