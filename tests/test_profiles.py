"""The built-in GPU profiles in hwprofiles/: they load, they are unique, lookup works, bad files fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.errors import BadInput
from planner.hardware.profiles import find_profile, load_profile, load_profiles

HWPROFILES = Path(__file__).resolve().parents[1] / "hwprofiles"

RTXPRO6000_NVML_NAMES = (
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
)

EXPECTED_IDS = {
    "rtxpro6000", "b200", "b300", "gb200", "h100-sxm", "h100-pcie", "h100-nvl", "h200", "h20",
    "a100-80gb", "a100-40gb", "l40s", "l4", "a10g", "rtx6000-ada", "rtx5090", "rtx4090", "rtx3090",
    "dgx-spark", "jetson-thor", "mi300x", "mi325x", "mi355x",
}


def _squash(s: str) -> str:
    return "".join(s.lower().split()).replace("-", "").replace("_", "")


# ---- every file loads ------------------------------------------------------------------------
@pytest.mark.parametrize("path", sorted(HWPROFILES.glob("*.toml")), ids=lambda p: p.stem)
def test_each_file_loads_and_id_is_stem(path: Path) -> None:
    prof = load_profile(path)
    assert prof.id == path.stem
    assert prof.id == prof.id.lower()


def test_load_profiles_has_every_gpu() -> None:
    profiles = load_profiles()
    ids = [p.id for p in profiles]
    assert len(ids) == len(set(ids))
    assert EXPECTED_IDS <= set(ids)
    assert {p.stem for p in HWPROFILES.glob("*.toml")} <= set(ids)


def test_aliases_unique_across_profiles() -> None:
    profiles = load_profiles()
    ids = {p.id.lower(): p.id for p in profiles}
    owner: dict[str, str] = {}
    for prof in profiles:
        for alias in prof.aliases:
            key = alias.lower()
            # an alias may repeat its own id, never another profile's
            assert ids.get(key, prof.id) == prof.id, f"{prof.id}: alias {alias!r} is profile id {ids[key]!r}"
            assert owner.setdefault(key, prof.id) == prof.id, (
                f"alias {alias!r} in both {owner[key]!r} and {prof.id!r}"
            )


def test_names_do_not_collide_after_squashing() -> None:
    """find_profile also matches with spaces/dashes/underscores removed: no cross-profile clash there."""
    owner: dict[str, str] = {}
    for prof in load_profiles():
        for name in prof.names:
            key = _squash(name)
            assert owner.setdefault(key, prof.id) == prof.id, (
                f"{name!r} of {prof.id!r} squashes like a name of {owner[key]!r}"
            )


def test_nvml_names_unique() -> None:
    seen: dict[str, str] = {}
    for prof in load_profiles():
        for name in prof.nvml_names:
            assert seen.setdefault(name.lower(), prof.id) == prof.id, f"NVML name {name!r} twice"


def test_every_profile_resolves_by_its_names() -> None:
    for prof in load_profiles():
        for name in prof.names:
            assert find_profile(name).id == prof.id, name


def test_unified_and_estimated_flags() -> None:
    by_id = {p.id: p for p in load_profiles()}
    for pid in ("dgx-spark", "jetson-thor"):
        assert by_id[pid].unified_memory and by_id[pid].memory_total_mib is None
    assert by_id["dgx-spark"].capacity_mib == 124610
    for pid in ("mi300x", "mi325x", "mi355x"):
        assert by_id[pid].vendor == "amd" and by_id[pid].gfx_arch
    assert not by_id["mi300x"].memory_total_estimated
    assert not by_id["mi325x"].memory_total_estimated  # rocminfo's Pool 1 on a real host
    assert not by_id["mi355x"].memory_total_estimated  # rocm-smi's VRAM total on a real host


# ---- lookup ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "rtxpro6000",
        "rtx-pro-6000",
        "RTX PRO 6000",
        "pro6000",
        "rtxpro6000-maxq",
        "rtxpro6000-server",
        "rtxpro6000-workstation",
        *RTXPRO6000_NVML_NAMES,
        *(n.upper() for n in RTXPRO6000_NVML_NAMES),
        *(n.lower() for n in RTXPRO6000_NVML_NAMES),
    ],
)
def test_rtxpro6000_lookup(name: str) -> None:
    prof = find_profile(name)
    assert prof.id == "rtxpro6000"
    assert prof.memory_total_mib == 97887
    assert prof.compute_capability == "12.0"


def test_rtxpro6000_single_profile_for_all_editions() -> None:
    profs = [find_profile(n) for n in RTXPRO6000_NVML_NAMES]
    assert {p.id for p in profs} == {"rtxpro6000"}
    prof = profs[0]
    assert set(RTXPRO6000_NVML_NAMES) <= set(prof.nvml_names)


def test_h200_total() -> None:
    # sgl-project/sglang#3196: 124585MiB / 143771MiB
    assert find_profile("h200").memory_total_mib == 143771
    assert find_profile("NVIDIA H200").id == "h200"


@pytest.mark.parametrize(
    ("name", "pid"),
    [
        ("h100", "h100-sxm"),
        ("H100-80GB", "h100-sxm"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("5090", "rtx5090"),
        ("4090", "rtx4090"),
        ("a100 80gb", "a100-80gb"),
        ("spark", "dgx-spark"),
        ("GB10", "dgx-spark"),
        ("NVIDIA GB10", "dgx-spark"),
        ("thor", "jetson-thor"),
        ("mi300x", "mi300x"),
    ],
)
def test_common_aliases(name: str, pid: str) -> None:
    assert find_profile(name).id == pid


def test_unknown_gpu_lists_near_matches() -> None:
    with pytest.raises(BadInput) as exc:
        find_profile("rtx pro 7000")
    msg = str(exc.value)
    assert "rtx pro 7000" in msg
    assert "did you mean" in msg
    assert "rtxpro6000" in msg


# ---- bad files are rejected ------------------------------------------------------------------
_GOOD = """\
id = "{stem}"
display_name = "Test GPU"
vendor = "nvidia"
nvml_names = ["NVIDIA Test GPU"]
memory_total_mib = 1024
compute_capability = "9.0"
"""


def _write(tmp_path: Path, stem: str, body: str) -> Path:
    path = tmp_path / f"{stem}.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_good_minimal_file_loads(tmp_path: Path) -> None:
    body = _GOOD.format(stem="testgpu") + (
        '\n[sources]\nmemory_total_mib = "test"\ncompute_capability = "test"\n'
    )
    assert load_profile(_write(tmp_path, "testgpu", body)).memory_total_mib == 1024


def test_extra_key_rejected(tmp_path: Path) -> None:
    body = _GOOD.format(stem="extra") + 'memroy_total_gib = 1\n' + (
        '\n[sources]\nmemory_total_mib = "test"\ncompute_capability = "test"\n'
    )
    with pytest.raises(BadInput, match="extra.toml"):
        load_profile(_write(tmp_path, "extra", body))


def test_number_without_source_rejected(tmp_path: Path) -> None:
    body = _GOOD.format(stem="nosource") + '\n[sources]\ncompute_capability = "test"\n'
    with pytest.raises(BadInput, match="memory_total_mib"):
        load_profile(_write(tmp_path, "nosource", body))


def test_blank_source_rejected(tmp_path: Path) -> None:
    body = _GOOD.format(stem="blank") + (
        'driver_reserved_mib = 500\n\n[sources]\nmemory_total_mib = "x"\n'
        'compute_capability = "x"\ndriver_reserved_mib = "  "\n'
    )
    with pytest.raises(BadInput, match="driver_reserved_mib"):
        load_profile(_write(tmp_path, "blank", body))


def test_broken_toml_rejected(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="cannot read TOML"):
        load_profile(_write(tmp_path, "broken", 'id = "broken\n'))
