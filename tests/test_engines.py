"""The engine choice (issue #26): the registry, SGLang's front end against the CLI's own output, the vLLM paste
forms and releases, --engine / --vllm-version / measured inputs, --compare-engines and batch lines reaching a
vLLM front end (a stand-in here while planner/engines/vllm/frontend.py is not in the build), and the refusals."""

from __future__ import annotations

import io
import json
import sys
import types
from contextlib import redirect_stderr, redirect_stdout

import pytest

from planner.catalog.catalog import resolve_model
from planner.cli import main, run_batch
from planner.engines import registry
from planner.engines.interface import PlanOutcome, PlanRequest
from planner.errors import BadInput
from planner.hardware.profiles import find_profile
from planner.paste import engine_of_paste, parse_vllm_paste, paste_for, release_of_paste


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


# ---- the registry ----------------------------------------------------------------------------------------------

def test_names_default_first_and_unknown_engine_names_the_near_match():
    assert registry.names() == ("sglang", "vllm")
    with pytest.raises(BadInput, match=r"unknown engine 'vlm'; did you mean 'vllm'\?") as exc:
        registry.engine("vlm")
    assert "\n" not in str(exc.value)


def test_sglang_front_end_is_loaded_lazily_and_lists_its_releases():
    front = registry.engine("sglang")
    assert front.name == "sglang" and front.title == "SGLang"
    assert front.versions[0] == "0.5.9" and front.versions[-1] == registry.releases("sglang")[1]
    assert registry.releases("vllm") == (("0.33.0", "0.34.0"), "0.34.0")


def test_the_sglang_path_does_not_import_vllm():
    import subprocess

    code = ("import sys, planner.cli; planner.cli.main(['--gpu', 'h100', '--model', 'qwen3.5-9b', '--no-search']); "
            "print(any(m.startswith('planner.engines.vllm') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.strip().endswith("False")


# ---- SGLang's front end = what the CLI prints --------------------------------------------------------------------

@pytest.mark.parametrize("flags,search", [
    ([], True),  # the README's first command: the default search and its recommendation
    (["--max-running-requests", "8", "--speculative-algorithm", "EAGLE"], False),
    (["--sglang-version", "0.5.11", "--mamba-scheduler-strategy", "extra_buffer", "--speculative-algorithm",
      "EAGLE"], False),  # does not boot: exit 1
])
def test_sglang_front_end_plan_is_what_the_cli_prints(flags, search):
    argv = ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", *flags] + ([] if search else ["--no-search"])
    code, text, _ = _run(argv)
    code_j, js, _ = _run([*argv, "--json"])
    version = None
    if "--sglang-version" in flags:
        version = flags[flags.index("--sglang-version") + 1]
        flags = [f for f in flags if f not in ("--sglang-version", version)]
    req = PlanRequest(gpu=find_profile("rtxpro6000"), model=resolve_model("qwen3.6-27b"), flags=tuple(flags), env={},
                      version=version, search=search)
    got = registry.engine("sglang").plan(req)
    assert isinstance(got, PlanOutcome) and got.engine == "sglang"
    assert got.text + "\n" == text
    assert json.dumps(got.json, indent=2, default=str) + "\n" == js
    assert got.exit_code == code == code_j
    assert got.json["engine"] == "sglang" and list(got.json)[:2] == ["schema_version", "engine"]
    if search:
        assert got.launch == got.json["recommendation"]["command"]
    assert got.capacity["kv_tokens"] == got.json["summary"]["max_total_num_tokens"]


def test_sglang_front_end_takes_only_its_measured_names():
    req = PlanRequest(gpu=find_profile("h100"), model=resolve_model("qwen3.5-27b"), flags=(), env={}, version=None,
                      measured={"free_before_gib": 78.9, "free_after_gib": 27.1}, search=False)
    code, text, _ = _run(["--gpu", "h100", "--model", "qwen3.5-27b", "--free-before-load-gib", "78.9",
                          "--free-after-load-gib", "27.1", "--no-search"])
    got = registry.engine("sglang").plan(req)
    assert got.text + "\n" == text and got.exit_code == code
    with pytest.raises(BadInput, match="SGLang takes no measured 'weights_gib'"):
        registry.engine("sglang").plan(PlanRequest(gpu=req.gpu, model=req.model, flags=(), env={}, version=None,
                                                   measured={"weights_gib": 50.0}))


# ---- paste forms -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pasted,model,flags,release", [
    ("vllm serve Qwen/Qwen3.6-27B --max-num-seqs 8", "Qwen/Qwen3.6-27B", ["--max-num-seqs", "8"], None),
    ("CUDA_VISIBLE_DEVICES=0 python3 -m vllm.entrypoints.openai.api_server --model Q/M --tensor-parallel-size 2",
     "Q/M", ["--tensor-parallel-size", "2"], None),
    ("docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.34.0 --model Q/M --max-model-len 8192", "Q/M",
     ["--max-model-len", "8192"], "0.34.0"),
    ("pip install vllm==0.33.0 && vllm serve Q/M --enforce-eager", "Q/M", ["--enforce-eager"], "0.33.0"),
    ("uv run --with vllm==0.33.0 vllm serve Q/M", "Q/M", [], "0.33.0"),
])
def test_vllm_paste_forms(pasted, model, flags, release):
    assert engine_of_paste([pasted]) == "vllm"
    got = parse_vllm_paste([pasted])
    assert got is not None and got[:2] == (model, flags)
    found = release_of_paste([pasted], "vllm")
    assert (found and found[0]) == release
    assert paste_for("sglang", [pasted]) is None and paste_for("vllm", [pasted])[:2] == (model, flags)
    assert registry.detect_paste([pasted])[:3] == ("vllm", model, flags)


def test_sglang_pastes_stay_sglang():
    for pasted in ("python -m sglang.launch_server --model-path X --tp 2",
                   "docker run lmsysorg/sglang:v0.5.11 python3 -m sglang.launch_server --model-path X"):
        assert engine_of_paste([pasted]) == "sglang" and parse_vllm_paste([pasted]) is None
        assert registry.detect_paste([pasted])[:2] == ("sglang", "X")
    # an SGLang image's tag names no vLLM release, and the reverse
    assert release_of_paste(["docker run lmsysorg/sglang:v0.5.11 python3 -m sglang.launch_server"], "vllm")[0] is None
    assert release_of_paste(["docker run vllm/vllm-openai:v0.34.0 --model M"])[0] is None


# ---- the CLI without a vLLM front end: refused by name -----------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["--engine", "vllm", "--gpu", "rtxpro6000", "--model", "qwen3.6-27b"],
    ["--gpu", "rtxpro6000", "--", "vllm", "serve", "Qwen/Qwen3.6-27B"],
    ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--compare-engines"],
])
def test_vllm_absent_is_refused_by_name(argv, monkeypatch):
    # a build without vLLM's front end module (registry.available answers from importlib's find_spec)
    real = registry.available
    monkeypatch.setattr(registry, "available", lambda name: name != "vllm" and real(name))
    registry.engine.cache_clear()  # engine() caches the front ends it loaded
    try:
        code, out, err = _run(argv)
    finally:
        registry.engine.cache_clear()
    assert code == 2 and out == ""
    assert err == "plan: error: vLLM engine: not available in this build (planner.engines.vllm.frontend is missing)\n"


@pytest.mark.parametrize("argv,message", [
    (["--engine", "vllm", "--sglang-version", "0.5.11"], "--sglang-version is an SGLang option, not taken with "
     "--engine vllm; for vLLM give --vllm-version 0.33 / 0.34"),
    (["--engine", "vllm", "--free-after-load-gib", "30"], "for vLLM give --weights-gib"),
    (["--engine", "vllm", "--allow-fp8-kv"], "for vLLM give the vLLM flag --kv-cache-dtype fp8"),
    (["--weights-gib", "50"], "--weights-gib is a vLLM input (add --engine vllm); SGLang's counterpart is "
     "--free-before-load-gib / --free-after-load-gib"),
    (["--vllm-version", "0.34"], "--vllm-version is a vLLM input"),
    (["--engine", "vllm", "--vllm-version", "0.32"], "--vllm-version: vLLM 0.32: not modelled (modelled: 0.33.0, "
     "0.34.0)"),
    (["--engine", "vlm"], "argument --engine: invalid choice: 'vlm'"),
    (["--engine", "sglang", "--", "vllm", "serve", "M"], "--engine sglang: the pasted command is a vLLM launch"),
    (["--engine", "vllm", "--gpu", "any", "--weights-gib", "3"], "--weights-gib: not with --gpu any (the hardware "
     "search plans each type's own memory)"),
    (["--engine", "vllm", "--layouts", "pp"], "--layouts: only with --gpu any or a list of GPU types"),
    (["--compare-engines", "--gpu", "h100,h200"], "--gpu h100,h200: the hardware search"),
    (["--compare-engines", "--free-after-load-gib", "-3"], "--free-after-load-gib: -3 GiB is out of range"),
    (["--batch", "x.jsonl", "--engine", "vllm"], '--engine: not taken with --batch; give "engine": "vllm" on each line'),
    (["--batch", "x.jsonl", "--weights-gib", "3"], '--weights-gib: not taken with --batch; give "measured": '
     '{"weights_gib": ...} on each line'),
    (["--engine", "vllm", "--", "python", "-m", "sglang.launch_server", "--model-path", "X"],
     "--engine vllm: the pasted command is an SGLang launch; drop --engine or paste a vLLM command"),
])
def test_engine_option_errors_are_one_line(argv, message):
    code, out, err = _run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", *argv])
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_vllm_version_from_the_option_or_the_paste_else_the_engines_default():
    from planner import cli_engines

    assert cli_engines.vllm_version("0.33", None) == ("0.33.0", "--vllm-version")
    assert cli_engines.vllm_version("v0.34.0", None)[0] == "0.34.0"
    got = cli_engines.vllm_version(None, ["docker", "run", "vllm/vllm-openai:v0.33.0", "--model", "M"])
    assert got == ("0.33.0", "the tag of pasted docker image vllm/vllm-openai:v0.33.0")
    with pytest.raises(BadInput, match=r"says vLLM 0\.30\.1: not modelled"):
        cli_engines.vllm_version(None, ["pip install vllm==0.30.1 && vllm serve M"])
    assert cli_engines.vllm_version(None, ["vllm serve M"])[0] is None  # PlanRequest.version None: the engine's
    assert cli_engines.vllm_version(None, None)[0] is None  # default_version() (installed here, else the latest)


# ---- the CLI with a vLLM front end (a stand-in that records what it is asked) ------------------------------------

class _FakeVllm:
    name, title, versions = "vllm", "vLLM", ("0.33.0", "0.34.0")

    def __init__(self):
        self.requests: list[PlanRequest] = []

    def default_version(self):
        return "0.34.0", "latest"

    def paste(self, tokens):
        got = parse_vllm_paste(tokens)
        return None if got is None else got[:3]

    def plan(self, request: PlanRequest) -> PlanOutcome:
        self.requests.append(request)
        fits = "--max-num-seqs" in request.flags
        return PlanOutcome(engine="vllm", version=request.version or self.default_version()[0],
                           verdict="fits" if fits else "rejected",
                           exit_code=0 if fits else 1, text="vLLM REPORT\n", json={"engine": "vllm", "summary": {}},
                           capacity={"kv_tokens": 1000, "context_len": 4096, "max_concurrency_x": 7.5,
                                     "max_concurrency": 7, "kv_bytes": 1 << 30})


@pytest.fixture
def fake_vllm(monkeypatch):
    fake = _FakeVllm()
    mod = types.ModuleType("planner_test_fake_vllm_frontend")
    mod.FRONTEND = fake
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    monkeypatch.setitem(registry._ENGINES, "vllm", (mod.__name__, "FRONTEND", "vLLM"))  # noqa: SLF001
    registry.engine.cache_clear()
    yield fake
    registry.engine.cache_clear()


def test_engine_vllm_reaches_the_front_end_with_measured_inputs(fake_vllm):
    code, out, _ = _run(["--engine", "vllm", "--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--vllm-version",
                         "0.33", "--weights-gib", "51.5", "--cuda-total-mib", "97250", "--max-num-seqs", "8",
                         "--need-context", "65536"])
    assert (code, out) == (0, "vLLM REPORT\n")
    req = fake_vllm.requests[-1]
    assert req.version == "0.33.0" and req.flags == ("--max-num-seqs", "8") and req.gpu.id == "rtxpro6000"
    assert req.measured == {"weights_gib": 51.5, "cuda_total_mib": 97250.0} and req.need_context == 65536
    assert req.model.spec.name and req.search


def test_pasted_vllm_serve_selects_vllm_and_its_release(fake_vllm):
    code, out, _ = _run(["--gpu", "rtxpro6000", "--json", "--", "docker", "run", "--gpus", "all",
                         "vllm/vllm-openai:v0.33.0", "--model", "Qwen/Qwen3.6-27B", "--enforce-eager"])
    assert code == 1 and json.loads(out) == {"engine": "vllm", "summary": {}}
    req = fake_vllm.requests[-1]
    assert req.version == "0.33.0" and req.flags == ("--enforce-eager",)


def test_compare_engines_side_by_side(fake_vllm):
    code, out, _ = _run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--compare-engines", "--need-context",
                         "4096"])
    assert code == 1  # the stand-in rejects: not both fit
    # the same workload: each engine serves 4096-token requests under its own flag
    assert fake_vllm.requests[-1].flags == ("--max-model-len", "4096") and fake_vllm.requests[-1].search is False
    assert fake_vllm.requests[-1].version is None  # no release named: vLLM's front end's default_version()
    lines = out.splitlines()
    assert lines[0] == ("Engines compared on rtxpro6000, model qwen3.6-27b: --context-length / --max-model-len 4,096")
    assert "vLLM 0.34.0" in lines[1] and "SGLang 0.5." in lines[1]
    assert lines[2].split()[1:] == ["fits", "rejected"]
    sg = registry.engine("sglang").plan(PlanRequest(gpu=find_profile("rtxpro6000"), model=resolve_model(
        "qwen3.6-27b"), flags=("--context-length", "4096"), env={}, version=None, search=False)).capacity
    assert sg["context_len"] == 4096 and sg["max_concurrency"] == min(sg["max_running_requests"], sg["kv_tokens"] // 4096)
    assert lines[3].split()[-2:] == [f"{sg['kv_tokens']:,}", "1,000"]
    assert lines[4].split()[-2:] == ["4,096", "4,096"]
    assert lines[5].split()[-2:] == [f"{sg['max_concurrency_x']:,.2f}", "7.50"]
    assert lines[6].split()[-2:] == [f"{sg['max_concurrency']:,}", "7"]
    assert lines[7].split()[-2:] == [f"{sg['max_running_requests']:,}", "-"]
    code, out, _ = _run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--compare-engines", "--json"])
    d = json.loads(out)
    assert [e["engine"] for e in d["engines"]] == ["sglang", "vllm"] and d["engines"][1]["capacity"]["kv_tokens"] == 1000
    assert fake_vllm.requests[-1].flags == ()
    code, _, err = _run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--compare-engines", "--max-num-seqs", "8"])
    assert code == 2 and "give no engine flags" in err


def test_batch_lines_reach_vllm_and_refuse_mixed_keys(fake_vllm):
    lines = [{"id": "v", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "engine": "vllm", "vllm_version": "0.33",
              "flags": ["--max-num-seqs", "4"], "measured": {"weights_gib": 50, "non_torch_gib": 0.5}},
             {"id": "s", "gpu": "h100", "model": "qwen3.5-9b"},
             {"id": "x", "gpu": "h100", "model": "qwen3.5-9b", "measured": {"weights_gib": 1}},
             {"id": "y", "gpu": "h100", "model": "qwen3.5-9b", "engine": "vllm", "free_after_gib": 30},
             {"id": "z", "gpu": "h100", "model": "qwen3.5-9b", "engine": "vllm", "measured": {"weight_gib": 1}}]
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
        fh.write("\n".join(json.dumps(x) for x in lines) + "\n")
    out = io.StringIO()
    assert run_batch(fh.name, None, out) == 0
    got = [json.loads(x) for x in out.getvalue().splitlines()]
    assert got[0] == {"schema_version": "1.1", "id": "v", "engine": "vllm", "summary": {}}
    req = fake_vllm.requests[-1]
    assert req.version == "0.33.0" and req.measured == {"weights_gib": 50.0, "non_torch_gib": 0.5}
    assert got[1]["engine"] == "sglang" and got[1]["verdict"] == "fits"
    assert "'measured' is read for vLLM lines only" in got[2]["error"]
    assert "'free_after_gib' is SGLang's; a vLLM line takes measured.weights_gib" in got[3]["error"]
    assert "did you mean 'weights_gib'" in got[4]["error"]


def test_check_on_a_vllm_log_dispatches_when_built(tmp_path, monkeypatch):
    log = tmp_path / "vllm.log"
    log.write_text("INFO 12-01 vllm serve ... (EngineCore_DP0 pid=1) INFO Available KV cache memory: 20.5 GiB\n")
    code, out, err = _run(["check", str(log), "--gpu", "rtxpro6000"])
    if not registry.available("vllm"):
        assert code == 2 and "looks like a vLLM log" in err
    calls = []
    mod = types.ModuleType("planner.engines.vllm.check")

    def check_log(text, gpu=None, version=None):
        calls.append((text, gpu.id, version))
        return PlanOutcome(engine="vllm", version="0.33.0", verdict="fits", exit_code=0, text="CHECKED\n",
                           json={"engine": "vllm"})

    mod.check_log = check_log
    monkeypatch.setitem(sys.modules, "planner.engines.vllm.check", mod)
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == mod.__name__ else None)
    code, out, _ = _run(["check", str(log), "--gpu", "rtxpro6000", "--vllm-version", "0.33"])
    assert (code, out) == (0, "CHECKED\n") and calls == [(log.read_text(), "rtxpro6000", "0.33.0")]
