"""``plan check`` under broken input: boot logs and configs that are wrong in every way a file can be.

Logs: random bytes, real logs (tests/data/logs/, tests/data/logs/spec/) cut short at any byte, their ServerArgs
dumps (the 0.5.9-0.5.18 dataclass repr and the 0.5.19+ dict) with values replaced by other types, non-UTF-8 bytes
spliced in, empty files, directories, missing files, a README, broken gzip. Configs given with ``--model``: the
same wrong types at every nesting level as tests/test_fuzz_cli.py, non-UTF-8 bytes, a BOM, truncated JSON, a
directory. Nothing is asserted but the contract: exit 0, 1 or 2, never a traceback, and one line on stderr with
a 2. (Whether a README is bad input or a log without a launch is the check command's own decision: only the
three codes are asserted.)

Deterministic by default (``derandomize``: the same examples every run, so CI never passes or fails by luck);
``PLANNER_FUZZ_RANDOM=1`` draws fresh ones (``--hypothesis-seed=N`` then picks them) and ``PLANNER_FUZZ_SCALE=K``
runs K times as many, e.g. ``PLANNER_FUZZ_RANDOM=1 python -m pytest -q tests/test_fuzz_check.py
--hypothesis-seed=$RANDOM``.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.cli import main

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")  # a numpy division by zero is a wrong number

DATA = Path(__file__).parent / "data"
LOGS = sorted((DATA / "logs").glob("*.log")) + sorted((DATA / "logs" / "spec").glob("*.log"))
LOG_BYTES = {p.name: p.read_bytes() for p in LOGS}
LOG_PATHS = {p.name: str(p) for p in LOGS}
README = (Path(__file__).parents[1] / "README.md").read_bytes()[:20000]
BASE = json.loads((Path(__file__).parents[1] / "planner" / "catalog" / "configs"
                   / "Qwen__Qwen3.6-27B.config.json").read_text())
SCALE = max(1, int(os.environ.get("PLANNER_FUZZ_SCALE", "1") or 1))
FUZZ = dict(deadline=None, database=None, derandomize=os.environ.get("PLANNER_FUZZ_RANDOM") != "1",
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                   HealthCheck.data_too_large])


def _check(code, capsys):
    out = capsys.readouterr()
    assert code in (0, 1, 2), code
    assert "Traceback" not in out.err  # (the report may quote a Traceback line of the log itself)
    if code == 2:
        assert out.err.count("\n") == 1, out.err


# ----------------------------------------------------------------------------- logs

# values a ServerArgs field can be replaced with: other types, impossible numbers, broken syntax
ARG_VALUES = ["None", "True", "-1", "0", "10**30", "1" * 400, "nan", "inf", "-inf", "1e309", "'x'", "''", "'é\\xff'",
              "[1, 2]", "[]", "{}", "{'a': 1}", "(", "'unterminated", "<Enum.X: 1>", "<function f at 0x7f>", "0.5",
              "'auto'", "'fp8_e4m3'", "'EAGLE'", "'extra_buffer'", "2.5", "-0.3", "\"'\"", "1,", ")", "'a=b, c=d'"]


def _args_line(data: bytes) -> int | None:
    lines = data.split(b"\n")
    return next((i for i, x in enumerate(lines) if b"server_args=" in x), None)


@st.composite
def mutated_server_args(draw):
    """A real log whose ServerArgs dump has some values replaced (field names kept, so the check reads them)."""
    name = draw(st.sampled_from([n for n, b in LOG_BYTES.items() if _args_line(b) is not None]))
    lines = LOG_BYTES[name].split(b"\n")
    i = _args_line(LOG_BYTES[name])
    text = lines[i].decode("utf-8", errors="replace")
    head, _, body = text.partition("server_args=")
    sep = "': " if body.startswith("{") else "="
    parts = body.split(", ")
    for _ in range(draw(st.integers(1, 8))):
        j = draw(st.integers(0, len(parts) - 1))
        if sep in parts[j]:
            key = parts[j].split(sep, 1)[0]
            parts[j] = key + sep + draw(st.sampled_from(ARG_VALUES))
    if draw(st.booleans()):  # cut the dump short
        parts = parts[:draw(st.integers(0, len(parts)))]
    lines[i] = (head + "server_args=" + ", ".join(parts)).encode("utf-8", errors="surrogateescape")
    return b"\n".join(lines)


@st.composite
def truncated_log(draw):
    data = LOG_BYTES[draw(st.sampled_from(sorted(LOG_BYTES)))]
    return data[:draw(st.integers(0, len(data)))]


@st.composite
def non_utf8_log(draw):
    data = bytearray(LOG_BYTES[draw(st.sampled_from(sorted(LOG_BYTES)))])
    for _ in range(draw(st.integers(1, 20))):
        at = draw(st.integers(0, len(data)))
        data[at:at] = draw(st.sampled_from([b"\xff", b"\xfe\xff", b"\x80\x81", b"\xc3", b"\xed\xa0\x80", b"\x00"]))
    return bytes(data)


@st.composite
def spliced_lines(draw):
    """Lines of several logs shuffled together, some repeated, some dropped."""
    pool = [x for b in LOG_BYTES.values() for x in b.split(b"\n")]
    return b"\n".join(draw(st.lists(st.sampled_from(pool), max_size=40)))


log_bytes = st.one_of(mutated_server_args(), truncated_log(), non_utf8_log(), spliced_lines(),
                      st.binary(max_size=300), st.just(b""), st.just(b"\n\n  \n"), st.just(README),
                      st.just(b"[2026-05-01 12:00:00] server_args=ServerArgs(\n"),
                      st.just(b"[2026-05-01 12:00:00] server_args={'tp_size': 'x'}\n"),
                      st.just(b'{"architectures": ["Qwen3ForCausalLM"]}'),
                      st.just(b"\xef\xbb\xbf" + LOG_BYTES[sorted(LOG_BYTES)[0]]))


@st.composite
def log_path(draw, tmp):
    """Where ``plan check`` is pointed: a file with the bytes, gzip'd or a broken .gz, a directory, nothing."""
    data = draw(log_bytes)
    kind = draw(st.sampled_from(["file"] * 6 + ["gz", "bad-gz", "dir", "missing"]))
    if kind == "gz":
        p = tmp / "server.log.gz"
        p.write_bytes(gzip.compress(data))
    elif kind == "bad-gz":
        p = tmp / "server.log.gz"
        p.write_bytes(data)
    elif kind == "dir":
        p = tmp / "logs"
        p.mkdir()
    elif kind == "missing":
        p = tmp / "no-such.log"
    else:
        p = tmp / "server.log"
        p.write_bytes(data)
    return str(p)


# ----------------------------------------------------------------------------- configs

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10, 10**6), st.integers(10**20, 10**30),
              st.floats(allow_nan=True), st.text(max_size=8)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
TOP_KEYS = ["architectures", "text_config", "vision_config", "quantization_config", "torch_dtype", "model_type",
            "tie_word_embeddings", "num_hidden_layers", "hidden_size"]
TEXT_KEYS = ["num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
             "full_attention_interval", "linear_num_value_heads", "linear_key_head_dim", "layer_types",
             "max_position_embeddings", "rope_scaling", "mamba_ssm_dtype", "vocab_size", "mtp_num_hidden_layers",
             "quantization_config", "intermediate_size", "tie_word_embeddings", "num_experts"]
QUANT = [{"quant_method": "fp8", "weight_block_size": [128, 128]},
         {"quant_algo": "MIXED_PRECISION", "quantized_layers": {"model.layers.0.mlp": {"quant_algo": "NVFP4"}}},
         {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 8},
                                                                         "targets": ["Linear"]}}}]
QUANT_KEYS = ["quant_method", "quant_algo", "weight_block_size", "quantized_layers", "config_groups",
              "kv_cache_scheme", "ignore", "group_size", "bits"]


@st.composite
def broken_config(draw):
    """The Qwen3.6-27B config with values of any type at any nesting level (or a flat one, or none at all)."""
    cfg = copy.deepcopy(draw(st.sampled_from([BASE, BASE["text_config"], {}])))
    if draw(st.booleans()):
        cfg["architectures"] = ["Qwen3_5ForConditionalGeneration"]
    for key in draw(st.lists(st.sampled_from(TOP_KEYS), max_size=2)):
        cfg[key] = draw(json_values)
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg
    for key in draw(st.lists(st.sampled_from(TEXT_KEYS), max_size=3)):
        text[key] = draw(json_values)
    if draw(st.booleans()):
        q = copy.deepcopy(draw(st.sampled_from(QUANT)))
        for key in draw(st.lists(st.sampled_from(QUANT_KEYS), max_size=2)):
            q[key] = draw(json_values)
        cfg["quantization_config"] = q
    return cfg


config_bytes = st.one_of(
    broken_config().map(lambda c: json.dumps(c).encode()),
    broken_config().map(lambda c: json.dumps(c).encode()).flatmap(
        lambda b: st.integers(0, len(b)).map(lambda n: b[:n])),  # truncated
    st.binary(max_size=64),
    st.just(b"\xef\xbb\xbf" + json.dumps(BASE).encode()),
    st.just(json.dumps(BASE).encode().replace(b"Qwen", b"Qw\xffen")),
)


@st.composite
def model_arg(draw, tmp):
    kind = draw(st.sampled_from(["none", "catalog", "file", "file", "file", "dir", "empty-dir", "missing"]))
    if kind == "none":
        return []
    if kind == "catalog":
        return ["--model", draw(st.sampled_from(["qwen3.6-27b", "qwen3-8b", "nope"]))]
    if kind == "missing":
        return ["--model", str(tmp / "nothing" / "config.json")]
    if kind == "empty-dir":
        d = tmp / "ckpt-empty"
        d.mkdir()
        return ["--model", str(d)]
    data = draw(config_bytes)
    if kind == "dir":
        d = tmp / "ckpt"
        d.mkdir()
        (d / "config.json").write_bytes(data)
        if draw(st.booleans()):
            (d / "model.safetensors.index.json").write_bytes(
                draw(st.one_of(st.binary(max_size=30), json_values.map(lambda v: json.dumps(v).encode()))))
        return ["--model", str(d)]
    p = tmp / "config.json"
    p.write_bytes(data)
    return ["--model", str(p)]


CHECK_FLAGS = [[], [], [], ["--json"], ["--max-running-requests", "8"], ["--launched-at", "x"],
               ["--launched-at", "2026-05-01 12:00:00"], ["--mamba-scheduler-strategy", "extra_buffer"],
               ["--sglang-version", "0.5.23"], ["--sglang-version", "9.9"], ["--env", "SGLANG_X=1"],
               ["--mem-fraction-static", "nan"], ["--tp-size", "x"]]


@settings(max_examples=1500 * SCALE, **FUZZ)
@given(data=st.data(), gpu=st.sampled_from(["rtxpro6000", "h200", "rtx4090", "rtx5090", "h100", "nope"]),
       fl=st.sampled_from(CHECK_FLAGS))
def test_check_never_crashes_on_broken_logs(data, gpu, fl, tmp_path_factory, capsys):
    tmp = tmp_path_factory.mktemp("check")
    path = data.draw(log_path(tmp), label="log")
    _check(main(["check", path, "--gpu", gpu, *fl]), capsys)


@settings(max_examples=1500 * SCALE, **FUZZ)
@given(data=st.data(), fl=st.sampled_from(CHECK_FLAGS[:6]))
def test_check_never_crashes_on_broken_configs(data, fl, tmp_path_factory, capsys):
    tmp = tmp_path_factory.mktemp("checkcfg")
    log = LOG_PATHS[data.draw(st.sampled_from(sorted(LOG_PATHS)), label="real log")]
    model = data.draw(model_arg(tmp), label="model")
    _check(main(["check", log, "--gpu", "rtxpro6000", *model, *fl]), capsys)


# ----------------------------------------------------------------------------- the named cases

def _with(path: str, value):
    cfg = copy.deepcopy(BASE)
    *parents, last = path.split(".")
    node = cfg
    for p in parents:
        node = node[p]
    node[last] = value
    return json.dumps(cfg).encode()


NAMED = {  # file bytes -> what the one line must name
    "text_config true": (_with("text_config", True), "'text_config' must be an object"),
    "num_hidden_layers string": (_with("text_config.num_hidden_layers", "x"), "'text_config.num_hidden_layers'"),
    "layer_types 5": (_with("text_config.layer_types", 5), "'text_config.layer_types' must be a list of strings"),
    "quantization_config list": (_with("quantization_config", []), "'quantization_config' must be an object"),
    "NaN": (_with("text_config.hidden_size", float("nan")), "'text_config.hidden_size'"),
    "huge int": (_with("text_config.vocab_size", 10**30), "'text_config.vocab_size'"),
    "negative size": (_with("text_config.head_dim", -128), "'text_config.head_dim'"),
    "nested quantized_layers": (_with("quantization_config", {"quant_algo": "MIXED_PRECISION",
                                                              "quantized_layers": {"a": 3}}),
                                "'quantization_config.quantized_layers.a' must be an object"),
    "rope factor": (_with("text_config.rope_scaling", {"factor": "x"}), "'text_config.rope_scaling.factor'"),
    "vision_config string": (_with("vision_config", "x"), "'vision_config' must be an object"),
    "non-UTF-8": (json.dumps(BASE).encode().replace(b"Qwen", b"Qw\xffen", 1), "not UTF-8 text"),
    "BOM": (b"\xef\xbb\xbf" + json.dumps(BASE).encode(), "byte-order mark"),
    "truncated": (json.dumps(BASE).encode()[:500], "not valid JSON"),
    "empty": (b"", "is empty"),
    "context of 0 tokens": (_with("text_config.max_position_embeddings", 0), "a context length of 0 tokens"),
    "not an object": (b"[1, 2]", "must hold a JSON object"),
}


@pytest.mark.parametrize("case", sorted(NAMED))
@pytest.mark.parametrize("command", ["plan", "check"])
def test_a_broken_config_is_one_line_naming_the_file_and_the_field(case, command, tmp_path, capsys):
    data, expected = NAMED[case]
    path = tmp_path / "config.json"
    path.write_bytes(data)
    if command == "plan":
        argv = ["--gpu", "rtxpro6000", "--model", str(path), "--no-search"]
    else:
        argv = ["check", str(DATA / "logs" / "synthetic-0.5.11-tp1-spec.log"), "--gpu", "rtxpro6000",
                "--model", str(path)]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert str(path) in err and expected in err, err


def test_a_damaged_server_args_dump_is_one_line_naming_the_field(tmp_path, capsys):
    """Found by the fuzz above: a dump whose speculative_algorithm was a list reached the CUDA-graph list builder
    (TypeError: unhashable type); the dump's fields are checked when the log is read."""
    data = LOG_BYTES["synthetic-0.5.11-tp1-spec.log"].replace(b"speculative_algorithm='EAGLE'",
                                                               b"speculative_algorithm=[1, 2]")
    assert b"speculative_algorithm=[1, 2]" in data
    path = tmp_path / "server.log"
    path.write_bytes(data)
    code = main(["check", str(path), "--gpu", "rtxpro6000"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "'speculative_algorithm' is [1, 2]" in err and str(path) in err, err


def test_a_directory_given_as_the_config_is_one_line(tmp_path, capsys):
    (tmp_path / "ckpt" / "config.json").mkdir(parents=True)
    code = main(["check", str(DATA / "logs" / "synthetic-0.5.11-tp1-spec.log"), "--gpu", "rtxpro6000",
                 "--model", str(tmp_path / "ckpt")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "config.json" in err, err
