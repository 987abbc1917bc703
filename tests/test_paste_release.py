"""The SGLang release a pasted launch command runs (issue 23, item 3): a docker image tag, ``uv run --with
sglang==X``, ``pip install sglang==X && ...``; an explicit --sglang-version wins and says so."""

from __future__ import annotations

import json

import pytest

from planner.cli import main
from planner.paste import release_of_paste, split_paste_form

LAUNCH = "python3 -m sglang.launch_server --model-path Qwen/Qwen3.6-27B"
SEED = ("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4 --mamba-scheduler-strategy extra_buffer")


@pytest.mark.parametrize(("pasted", "release"), [
    (f"docker run --gpus all -p 30000:30000 lmsysorg/sglang:v0.5.11-cu129 {LAUNCH}", "0.5.11"),
    (f"docker run --gpus all --ipc=host -e HF_TOKEN=x lmsysorg/sglang:v0.5.9 {LAUNCH}", "0.5.9"),
    (f"docker run --gpus all docker.io/lmsysorg/sglang:v0.5.13-cu126-amd64 {LAUNCH}", "0.5.13"),
    (f"docker run --gpus all lmsysorg/sglang:v0.5.10.post1-cu126 {LAUNCH}", "0.5.10.post1"),
    (f"docker run --gpus all lmsysorg/sglang:latest {LAUNCH}", None),
    (f"docker run --gpus all lmsysorg/sglang {LAUNCH}", None),  # no tag: docker pulls latest
    (f"docker run --gpus all myorg/inference:v0.5.11 {LAUNCH}", None),  # not an SGLang image
    (f"uv run --with sglang==0.5.11 {LAUNCH}", "0.5.11"),
    (f"uv run --with 'sglang[all]==0.5.12' {LAUNCH}", "0.5.12"),
    (f"uv run --with=numpy,sglang==0.5.14 {LAUNCH}", "0.5.14"),
    (f"pip install sglang==0.5.11 && {LAUNCH}", "0.5.11"),
    (f"pip install 'sglang[all]==0.5.13'; {LAUNCH}", "0.5.13"),
    (f"uv run --with 'sglang>=0.5.11' {LAUNCH}", "unpinned"),  # a range pins no release
])
def test_release_of_paste(pasted, release):
    got = release_of_paste([pasted])
    if release == "unpinned":
        assert got is None
    else:
        assert got is not None and got[0] == release
    # the launch itself still parses: the setup command before && / ; is not the launch
    model, flags, _ = split_paste_form([pasted])
    assert model == "Qwen/Qwen3.6-27B" and flags == []


def test_nothing_names_a_release():
    assert release_of_paste([LAUNCH]) is None


def _plan_json(capsys, argv):
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def test_docker_tag_plans_under_its_release(capsys):
    """The seed launch pasted with the 0.5.11 image fails as 0.5.11 does (0.5.23's rules would boot it)."""
    code, d = _plan_json(capsys, ["--gpu", "rtxpro6000", "--no-search", "--json", "--",
                                  f"docker run --gpus all lmsysorg/sglang:v0.5.11-cu129 {LAUNCH} {SEED}"])
    assert d["sglang_version"] == "0.5.11"
    assert "lmsysorg/sglang:v0.5.11-cu129" in d["sglang_version_source"]
    assert code == 1 and d["verdict"] == "startup_failed"


def test_uv_with_pin_plans_under_its_release(capsys):
    code, d = _plan_json(capsys, ["--gpu", "rtxpro6000", "--no-search", "--json", "--",
                                  f"uv run --with sglang==0.5.12 {LAUNCH}"])
    assert d["sglang_version"] == "0.5.12" and "--with sglang==0.5.12" in d["sglang_version_source"]


def test_post_release_tag_uses_its_base_rules_and_says_so(capsys):
    _, d = _plan_json(capsys, ["--gpu", "rtxpro6000", "--no-search", "--json", "--",
                               f"pip install sglang==0.5.10.post1 && {LAUNCH}"])
    assert d["sglang_version"] == "0.5.10" and "0.5.10.post1" in d["sglang_version_source"]


def test_explicit_version_wins_over_the_tag_and_says_so(capsys):
    _, d = _plan_json(capsys, ["--gpu", "rtxpro6000", "--no-search", "--json", "--sglang-version", "0.5.12", "--",
                               f"docker run --gpus all lmsysorg/sglang:v0.5.11-cu129 {LAUNCH}"])
    assert d["sglang_version"] == "0.5.12"
    assert any("--sglang-version 0.5.12 wins over" in n and "0.5.11" in n for n in d["notes"])


def test_latest_tag_names_no_release(capsys):
    _, d = _plan_json(capsys, ["--gpu", "rtxpro6000", "--no-search", "--json", "--sglang-version", "0.5.13", "--",
                               f"docker run --gpus all lmsysorg/sglang:latest {LAUNCH}"])
    assert d["sglang_version"] == "0.5.13"
    _, d = _plan_json(capsys, ["--gpu", "rtxpro6000", "--no-search", "--json", "--",
                               f"docker run --gpus all lmsysorg/sglang:latest {LAUNCH}"])
    assert any("lmsysorg/sglang:latest names no release" in n for n in d["notes"])


def test_unmodelled_release_in_a_tag_is_one_line_bad_input(capsys):
    code = main(["--gpu", "rtxpro6000", "--no-search", "--",
                 f"docker run --gpus all lmsysorg/sglang:v0.5.8-cu126 {LAUNCH}"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "lmsysorg/sglang:v0.5.8-cu126" in err and "--sglang-version" in err
