"""Quantized checkpoints against SGLang 0.5.23's own code, every summary field (issue 10, item 2).

The expected values are the ``summary`` objects the shared sglang-oracle's 0.5.23 adapter printed: it gives the
empty model object the quant config SGLang's loader builds from the checkpoint (``_get_quantization_config``),
so ``configure_kv_cache_dtype`` sees ``kv_cache_scheme`` / ``kv_cache_quant_algo`` as on a GPU.
tests/golden/quant/sglang-0.5.23/README.md gives the command; nothing here is hand-derived. 0.5.9-0.5.16 come from
this repository's adapters (scripts/oracle/adapters/v0_5_9.py ... v0_5_16.py), which give the empty model the quant
config the same way (tests/golden/quant/sglang-<release>/README.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.errors import BadInput
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary

ROOT = Path(__file__).parent / "golden" / "quant"
FOLDER = ROOT / "sglang-0.5.23"
# 0.5.23: the shared oracle's adapter; 0.5.21: this repository's scripts/oracle/adapters/v0_5_21.py, which
# gives the empty model the loader's quant config the same way; 0.5.22: v0_5_22.py = v0_5_21.py; 0.5.17-0.5.20:
# v0_5_19.py with v0_5_21.py's quant config; 0.5.9-0.5.16: their own adapters (the shared 0.5.11 / 0.5.16 ones
# give no quant config), with standins.give_model_quant_config (the release's own LoadConfig)
RELEASES = ("0.5.23", "0.5.22", "0.5.21", "0.5.20", "0.5.19", "0.5.18", "0.5.17", "0.5.16", "0.5.15", "0.5.14",
            "0.5.13", "0.5.12", "0.5.11", "0.5.10", "0.5.9")


# startup checks SGLang runs after the pools that the oracle does not execute (as in test_golden_dense.py): where the
# planner stops at one and the oracle says ok, the sizing fields must still agree
#   init_attention_backend: srt/layers/attention/attention_registry.py:201-206 @0.5.9 (hybrid GDN on Blackwell:
#   triton / trtllm_mha only; 0.5.9 picks flashinfer for the Qwen3.6 FP8 checkpoints on the RTX PRO 6000)
BEYOND_ORACLE = {"tp_worker", "init_attention_backend", "scheduler_init"}
OUTCOME_FIELDS = {"outcome", "startup_ok", "stage", "error_type", "error_message"}
# Checkpoints a release serves with a quant method the planner refuses as not modelled (exit 2), by release (none
# today). 0.5.10-0.5.14 read a ModelOpt MIXED_PRECISION config.json that is not NemotronH as w4afp8
# (srt/configs/model_config.py:805-816 @0.5.10, :1140-1151 @0.5.14): its weights are not modelled (W4AFp8Config
# creates every linear at the model dtype for NVFP4 / FP8 tensors, pipeline/quant_method.py), so without the measured
# free memory after loading such a launch is refused (test_release_refusals_of_modelopt_config_json_reach_the_cli);
# these golden cases give it, and their pools (bf16 KV: W4AFp8Config has no kv_cache_quant_algo) are SGLang's.
NOT_MODELLED: dict[str, dict[str, str]] = {}


def _load(version: str) -> list[tuple[dict, dict]]:
    folder = ROOT / f"sglang-{version}"
    if not (folder / "results.jsonl").exists():
        return []
    res = {}
    for line in (folder / "results.jsonl").read_text().splitlines():
        if line.strip():
            d = json.loads(line)
            res[d["id"]] = d["summary"]
    return [({**c, "version": version, "folder": str(folder)}, res[c["id"]])
            for c in map(json.loads, (folder / "cases.jsonl").read_text().splitlines()) if c]


CASES = _load("0.5.23")
ALL = [x for v in RELEASES for x in _load(v)]


def _model(case: dict) -> str:
    m = case["planner_model"]
    return str(Path(case["folder"]) / m) if m.endswith(".json") else m


@pytest.mark.parametrize("case,expected", ALL, ids=[f"{c['version']}-{c['id']}" for c, _ in ALL])
def test_quantized_case_matches_sglang(case, expected):
    gpu = find_profile(case["gpu"])
    assert gpu.capacity_mib == case["gpu_total_mib"] and gpu.compute_capability == case["gpu_sm"]
    refused = NOT_MODELLED.get(case["version"], {}).get(case["planner_model"])
    if refused:
        assert expected["outcome"] == "ok"  # SGLang's sizing; its weight load is not what the oracle runs
        with pytest.raises(BadInput, match=refused):
            make_plan(gpu, resolve_model(_model(case)), case["flags"], case.get("env") or {},
                      case["free_before_gib"], case["free_after_gib"], version=case["version"])
        return
    plan = make_plan(gpu, resolve_model(_model(case)), case["flags"], case.get("env") or {},
                     case["free_before_gib"], case["free_after_gib"], version=case["version"])
    got = build_summary(plan)
    skip = OUTCOME_FIELDS if expected["outcome"] == "ok" and got["stage"] in BEYOND_ORACLE else set()
    if skip:
        assert got["outcome"] == "startup_failed" and got["error_type"] == "AssertionError"
    diffs = {k: (expected[k], got[k]) for k in SUMMARY_FIELDS if k not in skip and expected[k] != got[k]}
    assert not diffs, f"{case['id']}: (oracle, planner) differ: {diffs}"


def test_quant_set_covers_schemes_kv_choices_and_outcomes():
    assert len(CASES) >= 30
    kinds = {c["config_json"].rsplit("/", 1)[-1] for c, _ in CASES}
    assert len(kinds) >= 10  # NVFP4, FP8 block, compressed-tensors (3), AWQ, modelopt FP8, ...
    dtypes = {e["kv_cache_dtype"] for _, e in CASES}
    assert {"bfloat16", "float8_e4m3fn", "float8_e5m2"} <= dtypes
    assert {"ok", "startup_failed"} <= {e["outcome"] for _, e in CASES}
    # the NVFP4 27B gets fp8 KV from its kv_cache_scheme under --kv-cache-dtype auto, bf16 when asked
    nv = {c["id"]: e["kv_cache_dtype"] for c, e in CASES if c["planner_model"] == "qwen3.6-27b-nvfp4"}
    assert nv["qwen3.6-27b-nvfp4_rtxpro6000_tp1_kvauto"] == "float8_e4m3fn"
    assert nv["qwen3.6-27b-nvfp4_rtxpro6000_tp1_kvbf16"] == "bfloat16"


def test_release_refusals_of_modelopt_config_json_reach_the_cli():
    """0.5.9 serves a config.json ModelOpt NVFP4 block with ModelOptFp8Config on SM120 (SGLang's ValueError: exit 1,
    as its golden case says); 0.5.11 reads the MIXED_PRECISION 27B as w4afp8 (not modelled: exit 2, one line)."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    root = Path(__file__).parent.parent

    def cli(*argv):
        return subprocess.run([sys.executable, "-m", "planner", *argv], cwd=root, capture_output=True, text=True,
                              env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})

    p = cli("--gpu", "rtxpro6000", "--model", "qwen3.5-122b-a10b-nvfp4", "--sglang-version", "0.5.9", "--tp-size", "2",
            "--no-search")
    assert p.returncode == 1 and "WILL NOT BOOT (runner_setup): ValueError: ModelOptFp8Config" in p.stdout
    p = cli("--gpu", "rtx5090", "--model", "qwen3.6-27b-nvfp4", "--sglang-version", "0.5.11", "--tp-size", "1",
            "--no-search")
    assert p.returncode == 2 and "w4afp8" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_explicit_quantization_on_such_a_checkpoint_is_not_modelled():
    # --quantization takes part in 0.5.9's dispatch (srt/configs/model_config.py _verify_quantization @0.5.9)
    with pytest.raises(BadInput, match="--quantization modelopt_fp4"):
        make_plan(find_profile("rtxpro6000"), resolve_model("qwen3.5-122b-a10b-nvfp4"),
                  ["--tp-size", "2", "--quantization", "modelopt_fp4"], version="0.5.9")
    # the same launch on a B200 (SM100): ServerArgs picks modelopt_fp4 (srt/server_args.py:1579-1600 @0.5.9)
    plan = make_plan(find_profile("b200"), resolve_model("qwen3.5-122b-a10b-nvfp4"), [], version="0.5.9")
    assert build_summary(plan)["kv_cache_dtype"] == "bfloat16"  # the Qwen3-VL base keeps no quant config in 0.5.9


@pytest.mark.parametrize("version", ["0.5.10", "0.5.14"])
def test_w4afp8_reading_plans_only_measured_on_sm90_and_without_a_draft(version):
    """The MIXED_PRECISION 27B as 0.5.10-0.5.14 read it (w4afp8): planned with the free memory after loading
    measured, on SM >= 9.0 (W4AFp8Config.get_min_capability 90), with a bf16 KV cache under auto; refused without the
    measurement, below SM 9.0 and with a speculative draft (its MTP weights would be sized by a weight model)."""
    model = resolve_model("qwen3.6-27b-nvfp4")
    plan = make_plan(find_profile("rtxpro6000"), model, [], {}, 93.0, 73.93, version=version)
    assert build_summary(plan)["kv_cache_dtype"] == "bfloat16"
    with pytest.raises(BadInput, match="w4afp8"):
        make_plan(find_profile("rtxpro6000"), model, [], {}, version=version)  # weights not measured
    with pytest.raises(BadInput, match="w4afp8"):
        make_plan(find_profile("a100-80gb"), model, [], {}, 78.0, 60.0, version=version)  # SM 8.0
    with pytest.raises(BadInput, match="w4afp8"):
        make_plan(find_profile("rtxpro6000"), model, ["--speculative-algorithm", "EAGLE", "--speculative-num-steps",
                                                       "3", "--speculative-eagle-topk", "1",
                                                       "--speculative-num-draft-tokens", "4", "--disable-radix-cache"],
                  {}, 93.0, 73.93, version=version)
