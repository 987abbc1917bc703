"""vLLM's widened exact coverage (issue #26 item 3): B200 (SM 10.0), B300 (SM 10.3), MTP on DeepSeek-V3 (MLA),
EAGLE3 drafters on dense Llama / Qwen3, n-gram prompt lookup, checked through the whole chain (config.resolve +
sizing.size) against the oracle's committed goldens (tests/golden/vllm/<release>/<family>/b200*, b300*, mla/mtp-*,
dense/eagle3*, */ngram: see the README there), and what stays refused by name (ngram on the hybrids, EAGLE, EAGLE3
elsewhere, drafters with pipeline parallelism, SM 11.x).
"""

from __future__ import annotations

import json

import pytest
from test_vllm_golden import REFUSED
from vllm_golden import GOLDEN, compare, launch_from_case, load_set

from planner.engines.interface import PlanRequest
from planner.engines.vllm import config
from planner.engines.vllm.frontend import FRONTEND
from planner.engines.vllm.inputs import GIB
from planner.engines.vllm.sizing import size
from planner.errors import BadInput
from planner.hardware.profiles import find_profile

WIDE = sorted((p.parent.parent.name, p.parent.name, p.stem) for p in GOLDEN.glob("*/*/*.jsonl")
              if p.stem.split("-")[0] in ("b200", "b300", "mtp", "eagle3", "ngram") and not p.stem.endswith("_results"))


def _flag(case, name):
    f = case["flags"]
    return f[f.index(name) + 1] if name in f else None


def _chain_cases():
    for version, family, name in WIDE:
        for case, theirs in load_set(version, family, name):
            pp = int(_flag(case, "--pipeline-parallel-size") or 1)
            if theirs["outcome"] not in ("ok", "startup_failed") or pp > 1 or (version, family, case["id"]) in REFUSED:
                continue
            yield pytest.param(version, case, theirs, id=f"{version}-{family}-{case['id']}")


def test_wide_sets_present():
    names = {(v, f, n) for v, f, n in WIDE}
    for v in ("0.33.0", "0.34.0"):
        assert {(v, "mla", "mtp-h200"), (v, "mla", "mtp-b200"), (v, "dense", "eagle3"),
                (v, "dense", "eagle3-b200")} <= names
        assert {(v, f, "ngram") for f in ("dense", "moe", "swa", "chunked", "mla")} <= names
        assert {(v, f, g) for f in ("dense", "moe", "gdn", "mamba2", "swa", "chunked", "mla")
                for g in ("b200", "b300")} <= names
    assert len(list(_chain_cases())) >= 250


@pytest.mark.parametrize("version,case,theirs", list(_chain_cases()))
def test_whole_chain(version, case, theirs):
    """config.resolve + size on the launch as typed: every summary field as vLLM's own code decided it."""
    assert compare(size(launch_from_case(case, version)).summary, theirs) == []


def _one(version, family, name, pred):
    return next((c, t) for c, t in load_set(version, family, name) if pred(c, t))


def test_b200_flashinfer_layout_and_large_pages():
    """FLASHINFER on SM 10.x: LBHNC, and kernel pages above 64 for GQA (a 896-token hybrid block: kernel 128)."""
    case, theirs = _one("0.34.0", "gdn", "b200", lambda c, t: t.get("kernel_block_sizes") == [896, 896, 896, 128])
    s = size(launch_from_case(case, "0.34.0")).summary
    assert (s["kv_cache_layout"], s["kernel_block_sizes"], s["attention_backends"]) == (
        "LBHNC", [896, 896, 896, 128], ["GDN_ATTN", "FLASHINFER"])
    case, theirs = _one("0.34.0", "mla", "b200", lambda c, t: t["outcome"] == "ok")
    s = size(launch_from_case(case, "0.34.0")).summary
    assert (s["kv_cache_layout"], s["attention_backends"]) == ("LBNHC", ["FLASHINFER_MLA"])


def test_dsv3_mtp_draft_layer_joins_the_mla_group():
    case, theirs = _one("0.34.0", "mla", "mtp-b200", lambda c, t: t["outcome"] == "ok")
    s = size(launch_from_case(case, "0.34.0")).summary
    assert s["draft_layers"] == ["model.layers.61.self_attn.attn"]
    assert s["groups"][0]["num_layers"] == 62 and s["groups"][0]["num_draft_layers"] == 1
    assert s["draft_kv_specs"][0]["spec"]["type"] == "MLAAttentionSpec"


def test_eagle3_draft_layer_numbered_after_the_target():
    case, theirs = _one("0.34.0", "dense", "eagle3", lambda c, t: t["outcome"] == "ok" and c["model"] == "Qwen3-8B"
                        and not _flag(c, "--pipeline-parallel-size"))
    s = size(launch_from_case(case, "0.34.0")).summary
    assert s["draft_layers"] == ["model.layers.36.self_attn.attn"] and s["speculative_method"] == "eagle3"
    assert s["num_gpu_blocks"] == theirs["num_gpu_blocks"]


def _launch(flags, model="Llama-3.1-8B-Instruct", version="0.34.0", sm="9.0", draft=True):
    case = {"model": model, "flags": flags, "gpu_total_mib": 81559, "cuda_total_gib": 79.19, "gpu_sm": sm,
            "weights_gib": 16.0, "non_torch_gib": 0.5, "peak_activation_gib": 2.0}
    launch = launch_from_case(case, version)
    return launch if draft else type(launch)(**{**launch.__dict__, "draft": None})


@pytest.mark.parametrize("sc,model,match", [
    ({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}, "Qwen3.6-27B",
     "ngram speculation on gdn models"),
    ({"method": "ngram", "num_speculative_tokens": 3, "max_model_len": 4096}, "Llama-3.1-8B-Instruct",
     "not modelled with ngram: max_model_len"),
    ({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 5, "prompt_lookup_max": 4},
     "Llama-3.1-8B-Instruct", "prompt_lookup_min"),
    ({"method": "suffix", "num_speculative_tokens": 3}, "Llama-3.1-8B-Instruct", "'suffix' is not modelled"),
    ({"method": "eagle", "model": "llama3-8B-eagle3", "num_speculative_tokens": 3}, "Llama-3.1-8B-Instruct",
     "not modelled: model"),
    ({"method": "eagle", "num_speculative_tokens": 3}, "Llama-3.1-8B-Instruct", "'eagle' is not modelled"),
    ({"method": "eagle3", "model": "qwen3-8b-eagle3", "num_speculative_tokens": 2}, "Qwen3-30B-A3B",
     "EAGLE3 on Qwen3MoeForCausalLM"),
    ({"method": "eagle3", "model": "llama3-8B-eagle3", "num_speculative_tokens": 2, "draft_tensor_parallel_size": 1},
     "Llama-3.1-8B-Instruct", "draft_tensor_parallel_size"),
])
def test_unverified_drafters_refused_by_name(sc, model, match):
    with pytest.raises(BadInput, match=match):
        config.resolve(_launch(["--speculative-config", json.dumps(sc)], model))


def test_eagle3_without_the_drafter_config_refused():
    sc = json.dumps({"method": "eagle3", "model": "llama3-8B-eagle3", "num_speculative_tokens": 2})
    with pytest.raises(BadInput, match="drafter's config"):
        config.resolve(_launch(["--speculative-config", sc], draft=False))


@pytest.mark.parametrize("sc,model", [
    ({"method": "eagle3", "model": "llama3-8B-eagle3", "num_speculative_tokens": 2}, "Llama-3.1-8B-Instruct"),
])
def test_drafter_with_pipeline_parallelism_refused(sc, model):
    launch = _launch(["--pipeline-parallel-size", "2", "--speculative-config", json.dumps(sc)], model)
    with pytest.raises(BadInput, match="pipeline parallelism"):
        size(launch)


@pytest.mark.parametrize("sm", ["11.0"])
def test_other_blackwell_datacenter_sms_refused(sm):
    with pytest.raises(BadInput, match=f"SM {sm}"):
        size(_launch([], sm=sm))


def test_frontend_eagle3_from_the_catalog_matches_the_oracle():
    """`plan --engine vllm` with a catalog EAGLE3 draft in --speculative-config and every input measured: the blocks
    of the committed oracle case with the same launch."""
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415

    case, theirs = _one("0.34.0", "dense", "eagle3", lambda c, t: t["outcome"] == "ok" and c["model"] ==
                        "Llama-3.1-8B-Instruct" and c["gpu_sm"] == "9.0" and not _flag(c, "--tensor-parallel-size")
                        and not _flag(c, "--pipeline-parallel-size") and c.get("gpu_name", "").startswith("NVIDIA H100"))
    flags = list(case["flags"])
    i = flags.index("--speculative-config")
    flags[i + 1] = json.dumps(dict(json.loads(flags[i + 1]), model="llama3-8b-eagle3"))  # the catalog's id
    measured = {k: case[k] for k in ("weights_gib", "non_torch_gib", "peak_activation_gib", "cudagraph_gib",
                                     "startup_used_gib") if k in case}
    measured["cuda_total_mib"] = case["cuda_total_gib"] * 1024
    for k in ("cudagraph_actual_gib", "warmup_peak_gib", "torch_reserve_growth_gib"):
        if k in case:
            measured[k] = case[k]
    o = FRONTEND.plan(PlanRequest(find_profile("h100-sxm"), resolve_model("llama-3.1-8b"), tuple(flags), {}, "0.34",
                                  measured, search=False))
    assert o.json["summary"]["num_gpu_blocks"] == theirs["num_gpu_blocks"]
    assert o.json["summary"]["draft_layers"] == ["model.layers.32.self_attn.attn"]
    assert abs(o.json["summary"]["requested_memory_bytes"] - theirs["requested_memory_bytes"]) < GIB / 100


def test_ngram_has_no_drafter_layers():
    case, theirs = _one("0.34.0", "dense", "ngram", lambda c, t: t["outcome"] == "ok")
    s = size(launch_from_case(case, "0.34.0")).summary
    assert (s["speculative_method"], s["draft_layers"], s["draft_kv_specs"]) == ("ngram", [], None)
    assert s["cudagraph_capture_sizes"] == theirs["cudagraph_capture_sizes"]


@pytest.mark.parametrize("version", ["0.33.0", "0.34.0"])
@pytest.mark.parametrize("sc,message", [
    # the oracle on both releases (case lines with no num_speculative_tokens)
    ({"method": "ngram", "prompt_lookup_max": 4}, "num_speculative_tokens must be provided with speculative model"),
    ({"method": "eagle3", "model": "llama3-8B-eagle3"}, "A speculative model was provided, but "
                                                        "`num_speculative_tokens` was not provided"),
])
def test_drafters_without_k_rejected_as_vllm_does(version, sc, message):
    from planner.engines.vllm.flags import VllmRejected  # noqa: PLC0415

    with pytest.raises(VllmRejected) as e:
        config.resolve(_launch(["--speculative-config", json.dumps(sc)], version=version))
    assert message in e.value.message and (e.value.stage, e.value.error_type) == ("engine_config", "ValidationError")
