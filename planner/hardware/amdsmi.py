"""AMD GPUs through amdsmi (ROCm's counterpart of NVML), for ``--gpu auto`` / ``plan probe`` on a ROCm host.

Thin and guarded: ``amdsmi`` is imported inside :func:`read_amd_gpus` (the planner does not depend on it), every
call is caught, and anything that goes wrong reads as "no AMD GPU seen", so the caller keeps NVML's own message.
The calls are amdsmi's Python API (ROCm 6.x / 7.x: ``amdsmi_init``, ``amdsmi_get_processor_handles``,
``amdsmi_get_gpu_asic_info`` -> ``market_name`` / ``target_graphics_version``, ``amdsmi_get_gpu_memory_total`` /
``amdsmi_get_gpu_memory_usage`` with ``AmdSmiMemoryType.VRAM``, ``amdsmi_shut_down``).

What it is for today: SGLang's ROCm path is not modelled (docs/rocm.md), so a host whose GPUs are AMD gets that
refusal naming the part and its profile, instead of "NVML is not available" (planner.hardware.live.select).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


# the one line an AMD GPU gets, wherever it is met (the pipeline's device, --gpu any, --gpu auto on a ROCm host);
# docs/rocm.md has the is_hip() branches, cited, that make ROCm more than a different capacity
ROCM_NOT_MODELLED = ("SGLang's ROCm path is not modelled yet (is_hip(): aiter attention backend by default, HIP "
                     "graphs, fp8 KV as e4m3fnuz, rocminfo's capacity; docs/rocm.md)")


@dataclass(frozen=True)
class AmdGpu:
    index: int
    name: str  # market name, e.g. 'AMD Instinct MI300X'
    gfx: str | None  # e.g. 'gfx942'
    total_bytes: int | None
    used_bytes: int | None
    profile_id: str | None  # the hwprofiles/ entry that answers to the name, if any


def _import_amdsmi() -> Any | None:
    try:
        import amdsmi  # noqa: PLC0415 - optional, lazy on purpose
    except Exception:  # noqa: BLE001 - ImportError, or the library failing to load its .so
        return None
    return amdsmi


def _call(fn, *args) -> Any:
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 - amdsmi raises its own exception types per call
        return None


def _profile_for(name: str) -> str | None:
    from planner.hardware.profiles import find_profile  # noqa: PLC0415

    try:
        return find_profile(name).id
    except Exception:  # noqa: BLE001 - BadInput: no profile answers to it
        return None


def read_amd_gpus(amdsmi: Any = None) -> list[AmdGpu]:
    """The AMD GPUs amdsmi sees; [] when amdsmi is missing, fails to start or sees none."""
    am = _import_amdsmi() if amdsmi is None else amdsmi
    if am is None:
        return []
    try:
        am.amdsmi_init()
    except Exception:  # noqa: BLE001 - AmdSmiLibraryException: no driver, no permission
        return []
    try:
        handles = _call(am.amdsmi_get_processor_handles) or []
        vram = getattr(getattr(am, "AmdSmiMemoryType", None), "VRAM", None)
        out = []
        for i, h in enumerate(handles):
            asic = _call(am.amdsmi_get_gpu_asic_info, h) or {}
            name = str(asic.get("market_name") or "AMD GPU").strip()
            total = _call(am.amdsmi_get_gpu_memory_total, h, vram) if vram is not None else None
            used = _call(am.amdsmi_get_gpu_memory_usage, h, vram) if vram is not None else None
            out.append(AmdGpu(i, name, asic.get("target_graphics_version") or None,
                              int(total) if isinstance(total, int) else None,
                              int(used) if isinstance(used, int) else None, _profile_for(name)))
        return out
    finally:
        _call(getattr(am, "amdsmi_shut_down", lambda: None))


def describe_amd(gpus: list[AmdGpu]) -> str:
    """One phrase for a refusal: '8x AMD Instinct MI300X (gfx942, 196,592 MiB; profile mi300x)'."""
    g = gpus[0]
    bits = [b for b in (g.gfx, f"{g.total_bytes // (1 << 20):,} MiB" if g.total_bytes else None) if b]
    prof = f"; profile {g.profile_id}" if g.profile_id else "; no profile answers to this name"
    names = {x.name for x in gpus}
    kinds = g.name if len(names) == 1 else ", ".join(sorted(names))
    return f"{len(gpus)}x {kinds} ({', '.join(bits) or 'no memory reading'}{prof})"


def refuse_if_amd(amdsmi: Any = None) -> None:
    """NVML saw no NVIDIA GPU: when amdsmi sees AMD ones, the ROCm refusal naming them (BadInput), else nothing."""
    from planner.errors import BadInput  # noqa: PLC0415

    gpus = read_amd_gpus(amdsmi)
    if gpus:
        raise BadInput(f"--gpu: this machine's GPUs are {describe_amd(gpus)}, read through amdsmi: "
                       f"{ROCM_NOT_MODELLED}")
