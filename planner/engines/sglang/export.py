"""Export a deployment (planner/engines/sglang/deploy.py) for the engines that run SGLang on a cluster.

* ``launch``: one ``python -m sglang.launch_server`` line per node (``--nnodes`` / ``--node-rank`` /
  ``--dist-init-addr`` across nodes; :func:`planner.engines.sglang.deploy.node_commands`).
* ``dynamo``: an ai-dynamo ``DynamoGraphDeployment`` (``nvidia.com/v1beta1``, the storage version of the CRD
  vendored in tests/data/schemas/), shaped as Dynamo's own ``examples/backends/sglang/deploy/agg.yaml`` and
  ``disagg-multinode.yaml``: a Frontend and one aggregated ``worker`` running ``python3 -m dynamo.sglang`` with the
  recommended flags; across nodes ``multinode.nodeCount`` (the operator passes ``--nnodes`` / ``--node-rank`` /
  ``--dist-init-addr``, so they are left out of the args) and the GPUs of one node per pod.
* ``llm-d``: values for the llm-d ``llm-d-modelservice`` Helm chart (its values.schema.json vendored in
  tests/data/schemas/): the decode role alone (no prefill: one aggregated server), ``modelCommand: custom``
  running ``python3 -m sglang.launch_server``; across nodes ``multinode: true`` (a LeaderWorkerSet of
  ``parallelism.workers`` pods, ``parallelism.tensor`` GPUs each: the chart's GPUs per pod are tensor x dataLocal)
  and the rank and address from the LeaderWorkerSet's environment (``LWS_WORKER_INDEX``, ``LWS_LEADER_ADDRESS``).

A deployment of another layout kind (DP attention + EP, PP) exports its server's flags the same way (the chart's
``parallelism.tensor`` is its GPUs per pod; the SGLang flags carry the layout); a PD deployment's two servers are
printed by ``launch`` only (``dynamo`` / ``llm-d`` refuse it by name).

The YAML is written here (no YAML package at run time): block mappings and sequences, every string as a
JSON-quoted scalar (valid YAML 1.2), numbers and booleans plain. The memory plan is per GPU as for one node;
the images, the Hugging Face token secret and the namespace are placeholders the user fills in.
"""

from __future__ import annotations

import json
import re

import shlex

from planner.catalog.catalog import ResolvedModel
from planner.engines.sglang.search import _hf_id, launch_command

FORMATS = ("launch", "dynamo", "llm-d")
DIST_PORT = 5000  # --dist-init-addr's port on the leader (any free port; SGLang's examples use 5000)


def to_yaml(value, indent: int = 0) -> str:
    """``value`` (dicts, lists, str, int, float, bool, None) as block YAML."""
    return "\n".join(_lines(value, indent)) + "\n"


def _scalar(v) -> str:
    if isinstance(v, (dict, list)):  # only empty ones come here
        return "{}" if isinstance(v, dict) else "[]"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    return json.dumps(str(v))  # a JSON string is a YAML double-quoted scalar


def _lines(value, indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(value, dict):
        if not value:
            return [pad + "{}"]
        for k, v in value.items():
            key = k if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_./-]*", k) else json.dumps(k)
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{key}:")
                out.extend(_lines(v, indent + 2))
            else:
                out.append(f"{pad}{key}: {_scalar(v)}")
        return out
    if isinstance(value, list):
        if not value:
            return [pad + "[]"]
        for v in value:
            if isinstance(v, (dict, list)) and v:
                sub = _lines(v, indent + 2)
                out.append(f"{pad}- {sub[0].lstrip()}")
                out.extend(sub[1:])
            else:
                out.append(f"{pad}- {_scalar(v)}")
        return out
    return [pad + _scalar(value)]


def _model_path(model: ResolvedModel) -> str:
    return model.path or _hf_id(model) or model.spec.name


def _name(model: ResolvedModel) -> str:
    """A Kubernetes name (RFC 1123 label) from the model's name."""
    base = re.sub(r"[^a-z0-9-]+", "-", model.spec.name.lower()).strip("-")[:40].strip("-")
    return base or "model"


def _server_flags(d) -> list[str]:
    """The recommended flags without --nnodes (the cluster engine sets the node count, rank and address)."""
    out, skip = [], False
    for f in d.flags:
        if skip:
            skip = False
            continue
        if f == "--nnodes":
            skip = True
            continue
        if f.startswith("--nnodes="):
            continue
        out.append(f)
    return out


def _volume_gi(model: ResolvedModel) -> int:
    """The model volume: the checkpoint's bytes (the weights the plan counts) + 10 %, in whole GiB."""
    return max(1, -(-int(model.weight_bytes * 1.1) // (1 << 30)))


def _gpu_resource(d) -> str:
    return "amd.com/gpu" if d.gpu.vendor == "amd" else "nvidia.com/gpu"


def _shape(layout) -> str:
    """The layout beyond TP in a Kubernetes name: -pp2, -dp8."""
    return (f"-pp{layout.pp}" if getattr(layout, "pp", 1) > 1 else "") + \
        (f"-dp{layout.dp}" if getattr(layout, "dp", 1) > 1 else "")


def dynamo_graph(model: ResolvedModel, d) -> dict:
    path = _model_path(model)
    worker = {
        "name": "decode",
        "type": "worker",
        "replicas": 1,
        "podTemplate": {"spec": {"containers": [{
            "name": "main",
            "image": "my-registry/sglang-runtime:my-tag",
            "command": ["python3", "-m", "dynamo.sglang"],
            "args": ["--model-path", path, "--served-model-name", path, *_server_flags(d)],
            "envFrom": [{"secretRef": {"name": "hf-token-secret"}}],
            "resources": {"limits": {_gpu_resource(d): str(d.layout.gpus_per_node)}},
        }]}},
    }
    if d.layout.nnodes > 1:
        worker = {"multinode": {"nodeCount": d.layout.nnodes}, **worker}
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": f"{_name(model)}-{d.gpu.id}-tp{d.layout.tp}{_shape(d.layout)}"[:63].strip("-")},
        "spec": {
            "backendFramework": "sglang",
            "components": [
                {"name": "Frontend", "type": "frontend", "replicas": 1,
                 "podTemplate": {"spec": {"containers": [{"name": "main",
                                                          "image": "my-registry/sglang-runtime:my-tag"}]}}},
                worker,
            ],
        },
    }


def llmd_values(model: ResolvedModel, d) -> dict:
    path = _model_path(model)
    args = ["--model-path", path, "--host", "0.0.0.0", "--port", "8000", *_server_flags(d)]
    if d.layout.nnodes > 1:  # Kubernetes expands $(VAR) from the LeaderWorkerSet's env in args
        args += ["--nnodes", str(d.layout.nnodes), "--node-rank", "$(LWS_WORKER_INDEX)",
                 "--dist-init-addr", f"$(LWS_LEADER_ADDRESS):{DIST_PORT}"]
    return {
        "modelArtifacts": {"name": path, "uri": f"hf://{path}", "authSecretName": "llm-d-hf-token",
                           "size": f"{_volume_gi(model)}Gi"},
        "multinode": d.layout.nnodes > 1,
        "accelerator": {"type": "amd" if d.gpu.vendor == "amd" else "nvidia"},
        "routing": {"servicePort": 8000, "proxy": {"enabled": False}},
        "decode": {
            "create": True,
            "replicas": 1,
            "parallelism": {"tensor": d.layout.gpus_per_node, "dataLocal": 1, "workers": d.layout.nnodes},
            "containers": [{
                "name": "sglang",
                "image": "lmsysorg/sglang:latest",
                "modelCommand": "custom",
                "command": ["python3", "-m", "sglang.launch_server"],
                "args": args,
                "ports": [{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
                "mountModelVolume": True,
            }],
        },
        "prefill": {"create": False},
    }


def layout_commands(model: ResolvedModel, layout, flags: list[str],
                    dist_init_addr: str = f"NODE0_IP:{DIST_PORT}") -> list[str]:
    """One server's launch line per node: one line on one node; with ``--nnodes``, each node's ``--node-rank``
    and the shared ``--dist-init-addr`` (rank 0's address, a placeholder to fill in)."""
    if layout.nnodes == 1:
        return [launch_command(model, flags)]
    return [launch_command(model, flags) + " " + shlex.join(["--dist-init-addr", dist_init_addr,
                                                             "--node-rank", str(r)])
            for r in range(layout.nnodes)]


def server_commands(model: ResolvedModel, d, dist_init_addr: str = f"NODE0_IP:{DIST_PORT}"
                    ) -> list[tuple[str, list[str]]]:
    """(title, launch lines) per server of a planner.engines.sglang.deploy.Deployment: one untitled server, or a PD
    deployment's prefill server then its decode server (each on its own GPUs; a router in front sends each
    request to both, SGLang's PD docs: docs.sglang.io advanced_features/pd_disaggregation)."""
    if d.prefill is None:
        return [("", layout_commands(model, d.layout, d.flags, dist_init_addr))]
    return [("prefill server", layout_commands(model, d.prefill.layout, d.prefill.flags, dist_init_addr)),
            ("decode server", layout_commands(model, d.layout, d.flags, dist_init_addr))]


def node_commands(model: ResolvedModel, d, dist_init_addr: str = f"NODE0_IP:{DIST_PORT}") -> list[str]:
    """Every launch line of a deployment (:func:`server_commands`, the servers in order)."""
    return [c for _, cmds in server_commands(model, d, dist_init_addr) for c in cmds]


def export_text(fmt: str, model: ResolvedModel, d) -> str:
    how = "SGLang flags from its search" if getattr(d, "searched", True) else "SGLang's defaults for the layout"
    label = d.label() if hasattr(d, "label") else d.layout.label()
    head = (f"# {d.gpu.display_name} [{d.gpu.id}], {label}: {d.concurrency} requests at the needed "
            f"length, {d.kv_tokens:,} KV tokens per the plan (gpu-memory-planner; {how})\n")
    if fmt == "launch":
        return "\n".join(node_commands(model, d)) + "\n"
    if getattr(d, "prefill", None) is not None:
        from planner.errors import BadInput  # noqa: PLC0415

        raise BadInput(f"--export {fmt}: a PD deployment (a prefill and a decode server and the KV transfer between "
                       "them) is not exported to it yet; --export launch prints both servers' lines")
    if fmt == "dynamo":
        return head + to_yaml(dynamo_graph(model, d))
    if fmt == "llm-d":
        return head + to_yaml(llmd_values(model, d))
    raise ValueError(fmt)
