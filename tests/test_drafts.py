"""--speculative-draft-model-path: catalog drafts (kind, targets, sources), config / checkpoint / Hub drafts,
their weights, bad names, and `plan models` (issue 14 item 4)."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from planner.catalog.catalog import CONFIG_DIR, find_entry, load_catalog, resolve_model
from planner.catalog.drafts import (
    KINDS,
    catalog_drafts,
    draft_kind,
    fit_problems,
    head_weight_bytes,
    listing,
    resolve_draft,
)
from planner.cli import main
from planner.errors import BadInput
from planner.engines.sglang.plan import draft_from_flags

ROOT = Path(__file__).resolve().parents[1]
GIB = 2**30
DFLASH_36 = CONFIG_DIR / "sgl-project-SpecForge__qwen3.6-27b-dflash.config.json"


def one_line_error(capsys, code, expect_code=2):
    out = capsys.readouterr()
    assert code == expect_code, out.err
    assert out.err.count("\n") == 1 and "Traceback" not in out.err
    return out.err


# ----------------------------------------------------------------------------- the catalog's drafts


@pytest.mark.parametrize("entry", catalog_drafts(), ids=lambda e: e.id)
def test_every_catalog_draft_has_its_kind_targets_and_source(entry):
    d = resolve_draft(entry.id)
    assert entry.kind in KINDS and d.kind == entry.kind
    assert draft_kind(d.spec) == entry.kind  # the kind the catalog states is the one its architecture implies
    assert entry.targets and entry.note and entry.verbatim in ("D", "R")
    for t in entry.targets:
        target = find_entry(t)
        assert target is not None and not target.draft, t
        assert fit_problems(d.spec, resolve_model(t).spec) == [], (entry.id, t)
    assert d.weight_bytes > 0 and d.weight_source in ("head-model", "estimate")


def test_training_templates_say_so():
    """The SpecForge configs are training templates (level D): every one's note says it."""
    templates = [e for e in catalog_drafts() if e.file.startswith("sgl-project-SpecForge__")]
    assert len(templates) == 8
    for e in templates:
        assert e.verbatim == "D" and "template" in e.note, e.id


def test_dflash_head_model_gives_the_published_size_of_the_z_lab_qwen36_head():
    """z-lab/Qwen3.6-27B-DFlash: '3.22 GiB safetensors' (rev 0919688..., code corpus id 59727553214); the head's
    tensors counted from the config (no embedding, no LM head) give exactly that to 2 decimals."""
    d = resolve_draft("qwen3.6-27b-dflash")
    assert d.weight_source == "head-model"
    assert round(d.weight_bytes / GIB, 2) == 3.22
    assert d.weight_bytes == 3_460_426_240  # 1,730,213,120 params x 2 B (bf16)
    # the older template's geometry does not give the published z-lab/Qwen3.5-27B-DFlash size (also 3.22 GiB):
    # the catalog says so instead of standing in for that head
    old = resolve_draft("qwen3.5-27b-dflash")
    assert round(old.weight_bytes / GIB, 2) != 3.22
    assert "NOT the published z-lab/Qwen3.5-27B-DFlash" in old.note
    assert find_entry("z-lab/Qwen3.5-27B-DFlash") is None  # so that Hub id goes to the Hub


def test_head_model_counts_only_the_head_not_an_embedding_or_lm_head():
    spec = resolve_draft("qwen3.6-27b-dflash").spec
    n, how = head_weight_bytes(spec)
    h, vocab = spec.hidden_size, spec.vocab_size
    assert "no embedding / LM head" in how
    # the generic architecture estimate counts an embedding and an LM head (2 x vocab x hidden, bf16) on top
    from planner.catalog.weights import estimate_weight_bytes  # noqa: PLC0415

    assert estimate_weight_bytes(spec).total - n > vocab * h * 2  # (less the fc it lacks)
    # DSpark adds its Markov head (2 x vocab x rank) to the same trunk; the float32 confidence head (weight, bias and
    # the sts_temperatures buffer) only where SGLANG_RAGGED_VERIFY_MODE is not its default "static"
    # (srt/models/dspark.py:424-440, 487-489 @0.5.23; tests/golden/spec/dspark/heads-0.5.23.json)
    ds = resolve_draft("qwen3.8-27b-dspark")
    assert ds.weight_bytes == 3_460_426_240 + 2 * 248320 * 256 * 2
    capped, _ = head_weight_bytes(ds.spec, {"SGLANG_RAGGED_VERIFY_MODE": "cap-accept"})
    assert capped == ds.weight_bytes + (5120 + 256 + 1 + 1) * 4
    assert head_weight_bytes(resolve_draft("qwen3-8b-eagle3").spec) is None  # not a DFLASH/DSPARK head


def test_the_published_hub_id_of_a_catalog_head_resolves_offline_to_it():
    by_hub = resolve_draft("z-lab/Qwen3.6-27B-DFlash")
    assert by_hub.catalog_id == "qwen3.6-27b-dflash" and by_hub.kind == "DFLASH"
    assert resolve_draft("Qwen3.6-27B-DFlash").catalog_id == "qwen3.6-27b-dflash"


def test_a_catalog_model_is_a_standalone_draft_with_its_exact_weights():
    d = resolve_draft("qwen3.5-9b")
    assert d.kind == "STANDALONE" and d.weight_source == "catalog" and d.weight_bytes == 19_306_216_416
    assert fit_problems(d.spec, resolve_model("qwen3.6-27b").spec) == []  # same vocabulary
    assert fit_problems(d.spec, resolve_model("qwen3-8b").spec) == ["vocab_size 248320 != the target's 151936"]


def test_fit_problems_name_what_does_not_match():
    dflash = resolve_draft("qwen3.6-27b-dflash").spec
    problems = fit_problems(dflash, resolve_model("qwen3-8b").spec)
    assert any(p.startswith("hidden_size 5120") for p in problems)
    assert any(p.startswith("vocab_size 248320") for p in problems)
    assert any(p.startswith("num_target_layers 64") for p in problems)
    assert fit_problems(dflash, resolve_model("qwen3.5-27b").spec) == []  # same geometry as 3.6-27B


def test_kinds_follow_sglangs_draft_classes():
    base = json.loads(DFLASH_36.read_text())
    for arch, kind in [("DFlashDraftModel", "DFLASH"), ("DFlash2DraftModel", "DFLASH"),
                       ("DSparkDraftModel", "DSPARK"), ("Qwen3DSparkModel", "DSPARK"),
                       ("LlamaForCausalLMEagle3", "EAGLE3"), ("LlamaForCausalLMEagle", "EAGLE"),
                       ("Qwen3ForCausalLM", "STANDALONE")]:
        from planner.catalog.spec import ModelSpec  # noqa: PLC0415

        assert draft_kind(ModelSpec.from_hf_config({**base, "architectures": [arch]})) == kind, arch


# ----------------------------------------------------------------------------- local files and checkpoints


def _safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> int:
    """A safetensors file whose header is real and whose data is zeros; returns the payload bytes."""
    size = {"BF16": 2, "F32": 4}
    header, off = {}, 0
    for name, (dtype, shape) in tensors.items():
        n = size[dtype]
        for s in shape:
            n *= s
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * off)
    return off


def test_a_config_json_draft_gets_the_head_model(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(DFLASH_36.read_text())
    d = resolve_draft(str(cfg))
    assert d.kind == "DFLASH" and d.catalog_id is None and d.weight_source == "head-model"
    assert d.weight_bytes == 3_460_426_240


def test_a_checkpoint_dir_draft_is_exact_from_its_index_then_its_headers(tmp_path):
    ck = tmp_path / "my-dflash"
    ck.mkdir()
    (ck / "config.json").write_text(DFLASH_36.read_text())
    payload = _safetensors(ck / "model.safetensors", {"fc.weight": ("BF16", [64, 320]),
                                                       "norm.weight": ("BF16", [64])})
    d = resolve_draft(str(ck))
    assert d.weight_source == "safetensors-headers" and d.weight_bytes == payload == 64 * 320 * 2 + 128
    (ck / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 3_460_426_240}}))
    d = resolve_draft(str(ck))
    assert d.weight_source == "safetensors-index" and d.weight_bytes == 3_460_426_240


def test_draft_from_flags_carries_kind_and_weights_on_the_spec(tmp_path):
    spec = draft_from_flags(["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "qwen3.6-27b-dflash"])
    assert spec.draft_kind == "DFLASH" and spec.checkpoint_weight_bytes == 3_460_426_240
    assert spec.checkpoint_weight_source.startswith("head-model: computed from the head's config")
    spec = draft_from_flags(["--speculative-draft-model-path=qwen3.5-9b"])
    assert spec.draft_kind == "STANDALONE" and spec.checkpoint_weight_bytes == 19_306_216_416
    assert draft_from_flags(["--speculative-algorithm", "EAGLE"]) is None
    assert resolve_model("qwen3.6-27b").spec.draft_kind is None  # a target carries none


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("name,expect", [
    ("qwen3.6-27b-dflsh", "did you mean: qwen3.6-27b-dflash"),
    ("qwen3-8b-eagel3", "did you mean: qwen3-8b-eagle3"),
    ("./no/such/draft", "no such file or directory: './no/such/draft'"),
    ("nosuch.json", "no such file or directory: 'nosuch.json'"),
])
def test_a_bad_draft_is_one_line_naming_the_flag(capsys, name, expect):
    code = main(["--gpu", "h200", "--model", "qwen3-8b", "--no-search", "--speculative-algorithm", "EAGLE3",
                 "--speculative-draft-model-path", name])
    err = one_line_error(capsys, code)
    assert "--speculative-draft-model-path:" in err and expect in err


def test_a_bad_draft_config_names_the_flag(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    with pytest.raises(BadInput, match=r"^--speculative-draft-model-path: .*not valid JSON"):
        resolve_draft(str(bad))


def test_a_catalog_eagle3_head_still_plans_through_the_cli(capsys):
    code = main(["--gpu", "h200", "--model", "qwen3-8b", "--no-search", "--speculative-algorithm", "EAGLE3",
                 "--speculative-draft-model-path", "qwen3-8b-eagle3"])
    out = capsys.readouterr()
    assert code in (0, 1), out.err


def test_the_dflash_head_of_the_issue_resolves_offline_before_any_refusal(capsys):
    """`plan --gpu rtxpro6000 --model qwen3.6-27b --speculative-algorithm DFLASH --speculative-draft-model-path
    z-lab/Qwen3.6-27B-DFlash`: the draft resolves from the catalog without the Hub; whatever the planner then
    says (a verdict: DFLASH is modelled), it is never about reading the draft."""
    code = main(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--no-search", "--speculative-algorithm",
                 "DFLASH", "--speculative-draft-model-path", "z-lab/Qwen3.6-27B-DFlash"])
    out = capsys.readouterr()
    assert code in (0, 1) and "Traceback" not in out.err  # a verdict, not a refusal
    assert "--speculative-draft-model-path" not in out.err and "Hugging Face" not in out.err


# ----------------------------------------------------------------------------- plan models


def test_plan_models_lists_the_drafts_apart_with_kind_and_targets(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    models, drafts = out.split("Drafts (--speculative-draft-model-path")
    assert "qwen3.6-27b " in models and "-dflash" not in models and "-eagle3" not in models
    for e in catalog_drafts():
        line = next(x for x in drafts.splitlines() if x.strip().startswith(e.id + " "))
        assert e.kind in line and ", ".join(e.targets) in line
    assert out.startswith(listing() + "\n\nCoverage (")  # then the coverage table (tests/test_coverage.py)
    assert main(["models", "--bogus"]) == 2


def test_listing_counts():
    entries = load_catalog()
    assert sum(e.draft for e in entries) == len(catalog_drafts()) == 10
    assert {e.kind for e in catalog_drafts()} == {"EAGLE3", "DFLASH", "DSPARK"}


# ----------------------------------------------------------------------------- a Hub id through the HF cache


_HUB_DRIVER = r"""
import json, sys
from planner.catalog.drafts import resolve_draft
d = resolve_draft(sys.argv[1])
print(json.dumps({"kind": d.kind, "bytes": d.weight_bytes, "source": d.weight_source, "detail": d.weight_detail,
                  "catalog": d.catalog_id}))
"""


def test_a_hub_id_draft_reads_the_hf_cache_offline(tmp_path):
    """org/name not in the catalog: the draft's config.json and index from the standard HF cache layout, offline
    (the same path --model takes: planner.catalog.hub)."""
    repo_id, sha = "test-org/Qwen3.6-27B-DFlash-mine", "0" * 39 + "1"
    repo = tmp_path / "hf" / "hub" / f"models--{repo_id.replace('/', '--')}"
    (repo / "blobs").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(sha)
    snap = repo / "snapshots" / sha
    snap.mkdir(parents=True)
    files = {"config.json": DFLASH_36.read_bytes(),
             "model.safetensors.index.json": json.dumps({"metadata": {"total_size": 3_460_426_240}}).encode()}
    for name, content in files.items():
        etag = hashlib.sha1(content).hexdigest()
        (repo / "blobs" / etag).write_bytes(content)
        (snap / name).symlink_to(Path("..") / ".." / "blobs" / etag)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _HUB_DRIVER, repo_id], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got == {"kind": "DFLASH", "bytes": 3_460_426_240, "source": "safetensors-index",
                   "detail": got["detail"], "catalog": None}
    assert "HF cache" in got["detail"]
    proc = subprocess.run([sys.executable, "-c", _HUB_DRIVER, "test-org/not-cached"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "--speculative-draft-model-path:" in proc.stderr
