#!/usr/bin/env python3
"""Record what NVML says on a real GPU machine, for checking planner.hardware.nvml and hwprofiles/.

Prints one JSON document (and writes it to --out, default $OUT/nvml_check.json when $OUT is set), then the
``plan probe`` text. NVML only: no CUDA context is created. Fields:

* ``gpus``: ``read_gpus()`` for every GPU (dataclass fields, bytes);
* ``raw_memory``: per GPU, v2 and v1 ``nvmlDeviceGetMemoryInfo`` side by side (or the error each gave);
* ``host_min_total_mib``: the planner's model of SGLang's ``gpu_mem``;
* ``nvidia_smi``: SGLang's exact query (``--query-gpu=memory.total --format=csv,noheader,nounits``), parsed
  the way SGLang 0.5.11 parses it, so ``host_min_matches_smi`` tells whether the model holds here;
* ``profile_toml``: the profile ``plan probe --write-profile`` would write for each GPU.

Usage (repo root): ``python scripts/device_nvml_check.py [--out FILE] [--no-smi]``. Needs nvidia-ml-py
(and pydantic for profile matching; without it profile fields are empty). Exit 0 when NVML answered, 2 when not.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.hardware.nvml import (  # noqa: E402
    NvmlUnavailable,
    describe,
    host_min_total_mib,
    profile_toml_for,
    read_gpus,
)


def _nvidia_smi(query: str, timeout: float = 20.0) -> dict:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return {"error": "nvidia-smi not found"}
    cmd = [exe, f"--query-gpu={query}", "--format=csv,noheader,nounits"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"cmd": " ".join(cmd[1:]), "error": str(exc)}
    return {"cmd": " ".join(cmd[1:]), "rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr.strip()}


def _sglang_parse(stdout: str) -> float | None:
    """SGLang 0.5.11 get_nvgpu_memory_capacity: min of the lines that look like numbers."""
    vals = [float(m) for m in stdout.strip().split("\n") if re.match(r"^\d+(\.\d+)?$", m.strip())]
    return min(vals) if vals else None


def _raw_memory() -> list[dict]:
    """v2 and v1 memory info for every GPU, each call guarded on its own."""
    import pynvml as nv

    out: list[dict] = []
    nv.nvmlInit()
    try:
        for i in range(nv.nvmlDeviceGetCount()):
            h = nv.nvmlDeviceGetHandleByIndex(i)
            row: dict = {"index": i}
            for key, kwargs in (("v2", {"version": getattr(nv, "nvmlMemory_v2", None)}), ("v1", {})):
                try:
                    if key == "v2" and kwargs["version"] is None:
                        raise RuntimeError("binding has no nvmlMemory_v2")
                    m = nv.nvmlDeviceGetMemoryInfo(h, **kwargs)
                    row[key] = {f: int(getattr(m, f)) for f in ("total", "reserved", "free", "used") if hasattr(m, f)}
                except Exception as exc:  # noqa: BLE001
                    row[key] = {"error": f"{type(exc).__name__}: {exc}"}
            for name in ("nvmlDeviceGetMemoryBusWidth", "nvmlDeviceGetEccMode", "nvmlDeviceGetPciInfo"):
                try:
                    val = getattr(nv, name)(h)
                    if name == "nvmlDeviceGetPciInfo":
                        val = hex(val.pciDeviceId)
                    row[name] = val if isinstance(val, (int, str)) else list(val)
                except Exception as exc:  # noqa: BLE001
                    row[name] = f"error: {type(exc).__name__}: {exc}"
            out.append(row)
    finally:
        nv.nvmlShutdown()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the JSON here (default $OUT/nvml_check.json if $OUT is set)")
    ap.add_argument("--no-smi", action="store_true", help="skip the nvidia-smi cross-check")
    args = ap.parse_args()

    t0 = time.monotonic()
    doc: dict = {"python": sys.version.split()[0]}
    try:
        from importlib.metadata import version

        doc["nvidia_ml_py"] = version("nvidia-ml-py")
    except Exception as exc:  # noqa: BLE001
        doc["nvidia_ml_py"] = f"unknown ({exc})"

    rc = 0
    gpus = []
    try:
        gpus = read_gpus()
    except NvmlUnavailable as exc:
        doc["error"] = str(exc)
        rc = 2
    doc["gpus"] = [dataclasses.asdict(g) for g in gpus]
    doc["host_min_total_mib"] = host_min_total_mib(gpus)
    if gpus:
        try:
            doc["raw_memory"] = _raw_memory()
        except Exception as exc:  # noqa: BLE001
            doc["raw_memory"] = f"error: {type(exc).__name__}: {exc}"
        doc["profile_toml"] = {}
        for g in gpus:
            try:
                doc["profile_toml"][str(g.index)] = profile_toml_for(g)
            except Exception as exc:  # noqa: BLE001
                doc["profile_toml"][str(g.index)] = f"error: {exc}"
    if not args.no_smi:
        smi = _nvidia_smi("memory.total")
        smi["sglang_gpu_mem"] = _sglang_parse(smi.get("stdout", "")) if smi.get("rc") == 0 else None
        doc["nvidia_smi"] = {
            "sglang_query": smi,
            "detail": _nvidia_smi("index,name,memory.total,memory.reserved,memory.used,memory.free,"
                                  "compute_cap,ecc.mode.current,mig.mode.current,driver_version"),
        }
        if smi["sglang_gpu_mem"] is not None:
            doc["host_min_matches_smi"] = smi["sglang_gpu_mem"] == doc["host_min_total_mib"]
    doc["describe"] = describe(gpus) if gpus else doc.get("error", "")
    doc["wall_s"] = round(time.monotonic() - t0, 3)

    text = json.dumps(doc, indent=2, default=str)
    print(text)
    print()
    print(doc["describe"])
    out = args.out or (os.path.join(os.environ["OUT"], "nvml_check.json") if os.environ.get("OUT") else None)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text + "\n", encoding="utf-8")
    return rc


if __name__ == "__main__":
    sys.exit(main())
