"""The vLLM oracle's answers as a sizer for the vLLM front-end tests (search, verdict, check).

Every launch the front end sizes in these tests (the launch itself and every candidate the search tries) was run
through the vLLM oracle (``../shared/tools/vllm-oracle``: vLLM 0.33.0 / 0.34.0's own sizing code on CPU) with the
same device and measured inputs; its ``summary`` is committed in ``tests/data/vllm_frontend/oracle-<release>.jsonl.gz``
keyed by the case. A launch not in the file raises: a test never sees a number the oracle did not give.

Regenerate (runs each scenario, sizes what it asks for with the oracle in batch, until nothing is missing):

    VLLM_ORACLE=/work/shared/tools/vllm-oracle python tests/vllm_fixture.py
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "vllm_frontend"
GIB = 1 << 30


def case_of(launch) -> dict:
    """The oracle case (its input names) for one VllmLaunch; the model's config.json inline."""
    d, m = launch.device, launch.measured
    case = {"config_json": launch.spec.raw, "flags": list(launch.flags), "gpu_total_mib": d.gpu_total_mib,
            "cuda_total_gib": d.cuda_total_bytes / GIB, "gpu_sm": d.sm, "gpu_name": d.name, "gpu_count": d.count,
            "cuda_version": d.cuda_version, "vmm": "yes" if d.vmm else "no"}
    for k, v in asdict(m).items():
        if v is not None:
            case[k] = v
    if launch.env:
        case["env"] = dict(launch.env)
    return case


def key_of(version: str, case: dict) -> str:
    blob = json.dumps({"v": version, **case}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


class OracleSizer:
    """A ``planner.engines.vllm.search.Sizer`` answering from the committed oracle results."""

    def __init__(self, record: bool = False):
        self.results: dict[str, dict] = {}
        self.missing: dict[str, tuple[str, dict]] = {}
        self.record = record
        for p in sorted(DATA.glob("oracle-*.jsonl.gz")):
            for line in gzip.open(p, "rt").read().splitlines():
                r = json.loads(line)
                self.results[r["key"]] = r
        self.calls = 0
        self.used: set[str] = set()

    def __call__(self, launch):
        self.calls += 1
        case = case_of(launch)
        key = key_of(launch.version, case)
        if key in self.results:
            self.used.add(key)
            return dict(self.results[key]["summary"]), []
        if not self.record:
            raise KeyError(f"no oracle result for {launch.version} {list(launch.flags)} (regenerate: "
                           "python tests/vllm_fixture.py)")
        self.missing[key] = (launch.version, case)
        return {"summary_version": 1, "outcome": "oracle_error", "error_message": "not yet run"}, []


def no_estimates(ctx, launch):
    return {}


def _run_oracle(version: str, cases: dict[str, dict]) -> list[dict]:
    oracle = Path(os.environ.get("VLLM_ORACLE", "/work/shared/tools/vllm-oracle"))
    py = Path.home() / ".cache" / "vllm-oracle" / version / "venv" / "bin" / "python"
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for key, case in cases.items():
            f.write(json.dumps({"id": key, **case}) + "\n")
    out = subprocess.run(["nice", "-n", "10", str(py), str(oracle / "oracle.py"), "--batch", f.name,
                          "--summary-only"], capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _prune(sizer: OracleSizer) -> None:
    """Keep only the answers the scenarios use (the files hold nothing a test does not read)."""
    for p in sorted(DATA.glob("oracle-*.jsonl.gz")):
        keep = [line for line in gzip.open(p, "rt").read().splitlines() if json.loads(line)["key"] in sizer.used]
        keep.sort()
        with gzip.GzipFile(p, "wb", mtime=0) as f:  # mtime 0: the same answers give the same bytes
            f.write("".join(line + "\n" for line in keep).encode())


def regenerate(scenarios) -> None:
    """Run every scenario with a recording sizer until the oracle has answered every launch it sizes."""
    DATA.mkdir(parents=True, exist_ok=True)
    for _ in range(8):
        sizer = OracleSizer(record=True)
        for run in scenarios:
            try:
                run(sizer)
            except Exception as exc:  # noqa: BLE001 -- placeholders make verdicts fail until answered
                print("scenario:", type(exc).__name__, str(exc)[:120], file=sys.stderr)
        if not sizer.missing:
            _prune(sizer)
            return
        by_version: dict[str, dict] = {}
        for key, (version, case) in sizer.missing.items():
            by_version.setdefault(version, {})[key] = case
        for version, cases in by_version.items():
            print(f"oracle {version}: {len(cases)} cases", file=sys.stderr)
            with gzip.open(DATA / f"oracle-{version}.jsonl.gz", "at") as f:
                for r in _run_oracle(version, cases):
                    f.write(json.dumps({"key": r["id"], "flags": cases[r["id"]]["flags"],
                                        "summary": r["summary"]}, sort_keys=True) + "\n")
    raise SystemExit("still missing after 8 rounds")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from vllm_scenarios import SCENARIOS  # noqa: PLC0415

    regenerate(SCENARIOS)
