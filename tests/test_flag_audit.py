"""The flag audit (planner/engines/sglang/flag_audit.toml) covers every flag of every release, and is enforced.

Each release's argparse dump (flags/v0_5_*.json, written from SGLang's own ServerArgs.add_cli_args) lists its
flags; every dest must be classified modelled / no_effect / refused, and a refused flag given with a value
other than its default must stop the plan with one line (exit 2) in every release that has it.
"""

from __future__ import annotations

import collections

import re
from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.engines.sglang.cli_flags import load_flag_table
from planner.engines.sglang.rules import RULES
from planner.engines.sglang.support import SUPPRESS, flag_audit, flag_refusal
from planner.errors import BadInput
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.summary import build_summary

ROOT = Path(__file__).parents[1]
FLAGS = ROOT / "planner" / "engines" / "sglang" / "flags"
DUMPS = sorted(FLAGS.glob("v0_5_*.json"), key=lambda p: int(p.stem.split("_")[-1]))
RELEASES = [p.stem for p in DUMPS]


def _dests(version_dir: str) -> dict[str, dict]:
    """dest -> the action that defines its default (aliases suppress theirs)."""
    out: dict[str, dict] = {}
    for a in load_flag_table(version_dir)["actions"]:
        if a["dest"] not in out or out[a["dest"]]["default"] == SUPPRESS:
            out[a["dest"]] = a
    return out


def test_one_dump_per_modelled_release():
    assert {r.flags for r in RULES.values()} == set(RELEASES)
    assert len(RELEASES) == 15


@pytest.mark.parametrize("version_dir", RELEASES)
def test_every_flag_of_the_release_is_classified(version_dir):
    audit = flag_audit()
    missing = sorted(d for d in _dests(version_dir) if d not in audit)
    assert not missing, f"{version_dir}: add these dests to flag_audit.toml: {missing}"


def test_no_stale_entries_and_valid_classes():
    seen = set().union(*(_dests(v) for v in RELEASES))
    audit = flag_audit()
    assert sorted(set(audit) - seen) == []
    assert {e.cls for e in audit.values()} == {"modelled", "no_effect", "refused"}
    for e in audit.values():
        assert e.why.strip(), e.dest
        assert e.enforced_by in (None, "check_scope", "quant_support", "draft_quantization", "dp_attention",
                               "expert_parallel"), e.dest


def test_a_flag_read_only_with_a_refused_feature_names_a_refused_flag():
    audit = flag_audit()
    for e in audit.values():
        for need in e.needs:
            assert need in audit, (e.dest, need)
            gate = audit[need]
            assert gate.cls == "refused" or gate.allow, (e.dest, need)


def test_what_the_pipeline_reads_is_never_marked_no_effect():
    """Every ServerArgs field the pipeline reads (a["..."], raw.get("..."), ...) changes what it computes:
    it must be modelled or refused, never no_effect."""
    code = "\n".join(p.read_text() for p in (ROOT / "planner" / "engines").rglob("*.py"))
    read = set(re.findall(r"""(?:\ba|raw|args\.raw)(?:\[|\.get\(|\.setdefault\()["']([a-z0-9_]+)["']""", code))
    audit = flag_audit()
    wrong = sorted(d for d in read if d in audit and audit[d].cls == "no_effect")
    assert not wrong, wrong
    assert {"tp_size", "mem_fraction_static", "page_size", "cpu_offload_gb"} <= read  # the pattern finds them


def test_flags_named_in_the_issue_are_classified_as_their_memory_effect_says():
    audit = flag_audit()
    for dest in ("cpu_offload_gb", "enable_dp_attention", "enable_lora", "max_loras_per_batch",
                 "enable_hierarchical_cache", "pp_size", "dcp_size", "attn_cp_size",
                 "enable_torch_compile", "dp_size"):
        assert audit[dest].cls == "refused", dest
    # PD roles: modelled on 0.5.16-0.5.23, older releases refused by check_scope (pipeline/disaggregation.py)
    for dest in ("chunked_prefill_size", "cuda_graph_max_bs", "cuda_graph_max_bs_decode", "mem_fraction_static",
                 "disaggregation_mode", "disaggregation_decode_extra_slots"):
        assert audit[dest].cls == "modelled", dest


def _nondefault(a: dict) -> list[str] | None:
    """argv giving this action a value other than its default (None when no such spelling exists)."""
    opt = next(s for s in a["option_strings"] if s.startswith("--"))
    kind, default = a["action"], a["default"]
    if kind in ("_StoreTrueAction", "DeprecatedStoreTrueAction"):
        return [opt] if default is not True else None
    if kind == "_StoreFalseAction":
        return [opt]
    if kind == "BooleanOptionalAction":
        neg = next((s for s in a["option_strings"] if s.startswith("--no-")), None)
        pos = next(s for s in a["option_strings"] if not s.startswith("--no-"))
        return [neg] if default is True else [pos]
    if kind in ("DeprecatedAction", "DeprecatedStoreConstAction"):  # swallowed, or a const of another dest
        return None
    if a["choices"]:
        other = [c for c in a["choices"] if c != default]
        return [opt, str(other[0])] if other else None
    t = a["type"]
    if t in ("int", "human_readable_int"):
        value = str(default + 1 if isinstance(default, int) and default >= 1 else 2)
    elif t == "float":
        value = str(default / 2 if isinstance(default, (int, float)) and default else 0.5)
    elif t in ("loads", "parse_cuda_graph_config_arg"):
        value = '{"x": 1}'
    elif t == "json_list_type":
        value = "[1]"
    else:
        value = "x"
    return [opt, value]


GPU = find_profile("h200")
MODEL = resolve_model("qwen3-8b")


def _refusal_line(version: str, argv: list[str]) -> str | None:
    try:
        make_plan(GPU, MODEL, argv, version=version)
    except BadInput as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("version_dir", RELEASES)
def test_every_refused_flag_is_refused_end_to_end(version_dir):
    version = next(r.version for r in RULES.values() if r.flags == version_dir)
    audit = flag_audit()
    untested, passed = [], []
    for dest, a in _dests(version_dir).items():
        e = audit[dest]
        if e.cls != "refused":
            continue
        argv = _nondefault(a)
        if argv is None:
            untested.append(dest)
            continue
        line = _refusal_line(version, argv)
        if line is None:
            passed.append((dest, argv))
        else:
            assert "\n" not in line
    assert not passed, f"{version}: refused flags that got a verdict: {passed}"
    assert len(untested) <= 3, untested


@pytest.mark.parametrize("version_dir", [RELEASES[0], RELEASES[5], RELEASES[-1]])
def test_flags_without_memory_effect_are_never_refused_by_the_audit(version_dir):
    audit = flag_audit()
    for dest, a in _dests(version_dir).items():
        e = audit[dest]
        if e.cls == "refused" or e.allow or e.enforced_by:
            continue
        argv = _nondefault(a)
        if argv is None:
            continue
        value = True if len(argv) == 1 else argv[1]
        assert flag_refusal({dest: value}, version_dir) is None, dest


def test_audit_counts_per_release_are_recorded_in_the_readme():
    counts = audit_counts()
    text = (ROOT / "README.md").read_text()
    for version_dir, c in counts.items():
        v = version_dir.replace("v", "").replace("_", ".")
        row = f"| {v} | {c['modelled']} | {c['no_effect']} | {c['refused']} |"
        assert row in text, row


def audit_counts() -> dict[str, dict[str, int]]:
    audit = flag_audit()
    return {v: dict(collections.Counter(audit[d].cls for d in _dests(v))) for v in RELEASES}


if __name__ == "__main__":  # prints the README table
    for v, c in audit_counts().items():
        print(f"| {v.replace('v', '').replace('_', '.')} | {c['modelled']} | {c['no_effect']} | {c['refused']} |")



@pytest.mark.parametrize("version", ["0.5.9", "0.5.16", "0.5.23"])
def test_a_two_byte_dtype_plans_as_auto_and_float32_is_refused(version):
    """--dtype bfloat16 / float16 / half: the 2 bytes --dtype auto gives this bf16 checkpoint, so the plan is the
    same; float32 doubles weights and KV, which the planner does not model (srt/configs/model_config.py:2302-2317
    @0.5.23)."""
    auto = build_summary(make_plan(GPU, MODEL, [], version=version))
    for d in ("bfloat16", "float16", "half"):
        assert build_summary(make_plan(GPU, MODEL, ["--dtype", d], version=version)) == auto, d
    line = _refusal_line(version, ["--dtype", "float32"])
    assert line is not None and line.startswith("--dtype float32: not modelled") and "float16" in line
