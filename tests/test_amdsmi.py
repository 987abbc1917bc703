"""AMD GPUs through amdsmi (planner/hardware/amdsmi.py): a fake amdsmi module stands in for ROCm's; the reader
is guarded (a missing or failing amdsmi reads as no AMD GPU); a ROCm host's --gpu auto gets its profile from it, and
an AMD GPU outside the modelled set is refused by name."""

from __future__ import annotations

import types

import pytest

from planner.errors import BadInput
from planner.hardware import amdsmi as amd
from planner.hardware.live import select
from planner.hardware.nvml import NvmlUnavailable

MI300X_VRAM = 206141652992  # rocm-smi's 'VRAM Total Memory (B)' on an MI300X (hwprofiles/mi300x.toml sources)


def fake_amdsmi(n=8, name="AMD Instinct MI300X", fail_init=False, fail_memory=False):
    m = types.SimpleNamespace()
    m.calls = []
    m.AmdSmiMemoryType = types.SimpleNamespace(VRAM="VRAM")

    def init():
        if fail_init:
            raise RuntimeError("AMDSMI_STATUS_DRIVER_NOT_LOADED")
        m.calls.append("init")

    def memory(h, kind):
        if fail_memory:
            raise RuntimeError("AMDSMI_STATUS_NOT_SUPPORTED")
        assert kind == "VRAM"
        return MI300X_VRAM

    m.amdsmi_init = init
    m.amdsmi_shut_down = lambda: m.calls.append("shut_down")
    m.amdsmi_get_processor_handles = lambda: [f"h{i}" for i in range(n)]
    m.amdsmi_get_gpu_asic_info = lambda h: {"market_name": name, "target_graphics_version": "gfx942"}
    m.amdsmi_get_gpu_memory_total = memory
    m.amdsmi_get_gpu_memory_usage = lambda h, kind: 0 if not fail_memory else memory(h, kind)
    return m


def test_reads_name_arch_memory_and_profile_and_shuts_down():
    m = fake_amdsmi()
    gpus = amd.read_amd_gpus(m)
    assert len(gpus) == 8 and m.calls == ["init", "shut_down"]
    g = gpus[0]
    assert (g.name, g.gfx, g.total_bytes, g.profile_id) == ("AMD Instinct MI300X", "gfx942", MI300X_VRAM, "mi300x")
    assert amd.describe_amd(gpus) == "8x AMD Instinct MI300X (gfx942, 196,592 MiB; profile mi300x)"


def test_guarded_init_failure_and_partial_readings():
    assert amd.read_amd_gpus(fake_amdsmi(fail_init=True)) == []
    gpus = amd.read_amd_gpus(fake_amdsmi(n=1, name="AMD Radeon Something", fail_memory=True))
    assert gpus[0].total_bytes is None and gpus[0].profile_id is None
    assert amd.describe_amd(gpus) == "1x AMD Radeon Something (gfx942; no profile answers to this name)"


def test_no_amdsmi_package_reads_as_no_gpu(monkeypatch):
    monkeypatch.setattr(amd, "_import_amdsmi", lambda: None)
    assert amd.read_amd_gpus() == []


class _NoNvml:
    """A pynvml stand-in whose init fails (no NVIDIA driver)."""

    class NVMLError(Exception):
        pass

    def nvmlInit(self):
        raise self.NVMLError("NVML Shared Library Not Found")


def test_gpu_auto_on_a_rocm_host_selects_the_amd_profile_from_amdsmi():
    sel = select("auto", nvml=_NoNvml(), amdsmi=fake_amdsmi())
    assert sel.profile.id == "mi300x" and sel.profile.vendor == "amd" and sel.profile.gfx_arch == "gfx942"
    assert sel.profile.memory_total_mib == 196592 and len(sel.gpus) == 8 and sel.free_now_bytes == MI300X_VRAM
    assert "8x AMD Instinct MI300X (gfx942, 196,592 MiB; profile mi300x)" in sel.note
    assert select([0, 1], nvml=_NoNvml(), amdsmi=fake_amdsmi()).gpus[1].index == 1


def test_gpu_auto_on_an_amd_gpu_without_a_modelled_profile_is_refused_naming_it():
    with pytest.raises(BadInput) as e:
        select("auto", nvml=_NoNvml(), amdsmi=fake_amdsmi(name="AMD Radeon Something"))
    msg = str(e.value)
    assert "8x AMD Radeon Something (gfx942, 196,592 MiB; no profile answers to this name)" in msg
    assert "SGLang's ROCm path is modelled for gfx942 / gfx950" in msg and "\n" not in msg


def test_gpu_auto_without_any_gpu_keeps_nvmls_message():
    with pytest.raises(NvmlUnavailable):
        select("auto", nvml=_NoNvml(), amdsmi=fake_amdsmi(fail_init=True))
