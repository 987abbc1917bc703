"""The JSON contract (issue 24, item 3): every JSON output of ``plan`` validates against its shipped schema.

The outputs are produced through the CLI, as a script gets them: plans of every verdict, with and without
the search, ``--verbose`` / ``--compare-releases`` with ``--json``, speculative, dense, quantized;
``plan check --json`` on every log in tests/data/logs/; ``--batch`` lines (results, errors, search on and off).
The schema is strict (required keys, types, enums, no unknown keys on fixed shapes), so a test below also
shows that a drifted document fails.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.cli import main, run_batch
from planner.schema import KINDS, PLAN_VERDICTS, SCHEMA_VERSION, build, load, render

ROOT = Path(__file__).parents[1]
LOGS = ROOT / "tests" / "data" / "logs"
SEED = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4", "--mamba-scheduler-strategy", "extra_buffer"]
V11 = ["--sglang-version", "0.5.11"]


def validator(kind: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load(kind), format_checker=jsonschema.FormatChecker())


def assert_valid(kind: str, doc) -> None:
    errors = sorted(validator(kind).iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors[:5]]


def run_json(argv, capsys) -> tuple[int, dict]:
    code = main(argv)
    out = capsys.readouterr()
    assert out.err == "", out.err
    return code, json.loads(out.out)


# ----------------------------------------------------------------------------- the schema files


def test_shipped_files_are_generated_from_the_module():
    for kind in KINDS:
        assert (ROOT / "planner" / "schema" / f"{kind}.schema.json").read_text(encoding="utf-8") == render(kind), (
            "run: python -m planner.schema --write")


@pytest.mark.parametrize("kind", KINDS)
def test_each_schema_is_a_draft_2020_12_schema_naming_its_version(kind):
    schema = load(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert f":{SCHEMA_VERSION}:" in schema["$id"] and schema["$id"].endswith(kind)


@pytest.mark.parametrize("kind", KINDS)
def test_plan_schema_prints_the_shipped_file(kind, capsys):
    assert main(["schema", kind]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == load(kind) == build(kind)


def test_plan_schema_defaults_to_plan_and_refuses_an_unknown_kind(capsys):
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["$id"].endswith(":plan")
    assert main(["schema", "plans"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice: 'plans'" in err and "'plan'" in err


# ----------------------------------------------------------------------------- plan --json

S = "--no-search"
PLANS = {
    # name: (argv, expected verdict, expected exit code)
    "fits_with_search": (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b"], "fits", 0),
    "fits_no_search": (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", S], "fits", 0),
    "verbose": (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--verbose", S], "fits", 0),
    "compare_releases": (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--compare-releases", S], "fits", 0),
    "oom_risk": (["--gpu", "h100", "--model", "qwen3-8b", "--mem-fraction-static", "0.99", S], "oom_risk", 1),
    "oom_risk_with_search": (["--gpu", "h100", "--model", "qwen3-8b", "--mem-fraction-static", "0.99"], "oom_risk", 1),
    # the seed: SGLang accepts the flags, then "Not enough memory" while sizing the pools
    "startup_failed": (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", *V11, *SEED, S], "startup_failed", 1),
    "startup_failed_with_search": (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", *V11, *SEED], "startup_failed", 1),
    "startup_failed_mem_fraction": (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative-algorithm",
                                     "EAGLE", "--mem-fraction-static", "0.6", S], "startup_failed", 1),
    # ServerArgs refuses NEXTN with no_buffer under 0.5.11
    "rejected": (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", *V11, "--speculative-algorithm", "NEXTN",
                  "--mamba-scheduler-strategy", "no_buffer", S], "rejected", 1),
    # the weights alone do not fit: nothing feasible, the closest and what would fit
    "nothing_feasible": (["--gpu", "l4", "--model", "qwen3.6-27b"], "startup_failed", 1),
    "speculative_search": (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--need-context", "131072",
                            "--need-concurrency", "2", "--speculative", "EAGLE", "--top", "3"], "fits", 0),
    "dflash": (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative", "DFLASH"], "fits", 0),
    "dense": (["--gpu", "h100", "--model", "qwen3-8b", "--objective", "kv-tokens"], "fits", 0),
    "dense_tp": (["--gpu", "h100", "--model", "llama-3.3-70b-instruct", "--tp-size", "4", S], "fits", 0),
    "quantized_fp8": (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b-fp8", S], "fits", 0),
    # the hybrid SWA pool: a float cell (kv_cell_bytes_per_token 8294.4), MXFP4 experts; with the search
    "sliding_window": (["--gpu", "h200", "--model", "gpt-oss-120b", "--tp-size", "8"], "fits", 0),
    "quantized_nvfp4_search": (["--gpu", "rtx5090", "--model", "qwen3.6-27b-nvfp4"], None, None),
    "measured_free": (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--free-before-load-gib", "94.6",
                       "--free-after-load-gib", "43.7", "--env", "SGLANG_MAMBA_SSM_DTYPE=bfloat16", S], "fits", 0),
}


@pytest.mark.parametrize("name", list(PLANS))
def test_plan_json_validates(name, capsys):
    argv, verdict, code = PLANS[name]
    got_code, doc = run_json([*argv, "--json"], capsys)
    assert_valid("plan", doc)
    assert doc["schema_version"] == SCHEMA_VERSION and next(iter(doc)) == "schema_version"
    assert doc["verdict"] in PLAN_VERDICTS
    if verdict is not None:
        assert doc["verdict"] == verdict
    if code is not None and (S in argv or name.startswith(("startup", "oom", "rejected"))):
        assert got_code == code  # exit codes as before: 0 fits, 1 anything else
    assert ("search" in doc) == (S not in argv) and ("recommendation" in doc) == (S not in argv)


def test_verdicts_match_the_oracle_outcome_and_the_stage(capsys):
    """startup_failed and rejected are told apart the way SGLang does (the summary's outcome)."""
    for name in ("startup_failed", "rejected", "fits_no_search", "oom_risk"):
        _, doc = run_json([*PLANS[name][0], "--json"], capsys)
        outcome = doc["summary"]["outcome"]
        assert {"ok": ("fits", "oom_risk")}.get(outcome, (outcome,)) == (doc["verdict"],) or (
            outcome == "ok" and doc["verdict"] in ("fits", "oom_risk")), name
    _, doc = run_json([*PLANS["startup_failed"][0], "--json"], capsys)
    assert "Not enough memory" in doc["summary"]["error_message"] and doc["summary"]["stage"] != "server_args"
    _, doc = run_json([*PLANS["rejected"][0], "--json"], capsys)
    assert doc["summary"]["stage"] == "server_args"


def test_nothing_feasible_search_has_the_closest_and_what_would_fit(capsys):
    _, doc = run_json([*PLANS["nothing_feasible"][0], "--json"], capsys)
    assert doc["recommendation"] is None and doc["search"]["feasible"] == 0 and doc["search"]["would_fit_with"]


# ----------------------------------------------------------------------------- drift is caught


def _fits_doc(capsys) -> dict:
    return run_json(["--gpu", "h100", "--model", "qwen3-8b", "--json"], capsys)[1]


DRIFT = {
    "verdict missing": lambda d: d.pop("verdict"),
    "verdict not a value": lambda d: d.update(verdict="rejected_or_failed"),
    "another version": lambda d: d.update(schema_version="0.9"),
    "version missing": lambda d: d.pop("schema_version"),
    "unknown top-level key": lambda d: d.update(new_key=1),
    "unknown gpu key": lambda d: d["gpu"].update(memory=1),
    "count as a string": lambda d: d["summary"].update(max_total_num_tokens="208600"),
    "summary key missing": lambda d: d["summary"].pop("pool_total_bytes"),
    "outcome not a value": lambda d: d["summary"].update(outcome="failed"),
    "bytes not an integer": lambda d: d["pools"][0].update(bytes=1.5),
    "candidate key missing": lambda d: d["search"]["top"][0].pop("kv_tokens"),
    "objective not a value": lambda d: d["search"]["needs"].update(objective="speed"),
    "flags as a string": lambda d: d["recommendation"].update(flags="--tp-size 1"),
    "bytes null": lambda d: d["inputs"].update(free_before_load_bytes=None),
}


@pytest.mark.parametrize("mutate", list(DRIFT.values()), ids=list(DRIFT))
def test_a_drifted_document_fails(mutate, capsys):
    doc = _fits_doc(capsys)
    assert_valid("plan", doc)
    bad = copy.deepcopy(doc)
    mutate(bad)
    assert list(validator("plan").iter_errors(bad)), "the schema let a drifted document through"


# ----------------------------------------------------------------------------- plan check --json

CHECKS = [
    *[(p, "rtxpro6000", None, []) for p in sorted(LOGS.glob("*.log"))],
    *[(p, "h200" if "h200" in p.name else "rtxpro6000",
       {"synthetic-0.5.23-ngram-h200.log": "qwen3-8b", "synthetic-0.5.23-standalone-h200.log": "qwen3-32b"}.get(
           p.name, "qwen3.6-27b"), []) for p in sorted((LOGS / "spec").glob("*.log"))],
    (LOGS / "synthetic-0.5.11-tp1-spec.log", "rtxpro6000", None, ["--max-running-requests", "8"]),
    (LOGS / "synthetic-0.5.11-tp1-spec.log", "rtxpro6000", None, ["--launched-at", "2030-01-01 00:00"]),
]


@pytest.mark.parametrize(("log", "gpu", "model", "extra"), CHECKS,
                         ids=[f"{c[0].name}{'+' if c[3] else ''}{c[3][:1]}" for c in CHECKS])
def test_check_json_validates(log, gpu, model, extra, capsys):
    argv = ["check", str(log), "--gpu", gpu, *(["--model", model] if model else []), *extra, "--json"]
    code = main(argv)
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    if code == 2:  # refused (a launch not modelled): one line on stderr, no JSON
        assert out.out == "" and out.err.count("\n") == 1
        return
    doc = json.loads(out.out)
    assert_valid("check", doc)
    assert doc["schema_version"] == SCHEMA_VERSION
    assert doc["plan"] is None or "schema_version" not in doc["plan"]  # one version, at the top


def test_check_json_covers_a_plan_and_a_failure(capsys):
    """The check cases above are not vacuous: some carry a plan with rows, one a failed launch."""
    seen = []
    for log, gpu, model, extra in CHECKS:
        if main(["check", str(log), "--gpu", gpu, *(["--model", model] if model else []), *extra, "--json"]) != 2:
            seen.append(json.loads(capsys.readouterr().out))
        else:
            capsys.readouterr()
    assert len(seen) >= 8
    assert any(d["plan"] is not None and d["rows"] for d in seen)
    assert any(d["failure"] for d in seen) and any(d["stale"] for d in seen)
    assert {d["plan"]["verdict"] for d in seen if d["plan"]} >= {"fits", "startup_failed"}


# ----------------------------------------------------------------------------- --batch lines


def batch(tmp_path, lines, version=None) -> list[dict]:
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    out = io.StringIO()
    assert run_batch(str(f), version, out) == 0
    return [json.loads(x) for x in out.getvalue().splitlines()]


BATCH = [
    {"id": "fits", "gpu": "rtxpro6000", "model": "qwen3.6-27b"},
    {"id": "measured", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "free_before_load_gib": 94.6,
     "free_after_load_gib": 43.7, "search": False},
    {"id": "seed", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "flags": SEED, "sglang_version": "0.5.11"},
    {"id": "rejected", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "sglang_version": "0.5.11",
     "flags": ["--speculative-algorithm", "NEXTN", "--mamba-scheduler-strategy", "no_buffer"]},
    {"id": "oom", "gpu": "h100", "model": "qwen3-8b", "flags": ["--mem-fraction-static", 0.99]},
    {"id": 7, "gpu": "h100", "model": "qwen3.5-9b", "search": True, "need_context": 65536, "objective": "kv-tokens"},
    {"id": "seed-search", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "flags": SEED, "sglang_version": "0.5.11",
     "search": True, "speculative": "EAGLE", "top": 2},
    {"id": "none-feasible", "gpu": "l4", "model": "qwen3.6-27b", "search": True},
    {"id": "bad-gpu", "gpu": "nope", "model": "qwen3.6-27b"},
    {"id": "bad-flag", "gpu": "h100", "model": "qwen3-8b", "flags": ["--no-such-flag"]},
    {"id": "typo", "gpu": "h100", "model": "qwen3-8b", "free_befor_gib": 70},
    {"id": "need-without-search", "gpu": "h100", "model": "qwen3-8b", "need_context": 4096},
    {"id": "refused", "gpu": "h200", "model": "qwen3-8b", "flags": ["--max-loras-per-batch", "4"]},
    "not json",
    "[1, 2]",
]


@pytest.fixture(scope="module")
def batch_results(tmp_path_factory):
    return batch(tmp_path_factory.mktemp("batch"), BATCH)


def test_every_batch_line_validates(batch_results):
    assert len(batch_results) == len(BATCH)
    for r in batch_results:
        assert_valid("batch", r)
        assert r["schema_version"] == SCHEMA_VERSION


def test_batch_verdicts(batch_results):
    by_id = {r["id"]: r for r in batch_results}
    assert by_id["fits"]["verdict"] == "fits" and by_id["measured"]["verdict"] == "fits"
    assert by_id["seed"]["verdict"] == "startup_failed" and by_id["rejected"]["verdict"] == "rejected"
    assert by_id["oom"]["verdict"] == "oom_risk" and by_id[7]["verdict"] == "fits"
    for rid in ("bad-gpu", "bad-flag", "typo", "need-without-search", "refused", 14, 15):
        assert by_id[rid]["verdict"] == "bad_input" and set(by_id[rid]) == {"schema_version", "id", "verdict", "error"}
    assert "--no-such-flag" in by_id["bad-flag"]["error"]  # SGLang's argparse: bad input, as the CLI's exit 2
    assert "'need_context'" in by_id["need-without-search"]["error"] and '"search": true' in by_id[
        "need-without-search"]["error"]


def test_batch_searches_only_when_the_line_says_so(batch_results):
    """README: '"search": true runs the flag search per line'; without it a line is its flags' plan alone."""
    by_id = {r["id"]: r for r in batch_results}
    for rid in ("fits", "measured", "seed", "rejected", "oom"):
        assert "search" not in by_id[rid] and "recommendation" not in by_id[rid], rid
    for rid in (7, "seed-search", "none-feasible"):
        assert "search" in by_id[rid] and "recommendation" in by_id[rid], rid
    assert by_id[7]["search"]["needs"]["context"] == 65536 and by_id[7]["search"]["needs"]["objective"] == "kv-tokens"
    assert len(by_id["seed-search"]["search"]["top"]) <= 2 and by_id["seed-search"]["recommendation"] is not None
    assert by_id["none-feasible"]["recommendation"] is None


def test_the_docs_example_batch_validates(tmp_path):
    lines = (ROOT / "docs" / "examples" / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    res = batch(tmp_path, lines)
    assert len(res) == len(lines) and all("error" not in r for r in res)
    for r in res:
        assert_valid("batch", r)


# ----------------------------------------------------------------------------- verdicts against SGLang's own code


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_json_verdict_is_the_oracles_outcome_on_the_golden_cases(version):
    """Every curated golden case SGLang rejects or fails to start: the JSON verdict names the same outcome
    (the planner's plan reproduces it; tests/test_golden_oracle.py checks the whole summary)."""
    from golden_sets import read_pairs

    from planner.catalog.catalog import resolve_model
    from planner.hardware.profiles import find_profile
    from planner.engines.sglang.plan import make_plan
    from planner.engines.sglang.report import to_dict

    seen = set()
    for case, expected in read_pairs(ROOT / "tests" / "golden", version):
        if expected["outcome"] not in ("rejected", "startup_failed"):
            continue
        plan = make_plan(find_profile(case["gpu"]), resolve_model(case["planner_model"]), case["flags"],
                         case.get("env") or {}, case["free_before_gib"], case["free_after_gib"], version=version)
        if plan.outcome != expected["outcome"]:  # a startup check the oracle does not run (test_golden_oracle)
            continue
        assert to_dict(plan)["verdict"] == expected["outcome"], case["id"]
        seen.add(expected["outcome"])
    assert seen == {"rejected", "startup_failed"}


# ----------------------------------------------------------------------------- random batch lines


_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 70000), st.floats(allow_nan=False, width=32),
                    st.text(max_size=8), st.lists(st.sampled_from(["--tp-size", "2", "--mem-fraction-static", "0.99",
                                                                  "--bogus"]), max_size=4),
                    st.sampled_from(["h100", "rtxpro6000", "qwen3-8b", "EAGLE", "kv-tokens", "0.5.11", "nope"]))
_KEYS = ["id", "gpu", "model", "flags", "env", "free_before_gib", "free_after_load_gib", "sglang_version", "search",
         "need_context", "objective", "top", "speculative", "unknown"]


@st.composite
def _line(draw):
    line = {"gpu": draw(st.sampled_from(["h100", "rtxpro6000", "l4"])), "model": draw(st.sampled_from(
        ["qwen3-8b", "qwen3.5-9b"])), "search": draw(st.booleans())}
    for key in draw(st.lists(st.sampled_from(_KEYS), max_size=3)):
        line[key] = draw(_VALUES)
    return json.dumps(line)


@settings(max_examples=60, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=st.lists(_line(), min_size=1, max_size=3))
def test_random_batch_lines_validate(lines, tmp_path_factory):
    """Whatever a line holds, its result is a schema-valid line: a plan or a bad_input error."""
    res = batch(tmp_path_factory.mktemp("b"), lines)
    assert len(res) == len(lines)
    for r in res:
        assert_valid("batch", r)


# ----------------------------------------------------------------------------- docs/json.md


def _doc_section(heading: str) -> str:
    text = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize(("kind", "heading"), [("plan", "## `plan --json`"), ("check", "## `plan check --json`"),
                                                ("batch", "## `plan --batch")])
def test_docs_list_every_top_level_key(kind, heading):
    schema = load(kind)
    obj = schema["$defs"][{"plan": "sglang_plan", "check": "sglang_check", "batch": "sglang_result"}[kind]]
    section = _doc_section(heading)
    keys = set(obj["properties"]) - ({"schema_version", "id"} if kind == "batch" else set())
    if kind == "batch":  # the result repeats plan's keys (listed there); the section names its own
        keys = {"schema_version", "id", *schema["$defs"]["error"]["properties"]}
    missing = [k for k in keys if f"`{k}`" not in section]
    assert not missing, f"docs/json.md {heading} does not list {missing}"


def test_docs_list_every_batch_request_key_and_the_verdicts():
    from planner.batch import ACCEPTED

    section = _doc_section("## `plan --batch")
    assert not [k for k in ACCEPTED if f"`{k}`" not in section]
    verdicts = _doc_section("## Verdict values")
    assert all(f"`{v}`" in verdicts for v in (*PLAN_VERDICTS, "bad_input"))


# ----------------------------------------------------------------------------- random plans

_FLAGS = st.lists(st.sampled_from([
    ["--mem-fraction-static", "0.6"], ["--mem-fraction-static", "0.95"], ["--mem-fraction-static", "0.99"],
    ["--tp-size", "2"], ["--tp-size", "4"], ["--speculative-algorithm", "EAGLE"], ["--speculative-algorithm", "NEXTN"],
    ["--speculative-num-steps", "3"], ["--speculative-num-draft-tokens", "4"], ["--kv-cache-dtype", "fp8_e4m3"],
    ["--mamba-ssm-dtype", "bfloat16"], ["--max-running-requests", "64"], ["--context-length", "32768"],
    ["--page-size", "16"], ["--attention-backend", "triton"], ["--disable-radix-cache"],
    ["--chunked-prefill-size", "65536"], ["--cuda-graph-max-bs", "512"], ["--max-total-tokens", "4096"],
]), max_size=4).map(lambda xs: [t for x in xs for t in x])


@settings(max_examples=80, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(gpu=st.sampled_from(["rtxpro6000", "h100", "h200", "l4", "rtx4090"]),
       model=st.sampled_from(["qwen3.6-27b", "qwen3-8b", "qwen3.5-9b", "llama-3.1-8b-instruct", "qwen3.6-27b-fp8",
                              "nemotron-3-nano-30b-a3b"]),
       version=st.sampled_from(["0.5.11", "0.5.16", "0.5.23"]), flags=_FLAGS)
def test_random_plans_validate(gpu, model, version, flags, capsys):
    """Any plan the CLI answers with JSON (exit 0 or 1) validates; bad input (2) prints no JSON."""
    code = main(["--gpu", gpu, "--model", model, "--sglang-version", version, "--no-search", "--json", *flags])
    out = capsys.readouterr()
    if code == 2:
        assert out.out == "" and out.err.count("\n") == 1
        return
    doc = json.loads(out.out)
    assert_valid("plan", doc)
    assert (code == 0) == (doc["verdict"] == "fits")
