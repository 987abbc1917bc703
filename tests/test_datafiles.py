"""planner.datafiles.load_toml: the package's TOML files parsed once per content, kept as JSON beside the bytecode."""

from __future__ import annotations

import datetime as dt
import json
import sys
import tomllib
from pathlib import Path

import pytest

from planner import datafiles
from planner.datafiles import load_toml

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_TOML = [ROOT / "planner" / "catalog" / "catalog.toml", ROOT / "planner" / "engines" / "sglang" / "flag_audit.toml"]


@pytest.fixture
def kept_in(tmp_path, monkeypatch):
    """Bytecode (and the kept copies) under a private prefix, writing allowed."""
    prefix = tmp_path / "pyc"
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return prefix


@pytest.mark.parametrize("path", PACKAGE_TOML, ids=lambda p: p.name)
def test_package_files_load_as_tomllib_parses_them(path, kept_in):
    want = tomllib.loads(path.read_text(encoding="utf-8"))
    assert load_toml(path) == want  # parsed (and kept)
    assert list(kept_in.rglob(path.name + ".*.json")), "a copy is kept under the prefix"
    assert load_toml(path) == want  # from the kept copy


def test_the_kept_copy_is_read_and_an_edit_is_parsed_again(tmp_path, kept_in):
    f = tmp_path / "x.toml"
    f.write_text('a = 1\n[t]\nb = ["x", 2.5]\n', encoding="utf-8")
    assert load_toml(f) == {"a": 1, "t": {"b": ["x", 2.5]}}
    (kept,) = kept_in.rglob("x.toml.*.json")
    kept.write_text(json.dumps({"read": "from the copy"}), encoding="utf-8")
    assert load_toml(f) == {"read": "from the copy"}  # the same bytes: the copy is what is read
    f.write_text('a = 2\n', encoding="utf-8")
    assert load_toml(f) == {"a": 2}  # other bytes: parsed again


def test_nothing_is_kept_without_bytecode_writing_or_for_dates(tmp_path, monkeypatch):
    prefix = tmp_path / "pyc"
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    f = tmp_path / "y.toml"
    f.write_text("a = 1\n", encoding="utf-8")
    assert load_toml(f) == {"a": 1}
    assert not prefix.exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    g = tmp_path / "z.toml"
    g.write_text("when = 2024-01-02\n", encoding="utf-8")
    assert load_toml(g) == {"when": dt.date(2024, 1, 2)}  # JSON cannot give a date back: never kept
    assert not list(prefix.rglob("z.toml.*.json"))


def test_an_unwritable_folder_is_skipped(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setattr(sys, "pycache_prefix", str(blocker))  # mkdir under a file fails
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    f = tmp_path / "w.toml"
    f.write_text("a = 3\n", encoding="utf-8")
    assert load_toml(f) == {"a": 3}
    assert datafiles._plain({"a": [1, 2.0, "x", True, None]}) and not datafiles._plain({"a": dt.time(1, 2)})


def test_line_endings_read_as_path_read_text_reads_them(tmp_path, kept_in):
    f = tmp_path / "crlf.toml"
    f.write_bytes(b'a = """x\r\ny"""\r\nb = 1\r\n')
    assert load_toml(f) == tomllib.loads(f.read_text(encoding="utf-8")) == {"a": "x\ny", "b": 1}
