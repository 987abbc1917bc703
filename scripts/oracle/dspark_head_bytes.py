"""What SGLang's own DSpark modules hold, per draft config: the Markov head and the confidence head.

Builds ``build_markov_head(config)`` and ``build_confidence_head(config)`` of the installed SGLang
(srt/models/dspark.py) on the meta device, under the model loader's default dtype (bfloat16), once with
SGLANG_RAGGED_VERIFY_MODE at its default "static" and once with "cap-accept", and prints the bytes of every
parameter and buffer by dtype. The decoder layers, fc and norms (the DFlash trunk) need SGLang's tensor-parallel
groups and are not built here. Run with an oracle venv's python and this repository's oracle copy (its CPU shim):

    bash scripts/oracle/oracle_copy.sh /tmp/oracle-heads
    ~/.cache/sglang-oracle/0.5.23/venv/bin/python scripts/oracle/dspark_head_bytes.py --oracle /tmp/oracle-heads \
        tests/golden/spec/dspark/drafts/*/config.json > tests/golden/spec/dspark/heads-0.5.23.json
"""

import argparse
import importlib.metadata as md
import json
import os
import sys
import types


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle", required=True, help="an oracle copy (scripts/oracle/oracle_copy.sh)")
    ap.add_argument("configs", nargs="+")
    a = ap.parse_args(argv)
    for k, v in (("ORACLE_GPU_TOTAL_MIB", "97887"), ("ORACLE_GPU_SM", "12.0"),
                 ("ORACLE_GPU_NAME", "NVIDIA RTX PRO 6000 Blackwell"), ("ORACLE_CUDA_VERSION", "12.9")):
        os.environ.setdefault(k, v)
    sys.path.insert(0, os.path.join(a.oracle, "shim"))
    import cpu_shim  # noqa: F401, PLC0415  (before any sglang import)
    import torch  # noqa: PLC0415

    torch.set_default_dtype(torch.bfloat16)
    from sglang.srt.models import dspark  # noqa: PLC0415

    def nbytes(module):
        out = {}
        for t in ([] if module is None else [*module.parameters(), *module.buffers()]):
            out[str(t.dtype)] = out.get(str(t.dtype), 0) + t.numel() * t.element_size()
        return out

    root = os.getcwd()
    heads = {}
    for path in a.configs:
        cfg = types.SimpleNamespace(**json.load(open(path)))
        row = {}
        for mode in ("static", "cap-accept"):
            os.environ["SGLANG_RAGGED_VERIFY_MODE"] = mode
            if int(getattr(cfg, "markov_rank", 0) or 0) <= 0:  # no Markov head: SGLang refuses the draft
                row[mode] = {"markov": None, "confidence": None}
                continue
            with torch.device("meta"):
                row[mode] = {"markov": nbytes(dspark.build_markov_head(cfg)),
                             "confidence": nbytes(dspark.build_confidence_head(cfg))}
        heads[os.path.relpath(path, root)] = row
    os.environ.pop("SGLANG_RAGGED_VERIFY_MODE", None)
    print(json.dumps({"sglang_version": md.version("sglang"), "heads": heads}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
