"""Every launch line the planner prints runs as printed (issue 24, item 2).

For a broad set of launches (the seed case, DFLASH, DSPARK, EAGLE, EAGLE3, NGRAM, dense, MoE, quantized, releases
0.5.9 to 0.5.23) this takes each launch command the CLI prints (the default report, ``--verbose``, the JSON
``recommendation.command``) and the TUI's launch command (``planner.tui.view.evaluate``, without running the app),
joins the continuation lines the way a shell does (bash itself when present: the text is pasted into a script),
and checks that

* every wrapped line but the last ends with `` \\`` and fits the width;
* ``--model-path`` and ``--speculative-draft-model-path`` are Hugging Face ids (``org/name``), or the report says
  under the line that the catalog's draft has no published checkpoint;
* THE TARGET RELEASE'S OWN argparse (``planner/engines/sglang/flags/*.json`` via ``cli_flags.parse_flags``) parses
  the flags with no error;
* re-planning the pasted line (``plan --no-search -- <the line>``, the paste form) gives the same verdict and the
  same pools, field by field (the sglang-oracle summary), as the plan that printed it.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess

import pytest

from planner.cli import main
from planner.engines.sglang.cli_flags import parse_flags
from planner.engines.sglang.rules import RULES
from planner.paste import split_paste_form

WIDTH = 100
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
LAUNCHER = "python -m sglang.launch_server "

SEED = ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--sglang-version", "0.5.11", "--speculative-algorithm",
        "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens",
        "4", "--mamba-scheduler-strategy", "extra_buffer"]

CASES = {
    "seed-0.5.11": SEED,
    "dflash-0.5.23": ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative", "DFLASH"],
    "dflash-moe-0.5.20": ["--gpu", "h200", "--model", "qwen3.5-35b-a3b", "--speculative", "DFLASH",
                          "--sglang-version", "0.5.20"],
    "dspark-0.5.22": ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative", "DSPARK",
                      "--sglang-version", "0.5.22"],
    "eagle-0.5.16": ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative", "EAGLE",
                     "--sglang-version", "0.5.16"],
    "eagle3-template-draft-0.5.12": ["--gpu", "h100-sxm", "--model", "qwen3-8b", "--speculative", "EAGLE3",
                                     "--sglang-version", "0.5.12"],
    "ngram-0.5.19": ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative", "NGRAM",
                     "--sglang-version", "0.5.19"],
    "dense-0.5.9": ["--gpu", "h100-sxm", "--model", "llama-3.1-8b-instruct", "--sglang-version", "0.5.9"],
    "dense-user-flags-0.5.10": ["--gpu", "l40s", "--model", "qwen3-8b", "--sglang-version", "0.5.10",
                                "--max-running-requests", "64"],
    "moe-0.5.13": ["--gpu", "h200", "--model", "qwen3.6-35b-a3b", "--sglang-version", "0.5.13"],
    "fp8-kv-0.5.14": ["--gpu", "h100-sxm", "--model", "qwen3.5-9b", "--sglang-version", "0.5.14",
                      "--allow-fp8-kv", "--allow-bf16-ssm"],
    "quantized-fp8-0.5.21": ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b-fp8", "--sglang-version", "0.5.21"],
    "quantized-nvfp4-0.5.23": ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b-nvfp4", "--sglang-version", "0.5.23"],
    "radix-off-0.5.15": ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--sglang-version", "0.5.15",
                         "--allow-no-radix"],
    "nemotron-0.5.18": ["--gpu", "h200", "--model", "nemotron-3-nano-30b-a3b", "--sglang-version", "0.5.18"],
}


@pytest.fixture(autouse=True)
def _width(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))  # other test modules set COLUMNS for the whole process


def _run(capsys, argv: list[str]) -> tuple[int, str]:
    capsys.readouterr()
    rc = main(argv)
    return rc, capsys.readouterr().out


def commands_in(text: str) -> list[list[str]]:
    """The launch commands in a report, each as its printed lines (a command continues while a line ends
    with ' \\')."""
    out, lines = [], text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith(LAUNCHER):
            block = [lines[i]]
            while block[-1].endswith(" \\") and i + 1 < len(lines):
                i += 1
                block.append(lines[i])
            out.append(block)
        i += 1
    return out


def shell_words(text: str) -> list[str]:
    """The argv a shell passes to ``python`` when ``text`` is pasted: bash itself where present (``python`` a
    function that prints its arguments), else the continuations joined and shlex-split."""
    bash = shutil.which("bash")
    if bash is None:
        return shlex.split(text.replace("\\\n", " "))
    script = 'python() { printf "%s\\0" python "$@"; }\n' + text + "\n"
    out = subprocess.run([bash, "--noprofile", "--norc", "-c", script], capture_output=True, timeout=30, check=True)
    return out.stdout.decode().split("\0")[:-1]


def check_wrapped(block: list[str]) -> None:
    for line in block[:-1]:
        assert line.endswith(" \\"), f"a wrapped launch line without its continuation: {line!r}"
    for line in block:  # over the width only where one flag and its value are longer (a long path)
        assert len(line) <= WIDTH or len(shlex.split(line.removesuffix(" \\"))) <= 2, f"over {WIDTH}: {line!r}"


def check_parses_and_replans(capsys, words: list[str], gpu: str, version: str, want: dict, draft_note: bool,
                             ) -> None:
    """``words``: a launch command's argv. Its flags parse with the release's argparse, its ids are Hub ids, and
    re-planning it through the paste form gives ``want`` (a JSON plan's verdict and summary)."""
    model_path, flags, env = split_paste_form(words)
    assert env == {}
    assert model_path is not None and HUB_ID.fullmatch(model_path), model_path
    if "--speculative-draft-model-path" in flags:
        draft = flags[flags.index("--speculative-draft-model-path") + 1]
        assert HUB_ID.fullmatch(draft) or draft_note, f"the draft is not a Hub id: {draft}"
    parsed = parse_flags(RULES[version].flags, ["--model-path", model_path, *flags])  # raises SGLangArgError
    assert parsed["model_path"] == model_path
    rc, out = _run(capsys, ["--gpu", gpu, "--sglang-version", version, "--no-search", "--json", "--", *words])
    got = json.loads(out)
    assert got["verdict"] == want["verdict"]
    assert got["summary"] == want["summary"]
    assert rc == (0 if want["verdict"] == "fits" else 1)


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_printed_launch_line_parses_and_replans_the_same(case, capsys):
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.hardware.profiles import load_profiles  # noqa: PLC0415
    from planner.tui.view import evaluate  # noqa: PLC0415

    argv = CASES[case]
    gpu = argv[argv.index("--gpu") + 1]
    rc, out = _run(capsys, [*argv, "--json"])
    d = json.loads(out)
    version = d["sglang_version"]
    rec = d["recommendation"]
    assert rec is not None, f"{case}: no recommendation"
    assert rec["summary"]["verdict"] == "fits" if "verdict" in rec["summary"] else True
    want_rec = {"verdict": "fits", "summary": rec["summary"]}

    # the text report (default and --verbose) prints the same command as the JSON, wrapped so that it pastes
    texts = {"default": _run(capsys, argv)[1], "verbose": _run(capsys, [*argv, "--verbose"])[1]}
    for kind, text in texts.items():
        blocks = commands_in(text)
        assert len(blocks) == 1, f"{case} {kind}: {len(blocks)} launch commands"
        check_wrapped(blocks[0])
        words = shell_words("\n".join(x.strip() if i == 0 else x for i, x in enumerate(blocks[0])))
        assert words == shlex.split(rec["command"]), f"{case} {kind}: the text and JSON commands differ"
    draft_note = all("is a catalog config with no published checkpoint" in t for t in texts.values())
    check_parses_and_replans(capsys, shlex.split(rec["command"]), gpu, version, want_rec, draft_note)

    # the TUI's launch command, for the recommended flags and for the user's own flags
    g = next(p for p in load_profiles() if p.id == gpu)
    model = resolve_model(argv[argv.index("--model") + 1])
    view = evaluate(g, model, rec["flags"], {}, version)
    assert view.command == rec["command"]
    own = evaluate(g, model, d["flags"], {}, version)
    want_own = {"verdict": d["verdict"], "summary": d["summary"]}
    if d["verdict"] != "rejected" or d["summary"].get("stage") != "server_args":
        check_parses_and_replans(capsys, shlex.split(own.command), gpu, version, want_own, draft_note)


def test_catalog_drafts_print_as_their_published_heads(capsys):
    """The catalog alias is what the planner reads; the launch line names the Hub repo SGLang downloads."""
    _, out = _run(capsys, ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative", "DFLASH"])
    words = shell_words("\n".join(b.strip() if i == 0 else b for i, b in enumerate(commands_in(out)[0])))
    assert words[words.index("--speculative-draft-model-path") + 1] == "z-lab/Qwen3.6-27B-DFlash"
    assert "qwen3.6-27b-dflash" not in words
    _, out = _run(capsys, ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative", "DSPARK"])
    words = shell_words("\n".join(b.strip() if i == 0 else b for i, b in enumerate(commands_in(out)[0])))
    i = words.index("--speculative-draft-model-path")
    assert words[i + 1] == "RadixArk/Qwen3.8-27B-DSpark"
    assert words[words.index("--speculative-draft-model-revision") + 1] == "b9a5dbdf03bc999c6c73c426b19c2d9041cea393"


def test_a_users_own_draft_path_is_printed_as_given(tmp_path):
    from planner.catalog.drafts import launch_flags  # noqa: PLC0415

    d = tmp_path / "qwen3.6-27b-dflash"  # a directory that happens to carry a catalog name: the user's path wins
    d.mkdir()
    assert launch_flags(["--speculative-draft-model-path", str(d)]) == ["--speculative-draft-model-path", str(d)]
    assert launch_flags(["--speculative-draft-model-path", "qwen3.6-27b-dflash"]) == \
        ["--speculative-draft-model-path", "z-lab/Qwen3.6-27B-DFlash"]
    assert launch_flags(["--speculative-draft-model-path=qwen3.5-35b-a3b-dflash"]) == \
        ["--speculative-draft-model-path=z-lab/Qwen3.5-35B-A3B-DFlash"]
    assert launch_flags(["--speculative-draft-model-path", "some-org/their-head"]) == \
        ["--speculative-draft-model-path", "some-org/their-head"]


def test_verbose_wraps_the_launch_with_continuations(capsys):
    _, out = _run(capsys, ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative", "DFLASH", "--verbose"])
    block = commands_in(out)[0]
    assert len(block) > 1
    check_wrapped(block)


# --------------------------------------------------------------------------- trade-offs and the Fix

def _flag_value(words: list[str], flag: str) -> str | None:
    return words[words.index(flag) + 1] if flag in words else None


@pytest.mark.parametrize("case", sorted(CASES))
def test_trade_offs_name_exactly_what_the_recommendation_changes(case, capsys):
    """Each trade-off the recommendation names is in its launch line and not in the user's flags, and each
    switch the launch turns off is named; numeric ones (draft, prefill chunk) name the launch's own value."""
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.hardware.profiles import load_profiles  # noqa: PLC0415
    from planner.engines.sglang.plan import make_plan  # noqa: PLC0415

    argv = CASES[case]
    d = json.loads(_run(capsys, [*argv, "--json"])[1])
    rec = d["recommendation"]
    why, words, user = rec["why"], shlex.split(rec["command"]), d["flags"]
    for flag, text in (("--disable-overlap-schedule", "the overlap schedule is off"),
                       ("--disable-radix-cache", "the radix cache is off")):
        assert (text in why) == (flag in words and flag not in user), (case, flag, why)
    kv = _flag_value(words, "--kv-cache-dtype")
    assert ("the KV cache is fp8" in why) == (kv is not None and kv.startswith("fp8")
                                              and "--kv-cache-dtype" not in user)
    assert ("ssm state is bfloat16" in why) == (_flag_value(words, "--mamba-ssm-dtype") == "bfloat16"
                                                 and "--mamba-ssm-dtype" not in user)
    g = next(p for p in load_profiles() if p.id == argv[argv.index("--gpu") + 1])
    model = resolve_model(argv[argv.index("--model") + 1])
    base = make_plan(g, model, _fixed_flags(words, rec["chosen"]), {},
                     version=d["sglang_version"])
    chunk = _flag_value(words, "--chunked-prefill-size")
    m = re.search(r"prefill chunks of ([\d,]+) tokens, not \S+ (?:default )?([\d,]+)", why)
    if base.args is not None and chunk is not None and int(chunk) < base.args.chunked_prefill_size:
        assert m and int(m.group(1).replace(",", "")) == int(chunk) \
            and int(m.group(2).replace(",", "")) == base.args.chunked_prefill_size, why
    else:
        assert m is None, why
    m = re.search(r"a shorter draft than [^(]*\(([^)]*)\): at most (\d+) tokens per verify step, not "
                  r"(\d+)", why)
    dt = _flag_value(words, "--speculative-num-draft-tokens")
    if base.args is not None and base.args.speculative_algorithm not in (None, "DFLASH", "DSPARK") and dt is not None \
            and int(dt) < base.args.speculative_num_draft_tokens:
        assert m and int(m.group(2)) == int(dt) and int(m.group(3)) == base.args.speculative_num_draft_tokens, why
        assert f"draft tokens {base.args.speculative_num_draft_tokens} -> {dt}" in m.group(1)
    else:
        assert m is None, why


def _fixed_flags(words: list[str], chosen: list[str]) -> list[str]:
    """The launch's flags less those the search chose: what the search started from (the user's, the
    speculative algorithm and its catalog draft)."""
    from planner.catalog.catalog import find_entry  # noqa: PLC0415

    flags = words[5:]
    picked = [t for c in chosen for t in shlex.split(c)]
    out, i = [], 0
    while i < len(flags):
        f = flags[i]
        takes = i + 1 < len(flags) and not flags[i + 1].startswith("--")
        if f in picked:
            i += 2 if takes else 1
            continue
        if f == "--speculative-draft-model-revision":
            i += 2
            continue
        if f == "--speculative-draft-model-path":  # the Hub id back to the catalog draft the plan read
            e = find_entry(flags[i + 1])
            out += [f, e.id if e is not None else flags[i + 1]]
            i += 2
            continue
        out.append(f)
        i += 1
    return out


def test_the_eagle_draft_shortening_is_named_with_its_cost(capsys):
    d = json.loads(_run(capsys, [*CASES["eagle3-template-draft-0.5.12"], "--json"])[1])
    words = shlex.split(d["recommendation"]["command"])
    assert _flag_value(words, "--speculative-num-draft-tokens") == "2"
    assert ("a shorter draft than SGLang's default (steps 3 -> 1, draft tokens 4 -> 2): at most 2 tokens per "
            "verify step, not 4 (slower decoding when the draft guesses well)") in d["recommendation"]["why"]


def _numbers(text: str) -> list[int]:
    return [int(x.replace(",", "")) for x in re.findall(r"\d[\d,]*", text)]


def test_the_seed_case_says_how_the_fix_and_the_recommendation_relate(capsys):
    rc, out = _run(capsys, SEED)
    assert rc == 1
    text = " ".join(out.split())  # unwrapped
    fix = re.search(r"Fix: add --max-running-requests (\d+): .*?; (\d+) running requests, ([\d,]+) KV tokens", text)
    rel = re.search(r"Fix vs recommendation: the Fix \(--max-running-requests (\d+)\) is the one-flag change that "
                    r"boots your flags \((\d+) running, ([\d,]+) KV tokens\); the recommendation, the best the search "
                    r"found for your need, sets --max-running-requests (\d+) and (\d+) more flags: (\d+) running, "
                    r"([\d,]+) KV tokens\.", text)
    assert fix and rel, text
    assert _numbers(" ".join(fix.groups())) == _numbers(" ".join(rel.groups()[:3]))
    d = json.loads(_run(capsys, [*SEED, "--json"])[1])
    rec = d["recommendation"]
    words = shlex.split(rec["command"])
    assert int(rel.group(4)) == int(_flag_value(words, "--max-running-requests"))
    assert int(rel.group(5)) == len([t for c in rec["chosen"] for t in c.split() if t.startswith("--")]) - 1
    assert (int(rel.group(6)), int(rel.group(7).replace(",", ""))) == (rec["running"], rec["kv_tokens"])
    assert rel.group(1) != rel.group(4)  # the seed's Fix and recommendation differ: the line is what explains it

    _, out = _run(capsys, [*SEED, "--verbose"])  # --verbose prints both too, and says the same
    assert rel.group(0) in " ".join(out.split())

    rc, out = _run(capsys, [*SEED, "--no-search"])
    text = " ".join(out.split())
    assert rc == 1
    assert re.search(r"Fix vs search: the Fix \(--max-running-requests \d+\) is the one-flag change that boots your "
                     r"flags \(\d+ running, [\d,]+ KV tokens\); without --no-search the planner also "
                     r"searches the flags you left out", text), text


def test_no_relation_line_without_a_fix(capsys):
    _, out = _run(capsys, CASES["dense-user-flags-0.5.10"])
    assert "Fix vs" not in out


def test_prose_wrapping_keeps_a_flag_with_its_value():
    from planner.engines.sglang.report import wrap_lines  # noqa: PLC0415

    line = ("Runner-up (--mamba-radix-cache-strategy extra_buffer --disable-overlap-schedule --mem-fraction-static "
            "0.95 --max-mamba-cache-size 24): 199,898 KV tokens, 2.61 GiB spare vs 2.61.")
    for width in range(40, len(line)):
        lines = wrap_lines(line, width).split("\n")
        assert " ".join(x.strip() for x in lines) == line
        for x in lines[:-1]:
            assert not re.search(r"--(mamba-radix-cache-strategy|mem-fraction-static|max-mamba-cache-size)$", x), \
                (width, lines)


def test_trade_offs_of_a_smaller_graph_batch_page_and_prefill_chunk_and_none_when_equal():
    """trade_offs on plans built directly: each named cost is true of the two plans (the values printed are the
    resolved ones), and a recommendation equal to the base names nothing."""
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.hardware.profiles import load_profiles  # noqa: PLC0415
    from planner.engines.sglang.plan import make_plan  # noqa: PLC0415
    from planner.engines.sglang.search_spec import trade_offs  # noqa: PLC0415

    g = next(p for p in load_profiles() if p.id == "h100-sxm")
    m = resolve_model("qwen3-8b")
    base = make_plan(g, m, [], version="0.5.11")
    assert trade_offs(base, base, []) == []
    rec = make_plan(g, m, ["--cuda-graph-max-bs", "8", "--page-size", "64", "--chunked-prefill-size", "2048"],
                    version="0.5.11")
    costs = trade_offs(rec, base, [])
    r, g0 = rec.profile.max_running_requests, base.args.cuda_graph_max_bs
    assert r > 8 and g0 > 8
    assert f"CUDA graphs up to batch 8 instead of {g0} (SGLang's default): decode batches of 9-{r} run without " \
           "graphs (slower)" in costs
    assert "page size 64 instead of 1 (SGLang's default): prefixes are reused in whole pages of 64 tokens" in costs
    assert f"prefill chunks of 2,048 tokens, not SGLang's default {base.args.chunked_prefill_size:,} (slower first " \
           "token on long prompts)" in costs
    assert len(costs) == 3
    user = ["--chunked-prefill-size", "8192"]
    mine = make_plan(g, m, user, version="0.5.11")
    assert any(c.startswith("prefill chunks of 2,048 tokens, not yours 8,192") for c in trade_offs(rec, mine, user))
    # a graph batch at least the running requests costs nothing
    small = make_plan(g, m, ["--cuda-graph-max-bs", "8", "--max-running-requests", "8"], version="0.5.11")
    assert not any("CUDA graphs" in c for c in trade_offs(small, base, []))


def test_a_fix_that_changes_a_flag_the_recommendation_keeps_says_so(capsys):
    argv = [*SEED, "--max-running-requests", "40"]
    rc, out = _run(capsys, argv)
    text = " ".join(out.split())
    fix = re.search(r"Fix: add --max-running-requests (\d+):", text)
    rel = re.search(r"Fix vs recommendation: the Fix \(--max-running-requests (\d+)\) .*?sets (\d+) flags? and "
                    r"keeping your --max-running-requests 40: (\d+) running, ([\d,]+) KV tokens\.", text)
    assert rc == 1 and fix and rel, text
    assert fix.group(1) == rel.group(1) != "40"
    rec = json.loads(_run(capsys, [*argv, "--json"])[1])["recommendation"]
    assert _flag_value(shlex.split(rec["command"]), "--max-running-requests") == "40"
    assert int(rel.group(2)) == len([w for c in rec["chosen"] for w in c.split() if w.startswith("--")])
    assert (int(rel.group(3)), int(rel.group(4).replace(",", ""))) == (rec["running"], rec["kv_tokens"])


def test_a_config_json_prints_as_its_checkpoint_directory_and_replans_the_same(tmp_path, capsys):
    """SGLang loads a directory (or a Hub id), not a config.json: a launch from the user's config.json files
    prints their directories, and pasting the line back plans the same."""
    from planner.catalog.catalog import CONFIG_DIR  # noqa: PLC0415

    target, draft = tmp_path / "target", tmp_path / "draft"
    target.mkdir()
    draft.mkdir()
    (target / "config.json").write_bytes((CONFIG_DIR / "Qwen__Qwen3.6-27B.config.json").read_bytes())
    (draft / "config.json").write_bytes(
        (CONFIG_DIR / "sgl-project-SpecForge__qwen3.6-27b-dflash.config.json").read_bytes())
    argv = ["--gpu", "rtxpro6000", "--model", str(target / "config.json"), "--speculative-algorithm", "DFLASH",
            "--speculative-draft-model-path", str(draft / "config.json"), "--sglang-version", "0.5.23"]
    d = json.loads(_run(capsys, [*argv, "--json"])[1])
    rec = d["recommendation"]
    words = shlex.split(rec["command"])
    assert _flag_value(words, "--model-path") == str(target)
    assert _flag_value(words, "--speculative-draft-model-path") == str(draft)
    _, out = _run(capsys, argv)
    block = commands_in(out)[0]
    check_wrapped(block)
    assert shell_words("\n".join(b.strip() if i == 0 else b for i, b in enumerate(block))) == words
    parse_flags(RULES["0.5.23"].flags, words[3:])
    rc, out = _run(capsys, ["--gpu", "rtxpro6000", "--sglang-version", "0.5.23", "--no-search", "--json", "--",
                            *words])
    got = json.loads(out)
    assert (rc, got["verdict"], got["summary"]) == (0, "fits", rec["summary"])
