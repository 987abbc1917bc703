"""Which hardware: ``plan --model M --gpu any`` (or ``--gpu h100-sxm,h200,b200``).

For each GPU type, the layouts the planner models are tried smallest first (:func:`layouts`), each with the
search (:func:`planner.engines.sglang.search.run_search`, the same needs and fixed flags as one ``plan``); the first layout
whose search recommends flags is that GPU type's smallest deployment. Deployments are ranked by GPUs used, then
by cost per hour when ``--price GPU=USD/h`` names the type (a type without a price ranks after the priced ones
of the same size), then by the recommendation's concurrency at the needed length.

Only one tensor-parallel group is modelled (over one node, or over ``--nnodes`` nodes of 8 GPUs: the planner
plans the per-GPU memory as for one node). :func:`layouts` is the one place a new mode (EP, DP attention,
PP, PD roles) adds its layouts. AMD profiles are not searched: SGLang's ROCm path is refused by the pipeline
(``planner/engines/sglang/pipeline/__init__.py``), and each is listed as skipped with that reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from planner.catalog.catalog import ResolvedModel
from planner.errors import BadInput
from planner.engines.sglang.pipeline.rocm import GFX_CAPABILITY as ROCM_GFX
from planner.hardware.amdsmi import ROCM_NOT_MODELLED
from planner.hardware.profiles import GpuProfile, find_profile, load_profiles
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.export import FORMATS, export_text, node_commands
from planner.engines.sglang.search import Needs, run_search

COUNTS_PER_NODE = (1, 2, 4, 8)  # GPUs per node tried (one node); more nodes take 8 each
MAX_NNODES = 64


@dataclass(frozen=True)
class Layout:
    """One deployment shape: ``nnodes`` nodes of ``gpus_per_node`` GPUs, one TP group of ``tp`` over all."""
    gpus_per_node: int
    nnodes: int
    tp: int

    @property
    def gpus(self) -> int:
        return self.gpus_per_node * self.nnodes

    def flags(self) -> list[str]:
        return ["--tp-size", str(self.tp)] + (["--nnodes", str(self.nnodes)] if self.nnodes > 1 else [])

    def label(self) -> str:
        where = f"{self.gpus_per_node} GPU(s)" if self.nnodes == 1 else f"{self.nnodes} nodes x {self.gpus_per_node}"
        return f"TP {self.tp} on {where}"


def layouts(max_nnodes: int = 1, tp: int | None = None, gpu: GpuProfile | None = None) -> list[Layout]:
    """The layouts the planner models, fewest GPUs first: one TP group over every GPU of the deployment (1, 2, 4,
    8 on one node; 8 per node on 2..``max_nnodes`` nodes). A unified-memory ``gpu`` (DGX Spark, Jetson Thor: one
    GPU per box) has one GPU per node. ``tp``: the user fixed ``--tp-size``, only layouts of that width. Other
    modes (EP, DP attention, PP, PD) extend this list with their own Layout kinds."""
    if gpu is not None and gpu.unified_memory:
        out = [Layout(1, k, k) for k in range(1, max_nnodes + 1)]
    else:
        out = [Layout(n, 1, n) for n in COUNTS_PER_NODE]
        out += [Layout(8, k, 8 * k) for k in range(2, max_nnodes + 1)]
    return [lay for lay in out if tp is None or lay.tp == tp]


def is_gpu_set(text: str | None) -> bool:
    """``--gpu any`` or a comma list with a name in it (a list of digits is NVML indices, planner.hardware.nvml)."""
    if not isinstance(text, str):
        return False
    t = text.strip().lower()
    return t == "any" or ("," in t and not re.fullmatch(r"[\d,\s]+", t))


def gpu_set(text: str) -> list[GpuProfile]:
    """The GPU types ``--gpu any`` / ``--gpu a,b,c`` names, in order, without duplicates."""
    if text.strip().lower() == "any":
        return list(load_profiles())
    out: list[GpuProfile] = []
    for name in text.split(","):
        if not name.strip():
            raise BadInput(f"--gpu {text}: an empty name in the list; give GPU ids separated by commas")
        if name.strip().lower() == "any":
            raise BadInput(f"--gpu {text}: 'any' stands alone (every profile), not in a list")
        p = find_profile(name.strip())
        if p not in out:
            out.append(p)
    return out


def parse_prices(items: list[str] | None) -> dict[str, float]:
    """``--price GPU=USD/h`` (repeatable; 'h100-sxm=2.49' or 'h100-sxm=2.49/h'), keyed by profile id."""
    out: dict[str, float] = {}
    for item in items or []:
        m = re.fullmatch(r"\s*([^=]+?)\s*=\s*\$?([0-9]*\.?[0-9]+)\s*(?:(?:USD)?/h(?:our)?)?\s*", item, re.IGNORECASE)
        if not m:
            raise BadInput(f"--price {item}: expected GPU=USD/h, e.g. --price h100-sxm=2.49")
        out[find_profile(m.group(1)).id] = float(m.group(2))
    return out


def split_layout_flags(flags: list[str]) -> tuple[list[str], int | None, int]:
    """The user's flags without ``--tp-size`` / ``--nnodes`` (the search sets them per layout), the fixed TP
    (None: free) and the most nodes to try (``--nnodes``, default 1)."""
    rest: list[str] = []
    tp, nnodes = None, 1
    i = 0
    while i < len(flags):
        f = flags[i]
        name, eq, val = f.partition("=")
        if name in ("--tp-size", "--tp", "--tensor-parallel-size", "--nnodes"):
            if not eq:
                if i + 1 >= len(flags):
                    raise BadInput(f"{name}: expected a positive integer after it")
                val = flags[i + 1]
                i += 1
            if not val.isdigit() or int(val) < 1:
                raise BadInput(f"{name}: expected a positive integer, got {val!r}")
            if name == "--nnodes":
                nnodes = int(val)
                if nnodes > MAX_NNODES:
                    raise BadInput(f"--nnodes {nnodes}: at most {MAX_NNODES} nodes are searched")
            else:
                tp = int(val)
        else:
            rest.append(f)
        i += 1
    return rest, tp, nnodes


@dataclass
class Deployment:
    gpu: GpuProfile
    layout: Layout
    flags: list[str]  # the recommended SGLang flags (layout's included)
    concurrency: int
    kv_tokens: int
    price_per_gpu_hour: float | None = None

    @property
    def cost_per_hour(self) -> float | None:
        return None if self.price_per_gpu_hour is None else self.price_per_gpu_hour * self.layout.gpus


@dataclass
class HardwareResult:
    needs: Needs
    deployments: list[Deployment]  # ranked, one per GPU type (its smallest)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (gpu id, why no deployment)
    tried: int = 0  # layouts evaluated


def _rank(d: Deployment) -> tuple:
    cost = d.cost_per_hour
    return (d.layout.gpus, cost is None, cost or 0.0, -d.concurrency, -d.kv_tokens, d.gpu.id)


def search_hardware(profiles: list[GpuProfile], model: ResolvedModel, flags: list[str], env: dict[str, str],
                    needs: Needs, version: str | None = None, prices: dict[str, float] | None = None
                    ) -> HardwareResult:
    """Each GPU type's smallest deployment that meets ``needs`` (see the module docstring), ranked."""
    base, tp, max_nnodes = split_layout_flags(flags)
    prices = prices or {}
    out = HardwareResult(needs=needs, deployments=[])
    if not layouts(max_nnodes, tp):
        raise BadInput(f"--tp-size {tp}: not a layout searched (1, 2, 4, 8 GPUs on one node, 8 per node on "
                       f"--nnodes nodes)")
    for gpu in profiles:
        if gpu.vendor != "nvidia" and gpu.gfx_arch not in ROCM_GFX:  # AMD: the gfx targets pipeline/rocm.py models
            out.skipped.append((gpu.id, ROCM_NOT_MODELLED))
            continue
        tried_layouts = layouts(max_nnodes, tp, gpu)
        if not tried_layouts:
            out.skipped.append((gpu.id, f"--tp-size {tp}: one GPU per node (unified memory) on at most "
                                        f"{max_nnodes} node(s)"))
            continue
        why = "no layout tried"
        for lay in tried_layouts:
            lf = base + lay.flags()
            out.tried += 1
            try:
                plan = make_plan(gpu, model, lf, env, version=version)
            except BadInput as e:  # this profile is refused as a whole (e.g. a part the pipeline does not model)
                out.skipped.append((gpu.id, str(e)))  # named, not dropped (the loop's else does not run after break)
                break
            if plan.stage in ("model_config", "load_model"):  # no searched flag changes TP divisibility or weights
                why = f"{lay.label()}: {plan.error_message or plan.stage}"
                continue
            res = run_search(gpu, model, lf, env, needs, top=1, relax=False, version=version, prune=True)
            if res.recommended is None:
                why = f"{lay.label()}: the needs are not met by any searched flags"
                continue
            best = res.ranked[0]
            out.deployments.append(Deployment(gpu, lay, best.flags, best.concurrency, best.kv_tokens,
                                              prices.get(gpu.id)))
            break
        else:
            out.skipped.append((gpu.id, f"nothing fits up to {tried_layouts[-1].label()} ({why})"))
    out.deployments.sort(key=_rank)
    return out


def hardware_dict(res: HardwareResult, model: ResolvedModel) -> dict:
    return {"needs": {"context": res.needs.context, "concurrency": res.needs.concurrency},
            "layouts_tried": res.tried,
            "deployments": [{"gpu": d.gpu.id, "gpus": d.layout.gpus, "nnodes": d.layout.nnodes,
                             "gpus_per_node": d.layout.gpus_per_node, "tp_size": d.layout.tp, "flags": d.flags,
                             "concurrency_at_need": d.concurrency, "kv_tokens": d.kv_tokens,
                             "price_per_gpu_hour": d.price_per_gpu_hour, "cost_per_hour": d.cost_per_hour,
                             "commands": node_commands(model, d)} for d in res.deployments],
            "skipped": [{"gpu": g, "why": w} for g, w in res.skipped]}


def render_hardware(res: HardwareResult, model: ResolvedModel) -> str:
    need_ctx = res.needs.context or min(32768, model.spec.derived_context_len)  # the search's default (Needs)
    head = f"Deployments for {model.spec.name}: requests of {need_ctx:,} tokens" + \
        f" x {res.needs.concurrency} at once; each GPU type's smallest layout, ranked by GPUs used" + \
        (" then cost" if any(d.cost_per_hour is not None for d in res.deployments) else "")
    lines = [head, ""]
    if not res.deployments:
        lines.append("Verdict: NOTHING FEASIBLE on the GPU types given")
    for k, d in enumerate(res.deployments, 1):
        cost = f", ${d.cost_per_hour:,.2f}/h" if d.cost_per_hour is not None else ""
        lines.append(f"{k:>2}. {d.gpu.id}: {d.layout.label()}{cost}; {d.concurrency} requests at the needed "
                     f"length, {d.kv_tokens:,} KV tokens")
        lines.extend(f"      {c}" for c in node_commands(model, d))
    if res.skipped:
        lines.append("")
        lines.append("No deployment:")
        lines.extend(f"  {g}: {w}" for g, w in res.skipped)
    lines.append("")
    lines.append(f"{res.tried} layouts evaluated. Only one tensor-parallel group is modelled (EP, DP attention, "
                 "PP and PD roles are not searched); multi-node layouts need --nnodes N.")
    return "\n".join(lines)


def hardware_main(ns, resolved: ResolvedModel | None, flags: list[str], env: dict[str, str], build_needs,
                  write) -> int:
    """``plan --model M --gpu any|a,b [--price GPU=USD/h] [--nnodes N]`` (planner.cli hands over here): exit 0
    when some GPU type has a deployment, 1 when none does, 2 on bad input."""
    for name, given in (("--json", ns.json), ("--no-search", ns.no_search), ("--batch", ns.batch),
                        ("--free-before-load-gib", ns.free_before_load_gib is not None),
                        ("--free-after-load-gib", ns.free_after_load_gib is not None),
                        ("--compare-releases", ns.compare_releases)):
        if given:
            raise BadInput(f"{name}: not with --gpu {ns.gpu} (the hardware search plans each type's own memory); "
                           f"drop it, or plan one GPU type")
    if not resolved:
        raise BadInput("--model: required (e.g. --model qwen3.6-27b)")
    needs = build_needs(ns.need_context, ns.need_concurrency, ns.speculative, ns.allow_fp8_kv, ns.allow_bf16_ssm,
                        ns.objective, ns.allow_no_radix)
    res = search_hardware(gpu_set(ns.gpu), resolved, flags, env, needs, version=ns.sglang_version,
                          prices=parse_prices(ns.price))
    if ns.export and ns.export != "launch" and not res.deployments:
        raise BadInput(f"--export {ns.export}: no deployment meets the needs on the GPU types given; nothing to export")
    if ns.export and res.deployments:  # the first-ranked deployment, alone on stdout (a file to apply)
        write(export_text(ns.export, resolved, res.deployments[0]))
    else:
        write(render_hardware(res, resolved) + "\n")
    return 0 if res.deployments else 1


def add_hardware_args(p) -> None:
    """planner.cli's parser: the options only --gpu any / a list takes."""
    p.add_argument("--price", action="append", metavar="GPU=USD/h", help="--gpu any: a GPU type's price per hour")
    p.add_argument("--export", choices=FORMATS, help="--gpu any: print the first deployment as launch lines per "
                   "node, a Dynamo DynamoGraphDeployment or llm-d modelservice Helm values (planner/engines/sglang/export.py)")
