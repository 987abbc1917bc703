"""Which hardware beyond one TP group (planner/engines/sglang/deploy.py): DP attention + EP, PP and PD layouts, each
tried only where the pipeline models it (its by-name refusal means "not this layout"), ranked with the TP layouts,
shown in the label and the launch lines; ``--json`` validated against the plan schema's hardware branch."""

from __future__ import annotations

import json
import os

import pytest

from planner.catalog.catalog import resolve_model
from planner.cli import main
from planner.engines.sglang.deploy import (Layout, extra_layouts, hardware_dict, parse_layouts, search_hardware,
                                           split_layout_flags)
from planner.engines.sglang.export import export_text, node_commands
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.pp import make_pp_plans
from planner.engines.sglang.report import capacity
from planner.engines.sglang.search import Needs, run_search
from planner.errors import BadInput
from planner.hardware.profiles import find_profile

jsonschema = pytest.importorskip("jsonschema")

V = "0.5.23"


def run(argv, capsys):
    os.environ["COLUMNS"] = "400"
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_layout_flags_and_labels():
    dp = Layout(8, 1, 8, dp=8, ep=8)
    assert dp.flags() == ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention", "--ep-size", "8"]
    assert dp.kind == "dp" and dp.label() == "DP attention 8 x attn-TP 1 (TP 8, EP 8) on 8 GPU(s)"
    pp = Layout(8, 2, 8, pp=2)
    assert pp.flags() == ["--tp-size", "8", "--pp-size", "2", "--nnodes", "2"] and pp.gpus == 16
    assert pp.label() == "TP 8 x PP 2 on 2 nodes x 8"
    assert Layout(2, 1, 2, role="decode").flags() == ["--tp-size", "2", "--disaggregation-mode", "decode"]


def test_extra_layouts_per_size():
    moe, dense = resolve_model("deepseek-v3"), resolve_model("qwen3-32b")
    got = [(x.tp, x.dp, x.pp, x.ep) for x in extra_layouts(Layout(8, 1, 8), moe, ("dp", "pp"))]
    assert got == [(8, 8, 1, 8), (8, 4, 1, 8), (8, 2, 1, 8), (4, 1, 2, 1), (2, 1, 4, 1), (1, 1, 8, 1)]
    assert all(x.ep == 1 for x in extra_layouts(Layout(4, 1, 4), dense, ("dp",)))  # EP only for a MoE model
    assert extra_layouts(Layout(1, 1, 1), dense, ("dp", "pp")) == []
    over_nodes = extra_layouts(Layout(8, 2, 16), dense, ("pp",))
    assert [(x.tp, x.pp, x.gpus) for x in over_nodes] == [(8, 2, 16)]  # TP in a node, a pipeline rank per node


def test_parse_layouts():
    assert parse_layouts(None) == (("tp", "dp", "pp"), True)
    assert parse_layouts("all") == (("tp", "dp", "pp", "pd"), False)
    assert parse_layouts("pd, tp,pd") == (("pd", "tp"), False)
    with pytest.raises(BadInput, match="'ep' is not a layout kind"):
        parse_layouts("tp,ep")


@pytest.mark.parametrize("flag", ["--pp-size", "--dp-size", "--enable-dp-attention", "--ep-size",
                                  "--disaggregation-mode"])
def test_layout_flags_given_are_refused_by_name(flag):
    with pytest.raises(BadInput, match=f"^{flag}: the hardware search sets the layout"):
        split_layout_flags([flag, "2"])


def test_deepseek_on_h200_takes_dp_attention_where_tp_8_cannot_serve_the_needs():
    """The README's example: 48 requests of 32k tokens. TP 8 holds the MLA latent cache replicated on every GPU,
    so its search finds no flags; DP attention 8 holds one rank's requests per GPU, 8 ranks."""
    model, h200 = resolve_model("deepseek-v3"), find_profile("h200")
    needs = Needs(concurrency=48)
    assert run_search(h200, model, ["--tp-size", "8"], {}, needs, top=1, relax=False, version=V,
                      prune=True).recommended is None
    res = search_hardware([h200], model, [], {}, needs, version=V)
    (d,) = res.deployments
    # the search runs per attention-DP rank (search.run_search): its flags, not the layout's defaults
    assert (d.kind, d.layout.tp, d.layout.dp, d.layout.ep, d.gpus, d.searched) == ("dp", 8, 8, 8, 8, True)
    # the numbers are the plan's: one rank's capacity times the ranks
    cap = capacity(make_plan(h200, model, d.flags, {}, version=V))
    assert d.kv_tokens == cap["kv_tokens"] * 8
    assert d.concurrency == min(cap["max_running_requests"], cap["kv_tokens"] // 32768) * 8 >= 48
    # TP x PP is modelled for DeepSeek-V3 (pp.py), so it is not refused; DP attention is the layout chosen
    assert "pp" not in res.refused
    (line,) = node_commands(model, d)
    assert "--tp-size 8 --dp-size 8 --enable-dp-attention --ep-size 8 --" in line  # + the searched flags


def test_auto_tries_no_extra_layout_where_tp_serves():
    model = resolve_model("deepseek-v3")
    res = search_hardware([find_profile("h200")], model, [], {}, Needs(concurrency=8), version=V)
    assert res.deployments[0].kind == "tp" and res.deployments[0].searched
    assert "dp" not in res.refused  # below 8 GPUs TP's weights do not load, so DP attention (more) is not tried


def test_pp_layout_is_planned_per_rank_and_refused_for_other_models():
    model, l40s = resolve_model("qwen3-32b"), find_profile("l40s")
    res = search_hardware([l40s], model, [], {}, Needs(concurrency=2), version=V, layouts_text="pp")
    (d,) = res.deployments
    assert (d.kind, d.layout.tp, d.layout.pp, d.gpus) == ("pp", 2, 2, 4)
    stages = make_pp_plans(l40s, model, d.flags, {}, 2, version=V)
    assert all(s.plan.verdict == "fits" for s in stages)
    assert d.kv_tokens == min(s.capacity for s in stages)
    # no release given: the default one (pp.refusal is asked with it, as plan does)
    unversioned = search_hardware([l40s], model, [], {}, Needs(concurrency=2), layouts_text="pp")
    assert [x.kind for x in unversioned.deployments] == ["pp"] and "pp" not in unversioned.refused
    other = search_hardware([l40s], resolve_model("gpt-oss-120b"), [], {}, Needs(), version=V, layouts_text="pp")
    assert other.deployments == [] and "pipeline parallelism with GptOssForCausalLM" in other.refused["pp"]


def test_pd_deployment_is_two_servers_each_planned_alone(capsys):
    model, h200 = resolve_model("qwen3.6-27b"), find_profile("h200")
    res = search_hardware([h200], model, [], {}, Needs(), version="0.5.16", layouts_text="pd")
    (d,) = res.deployments
    assert d.kind == "pd" and d.gpus == d.layout.gpus + d.prefill.layout.gpus == 2
    decode = make_plan(h200, model, d.flags, {}, version="0.5.16")
    assert decode.verdict == "fits" and d.kv_tokens == capacity(decode)["kv_tokens"]
    lines = node_commands(model, d)
    assert "--disaggregation-mode prefill" in lines[0] and "--disaggregation-mode decode" in lines[1]
    assert d.searched and make_plan(h200, model, d.prefill.flags, {}, version="0.5.16").verdict == "fits"
    with pytest.raises(BadInput, match="--export dynamo: a PD deployment"):
        export_text("dynamo", model, d)
    # TP 1 alone serves the needs on one GPU: with tp in the kinds, it ranks first
    both = search_hardware([h200], model, [], {}, Needs(), version="0.5.16", layouts_text="tp,pd")
    assert both.deployments[0].kind == "tp"
    code, out, _ = run(["--model", "qwen3.6-27b", "--gpu", "h200,l40s", "--layouts", "pd", "--sglang-version",
                        "0.5.16"], capsys)
    assert code == 0 and "h200: PD: prefill TP 1 on 1 GPU(s) + decode TP 1 on 1 GPU(s) (2 GPUs)" in out
    assert "# prefill server" in out and "; defaults" not in out  # both roles searched


def test_pd_refused_for_sliding_window_is_not_a_layout():
    res = search_hardware([find_profile("h200")], resolve_model("gpt-oss-120b"), [], {}, Needs(), version=V,
                          layouts_text="pd")
    assert res.deployments == [] and "sliding-window model" in res.skipped[0][1]


def test_json_validates_against_the_plan_schema(capsys):
    from planner.schema import load

    schema = load("plan")
    for argv in (["--model", "deepseek-v3", "--gpu", "h200,mi300x,l4", "--need-concurrency", "48"],
                 ["--model", "qwen3.6-27b", "--gpu", "h200,l40s", "--layouts", "pd,tp", "--price", "h200=3"],
                 ["--model", "llama-3.1-405b", "--gpu", "l4,a10g"]):
        code, out, _ = run([*argv, "--json", "--sglang-version", V], capsys)
        doc = json.loads(out)
        jsonschema.validate(doc, schema)
        assert code == (0 if doc["deployments"] else 1) and doc["schema_version"] == "1.1"
    bad = json.loads(out)
    bad["deployments"] = [{"gpu": "l4"}]  # the branch is strict: a deployment has its fixed keys
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_json_keys_are_the_result():
    model = resolve_model("deepseek-v3")
    res = search_hardware([find_profile("h200")], model, [], {}, Needs(concurrency=48), version=V)
    doc = hardware_dict(res, model, "sglang", V)
    (d,) = doc["deployments"]
    assert (d["layout"], d["gpus"], d["searched"], d["servers"][0]["dp_size"]) == ("dp", 8, True, 8)
    assert d["commands"] == node_commands(model, res.deployments[0])


def test_layouts_without_a_gpu_set_is_refused(capsys):
    code, _, err = run(["--model", "qwen3.6-27b", "--gpu", "h200", "--layouts", "pp"], capsys)
    assert code == 2 and "--layouts: only with --gpu any" in err and len(err.strip().splitlines()) == 1


def test_dp_deployment_exports_validate_and_carry_the_layout():
    """A DP-attention deployment exported to Dynamo and llm-d: the published schemas (tests/data/schemas/) accept
    it, the worker runs the layout's flags, and the GPUs per pod are the server's."""
    from pathlib import Path

    from planner.engines.sglang.export import dynamo_graph, llmd_values, to_yaml

    yaml = pytest.importorskip("yaml")
    schemas = Path(__file__).parent / "data" / "schemas"
    dynamo = json.loads((schemas / "dynamo/dynamographdeployment-v1beta1.json").read_text())
    llmd = json.loads((schemas / "llm-d/values.schema.json").read_text())
    model = resolve_model("deepseek-v3")
    (d,) = search_hardware([find_profile("h200")], model, [], {}, Needs(concurrency=48), version=V).deployments
    doc = yaml.safe_load(to_yaml(dynamo_graph(model, d)))
    jsonschema.validate(doc, dynamo)
    (c,) = doc["spec"]["components"][1]["podTemplate"]["spec"]["containers"]
    assert c["args"][4:] == d.flags and c["resources"]["limits"] == {"nvidia.com/gpu": "8"}
    assert doc["metadata"]["name"].endswith("-tp8-dp8")
    values = yaml.safe_load(to_yaml(llmd_values(model, d)))
    jsonschema.validate(values, llmd)
    assert values["decode"]["parallelism"]["tensor"] == 8
    assert "--enable-dp-attention" in values["decode"]["containers"][0]["args"]


def test_only_refused_layouts_say_the_refusal():
    """--layouts dp for a model DP attention is not modelled for: each type is skipped with the pipeline's own
    refusal (not a 'nothing fits' it never planned)."""
    res = search_hardware([find_profile("h200")], resolve_model("qwen3-32b"), [], {}, Needs(), version=V,
                          layouts_text="dp")
    assert res.deployments == []
    assert res.skipped[0][1].startswith("--dp-size 2 --enable-dp-attention: DP attention for qwen3-32b is not modelled")


def test_pp_size_with_gpu_any_is_the_hardware_searchs_refusal(capsys):
    code, _, err = run(["--model", "qwen3-32b", "--gpu", "h200,l40s", "--pp-size", "2"], capsys)
    assert code == 2 and "--pp-size: the hardware search sets the layout per deployment" in err


def test_gqa_moe_dp_layout_leaves_expert_parallel_off():
    """Qwen3-235B-A22B, 64 requests of 32k on H200: TP 8 alone does not serve them; DP attention 2 does. Its layout
    carries no --ep-size (expert parallel is modelled for the MLA models only, and with --moe-a2a-backend none it
    holds the same expert bytes per GPU), and its numbers are one rank's plan times the ranks."""
    model, h200 = resolve_model("qwen3-235b-a22b"), find_profile("h200")
    needs = Needs(concurrency=64)
    res = search_hardware([h200], model, [], {}, needs, version=V, layouts_text="tp,dp")
    (d,) = res.deployments
    assert d.kind == "dp" and d.layout.ep == 1 and "--ep-size" not in d.flags and d.searched
    cap = capacity(make_plan(h200, model, d.flags, {}, version=V))
    assert d.kv_tokens == cap["kv_tokens"] * d.layout.dp
    assert d.concurrency >= 64
