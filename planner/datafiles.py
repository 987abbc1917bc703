"""The package's TOML data files, parsed once per content and kept as JSON beside the bytecode.

``tomllib`` takes milliseconds per file (the flag audit alone ~5 ms), every run. :func:`load_toml` parses a
file once and keeps the result where Python keeps the module's bytecode (``__pycache__`` next to the file,
or under ``sys.pycache_prefix``), named by the file's CRC-32 and length, so an edited file is parsed again;
like bytecode it is not written when ``sys.dont_write_bytecode`` (``PYTHONDONTWRITEBYTECODE``) is set or the
folder is not writable, and then every run parses the TOML. Only data JSON holds exactly (strings, numbers,
booleans, arrays, tables) is kept; anything else is parsed each time.
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from pathlib import Path
from typing import Any


def load_toml(path: Path) -> dict[str, Any]:
    """``tomllib.loads`` of the file (UTF-8), from the kept copy when it is of the same bytes."""
    raw = path.read_bytes()
    kept = _kept_path(path, raw)
    if kept is not None:
        try:
            return json.loads(kept.read_bytes())
        except (OSError, ValueError):
            pass
    import tomllib  # noqa: PLC0415

    # as Path.read_text reads it: universal newlines (\r\n and a lone \r become \n)
    data = tomllib.loads(raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"))
    if kept is not None and not sys.dont_write_bytecode and _plain(data):
        _write(kept, json.dumps(data, ensure_ascii=False, allow_nan=True))
    return data


def _kept_path(path: Path, raw: bytes) -> Path | None:
    name = f"{path.name}.{zlib.crc32(raw):08x}.{len(raw)}.json"
    folder = path.resolve().parent
    prefix = sys.pycache_prefix
    if prefix:
        return Path(prefix) / folder.relative_to(folder.anchor) / name
    return folder / "__pycache__" / name


def _plain(value: Any) -> bool:
    """Whether JSON gives this value back exactly (TOML dates and times it does not)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


def _write(kept: Path, text: str) -> None:
    """Write atomically; a folder that cannot be written is skipped (the next run parses the TOML again)."""
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        tmp = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, kept)
    except OSError:
        pass
