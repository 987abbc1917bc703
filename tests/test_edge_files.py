"""The files read at the edge besides config.json (tests/test_fuzz_check.py has those): a checkpoint's index,
safetensors headers and hf_quant_config.json, and the GPU profiles. A broken one is one line naming the file and
the field; a valid one reads as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.cli import main
from planner.errors import BadInput
from planner.hardware.profiles import load_profile

ROOT = Path(__file__).parents[1]
GOOD = (ROOT / "hwprofiles" / "rtxpro6000.toml").read_bytes()
CONFIG = ROOT / "planner" / "catalog" / "configs" / "Qwen__Qwen3.6-27B.config.json"


@pytest.mark.parametrize("case,data,expected", [
    ("non-UTF-8", GOOD.replace(b"Blackwell", b"Black\xffwell", 1), "cannot read TOML"),
    ("inf bandwidth", GOOD.replace(b"memory_bandwidth_gbps = 1792", b"memory_bandwidth_gbps = inf"), "memory_bandwidth_gbps"),
    ("nan bandwidth", GOOD.replace(b"memory_bandwidth_gbps = 1792", b"memory_bandwidth_gbps = nan"), "memory_bandwidth_gbps"),
    ("huge memory", GOOD.replace(b"memory_total_mib = 97887", b"memory_total_mib = 99999999999999999"), "memory_total_mib"),
    ("negative memory", GOOD.replace(b"memory_total_mib = 97887", b"memory_total_mib = -1"), "memory_total_mib"),
    ("string memory", GOOD.replace(b"memory_total_mib = 97887", b'memory_total_mib = "96GB"'), "memory_total_mib"),
    ("truncated", GOOD[:200], "cannot read TOML"),
    ("empty", b"", "field required"),
    ("BOM", b"\xef\xbb\xbf" + GOOD, "hwprofile"),
])
def test_a_broken_profile_is_one_line_naming_the_field(case, data, expected, tmp_path):
    path = tmp_path / "rtxpro6000.toml"
    path.write_bytes(data)
    with pytest.raises(BadInput) as exc:
        load_profile(path)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith("hwprofile rtxpro6000.toml: ") and expected in msg, msg

def test_a_directory_as_profile(tmp_path):
    (tmp_path / "x.toml").mkdir()
    with pytest.raises(BadInput, match="^hwprofile x.toml: cannot read TOML"):
        load_profile(tmp_path / "x.toml")


def _header(tensors: dict) -> bytes:
    body = json.dumps(tensors).encode()
    return len(body).to_bytes(8, "little") + body


INDEX = "model.safetensors.index.json"
SHARD = "model-00001-of-00001.safetensors"


@pytest.mark.parametrize("name,data,expected", [
    (INDEX, json.dumps({"metadata": {"total_size": "54GB"}}).encode(), "'metadata.total_size' must be a whole number"),
    (INDEX, json.dumps({"metadata": {"total_size": -5}}).encode(), "'metadata.total_size'"),
    (INDEX, json.dumps({"metadata": []}).encode(), "'metadata' must be an object"),
    (INDEX, json.dumps({"weight_map": {"a": 1}}).encode(), "'weight_map.a' must be a string"),
    (INDEX, b'{"metadata": {"total_size": 1\xff}}', "not UTF-8 text"),
    (INDEX, b'{"metadata": {"total_', "not valid JSON"),
    (INDEX, b"[]", "must hold a JSON object"),
    (SHARD, _header({}), "hold no tensor data"),
    (SHARD, _header({"w": {"data_offsets": [10, 2]}}), "tensor 'w' needs data_offsets"),
    (SHARD, _header({"w": {"data_offsets": ["0", "2"]}}), "tensor 'w' needs data_offsets"),
    (SHARD, _header({"w": 5}), "tensor 'w' needs data_offsets"),
    (SHARD, b"\x05\x00\x00\x00\x00\x00\x00\x00{}", "not a readable safetensors file"),
    (SHARD, b"\x02\x00\x00\x00\x00\x00\x00\x00\xff\xfe", "not a readable safetensors file"),
    ("hf_quant_config.json", json.dumps({"quantization": []}).encode(), "'quantization' must be an object"),
    ("hf_quant_config.json", json.dumps({"quantization": {"quant_algo": "FP8", "exclude_modules": "lm_head"}}).encode(),
     "'quantization.exclude_modules' must be a list of strings"),
])
def test_a_broken_checkpoint_file_is_one_line_naming_it(name, data, expected, tmp_path, capsys):
    d = tmp_path / "ckpt"
    d.mkdir()
    shutil.copy(CONFIG, d / "config.json")
    (d / name).write_bytes(data)
    code = main(["--gpu", "h200", "--model", str(d), "--no-search"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert expected in err and (name in err or str(d) in err), err  # the file, or the checkpoint for all its shards


def test_an_index_without_total_size_leaves_the_headers_to_count(tmp_path):
    """metadata.total_size is optional: without it the shards' headers are summed, as before."""
    d = tmp_path / "ckpt"
    d.mkdir()
    shutil.copy(CONFIG, d / "config.json")
    (d / INDEX).write_text(json.dumps({"weight_map": {"w": SHARD}}))
    (d / SHARD).write_bytes(_header({"w": {"dtype": "BF16", "shape": [1000], "data_offsets": [0, 2000]}}))
    m = resolve_model(str(d))
    assert (m.weight_source, m.weight_bytes) == ("safetensors-headers", 2000)
    (d / INDEX).write_text(json.dumps({"metadata": {"total_size": 4096.0}}))  # an integral float is a byte count
    m = resolve_model(str(d))
    assert (m.weight_source, m.weight_bytes) == ("safetensors-index", 4096)
