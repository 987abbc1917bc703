"""vLLM's `vllm serve` parser rebuilt from each release's dump (planner/engines/vllm/flags.py, flags/*.json) and the
flag audit (flag_audit.toml): error lines as vLLM prints them (the vLLM oracle's serve_args rejections in
tests/golden/vllm_config/), vLLM's rewriting of the command line, and an audit that classifies every flag."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from planner.engines.vllm import flags as F
from planner.engines.vllm.config import VllmRejected
from planner.errors import BadInput

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "vllm_config"
VERSIONS = ("0.33.0", "0.34.0")


def _serve_rejections():
    cases = {c["id"]: c for c in map(json.loads, (GOLDEN / "cases.jsonl").read_text().splitlines())}
    out = []
    for v in VERSIONS:
        for line in (GOLDEN / f"v{v.replace('.', '_')}.jsonl").read_text().splitlines():
            g = json.loads(line)
            if g["summary"]["stage"] == "serve_args":
                out.append(pytest.param(v, cases[g["id"]]["flags"], g["summary"]["error_message"], id=f"{v}-{g['id']}"))
    return out


@pytest.mark.parametrize("version,flags,message", _serve_rejections())
def test_argparse_errors_are_vllms_own_line(version, flags, message):
    with pytest.raises(VllmRejected) as e:
        F.parse_serve_flags(version, flags)
    assert e.value.stage == "serve_args" and e.value.error_type == "SystemExit"
    assert e.value.message == message


def test_tables_are_each_releases_own():
    for v in VERSIONS:
        t = F.load_flag_table(v)
        assert t["vllm_version"] == v and t["prog"] == "vllm serve"
        assert len({a["dest"] for a in t["actions"]}) > 300
    new = set(F.known_options("0.34.0")) - set(F.known_options("0.33.0"))
    assert "--enable-extensible-kv-cache" in new  # 0.34's extensible KV cache (engine/arg_utils.py:1412 @0.34.0)


def test_near_match_and_other_release_hints():
    with pytest.raises(VllmRejected) as e:
        F.parse_serve_flags("0.34.0", ["--gpu-memory-utilisation", "0.8"])
    assert e.value.rule == "--gpu-memory-utilisation: did you mean --gpu-memory-utilization?"
    with pytest.raises(VllmRejected) as e:
        F.parse_serve_flags("0.33.0", ["--enable-extensible-kv-cache"])
    assert e.value.message == "vllm serve: error: unrecognized arguments: --enable-extensible-kv-cache"
    assert "flag of vLLM 0.34.0" in e.value.rule


def test_vllm_rewrites_the_command_line_first():
    """FlexibleArgumentParser.parse_args (vllm/utils/argparse_utils.py:313-502 @0.34.0)."""
    d = F.parse_serve_flags("0.34.0", [
        "--max_model_len", "1k", "--max-num-seq", "8", "-O3", "--compilation-config.cudagraph_mode", "PIECEWISE",
        "--compilation-config.max_cudagraph_capture_size=64", "--no-enable-prefix-caching", "-tp", "2",
        "--kv-cache-memory-bytes", "8G"])
    assert d["max_model_len"] == 1000 and d["max_num_seqs"] == 8  # 'k' is decimal; argparse abbreviation
    assert d["optimization_level"] == "3"
    assert d["compilation_config"] == {"cudagraph_mode": "PIECEWISE", "max_cudagraph_capture_size": 64}
    assert d["enable_prefix_caching"] is False and d["tensor_parallel_size"] == 2
    assert d["kv_cache_memory_bytes"] == 8 << 30  # 'G' is binary
    assert F.parse_serve_flags("0.34.0", ["--disable-prefix-caching"])["enable_prefix_caching"] is False
    assert F.parse_serve_flags("0.34.0", [])["max_model_len"] is None


def test_audit_classifies_every_flag_of_both_releases():
    audit = F.load_audit()
    for v in VERSIONS:
        dests = {a["dest"] for a in F.load_flag_table(v)["actions"]}
        assert dests <= set(audit), sorted(dests - set(audit))
    assert {e["class"] for e in audit.values()} == {"modelled", "no_effect", "refused"}
    both = set().union(*({a["dest"] for a in F.load_flag_table(v)["actions"]} for v in VERSIONS))
    assert set(audit) <= both, sorted(set(audit) - both)  # nothing stale


def test_modelled_flags_are_read_by_the_resolution():
    src = (ROOT / "planner" / "engines" / "vllm" / "config.py").read_text()
    for dest, e in F.load_audit().items():
        if e["class"] == "modelled" and dest != "model_tag":
            assert re.search(rf'"{dest}"', src), dest


def test_refused_flags_stop_with_one_line():
    parsed = F.parse_serve_flags("0.34.0", ["--enable-lora", "--max-loras", "2", "--port", "9000"])
    assert F.refused_flags("0.34.0", parsed) == ["--enable-lora", "--max-loras"]
    with pytest.raises(BadInput) as e:
        F.check_modelled("0.34.0", parsed)
    assert "\n" not in str(e.value) and "--enable-lora (LoRA)" in str(e.value) and "--port" not in str(e.value)
    F.check_modelled("0.34.0", F.parse_serve_flags("0.34.0", ["--port", "9000", "--max-num-seqs", "8"]))


def test_allowed_value_of_a_refused_flag():
    """--async-scheduling is vLLM's own default resolution (oracle cases async-on*): allowed; the opposite is not."""
    assert F.refused_flags("0.34.0", F.parse_serve_flags("0.34.0", ["--async-scheduling"])) == []
    assert F.refused_flags("0.34.0", F.parse_serve_flags("0.34.0", ["--no-async-scheduling"])) == ["--async-scheduling"]
