"""plan --gpu auto / --gpu 0,1: planning from (faked) NVML readings of this machine."""

from __future__ import annotations

import pytest
from test_nvml import MIB, Dev, FakeNvml

from planner.catalog.catalog import resolve_model
from planner.cli import _live_plan, main
from planner.errors import BadInput
from planner.engines.sglang.plan import CUDA_CONTEXT_MIB, comm_buffer_mib


def test_auto_plans_from_live_readings_with_host_minimum():
    fake = FakeNvml([
        Dev("NVIDIA H100 80GB HBM3", 81559, reserved_mib=454, used_mib=1000, procs=[(42, 600 * MIB)]),
        Dev("NVIDIA H100 80GB HBM3", 81559, reserved_mib=454, used_mib=500),
    ])
    plan = _live_plan("auto", resolve_model("qwen3.5-9b"), ["--tp-size", "2"], {}, None, None, nvml=fake)
    assert plan.gpu.capacity_mib == 81559 and plan.gpu.compute_capability == "9.0"
    free_now = (81559 - 454 - 1000) * MIB  # the busier GPU sets P (min over ranks)
    assert plan.free_before_bytes == int((free_now - (CUDA_CONTEXT_MIB + comm_buffer_mib(plan.gpu.interconnect, 2)[0]) * MIB) / 2**30 * 2**30)
    assert plan.free_before_source.startswith("live: NVML free now")
    assert any("other processes hold 0.59 GiB now" in n for n in plan.notes)
    assert plan.verdict == "fits"


def test_selected_gpu_keys_on_the_host_minimum_total():
    fake = FakeNvml([Dev("NVIDIA GeForce RTX 5090", 32607, reserved_mib=500, cc=(12, 0)),
                     Dev("NVIDIA GeForce RTX 3090", 24576, reserved_mib=422, cc=(8, 6))])
    plan = _live_plan([0], resolve_model("qwen3.5-9b"), [], {}, None, None, nvml=fake)
    # SGLang's defaults see the 3090's total: nvidia-smi lists every GPU of the host
    assert plan.gpu.capacity_mib == 24576
    # the 20-35 GiB tier: 2048 up to 0.5.19, 4096 from 0.5.20 (srt/arg_groups/memory_hook.py:101-117 @0.5.20)
    assert plan.args.chunked_prefill_size == (4096 if plan.rules.tier_20_35_gib_4096 else 2048)
    assert any("minimum NVML total over every GPU of the host" in n for n in plan.notes)


def test_bad_selection_is_bad_input():
    fake = FakeNvml([Dev("NVIDIA H100 80GB HBM3", 81559)])
    with pytest.raises(BadInput, match="out of range"):
        _live_plan([3], resolve_model("qwen3.5-9b"), [], {}, None, None, nvml=fake)
    with pytest.raises(BadInput, match="only 1 GPU"):
        _live_plan("auto", resolve_model("qwen3.5-9b"), ["--tp-size", "2"], {}, None, None, nvml=fake)


def test_gpu_auto_without_nvml_is_one_line_exit_2(capsys, monkeypatch):
    import planner.hardware.nvml as nv

    def no_nvml():
        raise nv.NvmlUnavailable("NVML is not available on this machine (NVML Shared Library Not Found): no "
                                 "NVIDIA driver? Use --gpu NAME with a profile from hwprofiles/ instead")

    monkeypatch.setattr(nv, "_import_pynvml", no_nvml)
    assert main(["--gpu", "auto", "--model", "qwen3.6-27b"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "NVML is not available" in err


def test_probe_describes_and_writes_a_profile_for_an_unknown_card(tmp_path):
    import io

    from planner.cli import probe_main
    from planner.hardware.profiles import load_profile

    fake = FakeNvml([Dev("NVIDIA Quantum X900 64GB", 65536, reserved_mib=512, cc=(12, 1)),
                     Dev("NVIDIA H100 80GB HBM3", 81559, reserved_mib=454)])
    out = io.StringIO()
    assert probe_main(["--write-profile", str(tmp_path)], nvml=fake, out=out) == 0
    text = out.getvalue()
    assert "already profiled as h100-sxm" in text and "wrote" in text
    (written,) = tmp_path.glob("*.toml")
    prof = load_profile(written)
    assert prof.memory_total_mib == 65536 and prof.compute_capability == "12.1"


def test_tui_offers_this_machine_and_plans_with_its_free_memory(monkeypatch):
    from planner.hardware.live import select
    from planner.tui import view

    fake = FakeNvml([Dev("NVIDIA H100 80GB HBM3", 81559, reserved_mib=454, used_mib=20000)])
    view.live_selection.cache_clear()
    monkeypatch.setattr(view, "live_selection", lambda: select("auto", nvml=fake))
    opts = view.gpu_options()
    assert opts[0][1] == view.LIVE and "NVIDIA H100 80GB HBM3" in opts[0][0]
    expected = ((81559 - 454 - 20000) * MIB - CUDA_CONTEXT_MIB * MIB) / 2**30
    assert view.live_free_before_gib() == expected
    gpu, model, errors = view.resolve_inputs(view.LIVE, "qwen3.5-9b")
    assert not errors and gpu.capacity_mib == 81559


def test_tui_without_nvml_keeps_the_profiles(monkeypatch):
    from planner.tui import view

    monkeypatch.setattr(view, "live_selection", lambda: None)
    assert all(value != view.LIVE for _, value in view.gpu_options())
    _, _, errors = view.resolve_inputs(view.LIVE, "qwen3.5-9b")
    assert "NVML" in errors["gpu"]
