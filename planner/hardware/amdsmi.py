"""AMD GPUs through amdsmi (ROCm's counterpart of NVML), for ``--gpu auto`` / ``--gpu 0,1`` on a ROCm host.

Thin and guarded: ``amdsmi`` is imported inside :func:`read_amd_gpus` (the planner does not depend on it), every
call is caught, and anything that goes wrong reads as "no AMD GPU seen", so the caller keeps NVML's own message.
The calls are amdsmi's Python API (ROCm 6.x / 7.x: ``amdsmi_init``, ``amdsmi_get_processor_handles``,
``amdsmi_get_gpu_asic_info`` -> ``market_name`` / ``target_graphics_version``, ``amdsmi_get_gpu_memory_total`` /
``amdsmi_get_gpu_memory_usage`` with ``AmdSmiMemoryType.VRAM``, ``amdsmi_shut_down``).

SGLang's ROCm path is modelled for the gfx targets of planner/engines/sglang/pipeline/rocm.py (MI300X, MI325X:
gfx942; MI355X: gfx950): on a host of those, :func:`amd_selection` gives the live selection the plan runs on (the
profile with the host's smallest VRAM total, which SGLang reads as rocminfo's Pool 1, and the free memory now); any
other AMD GPU is refused naming the part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


# the one line an AMD GPU outside the modelled set gets (the pipeline's device, --gpu any, --gpu auto on a ROCm
# host); docs/rocm.md has the is_hip() branches, cited, that make ROCm more than a different capacity
ROCM_NOT_MODELLED = ("SGLang's ROCm path is modelled for gfx942 / gfx950 (AMD Instinct MI300X, MI325X, MI355X) "
                     "only (docs/rocm.md)")


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


def amd_selection(selector, amdsmi: Any = None) -> tuple | None:
    """``--gpu auto`` / ``--gpu 0,1`` on a host whose GPUs amdsmi sees: the fields of a
    ``planner.hardware.live.LiveSelection`` (profile, selected GPUs, every GPU, free now, held, note) from amdsmi's
    readings, or None when it sees none. A GPU without a modelled profile is refused by name."""
    from dataclasses import replace  # noqa: PLC0415

    from planner.errors import BadInput  # noqa: PLC0415
    from planner.hardware.nvml import LiveGpu  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415

    host = read_amd_gpus(amdsmi)
    if not host:
        return None
    if selector == "auto":
        gpus = host
    else:
        bad = [i for i in selector if i < 0 or i >= len(host)]
        if bad:
            raise BadInput(f"--gpu: GPU index {bad[0]} is out of range; this machine has {len(host)} AMD GPU(s)")
        gpus = [host[i] for i in selector]
    if len({g.name for g in gpus}) > 1:
        raise BadInput(f"--gpu: the selected GPUs differ ({', '.join(sorted({g.name for g in gpus}))}); select one "
                       "kind, e.g. --gpu 0")
    g0 = gpus[0]
    base = find_profile(g0.profile_id) if g0.profile_id else None
    if base is None or base.vendor != "amd":
        raise BadInput(f"--gpu: this machine's GPUs are {describe_amd(gpus)}, read through amdsmi: {ROCM_NOT_MODELLED}")
    totals = [g.total_bytes for g in host if g.total_bytes]
    frees = [g.total_bytes - (g.used_bytes or 0) for g in gpus if g.total_bytes]
    if not totals or not frees:
        raise BadInput(f"--gpu: amdsmi gave no memory reading for {g0.name}; use --gpu {base.id}")
    today = _date_today()
    src = f"amdsmi reading on {today}"
    host_min = min(totals) // (1 << 20)
    prof = replace(base, display_name=f"{g0.name} (live: {len(gpus)} selected of {len(host)} on this host)",
                   memory_total_mib=int(host_min), memory_total_estimated=False,
                   sources={**base.sources, "memory_total_mib": f"{src}: minimum VRAM total over all {len(host)} "
                            "GPU(s) of the host (SGLang's rocminfo Pool 1: get_amdgpu_memory_capacity)"})
    every = [LiveGpu(index=g.index, name=g.name, uuid=None, total_bytes=g.total_bytes, reserved_bytes=None,
                     free_bytes=(g.total_bytes - (g.used_bytes or 0)) if g.total_bytes else None,
                     used_bytes=g.used_bytes, processes=(), cc=None, mig_enabled=False, mig_instances=(),
                     unified_memory=False, system_memory_bytes=None, driver_version=None, profile_id=g.profile_id)
             for g in host]
    live = [every[g.index] for g in gpus]
    held = max((g.used_bytes or 0) for g in gpus)  # amdsmi's VRAM in use: whatever holds it now
    note = (f"read through amdsmi ({describe_amd(gpus)}); SGLang keys its defaults on the smallest GPU memory of the "
            f"host, rocminfo's Pool 1 ({int(host_min):,} MiB here)")
    return prof, live, every, min(frees), held, note


def _date_today() -> str:
    import datetime as _dt  # noqa: PLC0415

    return _dt.date.today().isoformat()
