"""planner.hardware.nvml against a fake pynvml (one per driver generation, as gpustat's tests do).

The fake raises the real nvidia-ml-py error classes when the package is installed (``NVMLError(code)``
picks the matching subclass, no GPU needed), else look-alikes built the same way. One test at the end
runs against the real NVML and is skipped where there is none.
"""

from __future__ import annotations

import datetime as dt
import sys
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from planner.errors import BadInput
from planner.hardware import nvml as N
from planner.hardware.nvml import (
    LiveGpu,
    NvmlUnavailable,
    describe,
    host_min_total_mib,
    parse_gpu_selector,
    profile_toml_for,
    read_gpus,
)
from planner.hardware.profiles import load_profile

MIB = 1 << 20

# ---- NVML error classes: the real ones if nvidia-ml-py is installed ------------------------------

try:
    import pynvml as _real

    NVMLError = _real.NVMLError
    ERR_NOT_SUPPORTED = _real.NVML_ERROR_NOT_SUPPORTED
    ERR_NO_PERMISSION = _real.NVML_ERROR_NO_PERMISSION
    ERR_NOT_FOUND = _real.NVML_ERROR_NOT_FOUND
    ERR_LIBRARY_NOT_FOUND = _real.NVML_ERROR_LIBRARY_NOT_FOUND
    ERR_FUNCTION_NOT_FOUND = _real.NVML_ERROR_FUNCTION_NOT_FOUND
    ERR_GPU_IS_LOST = _real.NVML_ERROR_GPU_IS_LOST
    HAVE_REAL = True
except ImportError:  # pragma: no cover - nvidia-ml-py is a dependency
    HAVE_REAL = False
    ERR_NOT_SUPPORTED, ERR_NO_PERMISSION, ERR_NOT_FOUND = 3, 4, 6
    ERR_LIBRARY_NOT_FOUND, ERR_FUNCTION_NOT_FOUND, ERR_GPU_IS_LOST = 12, 13, 15
    _STR = {3: "Not Supported", 4: "Insufficient Permissions", 6: "Not Found",
            12: "NVML Shared Library Not Found", 13: "Function Not Found", 15: "GPU is lost"}

    class NVMLError(Exception):  # type: ignore[no-redef]
        def __init__(self, value: int) -> None:
            super().__init__(value)
            self.value = value

        def __str__(self) -> str:
            return _STR.get(self.value, f"NVML Error with code {self.value}")


def err(code: int) -> Exception:
    return NVMLError(code)


# ---- the fake ------------------------------------------------------------------------------------


@dataclass
class Dev:
    name: str
    total_mib: int | None  # None: memory info NOT_SUPPORTED (unified memory)
    reserved_mib: int = 0
    used_mib: int = 0
    cc: tuple[int, int] = (9, 0)
    procs: list[tuple[int, int | None]] = field(default_factory=list)
    mig_slots: list[int | None] | None = None  # None: MIG not supported; else slice MiB or None (empty)


class FakeNvml:
    """Just the pynvml surface planner.hardware.nvml uses; unknown attributes raise AttributeError."""

    NVMLError = NVMLError
    NVML_ERROR_NOT_SUPPORTED = ERR_NOT_SUPPORTED
    NVML_ERROR_NOT_FOUND = ERR_NOT_FOUND
    NVML_ERROR_FUNCTION_NOT_FOUND = ERR_FUNCTION_NOT_FOUND
    NVML_DEVICE_MIG_ENABLE = 1
    NVML_DEVICE_MIG_DISABLE = 0
    nvmlMemory_v2 = 0x02000028

    def __init__(self, devices: list[Dev], *, driver: str = "570.124.06", memory_api: str = "v2",
                 init_error: int | None = None, procs_error: int | None = None,
                 mig_memory: str = "ok") -> None:
        self.devices = devices
        self.driver = driver
        self.memory_api = memory_api  # "v2" | "no_v2_symbol" (old driver) | "no_version_kwarg" (old binding)
        self.init_error = init_error
        self.procs_error = procs_error
        self.mig_memory = mig_memory  # "ok" | "v2_not_supported" | "no_memory_info" (attributes only)
        self.inits = 0
        self.shutdowns = 0
        self.memory_calls: list[tuple[object, object]] = []

    # lifecycle
    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise err(self.init_error)
        self.inits += 1

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlSystemGetDriverVersion(self) -> str:
        return self.driver

    # devices
    def nvmlDeviceGetCount(self) -> int:
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, i: int) -> tuple:
        if not 0 <= i < len(self.devices):
            raise err(2)  # INVALID_ARGUMENT
        return ("gpu", i)

    def _dev(self, h: tuple) -> Dev:
        return self.devices[h[1]]

    def nvmlDeviceGetName(self, h: tuple) -> bytes:
        return self._dev(h).name.encode()  # old bindings return bytes

    def nvmlDeviceGetUUID(self, h: tuple) -> str:
        return f"GPU-0000000{h[1]}-fake"

    def nvmlDeviceGetCudaComputeCapability(self, h: tuple) -> tuple[int, int]:
        return self._dev(h).cc

    def nvmlDeviceGetMemoryInfo(self, h: tuple, version: int | None = None) -> SimpleNamespace:
        self.memory_calls.append((h, version))
        if version is not None:
            if self.memory_api == "no_version_kwarg":
                raise TypeError("nvmlDeviceGetMemoryInfo() got an unexpected keyword argument 'version'")
            if self.memory_api == "no_v2_symbol":
                raise err(ERR_FUNCTION_NOT_FOUND)
        if h[0] == "mig":
            if self.mig_memory == "no_memory_info" or (self.mig_memory == "v2_not_supported" and version):
                raise err(ERR_NOT_SUPPORTED)
            total = self._dev(("gpu", h[1])).mig_slots[h[2]] * MIB
            return SimpleNamespace(total=total, free=total, used=0, reserved=0, version=version)
        d = self._dev(h)
        if d.total_mib is None:
            raise err(ERR_NOT_SUPPORTED)
        total, res, used = d.total_mib * MIB, d.reserved_mib * MIB, d.used_mib * MIB
        free = total - res - used
        if version is None:  # v1: used includes the reserve
            return SimpleNamespace(total=total, free=free, used=res + used)
        return SimpleNamespace(version=version, total=total, reserved=res, free=free, used=used)

    def nvmlDeviceGetComputeRunningProcesses(self, h: tuple) -> list:
        if self.procs_error is not None:
            raise err(self.procs_error)
        return [SimpleNamespace(pid=p, usedGpuMemory=b, gpuInstanceId=0xFFFFFFFF, computeInstanceId=0xFFFFFFFF)
                for p, b in self._dev(h).procs]

    # MIG
    def nvmlDeviceGetMigMode(self, h: tuple) -> list[int]:
        slots = self._dev(h).mig_slots
        if slots is None:
            raise err(ERR_NOT_SUPPORTED)
        return [1, 1]

    def nvmlDeviceGetMaxMigDeviceCount(self, h: tuple) -> int:
        return len(self._dev(h).mig_slots or [])

    def nvmlDeviceGetMigDeviceHandleByIndex(self, h: tuple, i: int) -> tuple:
        if self._dev(h).mig_slots[i] is None:
            raise err(ERR_NOT_FOUND)
        return ("mig", h[1], i)

    def nvmlDeviceGetAttributes(self, mig: tuple) -> SimpleNamespace:
        return SimpleNamespace(memorySizeMB=self._dev(("gpu", mig[1])).mig_slots[mig[2]], multiprocessorCount=14)


H100 = Dev("NVIDIA H100 80GB HBM3", 81559, reserved_mib=454, used_mib=1)
GB10_MEMINFO = "MemTotal:       127600748 kB\nMemFree:         1000000 kB\nMemAvailable:   115000000 kB\n"


def meminfo(text: str = GB10_MEMINFO):
    return lambda: text


# ---- reading -------------------------------------------------------------------------------------


def test_v2_driver_reads_total_reserved_free_used():
    fake = FakeNvml([H100])
    (g,) = read_gpus(nvml=fake)
    assert g.name == "NVIDIA H100 80GB HBM3"  # bytes decoded
    assert g.total_bytes == 81559 * MIB and g.total_mib == 81559
    assert g.reserved_bytes == 454 * MIB
    assert g.used_bytes == 1 * MIB
    assert g.free_bytes == (81559 - 454 - 1) * MIB
    assert g.memory_api == "v2" and not g.unified_memory and not g.mig_enabled
    assert g.cc == (9, 0) and g.driver_version == "570.124.06" and g.uuid == "GPU-00000000-fake"
    assert g.profile_id == "h100-sxm"
    assert fake.memory_calls[0][1] == fake.nvmlMemory_v2
    assert (fake.inits, fake.shutdowns) == (1, 1)
    assert host_min_total_mib([g]) == 81559.0


@pytest.mark.parametrize("api", ["no_v2_symbol", "no_version_kwarg"])
def test_old_driver_or_binding_falls_back_to_v1(api):
    fake = FakeNvml([H100], driver="470.82.01", memory_api=api)
    (g,) = read_gpus(nvml=fake)
    assert g.memory_api == "v1"
    assert g.reserved_bytes is None
    assert g.total_bytes == 81559 * MIB
    assert g.used_bytes == (454 + 1) * MIB  # v1 semantics: used includes the reserve
    assert [v for _, v in fake.memory_calls] == [fake.nvmlMemory_v2, None]
    assert g.notes == ()  # FunctionNotFound / TypeError are the expected fallbacks, not worth a note
    assert fake.shutdowns == 1


def test_binding_without_memory_v2_constant_uses_v1():
    class OldBinding(FakeNvml):
        nvmlMemory_v2 = None

    (g,) = read_gpus(nvml=OldBinding([H100]))
    assert g.memory_api == "v1" and g.reserved_bytes is None


def test_library_not_found_is_nvml_unavailable_one_line():
    fake = FakeNvml([H100], init_error=ERR_LIBRARY_NOT_FOUND)
    with pytest.raises(NvmlUnavailable) as ei:
        read_gpus(nvml=fake)
    msg = str(ei.value)
    assert "\n" not in msg
    assert "NVML Shared Library Not Found" in msg
    assert "--gpu NAME" in msg
    assert ei.value.exit_code == 2
    assert fake.shutdowns == 0  # init failed: nothing to shut down


def test_missing_binding_is_nvml_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml -> ImportError
    with pytest.raises(NvmlUnavailable, match="nvidia-ml-py"):
        read_gpus()


def test_no_gpus_is_nvml_unavailable():
    fake = FakeNvml([])
    with pytest.raises(NvmlUnavailable, match="no NVIDIA GPU"):
        read_gpus(nvml=fake)
    assert fake.shutdowns == 1


def test_unified_memory_gb10_uses_system_memory():
    fake = FakeNvml([Dev("NVIDIA GB10", None, cc=(12, 1))])
    (g,) = read_gpus(nvml=fake, meminfo_reader=meminfo())
    assert g.unified_memory
    assert g.total_bytes is None and g.reserved_bytes is None and g.memory_api is None
    assert g.system_memory_bytes == 127600748 * 1024
    assert g.system_memory_mib == 124610
    assert g.free_bytes == 115000000 * 1024
    assert g.used_bytes == (127600748 - 115000000) * 1024
    assert g.profile_id == "dgx-spark"
    assert host_min_total_mib([g]) == 124610.0  # SGLang's torch fallback, modelled as system memory
    text = describe([g])
    assert "unified memory" in text and "system_memory_mib: 124610 MiB (match)" in text


def test_unified_memory_with_unreadable_meminfo_still_reads():
    def broken() -> str:
        raise OSError("no /proc")

    (g,) = read_gpus(nvml=FakeNvml([Dev("NVIDIA GB10", None, cc=(12, 1))]), meminfo_reader=broken)
    assert g.unified_memory and g.system_memory_bytes is None
    assert any("/proc/meminfo" in n for n in g.notes)
    assert host_min_total_mib([g]) is None


def test_mig_enabled_two_instances():
    a100 = Dev("NVIDIA A100-SXM4-80GB", 81920, reserved_mib=762, cc=(8, 0), mig_slots=[19968, None, 40192])
    (g,) = read_gpus(nvml=FakeNvml([a100]))
    assert g.mig_enabled
    assert g.mig_instances == ((0, 19968 * MIB), (2, 40192 * MIB))  # slot 1 empty (NOT_FOUND)
    assert g.notes == ()
    assert g.profile_id == "a100-80gb"
    # nvidia-smi gives SGLang nothing parseable in MIG mode: torch fallback, the (first) MIG slice size
    assert host_min_total_mib([g]) == 19968.0
    assert "MIG enabled: 2 instance(s): #0 19968 MiB, #2 40192 MiB" in describe([g])


@pytest.mark.parametrize("mig_memory", ["v2_not_supported", "no_memory_info"])
def test_mig_instance_memory_fallbacks(mig_memory):
    a100 = Dev("NVIDIA A100-SXM4-80GB", 81920, reserved_mib=762, cc=(8, 0), mig_slots=[19968, 40192])
    (g,) = read_gpus(nvml=FakeNvml([a100], mig_memory=mig_memory))
    assert not g.unified_memory and g.total_mib == 81920  # the physical GPU still has its total
    assert g.mig_instances == ((0, 19968 * MIB), (1, 40192 * MIB))


def test_mig_with_a_plain_gpu_host_min_uses_the_parseable_total():
    fake = FakeNvml([Dev("NVIDIA A100-SXM4-80GB", 81920, cc=(8, 0), mig_slots=[19968]),
                     Dev("NVIDIA A100-SXM4-40GB", 40960, cc=(8, 0))])
    assert host_min_total_mib(read_gpus(nvml=fake)) == 40960.0


def test_several_gpus_host_min_is_the_smallest():
    fake = FakeNvml([
        Dev("NVIDIA GeForce RTX 5090", 32607, reserved_mib=500, cc=(12, 0)),
        Dev("NVIDIA GeForce RTX 3090", 24576, reserved_mib=422, cc=(8, 6)),
        Dev("NVIDIA H100 80GB HBM3", 81559, reserved_mib=454),
    ])
    gpus = read_gpus(nvml=fake)
    assert [g.index for g in gpus] == [0, 1, 2]
    assert host_min_total_mib(gpus) == 24576.0
    # a subset for the deployment, but SGLang still keys on the host minimum
    (only0,) = read_gpus([0], nvml=fake)
    assert only0.total_mib == 32607
    text = describe([only0], host_gpus=gpus)
    assert "SGLang gpu_mem: 24576 MiB = min over all 3 GPU(s)" in text
    assert "ignoring CUDA_VISIBLE_DEVICES" in text
    assert "differ in size" in text


def test_processes_listed():
    dev = Dev("NVIDIA H100 80GB HBM3", 81559, reserved_mib=454, used_mib=30000,
              procs=[(1234, 20000 * MIB), (5678, None), (91, (1 << 64) - 1)])
    (g,) = read_gpus(nvml=FakeNvml([dev]))
    assert g.processes == ((1234, 20000 * MIB), (5678, None), (91, None))
    assert "pid 1234 20000 MiB" in describe([g])


def test_process_query_errors_are_tolerated():
    (g,) = read_gpus(nvml=FakeNvml([H100], procs_error=ERR_NO_PERMISSION))
    assert g.processes == ()
    assert any("nvmlDeviceGetComputeRunningProcesses" in n for n in g.notes)


def test_index_out_of_range_is_bad_input():
    fake = FakeNvml([H100, H100])
    with pytest.raises(BadInput) as ei:
        read_gpus([0, 2], nvml=fake)
    assert "--gpu" in str(ei.value) and "2 GPUs" in str(ei.value)
    assert fake.shutdowns == 1  # shut down even on error


def test_lost_gpu_is_nvml_unavailable_and_shuts_down():
    class Lost(FakeNvml):
        def nvmlDeviceGetHandleByIndex(self, i):
            raise err(ERR_GPU_IS_LOST)

    fake = Lost([H100])
    with pytest.raises(NvmlUnavailable, match="GPU is lost"):
        read_gpus(nvml=fake)
    assert fake.shutdowns == 1


# ---- profiles ------------------------------------------------------------------------------------


def test_profile_matching_known_and_unknown():
    fake = FakeNvml([H100, Dev("NVIDIA Quantum X900 64GB", 65280, reserved_mib=512, cc=(13, 0))])
    known, unknown = read_gpus(nvml=fake)
    assert known.profile_id == "h100-sxm"
    assert unknown.profile_id is None
    text = describe([known, unknown])
    assert "profile: h100-sxm" in text and "total: 81559 MiB (match)" in text
    assert "no profile: run plan probe --write-profile" in text


def test_profile_toml_for_unknown_card_loads(tmp_path):
    fake = FakeNvml([Dev("NVIDIA Quantum X900 64GB", 65280, reserved_mib=512, cc=(13, 0))])
    (g,) = read_gpus(nvml=fake)
    text = profile_toml_for(g, today=dt.date(2026, 5, 1))
    path = tmp_path / "quantum-x900-64gb.toml"
    path.write_text(text, encoding="utf-8")
    prof = load_profile(path)
    assert prof.id == path.stem
    assert prof.nvml_names == ["NVIDIA Quantum X900 64GB"]
    assert prof.memory_total_mib == 65280 and prof.driver_reserved_mib == 512
    assert prof.compute_capability == "13.0" and not prof.unified_memory
    assert "NVML reading on 2026-05-01 via nvidia-ml-py" in prof.sources["memory_total_mib"]
    assert "nvmlDeviceGetMemoryInfo_v2 total" in prof.sources["memory_total_mib"]
    assert set(prof.sources) == {"memory_total_mib", "driver_reserved_mib", "compute_capability"}
    assert prof.interconnect == "unknown" and '"pcie"' in prof.notes  # said, and the reviewer told how to change it


def test_profile_toml_for_v1_and_unified(tmp_path):
    (v1,) = read_gpus(nvml=FakeNvml([Dev('Odd "Card" 8GB', 8192, reserved_mib=300, cc=(7, 5))],
                                    memory_api="no_v2_symbol"))
    p = tmp_path / f"{N._slug(v1.name)}.toml"
    p.write_text(profile_toml_for(v1), encoding="utf-8")
    prof = load_profile(p)
    assert prof.id == p.stem == "odd-card-8gb" and prof.display_name == 'Odd "Card" 8GB'
    assert prof.driver_reserved_mib is None and "(v1) total" in prof.sources["memory_total_mib"]

    (uni,) = read_gpus(nvml=FakeNvml([Dev("NVIDIA Thor Next", None, cc=(11, 0))]), meminfo_reader=meminfo())
    p = tmp_path / "thor-next.toml"
    p.write_text(profile_toml_for(uni), encoding="utf-8")
    prof = load_profile(p)
    assert prof.unified_memory and prof.system_memory_mib == 124610 and prof.memory_total_mib is None
    assert "/proc/meminfo MemTotal" in prof.sources["system_memory_mib"]


def test_profile_toml_for_needs_a_total():
    g = LiveGpu(index=0, name="X", uuid=None, total_bytes=None, reserved_bytes=None, free_bytes=None,
                used_bytes=None, processes=(), cc=(9, 0), mig_enabled=False, mig_instances=(),
                unified_memory=False, system_memory_bytes=None, driver_version=None, profile_id=None)
    with pytest.raises(BadInput, match="no memory total"):
        profile_toml_for(g)


# ---- selector ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, want", [
    ("auto", "auto"), (" AUTO ", "auto"), ("0", [0]), ("0,1", [0, 1]), ("3, 1", [3, 1]), ("1,1", [1]),
    ("h100", None), ("rtx4090", None), ("", None), ("0,", None), ("-1", None), ("NVIDIA H100 80GB HBM3", None),
])
def test_parse_gpu_selector(text, want):
    assert parse_gpu_selector(text) == want


def test_host_min_empty():
    assert host_min_total_mib([]) is None
    assert "unknown" in describe([])


# ---- real NVML (GPU machines only) ---------------------------------------------------------------


def test_real_nvml_when_present():
    try:
        gpus = read_gpus()
    except NvmlUnavailable as exc:
        pytest.skip(f"no NVML here: {exc}")
    assert gpus and all(g.name for g in gpus)
    for g in gpus:
        assert g.unified_memory or g.total_bytes is None or g.total_bytes > 0
        if g.memory_api == "v2":
            assert g.reserved_bytes is not None
    assert host_min_total_mib(gpus) is None or host_min_total_mib(gpus) > 0
    assert "SGLang gpu_mem" in describe(gpus)
