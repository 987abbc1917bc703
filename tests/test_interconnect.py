"""The GPU profile's ``interconnect`` field picks the NCCL / custom all-reduce figure (planner.engines.sglang.plan.comm_buffer_mib).

The field replaced a table in code, ``planner.engines.sglang.plan.PCIE_PROFILES``; the move must not change a byte of any plan, so
the figures are pinned against a literal copy of that table and of the function that read it (the pre-change
reference below, copied from planner/engines/sglang/plan.py as it was before the field existed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.errors import BadInput
from planner.hardware.profiles import INTERCONNECT_DEFAULT, INTERCONNECTS, find_profile, load_profile, load_profiles
from planner.engines.sglang.plan import NCCL_MIB_NVLINK, NCCL_MIB_PCIE, comm_buffer_mib, default_free_before

# ---- pre-change reference: planner/engines/sglang/plan.py before the interconnect field (literal copy) ------------------------------
OLD_PCIE_PROFILES = frozenset({"a10g", "l4", "l40s", "h100-pcie", "rtx3090", "rtx4090", "rtx5090", "rtx6000-ada",
                               "rtxpro6000"})


def old_comm_buffer_mib(gpu_id: str, tp: int) -> tuple[int, str]:
    if tp <= 1:
        return 0, "tp 1: inside the CUDA-context figure (docs-send-request, A100: logged P within 0.01 GiB)"
    if gpu_id in OLD_PCIE_PROFILES and tp <= 4:
        return 195, ("PCIe card: largest logged 'Init torch distributed ends. mem usage', 0.19 GB "
                     "(corpus-53944457073 tp 2 RTX 4090; corpus-47376055009 tp 4 L4 0.13 GB)")
    if gpu_id in OLD_PCIE_PROFILES:
        return 512, (f"PCIe card at tp {tp}: no log above tp 4; a conservative 512 MiB, 2.6x the "
                     "largest PCIe log (0.19 GB, corpus-53944457073)")
    return 2059, ("not a PCIe-only profile, so NVLink's figure: largest logged 'Init torch distributed "
                  "ends. mem usage', 2.01 GB (sglang-11716, tp 8 H200)"
                  + ("" if tp == 8 else f"; no NVLink log at tp {tp}, the tp-8 figure taken as the "
                     "conservative choice"))
# ---- end of the pre-change reference ------------------------------------------------------------------------------


PROFILES = load_profiles()


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
@pytest.mark.parametrize("prof", PROFILES, ids=lambda p: p.id)
def test_comm_figure_unchanged_for_every_profile_and_tp(prof, tp: int) -> None:
    """The same MiB and the same assumption wording as the old table gave, profile by profile."""
    assert comm_buffer_mib(prof.interconnect, tp) == old_comm_buffer_mib(prof.id, tp)


def test_the_old_table_is_exactly_the_pcie_profiles() -> None:
    assert OLD_PCIE_PROFILES <= {p.id for p in PROFILES}  # every id of the old table still has a profile
    assert {p.id for p in PROFILES if p.interconnect == "pcie"} == OLD_PCIE_PROFILES


@pytest.mark.parametrize("prof", PROFILES, ids=lambda p: p.id)
def test_every_builtin_profile_states_its_interconnect_with_a_source(prof) -> None:
    assert prof.interconnect in INTERCONNECTS and prof.interconnect != INTERCONNECT_DEFAULT
    assert prof.sources["interconnect"].strip()


def test_profiles_with_sxm_and_pcie_variants_or_amd_stay_on_the_nvlink_figure() -> None:
    for pid in ("a100-40gb", "a100-80gb"):  # SXM4 and PCIe name strings in one profile
        assert find_profile(pid).interconnect == "mixed"
        assert comm_buffer_mib(find_profile(pid).interconnect, 2)[0] == NCCL_MIB_NVLINK
    for pid in ("mi300x", "mi325x", "mi355x"):
        assert comm_buffer_mib(find_profile(pid).interconnect, 4)[0] == NCCL_MIB_NVLINK
    assert comm_buffer_mib(find_profile("rtx4090").interconnect, 2)[0] == NCCL_MIB_PCIE


def test_a_profile_id_is_not_an_interconnect() -> None:
    """A caller still passing the GPU id (the old signature) fails loudly instead of taking the NVLink figure."""
    with pytest.raises(ValueError, match="'rtx4090'"):
        comm_buffer_mib("rtx4090", 2)


_USER = """\
id = "{stem}"
display_name = "My GPU"
vendor = "nvidia"
nvml_names = ["NVIDIA My GPU"]
memory_total_mib = 24564
compute_capability = "8.9"
{extra}
[sources]
memory_total_mib = "my nvidia-smi"
compute_capability = "my deviceQuery"
{extra_sources}"""


def _write(tmp_path: Path, stem: str, extra: str = "", extra_sources: str = "") -> Path:
    path = tmp_path / f"{stem}.toml"
    path.write_text(_USER.format(stem=stem, extra=extra, extra_sources=extra_sources), encoding="utf-8")
    return path


def test_user_profile_without_the_field_loads_on_the_conservative_figure(tmp_path: Path) -> None:
    prof = load_profile(_write(tmp_path, "mygpu"))
    assert prof.interconnect == INTERCONNECT_DEFAULT == "unknown"
    _, _, notes = default_free_before(prof, 2)
    comm = next(a for a in notes if a.name.startswith("NCCL"))
    assert comm.value == f"{NCCL_MIB_NVLINK} MiB per GPU" and "not a PCIe-only profile" in comm.why


def test_user_profile_saying_pcie_takes_the_pcie_figure(tmp_path: Path) -> None:
    prof = load_profile(_write(tmp_path, "mypcie", 'interconnect = "pcie"\n', 'interconnect = "my card: PCIe only"\n'))
    _, _, notes = default_free_before(prof, 2)
    assert next(a for a in notes if a.name.startswith("NCCL")).value == f"{NCCL_MIB_PCIE} MiB per GPU"


def test_interconnect_without_a_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"nosrc.toml: profile: field 'interconnect' has a value but no entry"):
        load_profile(_write(tmp_path, "nosrc", 'interconnect = "pcie"\n'))


def test_unknown_interconnect_value_names_the_field_and_a_near_match(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"badval.toml: interconnect: unknown value 'pci'; did you mean 'pcie'\?"):
        load_profile(_write(tmp_path, "badval", 'interconnect = "pci"\n', 'interconnect = "x"\n'))


@pytest.mark.parametrize("name,cc,want", [("NVIDIA GeForce RTX 4090", (8, 9), NCCL_MIB_PCIE),  # a profiled PCIe card
                                          ("NVIDIA H100 80GB HBM3", (9, 0), NCCL_MIB_NVLINK),  # a profiled SXM part
                                          ("NVIDIA Unprofiled X", (8, 9), NCCL_MIB_NVLINK)])  # no profile: unknown
def test_live_selection_keeps_the_profiles_interconnect(name: str, cc: tuple[int, int], want: int) -> None:
    """--gpu auto builds its profile from NVML: the matched profile's interconnect (and source) carry over, so a
    live plan charges what the named profile would (the live profile's id was what the old table keyed on)."""
    from test_nvml import Dev, FakeNvml

    from planner.hardware.live import select

    sel = select("auto", nvml=FakeNvml([Dev(name, 24564, reserved_mib=354, cc=cc)] * 2))
    assert comm_buffer_mib(sel.profile.interconnect, 2)[0] == want
    if sel.profile.id != "live":
        base = find_profile(sel.profile.id)
        assert (sel.profile.interconnect, sel.profile.sources["interconnect"]) == (base.interconnect,
                                                                                   base.sources["interconnect"])
