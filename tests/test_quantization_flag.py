"""``--quantization`` is read once, by the release's own argparse (planner.engines.sglang.support.flag_quantization),
for both the refusal of what is not modelled and the online-quantized weights: planner.engines.sglang.plan once scanned the flag
tokens for the weights on its own (the first ``--quantization`` where argparse takes the last)."""

from __future__ import annotations

import json

import pytest

from planner.cli import main
from planner.engines.sglang.rules import rules_for
from planner.engines.sglang.support import flag_quantization

V = rules_for("0.5.23").flags
MODEL = ["--gpu", "h100", "--model", "llama-3.1-8b-instruct", "--no-search"]


def _run(capsys, *flags: str) -> tuple[int, str, str]:
    code = main([*MODEL, *flags])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_flag_quantization_is_what_argparse_reads() -> None:
    assert flag_quantization(V, ["--quantization", "fp8"], "m") == "fp8"
    assert flag_quantization(V, ["--quantization=fp8"], "m") == "fp8"
    assert flag_quantization(V, ["--quantization", "w8a8_int8", "--quantization", "fp8"], "m") == "fp8"  # last wins
    assert flag_quantization(V, [], "m") is None
    assert flag_quantization(V, ["--quantization", "fp8", "--page-size", "abc"], "m") is None  # SGLang rejects it


def test_the_last_quantization_flag_sizes_the_weights(capsys) -> None:
    """argparse keeps the last value: fp8 here, which is modelled (the token scan took w8a8_int8 and exited 2)."""
    code, out, _ = _run(capsys, "--quantization", "w8a8_int8", "--quantization", "fp8", "--json")
    assert code in (0, 1)
    model = json.loads(out)["model"]
    code1, out1, _ = _run(capsys, "--quantization=fp8", "--json")
    assert model["weight_source"] == "quant-model" and model == json.loads(out1)["model"]
    assert model["weight_bytes"] < 16_060_522_496  # below the bf16 checkpoint's index total


def test_a_refused_last_value_is_refused_by_name(capsys) -> None:
    code, _, err = _run(capsys, "--quantization", "fp8", "--quantization", "w8a8_int8")
    assert code == 2 and err.startswith("plan: error: --quantization w8a8_int8: its weights are not modelled")
    assert err.count("\n") == 1


# What a launch with flags SGLang's parser rejects got before the change (scripts/compare_outputs.sh-style captures
# of the previous planner/engines/sglang/plan.py), kept: exit 2 and the parser's one line, with or without --quantization; the
# line names the release's flags (given directly) instead of argparse's program name "sglang serve".
@pytest.mark.parametrize("flags,line", [
    (["--page-size", "abc"], "SGLang 0.5.23 flags: argument --page-size: invalid int value: 'abc'"),
    (["--quantization", "fp8", "--page-size", "abc"], "SGLang 0.5.23 flags: argument --page-size: invalid int value: 'abc'"),
    (["--quantization", "fp8", "--tp-size", "x"],
     "SGLang 0.5.23 flags: argument --tp-size/--tensor-parallel-size: invalid int value: 'x'"),
    (["--quantization"], "SGLang 0.5.23 flags: argument --quantization: expected one argument"),
    (["--quantization", "fp8", "--no-such-flag", "3"], "SGLang 0.5.23 flags: unrecognized arguments: --no-such-flag 3"),
])
def test_unparsable_flags_keep_the_parsers_message_and_exit_2(capsys, flags: list[str], line: str) -> None:
    code, out, err = _run(capsys, *flags)
    assert (code, out, err) == (2, "", f"plan: error: {line}\n")


def test_a_quantization_value_argparse_refuses_gets_the_parsers_message(capsys) -> None:
    """Not a choice of the release's --quantization: SGLang's own rejection (before, the token scan passed
    'nonsense' on and the planner answered 'online quantization ... is modelled for fp8 only'; exit 2 both)."""
    code, _, err = _run(capsys, "--quantization", "nonsense")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("plan: error: SGLang 0.5.23 flags: argument --quantization: invalid choice: 'nonsense'")
