"""Vendor the published schemas the export (planner/engines/sglang/export.py) is validated against (tests/test_export.py).

    python scripts/vendor_schemas.py --dynamo-crd PATH/deploy/operator/config/crd/bases/nvidia.com_dynamographdeployments.yaml \
        --llmd-schema PATH/charts/llm-d-modelservice/values.schema.json

* Dynamo: the ``DynamoGraphDeployment`` CRD's ``v1beta1`` ``openAPIV3Schema`` (the storage version), as JSON, with
  two changes that do not loosen it: ``description`` texts dropped (size: 1.6 MB of YAML to a fraction), and every
  object schema that lists ``properties`` and neither ``additionalProperties`` nor
  ``x-kubernetes-preserve-unknown-fields`` closed (``additionalProperties: false``): the API server prunes an
  unknown field of such an object silently, so for an export it is an error. CEL rules
  (``x-kubernetes-validations``) are kept as data; jsonschema does not run them.
* llm-d: the ``llm-d-modelservice`` chart's ``values.schema.json``, copied byte for byte.

Test-only: needs PyYAML (the test extra), never imported by the planner.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "schemas"


def _close(node, names: bool = False):
    """``names``: ``node`` maps property names to schemas (a property may be called 'description')."""
    if isinstance(node, dict):
        if not names:
            node.pop("description", None)
        for k, v in node.items():
            _close(v, names=not names and k in ("properties", "patternProperties", "definitions", "$defs"))
        if node.get("type") == "object" and "properties" in node and "additionalProperties" not in node \
                and not node.get("x-kubernetes-preserve-unknown-fields"):
            node["additionalProperties"] = False
    elif isinstance(node, list):
        for v in node:
            _close(v)
    return node


def dynamo(crd_path: Path, version: str = "v1beta1") -> dict:
    import yaml  # noqa: PLC0415

    crd = yaml.safe_load(crd_path.read_text())
    (v,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    schema = _close(v["schema"]["openAPIV3Schema"])
    return {"$schema": "http://json-schema.org/draft-07/schema#", **schema}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dynamo-crd", type=Path, required=True)
    p.add_argument("--llmd-schema", type=Path, required=True)
    ns = p.parse_args()
    (OUT / "dynamo").mkdir(parents=True, exist_ok=True)
    (OUT / "llm-d").mkdir(parents=True, exist_ok=True)
    out = OUT / "dynamo" / "dynamographdeployment-v1beta1.json"
    out.write_text(json.dumps(dynamo(ns.dynamo_crd), indent=1, sort_keys=True) + "\n")
    shutil.copyfile(ns.llmd_schema, OUT / "llm-d" / "values.schema.json")
    print(f"wrote {out} and {OUT / 'llm-d' / 'values.schema.json'}")


if __name__ == "__main__":
    main()
