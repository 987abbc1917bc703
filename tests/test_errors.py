"""Errors that point at the fix (issue 24 item 4, issue 23 item 3): SGLang flags checked against the release's own
flag list and the other releases', an old spelling that narrows the release, ambiguous GPU names, plan gpus, and
--env variables against what the release reads. Every error: one line on stderr, exit 2, no traceback."""

from __future__ import annotations

import json
import random

import pytest

from planner.cli import main
from planner.engines.sglang.cli_flags import accepts, known_flag_names, load_flag_table, release_span
from planner.engines.sglang.rules import RULES

BASE = ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--no-search"]
ORDER = list(RULES)


@pytest.fixture(autouse=True)
def _no_sglang_here(monkeypatch):
    """The default release is the latest modelled one, as on a machine without sglang (the CI's case)."""
    import planner.engines.sglang.rules as rules

    monkeypatch.setattr(rules, "installed_sglang", lambda: None)
    monkeypatch.setenv("COLUMNS", "400")


def error_line(capsys, argv) -> str:
    code = main(argv)
    out = capsys.readouterr()
    assert code == 2, (out.out[-400:], out.err)
    assert out.out == "" and out.err.count("\n") == 1 and "Traceback" not in out.err
    assert out.err.startswith("plan: error: ")
    return out.err[len("plan: error: "):].rstrip("\n")


def run_ok(capsys, argv) -> tuple[int, str]:
    code = main(argv)
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    return code, out.out


def known(version: str) -> frozenset[str]:
    return known_flag_names(RULES[version].flags)


def having(flag: str) -> list[str]:
    return [v for v in ORDER if flag in known(v)]


# --- a misspelled SGLang flag --------------------------------------------------------------------------------


def test_a_misspelled_flag_gets_the_near_match_from_the_releases_own_list(capsys):
    line = error_line(capsys, [*BASE, "--max-runing-requests", "8"])
    assert line == ("SGLang 0.5.23 flags: unrecognized arguments: --max-runing-requests 8 "
                    "(did you mean --max-running-requests?)")
    line = error_line(capsys, [*BASE, "--sglang-version", "0.5.9", "--max-runing-requests", "8"])
    assert line.startswith("SGLang 0.5.9 flags: unrecognized arguments: --max-runing-requests 8")
    assert "did you mean --max-running-requests?" in line


def test_random_misspellings_get_a_real_flag_of_that_release(capsys):
    """A character dropped from the middle of a real flag: the answer names a flag the release has (seeded)."""
    rng = random.Random(24)
    for version in ("0.5.11", "0.5.23"):
        names = sorted(n for n in known(version) if n.startswith("--") and len(n) >= 12)
        tried = 0
        while tried < 12:
            name = rng.choice(names)
            k = rng.randrange(4, len(name) - 2)
            typo = name[:k] + name[k + 1:]
            if accepts(typo, known(version)) or any(accepts(typo, known(v)) for v in ORDER):
                continue  # the drop made another flag (or a prefix of one) of some release
            tried += 1
            line = error_line(capsys, [*BASE, "--sglang-version", version, typo])
            assert line.startswith(f"SGLang {version} flags: unrecognized arguments: {typo}")
            suggestion = line.split("did you mean ", 1)[1].split("?", 1)[0]
            assert suggestion in known(version), (typo, line)


def test_a_misspelled_flag_of_a_later_release_names_that_release(capsys):
    flag = "--enable-unified-memory"
    have = having(flag)
    assert have and "0.5.11" not in have
    line = error_line(capsys, [*BASE, "--sglang-version", "0.5.11", "--enable-unified-memry"])
    assert (f"did you mean {flag}? It is a flag of SGLang {release_span(have, ORDER)}, not 0.5.11: plan with "
            f"--sglang-version {have[-1]}") in line


def test_a_flag_only_other_releases_have_names_them(capsys):
    flag = "--enable-unified-memory"
    have = having(flag)
    line = error_line(capsys, [*BASE, "--sglang-version", "0.5.11", flag])
    assert line == (f"SGLang 0.5.11 flags: unrecognized arguments: {flag} (SGLang 0.5.11 has no {flag}; "
                    f"{release_span(have, ORDER)} have it: plan with --sglang-version {have[-1]} if you run "
                    f"{release_span(have, ORDER)})")


def test_a_plan_option_after_the_double_dash_says_where_it_goes(capsys):
    line = error_line(capsys, ["--gpu", "rtxpro6000", "--", "python", "-m", "sglang.launch_server", "--model-path",
                               "Qwen/Qwen3.6-27B", "--no-search"])
    assert line.startswith("--no-search is an option of plan, not of SGLang: put it before '--'")


# --- the launcher the user gave ------------------------------------------------------------------------------


@pytest.mark.parametrize("launcher,named", [
    (["python", "-m", "sglang.launch_server"], "python -m sglang.launch_server (SGLang 0.5.23)"),
    (["/opt/venv/bin/python3.12", "-m", "sglang.launch_server"], "python3.12 -m sglang.launch_server (SGLang 0.5.23)"),
    (["python3", "-m", "sglang", "serve"], "python3 -m sglang serve (SGLang 0.5.23)"),
    (["sglang", "serve"], "sglang serve (SGLang 0.5.23)"),
    (["uv", "run", "sglang", "serve"], "sglang serve (SGLang 0.5.23)"),
    (["docker", "run", "--gpus", "all", "lmsysorg/sglang:latest", "python3", "-m", "sglang.launch_server"],
     "python3 -m sglang.launch_server (SGLang 0.5.23)"),
    ([], "SGLang 0.5.23 flags"),
])
def test_the_error_names_the_pastes_own_launcher(capsys, launcher, named):
    line = error_line(capsys, ["--gpu", "rtxpro6000", "--", *launcher, "--model-path", "Qwen/Qwen3.6-27B",
                               "--max-runing-requests", "8"])
    assert line == f"{named}: unrecognized arguments: --max-runing-requests 8 (did you mean --max-running-requests?)"


def test_a_batch_line_names_the_releases_flags(tmp_path):
    import io

    from planner.cli import run_batch

    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"id": "a", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "sglang_version": "0.5.11",
                             "flags": ["--max-runing-requests", "8"]}) + "\n")
    out = io.StringIO()
    run_batch(str(f), None, out)
    err = json.loads(out.getvalue())["error"]
    assert err == ("SGLang 0.5.11 flags: unrecognized arguments: --max-runing-requests 8 "
                   "(did you mean --max-running-requests?)")


# --- an old spelling narrows the release ---------------------------------------------------------------------


OLD, NEW = "--mamba-scheduler-strategy", "--mamba-radix-cache-strategy"


def test_the_tables_behind_the_spelling_messages():
    # the old spelling: 0.5.9-0.5.13 its own flag, 0.5.14-0.5.19 a deprecated alias, gone in 0.5.20
    assert having(OLD) == ORDER[:ORDER.index("0.5.19") + 1]
    assert having(NEW) == ORDER[ORDER.index("0.5.14"):]


def test_an_old_spelling_under_an_explicit_later_release_is_not_told_to_rename(capsys):
    line = error_line(capsys, [*BASE, "--sglang-version", "0.5.23", OLD, "extra_buffer"])
    assert line == (f"SGLang 0.5.23 flags: unrecognized arguments: {OLD} extra_buffer ({OLD} is the 0.5.9-0.5.19 "
                    f"spelling: plan with --sglang-version 0.5.19 if you run 0.5.9-0.5.19; 0.5.14 renamed it {NEW}, "
                    "the spelling SGLang 0.5.23 takes)")
    assert "rename it" not in line


def test_a_new_spelling_under_an_explicit_earlier_release(capsys):
    line = error_line(capsys, [*BASE, "--sglang-version", "0.5.11", NEW, "extra_buffer"])
    assert f"({NEW} is the 0.5.14-0.5.23 spelling: SGLang 0.5.11 spells it {OLD}; plan with --sglang-version " \
           "0.5.23 if you run 0.5.14-0.5.23)" in line


def _json(capsys, argv) -> dict:
    code, out = run_ok(capsys, [*argv, "--json"])
    return json.loads(out)


def test_an_old_spelling_without_a_release_plans_the_newest_release_that_takes_it(capsys):
    d = _json(capsys, [*BASE, OLD, "extra_buffer"])
    assert d["sglang_version"] == "0.5.19"
    assert d["sglang_version_source"].startswith(f"{OLD} is the 0.5.9-0.5.19 spelling: the newest release that "
                                                 "takes it (the default, 0.5.23, does not)")
    explicit = _json(capsys, [*BASE, OLD, "extra_buffer", "--sglang-version", "0.5.19"])
    assert d["summary"] == explicit["summary"]  # the same plan as naming the release
    _, text = run_ok(capsys, [*BASE, OLD, "extra_buffer"])
    assert f"[SGLang 0.5.19 rules ({OLD} is the 0.5.9-0.5.19 spelling" in " ".join(text.split())


def test_the_paste_form_narrows_the_same_way(capsys):
    code, out = run_ok(capsys, ["--gpu", "rtxpro6000", "--no-search", "--json", "--", "python", "-m",
                                "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B", OLD, "extra_buffer"])
    assert json.loads(out)["sglang_version"] == "0.5.19"


def test_an_explicit_release_is_kept(capsys):
    assert _json(capsys, [*BASE, OLD, "extra_buffer", "--sglang-version", "0.5.16"])["sglang_version"] == "0.5.16"
    assert _json(capsys, [*BASE, NEW, "extra_buffer"])["sglang_version"] == "0.5.23"  # the default takes it


def test_an_installed_release_is_not_overridden(capsys, monkeypatch):
    import planner.engines.sglang.rules as rules

    monkeypatch.setattr(rules, "installed_sglang", lambda: "0.5.23")
    line = error_line(capsys, [*BASE, OLD, "extra_buffer"])
    assert line.startswith(f"SGLang 0.5.23 flags: unrecognized arguments: {OLD} extra_buffer ({OLD} is the "
                           "0.5.9-0.5.19 spelling")
    monkeypatch.setattr(rules, "installed_sglang", lambda: "0.5.11")
    assert _json(capsys, [*BASE, OLD, "extra_buffer"])["sglang_version"] == "0.5.11"


def test_spellings_no_release_takes_together_are_an_error(capsys):
    # a switch only 0.5.20+ has, with the old spelling only 0.5.19 and earlier have
    late = sorted(a["option_strings"][0] for a in load_flag_table(RULES["0.5.23"].flags)["actions"]
                  if a["action"] == "_StoreTrueAction" and a["option_strings"][0].startswith("--")
                  and not any(a["option_strings"][0] in known(v) for v in ORDER[:ORDER.index("0.5.20")]))
    assert late
    line = error_line(capsys, [*BASE, OLD, "extra_buffer", late[0]])
    assert line.startswith(f"SGLang 0.5.23 flags: unrecognized arguments: {OLD} extra_buffer ({OLD} is the "
                           "0.5.9-0.5.19 spelling")


# --- GPU names -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["rtx6000", "rtx 6000", "RTX-6000", "6000", "NVIDIA RTX 6000"])
def test_an_ambiguous_gpu_name_asks_with_the_candidates(capsys, name):
    line = error_line(capsys, ["--gpu", name, "--model", "qwen3.6-27b"])
    assert line.startswith(f"--gpu: '{name}' is ambiguous: it matches rtx6000-ada (RTX 6000 Ada Generation, "
                           "49,140 MiB), rtxpro6000 (RTX PRO 6000 Blackwell, 97,887 MiB)")
    assert "the Quadro RTX 6000 (Turing, 24 GB; no profile)" in line
    assert "say which (e.g. --gpu rtx6000-ada)" in line


def test_a100_still_asks_and_an_unprofiled_card_says_so(capsys):
    assert "a100-40gb" in error_line(capsys, ["--gpu", "a100", "--model", "qwen3.6-27b"])
    line = error_line(capsys, ["--gpu", "quadro rtx 6000", "--model", "qwen3.6-27b"])
    assert line.startswith("--gpu: the Quadro RTX 6000 (Turing, 24 GB) has no profile yet")
    line = error_line(capsys, ["--gpu", "NVIDIA RTX A6000", "--model", "qwen3.6-27b"])
    assert line.startswith("--gpu: the RTX A6000 (Ampere, 48 GB) has no profile yet")
    assert "RTX A6000" in error_line(capsys, ["--gpu", "6000", "--model", "qwen3.6-27b"])


def test_every_id_alias_and_nvml_name_still_names_its_own_card():
    from planner.hardware.profiles import _squash, find_profile, load_profiles

    seen: dict[str, str] = {}
    for p in load_profiles():
        for n in p.names:
            assert find_profile(n).id == p.id, n
            assert seen.setdefault(_squash(n), p.id) == p.id, f"{n} names {seen[_squash(n)]} and {p.id}"


@pytest.mark.parametrize("name", ["rtx6000-ada", "rtx 6000 ada", "NVIDIA RTX 6000 Ada Generation", "rtxpro6000",
                                  "rtx pro 6000"])
def test_exact_names_of_the_6000_cards_plan(capsys, name):
    run_ok(capsys, ["--gpu", name, "--model", "qwen3.6-27b", "--no-search"])


# --- plan gpus -----------------------------------------------------------------------------------------------


def test_plan_gpus_lists_every_profile_one_line_each(capsys):
    from planner.hardware.profiles import load_profiles

    code, out = run_ok(capsys, ["gpus"])
    assert code == 0
    lines = out.splitlines()
    profiles = load_profiles()
    assert len(lines) == len(profiles) + 1 and lines[0].split()[:3] == ["id", "memory", "interconnect"]
    for p, line in zip(profiles, lines[1:]):
        assert line.split()[0] == p.id
        assert f"{p.capacity_mib:,} MiB ({p.capacity_mib / 1024:.2f} GiB)" in line
        assert f"  {p.interconnect} " in line and p.display_name in line
        assert all(a in line for a in p.aliases)


def test_plan_gpus_json(capsys):
    from planner.hardware.profiles import find_profile

    code, out = run_ok(capsys, ["gpus", "--json"])
    rows = json.loads(out)
    for r in rows:
        p = find_profile(r["id"])
        assert r["memory_mib"] == p.capacity_mib and r["memory_gib"] == round(p.capacity_mib / 1024, 2)
        assert r["aliases"] == p.aliases and r["nvml_names"] == p.nvml_names and r["interconnect"] == p.interconnect


def test_plan_gpus_bad_option_and_help(capsys):
    assert error_line(capsys, ["gpus", "--bogus"]).startswith("unrecognized arguments: --bogus")
    assert main(["--help"]) == 0
    assert "plan gpus [--json]" in capsys.readouterr().out


# --- environment variables -----------------------------------------------------------------------------------


def _notes(capsys, argv) -> list[str]:
    return _json(capsys, argv)["notes"]


def test_a_variable_sglang_does_not_read_is_named_as_ignored(capsys):
    assert _notes(capsys, [*BASE, "--env", "FOO=bar"]) == ["env FOO is ignored: SGLang 0.5.23 does not read it"]
    assert _notes(capsys, [*BASE, "--env", "SGLANG_MAMBA_SSM_DTYP=bfloat16"]) == [
        "env SGLANG_MAMBA_SSM_DTYP is ignored: SGLang 0.5.23 does not read it; did you mean SGLANG_MAMBA_SSM_DTYPE?"]


def test_a_variable_a_later_release_dropped_names_the_releases_that_read_it(capsys):
    from planner.engines.sglang.env_vars import releases_reading

    have = releases_reading("SGLANG_ENABLE_SPEC_V2")
    assert "0.5.11" in have and "0.5.23" not in have
    assert _notes(capsys, [*BASE, "--env", "SGLANG_ENABLE_SPEC_V2=0"]) == [
        f"env SGLANG_ENABLE_SPEC_V2 is ignored: SGLang 0.5.23 does not read it ({release_span(have, ORDER)} read it)"]
    # where the rules use it, no note, and it changes the plan (spec v1 under EAGLE: fewer mamba slots per request)
    eagle = [*BASE, "--sglang-version", "0.5.11", "--speculative-algorithm", "EAGLE", "--max-running-requests", "8",
             "--mamba-scheduler-strategy", "extra_buffer"]
    with_env, without = _json(capsys, [*eagle, "--env", "SGLANG_ENABLE_SPEC_V2=0"]), _json(capsys, eagle)
    assert with_env["notes"] == []
    assert (with_env["summary"]["mamba_ratio"], without["summary"]["mamba_ratio"]) == (4, 5)


def test_modelled_and_no_effect_variables_say_nothing(capsys):
    assert _notes(capsys, [*BASE, "--env", "SGLANG_MAMBA_SSM_DTYPE=bfloat16", "--env", "SGLANG_LOG_MS=1"]) == []


def test_a_read_variable_without_a_modelled_effect_says_so(capsys):
    assert _notes(capsys, [*BASE, "--env", "CUDA_VISIBLE_DEVICES=0"]) == [
        "env CUDA_VISIBLE_DEVICES: read by SGLang 0.5.23, its memory effect is not modelled (the plan assumes none)"]


@pytest.mark.parametrize("kv", ["SGLANG_ROPE_CACHE_ALIGN=256", "SGLANG_FLASHINFER_WORKSPACE_SIZE=1073741824",
                                "SGLANG_SYMM_MEM_PREALLOC_GB_SIZE=4"])
def test_a_variable_with_an_unmodelled_memory_effect_is_refused(capsys, kv):
    line = error_line(capsys, [*BASE, "--env", kv])
    assert line.startswith(f"--env {kv}: it changes ") and "which is not modelled" in line


def test_a_refused_variable_at_its_default_plans(capsys):
    run_ok(capsys, [*BASE, "--env", "SGLANG_ROPE_CACHE_ALIGN=128", "--env", "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=0"])


@pytest.mark.parametrize("kv", ["A B=1", "1A=2", "=x", "novalue", "SGLANG-X=1"])
def test_a_malformed_env_item_is_bad_input(capsys, kv):
    assert error_line(capsys, [*BASE, "--env", kv]).startswith("--env: ")


def test_the_env_tables_name_variables_sglang_reads():
    from planner.engines.sglang.env_vars import MODELLED, MODELLED_UNTIL, NO_EFFECT, REFUSED, releases_reading

    for name in [*MODELLED, *REFUSED, *NO_EFFECT, *MODELLED_UNTIL]:
        assert releases_reading(name), f"{name}: no release reads it (a typo in the table?)"
    assert not set(MODELLED) & set(REFUSED) and not set(MODELLED) & set(NO_EFFECT) and not set(REFUSED) & set(NO_EFFECT)


def test_a_pasted_sglang_variable_is_checked_the_same_way(capsys):
    code, out = run_ok(capsys, ["--gpu", "rtxpro6000", "--no-search", "--json", "--", "SGLANG_FOO=1", "HF_TOKEN=x",
                                "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B"])
    assert json.loads(out)["notes"] == ["env SGLANG_FOO is ignored: SGLang 0.5.23 does not read it",
                                        "environment of the pasted command not used (no effect on the plan): HF_TOKEN"]


def test_a_batch_lines_env_is_checked_the_same_way(tmp_path):
    import io

    from planner.cli import run_batch

    f = tmp_path / "in.jsonl"
    base = {"gpu": "rtxpro6000", "model": "qwen3.6-27b"}
    f.write_text("\n".join(json.dumps({"id": i, **base, "env": env}) for i, env in
                           enumerate([{"A B": "1"}, {"SGLANG_ROPE_CACHE_ALIGN": 64}, {"FOO": "1"}])) + "\n")
    out = io.StringIO()
    run_batch(str(f), None, out)
    bad_name, refused, ignored = (json.loads(x) for x in out.getvalue().splitlines())
    assert bad_name["error"].startswith("--env: 'A B' is not an environment variable name")
    assert refused["error"].startswith("--env SGLANG_ROPE_CACHE_ALIGN=64: it changes the RoPE cache length")
    assert "error" not in ignored and ignored["notes"] == ["env FOO is ignored: SGLang 0.5.23 does not read it"]


def test_plan_check_refuses_a_malformed_env_item(capsys):
    from pathlib import Path

    log = Path(__file__).parent / "data" / "logs" / "synthetic-0.5.11-tp1-spec.log"
    assert error_line(capsys, ["check", str(log), "--gpu", "rtxpro6000", "--env", "1X=2"]).startswith("--env: '1X'")


SEED = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4"]


def test_a_narrowed_release_says_how_the_releases_of_the_range_decide(capsys):
    """The seed's paste (0.5.11 spelling, no release given): planned under 0.5.19, where it fits, with a note that
    0.5.9-0.5.12 do not boot it; each group checked against planning that release by name."""
    code, out = run_ok(capsys, ["--gpu", "rtxpro6000", "--no-search", "--json", "--", "python", "-m",
                                "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B", *SEED, OLD, "extra_buffer"])
    d = json.loads(out)
    assert d["sglang_version"] == "0.5.19" and d["verdict"] == "fits"
    note = next(n for n in d["notes"] if n.startswith("the releases that take these spellings decide"))
    assert "0.5.9-0.5.12 WILL NOT BOOT (resolve_memory_pool_config), 0.5.13-0.5.19 FITS" in note
    for v, fits in (("0.5.9", False), ("0.5.12", False), ("0.5.13", True), ("0.5.19", True)):
        e = _json(capsys, [*BASE, *SEED, OLD, "extra_buffer", "--sglang-version", v])
        assert (e["verdict"] == "fits") == fits and not any("decide" in n for n in e["notes"])


def test_a_narrowed_release_whose_range_agrees_says_so(capsys):
    d = _json(capsys, ["--gpu", "rtxpro6000", "--model", "qwen3-8b", "--no-search", OLD, "no_buffer"])
    assert d["sglang_version"] == "0.5.19" and d["verdict"] == "fits"
    assert d["notes"] == ["every release that takes these spellings (0.5.9-0.5.19) decides this launch the same: FITS"]
    for v in ("0.5.9", "0.5.14"):
        assert _json(capsys, ["--gpu", "rtxpro6000", "--model", "qwen3-8b", "--no-search", OLD, "no_buffer",
                              "--sglang-version", v])["verdict"] == "fits"


def test_the_env_dump_covers_every_modelled_release():
    import json as _json_mod
    from pathlib import Path

    import planner.engines.sglang as sg

    table = _json_mod.loads((Path(sg.__file__).parent / "env_names.json").read_text(encoding="utf-8"))
    assert table["releases"] == ORDER
