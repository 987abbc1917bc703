"""vLLM's JSON against the shipped schemas (issue #26): ``plan --engine vllm --json``, ``plan check <vLLM log>
--json`` and ``--batch`` lines with ``"engine": "vllm"`` each validate against ``plan schema plan|check|batch``
(the ``vllm_*`` branch), carry ``schema_version``, and the schema refuses a drifted vLLM document; docs/json.md
lists every vLLM key.

The plans run the whole vLLM chain here (config.resolve, estimates, sizing.size); what the numbers are is
tests/test_vllm_frontend.py's and the vLLM golden tests' business; these tests pin the shape.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import jsonschema
import pytest

from planner.cli import main, run_batch
from planner.schema import SCHEMA_VERSION, load

ROOT = Path(__file__).parents[1]
VLOGS = ROOT / "tests" / "data" / "calibration" / "vllm"
Q36 = ["--engine", "vllm", "--gpu", "rtxpro6000", "--model", "qwen3.6-27b"]
MEASURED = ["--weights-gib", "50", "--non-torch-gib", "3", "--peak-activation-gib", "5", "--startup-used-gib", "0.5",
            "--cudagraph-gib", "0", "--cudagraph-actual-gib", "1", "--cuda-total-mib", "97250"]


def validator(kind: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load(kind))


def errors(kind: str, doc) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message[:200]}"
            for e in sorted(validator(kind).iter_errors(doc), key=lambda e: list(e.absolute_path))]


def run_json(argv, capsys) -> tuple[int, dict]:
    code = main(argv)
    out = capsys.readouterr()
    assert "Traceback" not in out.err, out.err
    return code, json.loads(out.out)


# ---- plan --engine vllm --json: every verdict, with and without the search ---------------------------------------

PLANS = {
    # vLLM's defaults: the Mamba-block check refuses max_num_seqs 1024; the search recommends a lower one
    "rejected+search": ([], "rejected", 1, True),
    "rejected+no-search": (["--no-search"], "rejected", 1, None),
    "rejected 0.33": (["--vllm-version", "0.33"], "rejected", 1, True),
    "fits": (["--max-num-seqs", "256"], "fits", 0, None),
    "fits, measured": (["--max-num-seqs", "256", *MEASURED], "fits", 0, None),
    # fits, but misses the needs: exit 1, the search runs and finds nothing that reaches them
    "fits, needs missed": (["--max-num-seqs", "256", "--need-context", "262144", "--need-concurrency", "64"],
                           "fits", 1, False),
    "oom_risk 0.33": (["--vllm-version", "0.33", "--max-num-seqs", "256", "--cudagraph-actual-gib", "20"],
                      "oom_risk", 1, None),
    "too long": (["--max-model-len", "9999999"], "rejected", 1, False),
    "MTP": (["--max-num-seqs", "64", "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 3}'],
            "fits", 0, None),
}


@pytest.mark.parametrize("name", list(PLANS))
def test_vllm_plan_json_validates(name, capsys):
    extra, verdict, code, found = PLANS[name]
    got, doc = run_json([*Q36, *extra, "--json"], capsys)
    assert not errors("plan", doc), errors("plan", doc)
    assert list(doc)[:2] == ["schema_version", "engine"] and doc["schema_version"] == SCHEMA_VERSION
    assert (doc["engine"], doc["verdict"], doc["exit_code"], got) == ("vllm", verdict, code, code)
    assert doc["summary"]["summary_version"] == 1
    rec = doc["recommendation"]
    if found is None:
        assert rec is None
    else:
        assert rec is not None and rec["found"] is found
        if found:
            assert rec["command"].startswith("vllm serve Qwen/Qwen3.6-27B") and doc["launch"] == rec["command"]


def test_a_dense_model_on_h100_and_a_flag_vllm_refuses_validate(capsys):
    _, doc = run_json(["--engine", "vllm", "--gpu", "h100", "--model", "qwen3-8b", "--json"], capsys)
    assert not errors("plan", doc) and doc["verdict"] == "fits" and doc["summary"]["groups"]
    code, doc = run_json([*Q36, "--max-num-seqs", "0", "--json"], capsys)
    assert code == 1 and doc["verdict"] == "rejected" and not errors("plan", doc)


# ---- the schema is strict: a drifted vLLM document fails -------------------------------------------------------

DRIFT = {
    "unknown top-level key": lambda d: d.update(pools=[]),
    "schema_version missing": lambda d: d.pop("schema_version"),
    "verdict not a vLLM value": lambda d: d.update(verdict="startup_failed"),
    "release not modelled": lambda d: d.update(vllm_version="0.35.0"),
    "summary key unknown": lambda d: d["summary"].update(max_total_num_tokens=1),
    "summary bytes as a float": lambda d: d["summary"].update(available_kv_bytes=1.5),
    "summary outcome not a value": lambda d: d["summary"].update(outcome="failed"),
    "summary version 2": lambda d: d["summary"].update(summary_version=2),
    "estimate without how": lambda d: next(iter(d["estimated"].values())).pop("how"),
    "measured name unknown": lambda d: d["measured"].update(weight_gib=1.0),
    "recommendation found without command": lambda d: d["recommendation"].pop("command"),
    "recommendation not found with a command": lambda d: d["recommendation"].update(found=False),
    "needs without met": lambda d: d["needs"].pop("met"),
    "log as a string": lambda d: d.update(log="Available KV cache memory: 1 GiB"),
    "SGLang's shape under engine vllm": lambda d: d.update(sglang_version="0.5.11"),
}


@pytest.fixture(scope="module")
def rejected_doc():
    out = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out):
        main([*Q36, "--json"])
    return json.loads(out.getvalue())


@pytest.mark.parametrize("mutate", list(DRIFT.values()), ids=list(DRIFT))
def test_a_drifted_vllm_document_fails(mutate, rejected_doc):
    assert not errors("plan", rejected_doc)
    bad = copy.deepcopy(rejected_doc)
    mutate(bad)
    assert errors("plan", bad), "the schema let a drifted vLLM document through"


def test_the_engine_key_picks_the_branch(rejected_doc, capsys):
    _, sglang = run_json(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--no-search", "--json"], capsys)
    assert not errors("plan", sglang)
    assert errors("plan", {**sglang, "engine": "vllm"})  # SGLang's keys are not vLLM's
    assert errors("plan", {**rejected_doc, "engine": "sglang"})
    assert errors("plan", {k: v for k, v in rejected_doc.items() if k != "engine"})


# ---- plan check <vLLM log> --json ---------------------------------------------------------------------------------

CHECKS = [
    (ROOT / "tests" / "data" / "vllm_frontend" / "q36-rtxpro6000-defaults-0.34.0.log", "rtxpro6000", None),
]


@pytest.mark.parametrize(("log", "gpu", "model"), CHECKS, ids=[c[0].name for c in CHECKS])
def test_vllm_check_json_validates(log, gpu, model, capsys):
    code, doc = run_json(["check", str(log), "--gpu", gpu, *(["--model", model] if model else []), "--json"], capsys)
    assert code in (0, 1) and not errors("check", doc), errors("check", doc)
    assert list(doc)[:2] == ["schema_version", "engine"] and doc["engine"] == "vllm" and "check" in doc


def test_every_public_vllm_log_checks_to_valid_json():
    """vLLM's check (planner/engines/vllm/check.py check_log, what `plan check` calls) on every public log of
    tests/data/calibration/vllm/, under the log's release else 0.34, with --model qwen3.6-27b (most excerpts name no
    model; this pins the shape, not the figures): each one it answers validates; the ones it refuses (a release, a
    flag, a family not modelled) raise BadInput, one line."""
    from planner.engines.vllm.check import check_log
    from planner.errors import BadInput
    from planner.hardware.profiles import find_profile

    from planner.catalog.catalog import resolve_model

    model, answered, refused = resolve_model("qwen3.6-27b"), 0, 0
    for path in sorted(VLOGS.glob("*.log")):
        gpu = find_profile("rtx3090" if "3090" in path.name else "h100")
        for version in (None, "0.34.0"):
            text = path.read_text(encoding="utf-8")
            try:
                outcome = check_log(text, gpu=gpu, version=version, model=model)
            except BadInput as exc:
                assert "\n" not in str(exc)
                refused += 1
                continue
            doc = json.loads(json.dumps(outcome.json, default=str))
            assert not errors("check", doc), (path.name, errors("check", doc)[:3])
            answered += 1
            break
    # most excerpts lack the 'non-default args' line a whole log opens with: refused (the launch's flags unknown)
    assert answered + refused > 0 and refused >= 30, (answered, refused)


def test_the_failed_boot_check_compares_and_reproduces(capsys):
    _, doc = run_json(["check", str(CHECKS[0][0]), "--gpu", "rtxpro6000", "--json"], capsys)
    rows = {r["what"]: r for r in doc["check"]["compare"]}
    assert rows["failure"]["reproduced"] is True and doc["verdict"] == "rejected"
    bad = copy.deepcopy(doc)
    bad["check"]["compare"][0]["agrees"] = True  # SGLang's row key, not vLLM's
    assert errors("check", bad)


# ---- --batch lines with "engine": "vllm" --------------------------------------------------------------------------

LINES = [
    {"id": "plain", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "engine": "vllm"},
    {"id": "search", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "engine": "vllm", "search": True,
     "need_context": 131072, "need_concurrency": 2},
    {"id": "033", "gpu": "h100", "model": "qwen3-8b", "engine": "vllm", "vllm_version": "0.33",
     "flags": ["--max-model-len", 8192], "measured": {"weights_gib": 15.3}},
    {"id": "fp8", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "engine": "vllm", "search": True,
     "allow_fp8_kv": False},
    {"id": "top", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "engine": "vllm", "search": True, "top": 3},
    {"id": "nosearch", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "engine": "vllm", "need_concurrency": 4},
    {"id": "unknown", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "engine": "vllm", "serach": True},
    {"id": "sglang", "gpu": "h100", "model": "qwen3-8b"},
]


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    path = tmp_path_factory.mktemp("vbatch") / "lines.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in LINES) + "\n")
    out = io.StringIO()
    assert run_batch(str(path), None, out) == 0
    return {d["id"]: d for d in map(json.loads, out.getvalue().splitlines())}


def test_every_vllm_batch_line_validates(batch):
    assert list(batch) == [x["id"] for x in LINES]
    for rid, doc in batch.items():
        assert not errors("batch", doc), (rid, errors("batch", doc))
        assert list(doc)[:2] == ["schema_version", "id"]


def test_a_vllm_line_searches_when_it_says_so(batch):
    assert batch["plain"]["engine"] == "vllm" and batch["plain"]["recommendation"] is None
    rec = batch["search"]["recommendation"]
    assert rec is not None and rec["needs"] == {"context": 131072, "concurrency": 2}
    assert batch["search"]["needs"] == {"context": 131072, "concurrency": 2, "met": False}
    assert batch["033"]["vllm_version"] == "0.33.0" and batch["033"]["measured"] == {"weights_gib": 15.3}


def test_keys_a_vllm_line_does_not_read_are_its_error(batch):
    for rid, key in (("fp8", "allow_fp8_kv"), ("top", "top")):
        assert batch[rid]["verdict"] == "bad_input" and f"'{key}' is read by SGLang's search only" in batch[rid]["error"]
    assert "'need_concurrency' is read only by the flag search" in batch["nosearch"]["error"]
    assert "unknown key 'serach'; did you mean 'search'?" in batch["unknown"]["error"]
    assert batch["sglang"]["engine"] == "sglang" and batch["sglang"]["verdict"] == "fits"


# ---- docs/json.md lists every vLLM key ----------------------------------------------------------------------------

def test_docs_list_every_vllm_key():
    text = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    section = text.split("## vLLM (`--engine vllm`)", 1)[1].split("\n## ", 1)[0]
    plan, check = load("plan")["$defs"], load("check")["$defs"]
    keys = {*plan["vllm_plan"]["properties"], *check["vllm_check"]["properties"]["check"]["properties"],
            *plan["vllm_summary"]["properties"], *plan["vllm_estimate"]["properties"],
            *plan["vllm_recommendation"]["properties"], *plan["vllm_plan"]["properties"]["gpu"]["properties"],
            *check["vllm_check"]["properties"]}
    missing = sorted(k for k in keys if f"`{k}`" not in section)
    assert not missing, f"docs/json.md's vLLM section does not list {missing}"
