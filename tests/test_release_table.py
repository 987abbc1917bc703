"""docs/release-rules.md is generated from the rule switches, and every switch says what and where."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from planner.engines.sglang.rules import RULES, Rules
from planner.engines.sglang.rules.table import release_table, switch_docs, switch_readers

DOC = Path(__file__).resolve().parent.parent / "docs" / "release-rules.md"
SWITCHES = [f.name for f in fields(Rules) if f.name not in ("version", "flags")]


def test_committed_table_is_the_generated_one():
    assert DOC.read_text() == release_table() + "\n", \
        "docs/release-rules.md is stale: python -m planner.engines.sglang.rules.table > docs/release-rules.md"


def test_every_switch_cites_the_release_and_line_it_follows():
    docs = switch_docs()
    missing = [n for n in SWITCHES if "@0.5." not in docs.get(n, "")]
    assert not missing, f"switches without a 'srt/...py:LINE @release' citation: {missing}"


def test_every_switch_is_read_by_the_planner():
    unread = [n for n, where in switch_readers().items() if not where]
    assert not unread, f"switches nothing reads: {unread}"


def test_no_switch_is_named_after_a_release():
    assert not [n for n in SWITCHES if "0_5_" in n]


def test_the_table_answers_what_changed_in_0_5_20():
    section = release_table().split("## 0.5.20 (vs 0.5.19)")[1].split("\n## ")[0]
    changed = [n for n in SWITCHES if getattr(RULES["0.5.20"], n) != getattr(RULES["0.5.19"], n)]
    assert changed and all(f"| `{n}` |" in section for n in changed)
    assert "tier_20_35_gib_4096" in changed
