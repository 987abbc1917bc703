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
            body = fh.read(n)
            if len(body) != n:
                raise ValueError(f"the header is cut short: {len(body)} of {n} bytes")
            header = json.loads(body.decode("utf-8"))  # UnicodeDecodeError, JSONDecodeError: ValueErrors
    except IsADirectoryError:
        raise BadInput(f"--model: {path.name} is a directory, not a safetensors file") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise BadInput(f"--model: {path.name} is not a readable safetensors file ({str(exc)[:120]})") from None
    if not isinstance(header, dict):
        raise BadInput(f"--model: {path.name}: the safetensors header must be a JSON object of tensors, "
                       f"got {type(header).__name__}")
    total = 0
    for key, meta in header.items():
        if key == "__metadata__":
            continue
        offsets = meta.get("data_offsets") if isinstance(meta, dict) else None
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in offsets)
                or offsets[1] < offsets[0]):
            raise BadInput(f"--model: {path.name}: tensor '{str(key)[:60]}' needs data_offsets [begin, end], two "
                           f"byte offsets with begin <= end, got {str(offsets)[:40]}")
        total += offsets[1] - offsets[0]
    return total
