"""Which hardware (planner/engines/sglang/deploy.py): ``plan --model M --gpu any | --gpu a,b`` ranks each GPU type's smallest
deployment; the layouts, the ranking, the prices, the per-node launch lines, and the refusals."""

from __future__ import annotations

import os

import pytest

from planner.catalog.catalog import resolve_model
from planner.cli import main
from planner.engines.sglang.deploy import (Layout, gpu_set, is_gpu_set, layouts, node_commands, parse_prices, search_hardware,
                            split_layout_flags)
from planner.errors import BadInput
from planner.hardware.profiles import find_profile
from planner.engines.sglang.search import Needs, run_search

V = "0.5.23"


def run(argv, capsys):
    os.environ["COLUMNS"] = "400"
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_layouts_fewest_gpus_first_and_extend_over_nodes():
    assert [(x.gpus, x.nnodes, x.tp) for x in layouts()] == [(1, 1, 1), (2, 1, 2), (4, 1, 4), (8, 1, 8)]
    assert [(x.gpus, x.nnodes) for x in layouts(3)][-2:] == [(16, 2), (24, 3)]
    assert layouts(2, tp=16) == [Layout(8, 2, 16)]
    assert Layout(8, 2, 16).flags() == ["--tp-size", "16", "--nnodes", "2"]
    assert Layout(4, 1, 4).flags() == ["--tp-size", "4"]


@pytest.mark.parametrize("text,want", [("any", True), ("ANY", True), ("h100-sxm,h200", True), ("h200", False),
                                       ("0,1", False), ("auto", False), (None, False)])
def test_gpu_set_selector(text, want):
    assert is_gpu_set(text) is want


def test_gpu_set_resolves_names_in_order_without_duplicates():
    assert [p.id for p in gpu_set("h200, h100-sxm,h200")] == ["h200", "h100-sxm"]
    assert {p.id for p in gpu_set("any")} >= {"h100-sxm", "b200", "mi300x"}
    for bad in ("h200,,b200", "h200,any", "h200,nosuchgpu"):
        with pytest.raises(BadInput):
            gpu_set(bad)


def test_prices_parse_and_refuse():
    assert parse_prices(["h100-sxm=2.49", "h200 = $3.5/h", "l4=0.8 USD/h"]) == {"h100-sxm": 2.49, "h200": 3.5,
                                                                              "l4": 0.8}
    for bad in ("h100-sxm", "h100-sxm=cheap", "nosuch=1"):
        with pytest.raises(BadInput):
            parse_prices([bad])


def test_layout_flags_split_from_the_rest():
    assert split_layout_flags(["--tp-size", "4", "--nnodes=2", "--kv-cache-dtype", "fp8_e4m3"]) == \
        (["--kv-cache-dtype", "fp8_e4m3"], 4, 2)
    for bad in (["--tp-size", "x"], ["--nnodes"], ["--nnodes", "0"]):
        with pytest.raises(BadInput):
            split_layout_flags(bad)


def test_smallest_deployment_is_the_first_layout_the_search_finds_flags_for():
    model = resolve_model("qwen3.6-27b")
    needs = Needs(context=131072, concurrency=4)
    res = search_hardware([find_profile("h100-sxm"), find_profile("l4")], model, [], {}, needs, version=V)
    by = {d.gpu.id: d for d in res.deployments}
    assert (by["h100-sxm"].layout.tp, by["l4"].layout.tp) == (2, 8)
    # one GPU fewer does not meet the needs: the search itself says so
    assert run_search(find_profile("h100-sxm"), model, ["--tp-size", "1"], {}, needs, top=1, relax=False,
                      version=V, prune=True).recommended is None
    best = by["h100-sxm"]
    assert best.concurrency >= 4 and best.flags[:2] == ["--tp-size", "2"]
    assert [d.gpu.id for d in res.deployments] == ["h100-sxm", "l4"]  # 2 GPUs before 8


def test_price_orders_deployments_of_the_same_size():
    model = resolve_model("qwen3.6-27b")
    gpus = [find_profile(g) for g in ("h100-sxm", "h200", "b200")]
    plain = search_hardware(gpus, model, [], {}, Needs(), version=V)
    assert [d.layout.gpus for d in plain.deployments] == [1, 1, 1]
    assert plain.deployments[0].gpu.id == "b200"  # no prices: the most requests at the needed length first
    priced = search_hardware(gpus, model, [], {}, Needs(), version=V, prices={"h100-sxm": 2.0, "h200": 3.0})
    assert [d.gpu.id for d in priced.deployments] == ["h100-sxm", "h200", "b200"]  # unpriced after priced
    assert priced.deployments[1].cost_per_hour == 3.0


def test_multi_node_lines_carry_rank_and_address(capsys):
    code, out, _ = run(["--model", "llama-3.1-405b", "--gpu", "h100-sxm,l40s", "--nnodes", "2",
                        "--sglang-version", V], capsys)
    assert code == 0
    assert "h100-sxm: TP 16 on 2 nodes x 8" in out
    assert out.count("--dist-init-addr NODE0_IP:5000") == 2
    assert "--node-rank 0" in out and "--node-rank 1" in out
    assert "l40s: nothing fits up to TP 16 on 2 nodes x 8" in out


def test_node_commands_one_line_on_one_node():
    model = resolve_model("qwen3.6-27b")
    res = search_hardware([find_profile("h200")], model, [], {}, Needs(), version=V)
    (line,) = node_commands(model, res.deployments[0])
    assert line.startswith("python -m sglang.launch_server --model-path Qwen/Qwen3.6-27B --tp-size 1")
    assert "--node-rank" not in line


def test_amd_types_are_skipped_by_name_where_rocm_does_not_model_the_family(capsys):
    # a hybrid GDN model: SGLang's ROCm path is modelled for dense / MoE GQA and DeepSeek MLA only (pipeline/rocm.py)
    code, out, _ = run(["--model", "qwen3.6-27b", "--gpu", "mi300x,h200", "--sglang-version", V], capsys)
    assert code == 0
    assert "mi300x: --gpu mi300x (SGLang's ROCm path): Qwen3_5ForConditionalGeneration is not modelled on ROCm" in out


def test_nothing_feasible_exits_1(capsys):
    code, out, _ = run(["--model", "llama-3.1-405b", "--gpu", "l4,a10g", "--sglang-version", V], capsys)
    assert code == 1
    assert "NOTHING FEASIBLE" in out


@pytest.mark.parametrize("extra,field", [(["--json", "--export", "launch"], "--json"), (["--no-search"], "--no-search"),
                                         (["--free-before-load-gib", "70"], "--free-before-load-gib"),
                                         (["--tp-size", "3"], "--tp-size 3"), (["--price", "h200"], "--price")])
def test_refusals_are_one_line_exit_2(extra, field, capsys):
    code, _, err = run(["--model", "qwen3.6-27b", "--gpu", "any", *extra], capsys)
    assert code == 2
    assert field in err and len(err.strip().splitlines()) == 1


def test_unified_memory_boxes_take_one_gpu_per_node():
    spark = find_profile("dgx-spark")
    assert [(x.gpus_per_node, x.nnodes) for x in layouts(3, gpu=spark)] == [(1, 1), (1, 2), (1, 3)]
    model = resolve_model("llama-3.3-70b-instruct")
    res = search_hardware([spark], model, ["--nnodes", "4"], {}, Needs(context=8192), version=V)
    assert all(d.layout.gpus_per_node == 1 for d in res.deployments)
    assert not res.deployments or res.deployments[0].layout.nnodes > 1
