"""The coverage table (planner/engines/sglang/coverage.py): ``plan models`` prints it after the catalog and the
README shows that output (tests/test_readme.py keeps the excerpt current). Here: it cannot go stale against the
code that decides what is planned."""

from __future__ import annotations

from planner.catalog.quant import MODELLED_METHODS
from planner.catalog.quant_support import MEASURED_WEIGHTS_METHODS
from planner.cli import main
from planner.engines.sglang.coverage import FAMILIES, coverage_text, uncovered
from planner.engines.sglang.rules import RULES
from planner.engines.sglang.support import TARGET_ARCHS


def test_every_supported_architecture_sits_in_exactly_one_family():
    assert not uncovered()
    seen = [a for _, archs in FAMILIES for a in archs]
    assert len(seen) == len(set(seen))
    assert set(seen) == set(TARGET_ARCHS)  # no family names an architecture support.py refuses


def test_the_table_names_every_architecture_method_and_the_release_range():
    text = coverage_text()
    for arch in TARGET_ARCHS:
        assert arch in text, arch
    for method in (*MODELLED_METHODS, *MEASURED_WEIGHTS_METHODS):
        assert method in text, method
    versions = list(RULES)
    assert f"SGLang {versions[0]}-{versions[-1]}" in text
    assert "0.5.10-0.5.23  MiniMaxM2ForCausalLM" in text  # support.ARCH_FIRST_RELEASE
    assert max(len(line) for line in text.splitlines()) <= 100


def test_plan_models_ends_with_the_table(capsys):
    assert main(["models"]) == 0
    assert capsys.readouterr().out.rstrip("\n").endswith(coverage_text())
