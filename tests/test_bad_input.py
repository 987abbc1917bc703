"""One named test per bad-input class of issue 11: one line on stderr, the right exit code, never a traceback."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from planner.cli import main, run_batch

LOGS = Path(__file__).parent / "data" / "logs"
BASE = ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--no-search"]


@pytest.fixture(autouse=True)
def _wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")


def one_line_error(capsys, code, expect_code=2):
    out = capsys.readouterr()
    assert code == expect_code, out.err
    assert out.err.count("\n") == 1 and "Traceback" not in out.err
    return out.err


def _batch(tmp_path, *lines):
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    out = io.StringIO()
    assert run_batch(str(f), None, out) == 0
    return [json.loads(x) for x in out.getvalue().splitlines()]


OK = {"gpu": "rtxpro6000", "model": "qwen3.6-27b", "search": False}


def test_batch_unknown_key_is_that_lines_error_and_the_batch_goes_on(tmp_path):
    res = _batch(tmp_path, {**OK, "id": "x", "free_befor_gib": 90}, {**OK, "id": "y"})
    assert res[0]["id"] == "x" and "unknown key 'free_befor_gib'" in res[0]["error"]
    assert "did you mean 'free_before_gib'" in res[0]["error"] and "accepted:" in res[0]["error"]
    assert res[1]["id"] == "y" and res[1]["verdict"] == "fits"


def test_batch_summary_spellings_are_accepted(tmp_path):
    res = _batch(tmp_path, {**OK, "free_before_load_gib": 94.0, "free_after_load_gib": 43.0})
    assert res[0]["inputs"]["free_before_load_bytes"] == int(94.0 * 2**30)
    assert res[0]["inputs"]["free_after_load_bytes"] == int(43.0 * 2**30)


@pytest.mark.parametrize("field,value", [("gpu", 5), ("model", ["x"]), ("env", "A=1"), ("top", "3"),
                                         ("flags", "--tp-size 2"), ("need_context", 1.5), ("search", "no")])
def test_batch_mistyped_fields(tmp_path, field, value):
    res = _batch(tmp_path, {**OK, field: value}, OK)
    assert f"'{field}'" in res[0]["error"] and "verdict" in res[1]


def test_batch_not_json_and_not_object_lines(tmp_path):
    res = _batch(tmp_path, "not json", "[1, 2]", "9" * 5000, OK)
    assert "not JSON" in res[0]["error"] and "JSON object" in res[1]["error"] and "error" in res[2]
    assert res[3]["verdict"] == "fits"


def test_free_memory_larger_than_the_card(capsys):
    err = one_line_error(capsys, main(["--gpu", "h100", "--model", "qwen3.6-27b", "--free-before-load-gib", "500"]))
    assert "--free-before-load-gib: 500 GiB is more than the h100-sxm has" in err


def test_integers_too_large_for_sglang(capsys):
    err = one_line_error(capsys, main([*BASE, "--sglang-version", "0.5.11", "--cuda-graph-max-bs", str(10**30)]))
    assert "too large" in err or "invalid" in err


def test_names_the_os_refuses(capsys):
    err = one_line_error(capsys, main(["--gpu", "rtxpro6000", "--model", "x" * 5000]))
    assert err.startswith("plan: error: --model")


def test_binary_config_json(tmp_path, capsys):
    (tmp_path / "config.json").write_bytes(b"\x80\x81\xff")
    err = one_line_error(capsys, main(["--gpu", "h200", "--model", str(tmp_path), "--no-search"]))
    assert "--model" in err


def test_safetensors_header_that_is_a_list(tmp_path, capsys):
    import shutil

    shutil.copy(Path(__file__).parents[1] / "planner" / "catalog" / "configs" / "Qwen__Qwen3.6-27B.config.json",
                tmp_path / "config.json")
    header = b"[1, 2]"
    (tmp_path / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header)
    err = one_line_error(capsys, main(["--gpu", "h200", "--model", str(tmp_path), "--no-search"]))
    assert "model.safetensors" in err or "--model" in err


def test_ctrl_c_is_exit_130(monkeypatch, capsys):
    import planner.cli as cli

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_search", interrupted)
    code = main(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b"])
    err = one_line_error(capsys, code, 130)
    assert "interrupted" in err


def test_closed_stdout_keeps_the_verdicts_exit_code(monkeypatch):
    import sys

    class Closed(io.StringIO):
        def write(self, s):
            raise BrokenPipeError

        def fileno(self):
            raise io.UnsupportedOperation

    monkeypatch.setattr(sys, "stdout", Closed())
    seed = ["--speculative-algorithm", "EAGLE", "--max-running-requests", "48"]
    assert main([*BASE, "--sglang-version", "0.5.11", *seed, "--mamba-scheduler-strategy", "extra_buffer"]) == 1
    assert main(BASE) == 0


def test_non_utf8_stdout_falls_back_to_ascii(monkeypatch):
    import sys

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stdout", stream)
    assert main([*BASE, "--verbose"]) == 0
    stream.flush()
    assert b"Verdict: FITS" in raw.getvalue()


def test_gpu_names_as_typed(capsys):
    assert main(["--gpu", "4090", "--model", "qwen3.5-9b", "--no-search"]) in (0, 1)
    assert "[rtx4090]" in capsys.readouterr().out
    err = one_line_error(capsys, main(["--gpu", "a100", "--model", "qwen3.5-9b", "--no-search"]))
    assert "ambiguous" in err and "a100-40gb" in err and "a100-80gb" in err


def test_mistyped_planner_option_is_the_planners(capsys):
    err = one_line_error(capsys, main(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--need-contex", "1000"]))
    assert "did you mean --need-context (an option of plan" in err


def test_help_lists_subcommands_and_the_paste_form(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for word in ("plan check", "plan tui", "plan probe", "-- python -m sglang.launch_server"):
        assert word in out
    for sub in ("tui", "check", "probe"):
        assert main([sub, "--help"]) == 0
        text = capsys.readouterr().out
        import re

        opts = re.findall(r"^  (--[a-z-]+)(?: [A-Z=_.]+)?\s*$", text, re.M)
        assert not opts, f"plan {sub}: options without a description: {opts}"


@pytest.mark.parametrize("paste", [
    ["CUDA_VISIBLE_DEVICES=0", "python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B"],
    ["/opt/venv/bin/python3.12", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B"],
    ["uv", "run", "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B"],
    ["docker", "run", "--gpus", "all", "-e", "SGLANG_ENABLE_SPEC_V2=0", "--shm-size", "32g",
     "lmsysorg/sglang:v0.5.23", "python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B"],
    ["sglang", "serve", "--model-path", "Qwen/Qwen3.6-27B", "\\", "--tp-size", "1"],
    ["python -m sglang.launch_server \\\n --model-path Qwen/Qwen3.6-27B --tp-size 1"],
])
def test_paste_shapes(paste, capsys):
    assert main(["--gpu", "rtxpro6000", "--no-search", "--", *paste]) == 0
    assert "qwen3.6-27b" in capsys.readouterr().out


def test_docker_env_goes_to_env():
    from planner.paste import split_paste_form

    model, flags, env = split_paste_form(["docker", "run", "-e", "SGLANG_X=1", "img:1", "python3", "-m",
                                          "sglang.launch_server", "--model-path", "m", "--tp-size", "2"])
    assert (model, flags, env) == ("m", ["--tp-size", "2"], {"SGLANG_X": "1"})


def test_default_report_fits_one_screen_verdict_and_launch_first(capsys):
    assert main(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b"]) == 0
    lines = capsys.readouterr().out.rstrip("\n").split("\n")
    assert len(lines) <= 40 and max(map(len, lines)) <= 100
    assert lines[0].startswith("Verdict: FITS") and lines[1] == "Launch:"
    assert lines[2].strip().startswith("python -m sglang.launch_server")
    assert "--disable-radix-cache" not in "\n".join(lines[:6])  # the radix cache stays on by default
    assert any(x.startswith("Radix cache: kept on") for x in lines)
    assert any("margin" in x for x in lines)
    assert not any(x.startswith("  0.5.") for x in lines)  # no release table without --compare-releases


def test_kv_tokens_objective_does_not_pick_one_running_request(capsys):
    assert main(["--gpu", "h100", "--model", "qwen3.5-9b", "--objective", "kv-tokens", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)["recommendation"]
    assert rec["running"] > 1


def test_check_not_an_sglang_log(tmp_path, capsys):
    for name, data in (("empty.log", b""), ("bin.log", os.urandom(300) + b"\x00"),
                       ("vllm.log", b"INFO 05-01 12:00:00 api_server.py:1 vLLM API server version 0.8.5\n")):
        p = tmp_path / name
        p.write_bytes(data)
        err = one_line_error(capsys, main(["check", str(p), "--gpu", "rtxpro6000"]))
        assert {"empty.log": "is empty", "bin.log": "binary", "vllm.log": "a vLLM log"}[name] in err


def test_check_failed_launch_without_load_weight_end(tmp_path, capsys):
    text = (LOGS / "synthetic-0.5.11-not-enough-memory.log").read_text()
    kept = [x for x in text.splitlines() if "Load weight end" not in x and "Not enough memory" not in x]
    kept.append("[2026-05-01 12:00:30 TP0] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                "18.56 GiB. GPU 0 has a total capacity of 94.97 GiB of which 1.20 GiB is free.")
    p = tmp_path / "failed.log"
    p.write_text("\n".join(kept) + "\n")
    main(["check", str(p), "--gpu", "rtxpro6000"])
    out = capsys.readouterr().out
    assert "Tried to allocate 18.56 GiB" in out
    assert "re-planned with modelled free memory" in out


def test_check_stale_warning_lists_every_differing_flag(capsys):
    spec = LOGS / "synthetic-0.5.11-tp1-spec.log"
    mine = ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "2", "--speculative-eagle-topk", "2",
            "--speculative-num-draft-tokens", "3", "--mamba-radix-cache-strategy", "no_buffer",
            "--max-mamba-cache-size", "32", "--mamba-full-memory-ratio", "0.5", "--max-running-requests", "8"]
    main(["check", str(spec), "--gpu", "rtxpro6000", *mine])
    out = capsys.readouterr().out
    stale = next(x for x in out.splitlines() if "differ from the flags" in x)
    # the log says extra_buffer / 24 / 0.4 / 4 (synthetic-0.5.11-tp1-spec.log's ServerArgs); the new spelling
    # of the strategy flag is compared with the old one
    for f in ("--mamba-scheduler-strategy no_buffer", "--max-mamba-cache-size 32", "--mamba-full-memory-ratio 0.5",
              "--max-running-requests 8", "--speculative-num-steps"):
        assert f in stale, f
    for f in ("--mamba-scheduler-strategy", "--max-mamba-cache-size", "--mamba-full-memory-ratio",
              "--max-running-requests", "--speculative-num-steps"):
        assert f in stale, f
    assert stale.index("--mamba-scheduler-strategy") < stale.index("--speculative-num-steps")  # memory first


def test_a_layer_count_no_model_has_is_one_line_not_a_hang(tmp_path, capsys):
    """A fuzzed config.json with 10^12 layers once made the GDN layout build a 10^12-entry list (the fuzz test ran
    for minutes): such a count is bad input, named with the field."""
    cfg = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "num_hidden_layers": 10**12,
           "full_attention_interval": 4, "hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 2,
           "head_dim": 256, "vocab_size": 1000, "linear_num_value_heads": 32, "linear_num_key_heads": 16,
           "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert main(["--gpu", "rtxpro6000", "--model", str(path), "--no-search"]) == 2
    err = capsys.readouterr().err
    assert "'num_hidden_layers'" in err and err.count("\n") == 1
