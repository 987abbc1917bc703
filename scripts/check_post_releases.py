"""Compare each SGLang ``.postN`` wheel with its base release in the files the planner's rules mirror.

Usage (each folder an unzipped wheel, holding ``sglang/``)::

    pip download --no-deps sglang==0.5.10 -d /tmp/post/0.5.10 && (cd /tmp/post/0.5.10 && unzip -q *.whl)
    pip download --no-deps sglang==0.5.10.post1 -d /tmp/post/0.5.10.post1 && (cd ... && unzip -q *.whl)
    python scripts/check_post_releases.py /tmp/post > planner/engines/sglang/post_releases.json

Two files are "the same" when their Python code is: ``ast.dump`` of the module with every docstring
removed (comments never reach the AST). The output records, per post release, the mirrored files
compared, those that differ in code, and those that differ only in comments / docstrings.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from planner.engines.sglang.post_releases import MIRRORED, is_mirrored  # noqa: E402


def _code(path: Path) -> str:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def _files(root: Path) -> set[str]:
    srt = root / "sglang"
    return {p.relative_to(srt).as_posix() for p in srt.rglob("*.py") if is_mirrored(p.relative_to(srt).as_posix())}


def compare(base_dir: Path, post_dir: Path) -> dict:
    a, b = _files(base_dir), _files(post_dir)
    code, text_only = [], []
    for rel in sorted(a & b):
        pa, pb = base_dir / "sglang" / rel, post_dir / "sglang" / rel
        if pa.read_bytes() == pb.read_bytes():
            continue
        (text_only if _code(pa) == _code(pb) else code).append(rel)
    return {"same": not code and a == b, "differ": code, "only_added_or_removed": sorted(a ^ b),
            "differ_in_comments_only": text_only, "files_checked": sorted(a | b)}


def main(root: str) -> None:
    out = {"mirrored": list(MIRRORED), "compare": "ast.dump without docstrings", "releases": {}}
    for post in sorted(Path(root).iterdir()):
        if ".post" not in post.name:
            continue
        base = post.name.split(".post")[0]
        rec = compare(Path(root) / base, post)
        out["releases"][post.name] = {"base": base, **rec}
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
