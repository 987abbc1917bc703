"""The export (planner/engines/sglang/export.py): the YAML it writes parses back to what it means, and the Dynamo
DynamoGraphDeployment and the llm-d modelservice values validate against the projects' published schemas,
vendored in tests/data/schemas/ (README there: source, version, the command)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.cli import main
from planner.engines.sglang.deploy import search_hardware
from planner.engines.sglang.export import dynamo_graph, llmd_values, to_yaml
from planner.hardware.profiles import find_profile
from planner.engines.sglang.search import Needs

yaml = pytest.importorskip("yaml")
jsonschema = pytest.importorskip("jsonschema")

SCHEMAS = Path(__file__).parent / "data" / "schemas"
V = "0.5.23"


def _schema(rel: str):
    return json.loads((SCHEMAS / rel).read_text())


DYNAMO = _schema("dynamo/dynamographdeployment-v1beta1.json")
LLMD = _schema("llm-d/values.schema.json")


def _deployment(model: str, gpu: str, flags=()):
    m = resolve_model(model)
    res = search_hardware([find_profile(gpu)], m, list(flags), {}, Needs(), version=V)
    return m, res.deployments[0]


@pytest.fixture(scope="module")
def one_node():
    return _deployment("qwen3.6-27b", "h200")


@pytest.fixture(scope="module")
def two_nodes():
    return _deployment("llama-3.1-405b", "h100-sxm", ["--nnodes", "2"])


@pytest.mark.parametrize("value", [
    {"a": "x: y", "b": ["--flag", "0.95", "8", "$(LWS_WORKER_INDEX):5000"], "c": {"nvidia.com/gpu": "8"}},
    {"empty": {}, "none": [], "n": 3, "f": 0.5, "t": True, "z": None, "quote": 'say "hi"\n\\', "uni": "μ"},
    [{"name": "main", "args": ["a", {"k": [1, 2]}]}, []],
])
def test_yaml_round_trips(value):
    assert yaml.safe_load(to_yaml(value)) == value


def test_dynamo_one_node_validates_and_runs_the_recommended_flags(one_node):
    model, d = one_node
    doc = yaml.safe_load(to_yaml(dynamo_graph(model, d)))
    jsonschema.validate(doc, DYNAMO)
    worker = doc["spec"]["components"][1]
    (c,) = worker["podTemplate"]["spec"]["containers"]
    assert c["command"] == ["python3", "-m", "dynamo.sglang"]
    assert c["args"][c["args"].index("--tp-size") + 1] == "1"
    assert c["args"][4:] == d.flags  # after --model-path / --served-model-name
    assert c["resources"]["limits"] == {"nvidia.com/gpu": "1"}
    assert "multinode" not in worker


def test_dynamo_two_nodes_uses_multinode_and_no_nnodes_flag(two_nodes):
    model, d = two_nodes
    doc = yaml.safe_load(to_yaml(dynamo_graph(model, d)))
    jsonschema.validate(doc, DYNAMO)
    worker = doc["spec"]["components"][1]
    assert worker["multinode"] == {"nodeCount": 2}
    (c,) = worker["podTemplate"]["spec"]["containers"]
    assert "--nnodes" not in c["args"] and c["args"][c["args"].index("--tp-size") + 1] == "16"
    assert c["resources"]["limits"] == {"nvidia.com/gpu": "8"}


def test_dynamo_schema_is_strict_enough_to_catch_a_wrong_field(one_node):
    model, d = one_node
    doc = dynamo_graph(model, d)
    doc["spec"]["components"][1]["type"] = "aggregated"  # not one of the CRD's component types
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, DYNAMO)
    doc = dynamo_graph(model, d)
    doc["spec"]["components"][1]["gpus"] = 1  # unknown: the API server would prune it
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, DYNAMO)


def test_llmd_values_validate_one_and_two_nodes(one_node, two_nodes):
    for model, d in (one_node, two_nodes):
        doc = yaml.safe_load(to_yaml(llmd_values(model, d)))
        jsonschema.validate(doc, LLMD)
        par = doc["decode"]["parallelism"]
        # the chart's GPUs per pod = tensor x dataLocal; pods per group = workers
        assert par["tensor"] * par["dataLocal"] * par["workers"] == d.layout.gpus
        assert doc["multinode"] is (d.layout.nnodes > 1)
    args = llmd_values(*two_nodes)["decode"]["containers"][0]["args"]
    assert args[args.index("--node-rank") + 1] == "$(LWS_WORKER_INDEX)"
    assert args[args.index("--dist-init-addr") + 1] == "$(LWS_LEADER_ADDRESS):5000"
    assert args.count("--nnodes") == 1


def test_llmd_schema_catches_a_wrong_field(one_node):
    doc = llmd_values(*one_node)
    doc["decode"]["parallelism"]["pipeline"] = 2  # parallelism is closed in the chart's schema
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, LLMD)


def test_cli_export_prints_the_first_deployment(capsys):
    os.environ["COLUMNS"] = "400"
    assert main(["--model", "qwen3.6-27b", "--gpu", "h200,b200", "--price", "b200=9", "--price", "h200=3",
                 "--export", "dynamo", "--sglang-version", V]) == 0
    out = capsys.readouterr().out
    doc = yaml.safe_load(out)
    jsonschema.validate(doc, DYNAMO)
    assert out.startswith("# NVIDIA H200 [h200], TP 1 on 1 GPU(s)")  # the cheaper of two 1-GPU deployments
    assert main(["--model", "llama-3.1-405b", "--gpu", "h100-sxm", "--nnodes", "2", "--export", "launch",
                 "--sglang-version", V]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].endswith("--dist-init-addr NODE0_IP:5000 --node-rank 1")


def test_cli_export_with_nothing_feasible_is_one_line_exit_2(capsys):
    assert main(["--model", "llama-3.1-405b", "--gpu", "l4", "--export", "llm-d", "--sglang-version", V]) == 2
    err = capsys.readouterr().err
    assert "--export llm-d: no deployment" in err and len(err.strip().splitlines()) == 1
