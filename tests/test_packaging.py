"""What a non-editable install (CI's, a user's `pip install .`) carries: every package under planner/ is listed in
pyproject.toml, and every data file the code reads is in its package-data. An editable install hides a miss (it reads
the source tree), which is how planner/cache_kinds and config_audit.toml were once left out."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETUP = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _dir(package: str) -> Path:
    mapped = SETUP.get("package-dir", {}).get(package)
    return ROOT / mapped if mapped else ROOT / package.replace(".", "/")


def test_every_package_is_listed():
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "planner").rglob("__init__.py")}
    assert found <= set(SETUP["packages"]), sorted(found - set(SETUP["packages"]))


def test_every_data_file_is_package_data():
    missing = []
    for package in SETUP["packages"]:
        base = _dir(package)
        patterns = SETUP.get("package-data", {}).get(package, [])
        for f in base.rglob("*"):
            if not f.is_file() or f.suffix in (".py", ".pyc") or "__pycache__" in f.parts:
                continue
            rel = f.relative_to(base).as_posix()
            if "/" in rel and (base / rel.split("/")[0] / "__init__.py").exists():
                continue  # a sub-package's file: checked under that package
            if not any(fnmatch.fnmatch(rel, pat) for pat in patterns):
                missing.append(f"{package}: {rel}")
    assert not missing, missing
