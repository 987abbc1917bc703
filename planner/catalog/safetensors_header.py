"""Reading one safetensors file's JSON header, never its tensor data (used for local checkpoints and the
Hub's cached shards alike)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from planner.errors import BadInput


def safetensors_payload_bytes(path: Path) -> int:
    """Tensor bytes of one safetensors file, from its JSON header (no tensor data is read).

    Format: 8-byte little-endian header length N, N bytes of JSON mapping each tensor to
    ``{"dtype", "shape", "data_offsets": [begin, end]}`` (plus optional ``__metadata__``).
    """
    try:
        with path.open("rb") as fh:
            raw = fh.read(8)
            if len(raw) != 8:
                raise ValueError("file shorter than 8 bytes")
            (n,) = struct.unpack("<Q", raw)
            if n > 100_000_000:
                raise ValueError(f"header length {n} is implausible")
            header = json.loads(fh.read(n))
    except (OSError, ValueError) as exc:
        raise BadInput(f"--model: {path.name} is not a readable safetensors file ({exc})") from None
    total = 0
    for key, meta in header.items():
        if key == "__metadata__":
            continue
        try:
            begin, end = meta["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise BadInput(f"--model: {path.name}: tensor '{key}' has no data_offsets") from None
        total += int(end) - int(begin)
    return total
