"""Live GPU readings through NVML (nvidia-ml-py), guarded the way nvitop and gpustat guard theirs.

Only NVML is used: no CUDA context is created, so probing never takes the ~300-500 MiB a first CUDA call
costs on a GPU that a server is using (hardware-nvml-ecosystem.md §2.4).

* ``pynvml`` is imported inside functions, so this module imports on machines without it, and every
  entry point takes the module as ``nvml=`` so tests can hand in a fake.
* Memory: ``nvmlDeviceGetMemoryInfo(h, version=nvmlMemory_v2)`` first (``total reserved free used``);
  an old driver (no ``nvmlDeviceGetMemoryInfo_v2`` -> ``FunctionNotFound``), an old binding (no
  ``version=`` -> ``TypeError``) or any other NVML error except NOT_SUPPORTED falls back to v1
  (``total free used``, where ``used`` includes the driver's reserve). NOT_SUPPORTED, or a zero total,
  means a unified-memory part (GB10, Thor): the memory numbers then come from ``/proc/meminfo``.
* MIG: per-instance memory is read on the MIG device handles.
* ``nvmlShutdown`` always runs once ``nvmlInit`` succeeded.

SGLang keys its defaults on ``nvidia-smi --query-gpu=memory.total`` (MiB), the **minimum over every GPU of
the host** (nvidia-smi ignores ``CUDA_VISIBLE_DEVICES``); see :func:`host_min_total_mib`.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Sequence

from planner.errors import BadInput, PlannerError

MIB = 1 << 20

# NVML return codes (nvml.h); used when the module handed in does not define them.
_NVML_ERROR_NOT_SUPPORTED = 3
_NVML_ERROR_NOT_FOUND = 6
_NVML_ERROR_FUNCTION_NOT_FOUND = 13
_NVML_DEVICE_MIG_ENABLE = 1
_NOT_AVAILABLE_ULL = (1 << 64) - 1  # NVML_VALUE_NOT_AVAILABLE_ulonglong

_FALLBACK_HINT = "Use --gpu NAME with a profile from hwprofiles/ instead"


class NvmlUnavailable(PlannerError):
    """NVML cannot be used here: no driver, no libnvidia-ml, no binding, or init failed."""

    exit_code = 2


@dataclass(frozen=True)
class LiveGpu:
    """One physical GPU as NVML reports it. Byte counts are bytes; None where NVML gave nothing."""

    index: int
    name: str
    uuid: str | None
    total_bytes: int | None  # None on unified-memory parts (and if memory could not be read)
    reserved_bytes: int | None  # v2 memory info only
    free_bytes: int | None  # unified parts: MemAvailable
    used_bytes: int | None  # v1: includes the reserve; unified: MemTotal - MemAvailable
    processes: tuple[tuple[int, int | None], ...]  # (pid, used bytes or None)
    cc: tuple[int, int] | None
    mig_enabled: bool
    mig_instances: tuple[tuple[int, int], ...]  # (MIG slot index, memory bytes)
    unified_memory: bool
    system_memory_bytes: int | None  # unified parts: /proc/meminfo MemTotal
    driver_version: str | None
    profile_id: str | None
    memory_api: Literal["v2", "v1"] | None = None  # which nvmlDeviceGetMemoryInfo answered
    notes: tuple[str, ...] = field(default_factory=tuple)  # NVML calls that failed and were tolerated

    @property
    def total_mib(self) -> int | None:
        """NVML total in whole MiB, as nvidia-smi prints ``memory.total``."""
        return None if self.total_bytes is None else self.total_bytes // MIB

    @property
    def system_memory_mib(self) -> int | None:
        return None if self.system_memory_bytes is None else self.system_memory_bytes // MIB


# ---- helpers -------------------------------------------------------------------------------------


def _import_pynvml() -> Any:
    try:
        import pynvml  # noqa: PLC0415 - lazy on purpose
    except ImportError:
        raise NvmlUnavailable(
            "NVML is not available on this machine (python package nvidia-ml-py is not installed: "
            f"pip install nvidia-ml-py). {_FALLBACK_HINT}"
        ) from None
    return pynvml


def _error_base(nv: Any) -> type[BaseException]:
    base = getattr(nv, "NVMLError", None)
    return base if isinstance(base, type) and issubclass(base, BaseException) else Exception


def _code(nv: Any, name: str, default: int) -> int:
    value = getattr(nv, name, default)
    return value if isinstance(value, int) else default


def _is_nvml_error(nv: Any, exc: BaseException, code_name: str, default: int) -> bool:
    """True when ``exc`` is the NVML error with that code (by value, so fakes and subclasses agree)."""
    if not isinstance(exc, _error_base(nv)):
        return False
    return getattr(exc, "value", None) == _code(nv, code_name, default)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace").strip("\x00").strip()
    return str(value).strip()


def _read_meminfo_text() -> str:
    return Path("/proc/meminfo").read_text(encoding="ascii", errors="replace")


def _parse_meminfo(text: str) -> dict[str, int]:
    """``{'MemTotal': bytes, 'MemAvailable': bytes, ...}`` from /proc/meminfo text (values in kB)."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\w+):\s*(\d+)\s*(kB)?\s*$", line)
        if m:
            out[m.group(1)] = int(m.group(2)) * (1024 if m.group(3) else 1)
    return out


def _bytes_or_none(value: Any) -> int | None:
    if value is None:
        return None
    try:
        value = int(value)
    except (TypeError, ValueError):
        return None
    return None if value < 0 or value == _NOT_AVAILABLE_ULL else value


class _Unified(Exception):
    """Memory info is NOT_SUPPORTED (or zero): a unified-memory part."""


def _memory_info(nv: Any, handle: Any, notes: list[str]) -> tuple[str, Any] | None:
    """(api, struct) from v2 with v1 fallback; raises _Unified on NOT_SUPPORTED; None if both fail."""
    err = _error_base(nv)
    v2 = getattr(nv, "nvmlMemory_v2", None)
    if v2 is not None:
        try:
            return "v2", nv.nvmlDeviceGetMemoryInfo(handle, version=v2)
        except TypeError:  # binding without the version= keyword
            pass
        except err as exc:
            if _is_nvml_error(nv, exc, "NVML_ERROR_NOT_SUPPORTED", _NVML_ERROR_NOT_SUPPORTED):
                raise _Unified from None
            if not _is_nvml_error(nv, exc, "NVML_ERROR_FUNCTION_NOT_FOUND", _NVML_ERROR_FUNCTION_NOT_FOUND):
                notes.append(f"nvmlDeviceGetMemoryInfo_v2: {_one_line(exc)}; used v1")
    try:
        return "v1", nv.nvmlDeviceGetMemoryInfo(handle)
    except err as exc:
        if _is_nvml_error(nv, exc, "NVML_ERROR_NOT_SUPPORTED", _NVML_ERROR_NOT_SUPPORTED):
            raise _Unified from None
        notes.append(f"nvmlDeviceGetMemoryInfo: {_one_line(exc)}")
        return None


def _processes(nv: Any, handle: Any, notes: list[str]) -> tuple[tuple[int, int | None], ...]:
    procs = None
    for fn_name in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetComputeRunningProcesses_v2"):
        fn = getattr(nv, fn_name, None)
        if fn is None:
            continue
        try:
            procs = fn(handle)
            break
        except Exception as exc:  # NVMLError, NVMLLibraryMismatchError (old driver), ...
            notes.append(f"{fn_name}: {_one_line(exc)}")
    out = []
    for p in procs or ():
        pid = getattr(p, "pid", None)
        if pid is None:
            continue
        out.append((int(pid), _bytes_or_none(getattr(p, "usedGpuMemory", None))))
    return tuple(out)


def _mig(nv: Any, handle: Any, notes: list[str]) -> tuple[bool, tuple[tuple[int, int], ...]]:
    err = _error_base(nv)
    get_mode = getattr(nv, "nvmlDeviceGetMigMode", None)
    if get_mode is None:
        return False, ()
    try:
        current = get_mode(handle)[0]
    except err:  # NOT_SUPPORTED on cards without MIG; anything else: treat as off
        return False, ()
    if current != _code(nv, "NVML_DEVICE_MIG_ENABLE", _NVML_DEVICE_MIG_ENABLE):
        return False, ()
    instances: list[tuple[int, int]] = []
    try:
        count = int(nv.nvmlDeviceGetMaxMigDeviceCount(handle))
    except err as exc:
        notes.append(f"nvmlDeviceGetMaxMigDeviceCount: {_one_line(exc)}")
        return True, ()
    for slot in range(count):
        try:
            mig = nv.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
        except err as exc:
            if not _is_nvml_error(nv, exc, "NVML_ERROR_NOT_FOUND", _NVML_ERROR_NOT_FOUND):
                notes.append(f"nvmlDeviceGetMigDeviceHandleByIndex({slot}): {_one_line(exc)}")
            continue  # NOT_FOUND: empty slot
        try:
            got = _memory_info(nv, mig, notes)
        except _Unified:  # not unified memory here: try plain v1 on the MIG handle
            try:
                got = ("v1", nv.nvmlDeviceGetMemoryInfo(mig))
            except err:
                got = None
        total = _bytes_or_none(getattr(got[1], "total", None)) if got else None
        if not total:
            try:  # MIG attributes carry the slice size in MB (MiB)
                total = int(nv.nvmlDeviceGetAttributes(mig).memorySizeMB) * MIB
            except Exception as exc:  # noqa: BLE001 - tolerate and note
                notes.append(f"MIG {slot} memory: {_one_line(exc)}")
                continue
        instances.append((slot, total))
    return True, tuple(instances)


def _match_profile(name: str) -> str | None:
    try:
        from planner.hardware.profiles import find_profile  # noqa: PLC0415 - needs pydantic
    except ImportError:
        return None
    try:
        return find_profile(name).id
    except BadInput:
        return None


def _read_one(nv: Any, index: int, driver: str | None, meminfo_reader: Callable[[], str]) -> LiveGpu:
    err = _error_base(nv)
    notes: list[str] = []
    handle = nv.nvmlDeviceGetHandleByIndex(index)
    try:
        name = _text(nv.nvmlDeviceGetName(handle))
    except err as exc:
        notes.append(f"nvmlDeviceGetName: {_one_line(exc)}")
        name = f"GPU {index}"
    try:
        uuid: str | None = _text(nv.nvmlDeviceGetUUID(handle)) or None
    except err:
        uuid = None
    try:
        major, minor = nv.nvmlDeviceGetCudaComputeCapability(handle)
        cc: tuple[int, int] | None = (int(major), int(minor))
    except err as exc:
        notes.append(f"nvmlDeviceGetCudaComputeCapability: {_one_line(exc)}")
        cc = None

    total = reserved = free = used = system = None
    api = None
    unified = False
    try:
        got = _memory_info(nv, handle, notes)
        if got is not None:
            api, mem = got
            total = _bytes_or_none(getattr(mem, "total", None))
            if total == 0:  # nvitop: a zero total also means unified memory
                raise _Unified
            free = _bytes_or_none(getattr(mem, "free", None))
            used = _bytes_or_none(getattr(mem, "used", None))
            reserved = _bytes_or_none(getattr(mem, "reserved", None)) if api == "v2" else None
    except _Unified:
        unified, api, total, reserved = True, None, None, None
        try:
            info = _parse_meminfo(meminfo_reader())
        except Exception as exc:  # noqa: BLE001 - /proc may be missing or unreadable
            notes.append(f"/proc/meminfo: {_one_line(exc)}")
            info = {}
        system = info.get("MemTotal")
        free = info.get("MemAvailable")
        used = system - free if system is not None and free is not None else None

    mig_enabled, mig_instances = _mig(nv, handle, notes)
    return LiveGpu(
        index=index,
        name=name,
        uuid=uuid,
        total_bytes=total,
        reserved_bytes=reserved,
        free_bytes=free,
        used_bytes=used,
        processes=_processes(nv, handle, notes),
        cc=cc,
        mig_enabled=mig_enabled,
        mig_instances=mig_instances,
        unified_memory=unified,
        system_memory_bytes=system,
        driver_version=driver,
        profile_id=_match_profile(name),
        memory_api=api,  # type: ignore[arg-type]
        notes=tuple(notes),
    )


# ---- public API ----------------------------------------------------------------------------------


def read_gpus(
    indices: Sequence[int] | None = None,
    nvml: Any = None,
    meminfo_reader: Callable[[], str] | None = None,
) -> list[LiveGpu]:
    """Read the GPUs at NVML ``indices`` (all when None). ``nvml`` is the pynvml module (injectable).

    Raises :class:`NvmlUnavailable` when NVML cannot start or sees no GPU, and
    :class:`planner.errors.BadInput` for an index the machine does not have.
    NVML indices are PCI-bus ordered, which is not necessarily CUDA's order.
    """
    nv = _import_pynvml() if nvml is None else nvml
    reader = _read_meminfo_text if meminfo_reader is None else meminfo_reader
    try:
        nv.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound / DriverNotLoaded / NoPermission / ...
        raise NvmlUnavailable(
            f"NVML is not available on this machine ({_one_line(exc)}): no NVIDIA driver? {_FALLBACK_HINT}"
        ) from None
    try:
        err = _error_base(nv)
        try:
            driver: str | None = _text(nv.nvmlSystemGetDriverVersion()) or None
        except err:
            driver = None
        try:
            count = int(nv.nvmlDeviceGetCount())
        except err as exc:
            raise NvmlUnavailable(
                f"NVML could not count the GPUs ({_one_line(exc)}). {_FALLBACK_HINT}"
            ) from None
        if count == 0:
            raise NvmlUnavailable(f"NVML sees no NVIDIA GPU on this machine. {_FALLBACK_HINT}")
        wanted = list(range(count)) if indices is None else list(dict.fromkeys(indices))
        for i in wanted:
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < count:
                raise BadInput(
                    f"--gpu: GPU index {i} is out of range; this machine has {count} GPU"
                    f"{'s' if count != 1 else ''} (indices 0..{count - 1})"
                )
        gpus: list[LiveGpu] = []
        for i in wanted:
            try:
                gpus.append(_read_one(nv, i, driver, reader))
            except err as exc:  # e.g. GPU is lost: the handle itself failed
                raise NvmlUnavailable(f"NVML could not read GPU {i} ({_one_line(exc)}). {_FALLBACK_HINT}") from None
        return gpus
    finally:
        try:
            nv.nvmlShutdown()
        except Exception:  # noqa: BLE001 - never mask the real result
            pass


def host_min_total_mib(gpus: Iterable[LiveGpu]) -> float | None:
    """The ``gpu_mem`` SGLang 0.5.11's ``get_device_memory_capacity`` would see, in MiB.

    Pass **every** GPU of the host: SGLang runs ``nvidia-smi --query-gpu=memory.total`` without ``-i``,
    which ignores ``CUDA_VISIBLE_DEVICES``, and takes the minimum of the values that parse as numbers
    (srt/utils/common.py:1595-1630). Unified-memory parts print ``[N/A]`` and, per SGLang's comment, MIG
    mode gives nothing parseable either; when nothing parses SGLang falls back to the minimum torch total
    (``mem_get_info()[1] // 2**20``), modelled here as system memory for unified parts and the MIG
    instance size for MIG GPUs. None when there is nothing to go on.
    """
    gpus = list(gpus)
    parsed = [
        float(g.total_bytes // MIB)
        for g in gpus
        if not g.unified_memory and not g.mig_enabled and g.total_bytes
    ]
    if parsed:
        return min(parsed)
    fallback: list[float] = []
    for g in gpus:
        if g.unified_memory and g.system_memory_bytes:
            fallback.append(float(g.system_memory_bytes // MIB))
        elif g.mig_enabled and g.mig_instances:
            fallback.append(float(min(b for _, b in g.mig_instances) // MIB))
    return min(fallback) if fallback else None


def parse_gpu_selector(text: str) -> Literal["auto"] | list[int] | None:
    """``--gpu`` value: "auto" -> all GPUs, "0" / "0,1" -> NVML indices, anything else -> None (a name)."""
    s = text.strip()
    if s.lower() == "auto":
        return "auto"
    if re.fullmatch(r"\d+(\s*,\s*\d+)*", s):
        return list(dict.fromkeys(int(x) for x in s.split(",")))
    return None


def _slug(name: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if s.startswith("nvidia-") and len(s) > len("nvidia-"):
        s = s[len("nvidia-"):]
    return s or "unknown-gpu"


def _toml_str(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _binding_version() -> str:
    try:
        from importlib.metadata import version  # noqa: PLC0415

        return f"nvidia-ml-py {version('nvidia-ml-py')}"
    except Exception:  # noqa: BLE001
        return "nvidia-ml-py"


def profile_toml_for(gpu: LiveGpu, today: _dt.date | None = None) -> str:
    """Text of a new ``hwprofiles/<id>.toml`` for a card with no profile, from its NVML reading.

    Raises BadInput when the reading lacks what a profile needs (a memory total, or the system memory of a
    unified part, and the compute capability).
    """
    day = (today or _dt.date.today()).isoformat()
    via = f"NVML reading on {day} via {_binding_version()}"
    drv = f", driver {gpu.driver_version}" if gpu.driver_version else ""
    if gpu.cc is None:
        raise BadInput(f"cannot write a profile for GPU {gpu.index} ({gpu.name}): NVML gave no compute capability")
    if gpu.unified_memory and gpu.system_memory_bytes is None:
        raise BadInput(f"cannot write a profile for GPU {gpu.index} ({gpu.name}): no system memory reading")
    if not gpu.unified_memory and not gpu.total_bytes:
        raise BadInput(f"cannot write a profile for GPU {gpu.index} ({gpu.name}): NVML gave no memory total")
    pid = _slug(gpu.name)
    mem_fn = "nvmlDeviceGetMemoryInfo_v2" if gpu.memory_api == "v2" else "nvmlDeviceGetMemoryInfo (v1)"
    lines = [
        f"id = {_toml_str(pid)}",
        f"display_name = {_toml_str(gpu.name)}",
        'vendor = "nvidia"',
        f"nvml_names = [{_toml_str(gpu.name)}]",
        "aliases = []",
    ]
    sources: dict[str, str] = {}
    note_bits = [f"Written by plan probe --write-profile from a live NVML reading on {day}{drv}."]
    if gpu.unified_memory:
        assert gpu.system_memory_bytes is not None
        lines.append(f"system_memory_mib = {gpu.system_memory_bytes // MIB}")
        sources["system_memory_mib"] = (
            f"/proc/meminfo MemTotal on {day} (unified memory: NVML nvmlDeviceGetMemoryInfo NOT_SUPPORTED"
            f"{drv}); SGLang falls back to the torch total, taken as this"
        )
        note_bits.append("Unified memory: NVML reports no memory total.")
    else:
        assert gpu.total_bytes is not None
        lines.append(f"memory_total_mib = {gpu.total_bytes // MIB}")
        lines.append("memory_total_estimated = false")
        sources["memory_total_mib"] = f"{via}: {mem_fn} total{drv}"
        if gpu.reserved_bytes is not None:
            lines.append(f"driver_reserved_mib = {gpu.reserved_bytes // MIB}")
            sources["driver_reserved_mib"] = f"{via}: nvmlDeviceGetMemoryInfo_v2 reserved{drv}"
    lines.append(f'compute_capability = "{gpu.cc[0]}.{gpu.cc[1]}"')
    sources["compute_capability"] = f"{via}: nvmlDeviceGetCudaComputeCapability{drv}"
    lines.append(f"unified_memory = {'true' if gpu.unified_memory else 'false'}")
    # NVML's link state says nothing of a card's other variants: left unknown (the NVLink figure, the conservative
    # side); a reviewer who knows every variant is a PCIe card sets "pcie" with its source
    lines.append('interconnect = "unknown"')
    if gpu.mig_enabled:
        note_bits.append("MIG was enabled during the reading.")
    note_bits.append("Review before committing: add aliases, bandwidth and notes; interconnect is \"unknown\" "
                     "(tp > 1 takes the NVLink figure for NCCL): set \"pcie\" with a source for a PCIe-only card.")
    lines.append(f"notes = {_toml_str(' '.join(note_bits))}")
    lines.append("")
    lines.append("[sources]")
    lines.extend(f"{k} = {_toml_str(v)}" for k, v in sources.items())
    return "\n".join(lines) + "\n"


def _mib(b: int | None) -> str:
    return "?" if b is None else f"{b // MIB} MiB"


def _load_profile_by_id(pid: str | None) -> Any:
    if pid is None:
        return None
    try:
        from planner.hardware.profiles import find_profile  # noqa: PLC0415

        return find_profile(pid)
    except (ImportError, BadInput):
        return None


def _vs(live: int | None, prof: int | None, label: str) -> str:
    if prof is None:
        return f"profile {label}: -"
    if live is None:
        return f"profile {label}: {prof} MiB"
    diff = live - prof
    tag = "match" if diff == 0 else f"{diff:+d} MiB vs profile"
    return f"profile {label}: {prof} MiB ({tag})"


def describe(gpus: Sequence[LiveGpu], host_gpus: Sequence[LiveGpu] | None = None) -> str:
    """What ``plan probe`` prints: NVML readings next to the matched profile, then SGLang's host minimum.

    ``host_gpus`` are all GPUs of the host (defaults to ``gpus``); SGLang's total is the minimum over them.
    """
    host = list(gpus if host_gpus is None else host_gpus)
    out: list[str] = []
    if not gpus:
        out.append("no GPUs read")
    for g in gpus:
        ident = [f"cc {g.cc[0]}.{g.cc[1]}" if g.cc else "cc ?"]
        if g.driver_version:
            ident.append(f"driver {g.driver_version}")
        if g.uuid:
            ident.append(g.uuid)
        out.append(f"GPU {g.index}: {g.name}  ({', '.join(ident)})")
        prof = _load_profile_by_id(g.profile_id)
        if prof is None:
            out.append("  profile: none (no profile: run plan probe --write-profile)")
        else:
            pcc = f", cc {prof.compute_capability}" if prof.compute_capability else ""
            ccx = ""
            if prof.compute_capability and g.cc and prof.compute_capability != f"{g.cc[0]}.{g.cc[1]}":
                ccx = "  (cc differs from the live reading)"
            out.append(f"  profile: {prof.id} ({prof.display_name}{pcc}){ccx}")
        if g.unified_memory:
            sys_mib = g.system_memory_mib
            out.append(
                "  memory: NVML says Not Supported (unified memory); system memory "
                f"{_mib(g.system_memory_bytes)} total, {_mib(g.free_bytes)} available (/proc/meminfo)"
            )
            if prof is not None:
                out.append(f"  {_vs(sys_mib, prof.system_memory_mib, 'system_memory_mib')}")
        elif g.total_bytes is None:
            out.append("  memory: NVML gave no reading")
        else:
            api = {"v2": "v2", "v1": "v1: used includes the reserve"}.get(g.memory_api or "", "?")
            vs = f"  {_vs(g.total_mib, prof.memory_total_mib, 'total')}" if prof else ""
            out.append(f"  NVML total {_mib(g.total_bytes)}{vs}")
            res = _mib(g.reserved_bytes) if g.reserved_bytes is not None else "n/a"
            line = f"  reserved {res}"
            if prof is not None and prof.driver_reserved_mib is not None:
                line += f"  (profile {prof.driver_reserved_mib} MiB)"
            out.append(line)
            out.append(f"  free {_mib(g.free_bytes)}, used {_mib(g.used_bytes)}  (memory info {api})")
        if g.mig_enabled:
            inst = ", ".join(f"#{i} {_mib(b)}" for i, b in g.mig_instances) or "none created"
            out.append(f"  MIG enabled: {len(g.mig_instances)} instance(s): {inst}")
        if g.processes:
            procs = ", ".join(f"pid {p} {_mib(b) if b is not None else '? MiB'}" for p, b in g.processes)
            out.append(f"  processes: {procs}")
        else:
            out.append("  processes: none")
        for n in g.notes:
            out.append(f"  note: {n}")
    gm = host_min_total_mib(host)
    if gm is None:
        out.append("SGLang gpu_mem: unknown (no NVML total on any GPU of the host)")
    else:
        out.append(
            f"SGLang gpu_mem: {gm:.0f} MiB = min over all {len(host)} GPU(s) of the host "
            "(SGLang uses the minimum nvidia-smi memory.total over every GPU, ignoring CUDA_VISIBLE_DEVICES)"
        )
        totals = {g.total_mib for g in host if g.total_mib is not None}
        if len(totals) > 1:
            out.append("note: the GPUs differ in size; SGLang sizes every rank from the smallest")
    return "\n".join(out)


__all__ = [
    "LiveGpu",
    "NvmlUnavailable",
    "describe",
    "host_min_total_mib",
    "parse_gpu_selector",
    "profile_toml_for",
    "read_gpus",
]
