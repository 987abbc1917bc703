"""vLLM's hardware search (planner/engines/vllm/deploy.py): ``plan --engine vllm --model M --gpu any`` gives each
GPU type's smallest TP under vLLM's own sizing, the same ranking and output shape as SGLang's (its JSON validated
against the plan schema's hardware branch), and skips what vLLM's planner refuses with that refusal."""

from __future__ import annotations

import json
import os

import pytest

from planner.catalog.catalog import resolve_model
from planner.cli import main
from planner.engines.interface import PlanRequest
from planner.engines.registry import engine
from planner.engines.vllm.deploy import Layout, Needs, base_flags, search_hardware
from planner.errors import BadInput
from planner.hardware.profiles import find_profile

jsonschema = pytest.importorskip("jsonschema")

V = "0.34.0"


def run(argv, capsys):
    os.environ["COLUMNS"] = "400"
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def qwen():
    model = resolve_model("qwen3.6-27b")
    gpus = [find_profile(g) for g in ("l40s", "h200", "mi300x", "dgx-spark")]
    return model, search_hardware(gpus, model, [], {}, Needs(concurrency=4), V)


def test_smallest_tp_per_type_ranked_by_gpus(qwen):
    _, res = qwen
    assert [(d.gpu.id, d.layout.tp) for d in res.deployments] == [("h200", 1), ("l40s", 2)]
    assert all(d.kind == "tp" and d.concurrency >= 4 for d in res.deployments)
    assert res.need_context == 32768


def test_the_numbers_are_the_vllm_plan_of_the_same_flags(qwen):
    """The deployment's flags planned by vLLM's front end (plan --engine vllm) fit and give the same figures."""
    model, res = qwen
    front = engine("vllm")
    for d in res.deployments:
        o = front.plan(PlanRequest(gpu=d.gpu, model=model, flags=tuple(d.flags), env={}, version=V, search=False))
        assert o.verdict == "fits"
        assert (o.capacity["max_concurrency"], o.capacity["kv_tokens"]) == (d.concurrency, d.kv_tokens)
    # one GPU fewer on the L40S: vLLM's own plan does not serve the needs there (its search finds nothing either)
    one = front.plan(PlanRequest(gpu=find_profile("l40s"), model=model, flags=("--tensor-parallel-size", "1",
                                 "--max-model-len", "32768"), env={}, version=V, need_concurrency=4))
    assert one.exit_code == 1 and not (one.json["recommendation"] or {}).get("found")


def test_refused_types_are_skipped_with_vllms_refusal(qwen):
    _, res = qwen
    why = dict(res.skipped)
    assert why["mi300x"].startswith("vLLM on AMD Instinct MI300X (ROCm) is not modelled")
    assert "(unified memory) is not modelled" in why["dgx-spark"]


def test_pp_is_asked_of_vllms_planner_and_refused_by_name():
    model = resolve_model("qwen3-32b")
    res = search_hardware([find_profile("rtx4090")], model, [], {}, Needs(), V, layouts_text="tp,pp")
    assert res.refused["pp"] == "vLLM weights per pipeline stage (--pipeline-parallel-size > 1) are not modelled"
    assert res.deployments[0].kind == "tp"
    assert Layout(8, 1, 4, pp=2).flags() == ["--tensor-parallel-size", "4", "--pipeline-parallel-size", "2"]
    with pytest.raises(BadInput, match="'dp' is not a layout kind searched here"):
        search_hardware([find_profile("h200")], model, [], {}, Needs(), V, layouts_text="dp")


def test_a_given_max_model_len_is_the_needed_length():
    model = resolve_model("qwen3.6-27b")
    res = search_hardware([find_profile("h200")], model, ["--max-model-len", "65536"], {}, Needs(), V)
    (d,) = res.deployments
    assert res.need_context == 65536 and d.flags.count("--max-model-len") == 1


def test_base_flags():
    assert base_flags(["--kv-cache-dtype", "fp8"], 8192) == ["--kv-cache-dtype", "fp8", "--max-model-len", "8192"]
    assert base_flags(["--max-model-len=4096"], 8192) == ["--max-model-len=4096"]
    for bad in (["--tensor-parallel-size", "2"], ["-pp", "2"], ["--nnodes", "2"]):
        with pytest.raises(BadInput):
            base_flags(bad, 8192)


def test_cli_text_json_and_prices(capsys):
    code, out, _ = run(["--engine", "vllm", "--model", "qwen3.6-27b", "--gpu", "l40s,h200", "--price", "h200=3.5",
                        "--vllm-version", "0.34"], capsys)
    assert code == 0
    assert " 1. h200: TP 1 on 1 GPU(s), $3.50/h;" in out
    assert "vllm serve Qwen/Qwen3.6-27B --tensor-parallel-size 1 --max-model-len 32768" in out
    from planner.schema import load

    code, out, _ = run(["--engine", "vllm", "--model", "deepseek-v3", "--gpu", "h200,l40s,mi300x", "--json",
                        "--vllm-version", "0.34"], capsys)
    doc = json.loads(out)
    jsonschema.validate(doc, load("plan"))
    assert code == 0 and doc["engine"] == "vllm" and doc["version"] == V
    assert doc["deployments"][0]["commands"][0].startswith("vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8")
    assert {s["gpu"] for s in doc["skipped"]} == {"l40s", "mi300x"}


def test_cli_nothing_feasible_exits_1(capsys):
    code, out, _ = run(["--engine", "vllm", "--model", "llama-3.1-405b", "--gpu", "l4,a10g"], capsys)
    assert code == 1 and "NOTHING FEASIBLE" in out


@pytest.mark.parametrize("extra,field", [(["--no-search"], "--no-search"), (["--export", "launch"], "--export"),
                                         (["--cuda-total-mib", "80000"], "--cuda-total-mib"),
                                         (["--tensor-parallel-size", "2"], "--tensor-parallel-size")])
def test_cli_refusals_are_one_line(extra, field, capsys):
    code, _, err = run(["--engine", "vllm", "--model", "qwen3.6-27b", "--gpu", "any", *extra], capsys)
    assert code == 2 and field in err and len(err.strip().splitlines()) == 1
