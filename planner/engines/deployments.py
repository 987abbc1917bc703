"""Which hardware, engine-neutral: the deployment shapes, the ranking, the text and the JSON of ``plan --model M
--gpu any`` (or ``--gpu a,b,c``), shared by SGLang's search (planner/engines/sglang/deploy.py) and vLLM's
(planner/engines/vllm/deploy.py). Each engine plans its own layouts and launch lines; this module only holds
what they have in common, so both print the same shape (docs/json.md "plan --gpu any --json")."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from planner.errors import BadInput
from planner.hardware.profiles import GpuProfile, find_profile, load_profiles

KINDS = ("tp", "dp", "pp", "pd")
KIND_NAMES = {"tp": "tensor parallel", "dp": "DP attention (+ EP for MoE)", "pp": "pipeline parallel",
              "pd": "prefill / decode servers"}
DEFAULTS_NOTE = "the engine's defaults for the layout (its flag search does not model it)"


@dataclass(frozen=True)
class Layout:
    """One server's shape: ``nnodes`` nodes of ``gpus_per_node`` GPUs; ``tp`` x ``pp`` GPUs; ``dp`` > 1: DP
    attention with ``dp`` attention-DP ranks; ``ep`` > 1: expert parallel; ``role``: a PD server's role."""
    gpus_per_node: int
    nnodes: int
    tp: int
    dp: int = 1
    pp: int = 1
    ep: int = 1
    role: str | None = None

    @property
    def gpus(self) -> int:
        return self.gpus_per_node * self.nnodes

    @property
    def kind(self) -> str:
        return "pd" if self.role else "dp" if self.dp > 1 else "pp" if self.pp > 1 else "tp"

    def label(self) -> str:
        where = f"{self.gpus_per_node} GPU(s)" if self.nnodes == 1 else f"{self.nnodes} nodes x {self.gpus_per_node}"
        shape = f"TP {self.tp}"
        if self.pp > 1:
            shape += f" x PP {self.pp}"
        if self.dp > 1:
            shape = f"DP attention {self.dp} x attn-TP {self.tp // self.dp} (TP {self.tp}" + \
                (f", EP {self.ep})" if self.ep > 1 else ")")
        elif self.ep > 1:
            shape += f", EP {self.ep}"
        return f"{self.role + ' ' if self.role else ''}{shape} on {where}"


@dataclass
class Server:
    """A PD deployment's prefill server (its decode server is the Deployment's own layout and flags)."""
    layout: Layout
    flags: list[str]
    concurrency: int
    kv_tokens: int


@dataclass
class Deployment:
    gpu: GpuProfile
    layout: Layout  # the server's (PD: the decode server's)
    flags: list[str]  # its engine flags (layout's included): the search's recommendation, or the layout's defaults
    concurrency: int  # requests of the needed length at once (DP attention: over every rank)
    kv_tokens: int  # KV tokens (DP attention: over every rank; PP: each rank's, the MIN)
    price_per_gpu_hour: float | None = None
    searched: bool = True  # the flags come from the engine's search (False: its defaults for the layout)
    prefill: Server | None = None  # PD: the prefill server

    @property
    def gpus(self) -> int:
        return self.layout.gpus + (self.prefill.layout.gpus if self.prefill else 0)

    @property
    def kind(self) -> str:
        return self.layout.kind

    @property
    def cost_per_hour(self) -> float | None:
        return None if self.price_per_gpu_hour is None else self.price_per_gpu_hour * self.gpus

    def label(self) -> str:
        if self.prefill is None:
            return self.layout.label()
        return f"PD: {self.prefill.layout.label()} + {self.layout.label()} ({self.gpus} GPUs)"


@dataclass
class HardwareResult:
    needs: Any  # the engine's needs (context, concurrency)
    deployments: list[Deployment]  # ranked, one per GPU type (its smallest)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (gpu id, why no deployment)
    tried: int = 0  # layouts evaluated
    kinds: tuple[str, ...] = ("tp", "dp", "pp")
    auto: bool = True
    refused: dict[str, str] = field(default_factory=dict)  # layout kind -> the engine's first refusal of it
    need_context: int = 0  # the needed request length the concurrency is counted at


def rank_key(d: Deployment) -> tuple:
    """GPUs used, then cost (a priced type before an unpriced one), then concurrency, then KV tokens."""
    cost = d.cost_per_hour
    return (d.gpus, cost is None, cost or 0.0, -d.concurrency, -d.kv_tokens, d.gpu.id)


def parse_layouts(text: str | None, offered: tuple[str, ...] = KINDS,
                  auto: tuple[str, ...] = ("tp", "dp", "pp")) -> tuple[tuple[str, ...], bool]:
    """``--layouts`` -> (the kinds tried, auto). ``auto`` (the default): the engine's ``auto`` kinds, the extra
    ones where TP alone does not meet the needs; ``all``: every kind the engine offers at every size; else a comma
    list of them."""
    if text is None or text.strip().lower() == "auto":
        return auto, True
    if text.strip().lower() == "all":
        return offered, False
    out: list[str] = []
    for name in text.split(","):
        name = name.strip().lower()
        if name not in offered:
            raise BadInput(f"--layouts {text[:60]}: '{name[:30]}' is not a layout kind searched here; give auto, all, "
                           f"or a comma list of {', '.join(offered)} "
                           f"({'; '.join(f'{k}: {KIND_NAMES[k]}' for k in offered)})")
        if name not in out:
            out.append(name)
    return tuple(out), False


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


# (layout, flags) -> that server's launch line per node
Commands = Callable[[Layout, list[str]], list[str]]


def servers(d: Deployment) -> list[tuple[str, Layout, list[str], int, int]]:
    """(role, layout, flags, concurrency, KV tokens) per server: one "server", or PD's "prefill" then "decode"."""
    if d.prefill is None:
        return [("server", d.layout, d.flags, d.concurrency, d.kv_tokens)]
    p = d.prefill
    return [("prefill", p.layout, p.flags, p.concurrency, p.kv_tokens),
            ("decode", d.layout, d.flags, d.concurrency, d.kv_tokens)]


def hardware_dict(res: HardwareResult, model_name: str, commands: Commands, engine: str,
                  version: str | None) -> dict:
    """``plan --gpu any --json`` (the "hardware" branch of ``plan schema plan``; docs/json.md)."""
    from planner.schema import SCHEMA_VERSION  # noqa: PLC0415

    deps = []
    for d in res.deployments:
        srv = [{"role": role, "gpus": lay.gpus, "nnodes": lay.nnodes, "gpus_per_node": lay.gpus_per_node,
                "tp_size": lay.tp, "pp_size": lay.pp, "dp_size": lay.dp, "ep_size": lay.ep, "flags": list(flags),
                "concurrency_at_need": conc, "kv_tokens": kv, "commands": commands(lay, flags)}
               for role, lay, flags, conc, kv in servers(d)]
        deps.append({"gpu": d.gpu.id, "layout": d.kind, "label": d.label(), "gpus": d.gpus,
                     "nnodes": d.layout.nnodes, "gpus_per_node": d.layout.gpus_per_node, "tp_size": d.layout.tp,
                     "flags": list(d.flags), "searched": d.searched, "concurrency_at_need": d.concurrency,
                     "kv_tokens": d.kv_tokens, "price_per_gpu_hour": d.price_per_gpu_hour,
                     "cost_per_hour": d.cost_per_hour, "commands": [c for s in srv for c in s["commands"]],
                     "servers": srv})
    return {"schema_version": SCHEMA_VERSION, "engine": engine, "version": version, "model": model_name,
            "needs": {"context": res.need_context, "concurrency": res.needs.concurrency},
            "layouts": {"kinds": list(res.kinds), "auto": res.auto,
                        "refused": [{"kind": k, "why": w} for k, w in res.refused.items()]},
            "layouts_tried": res.tried, "deployments": deps,
            "skipped": [{"gpu": g, "why": w} for g, w in res.skipped]}


def render_hardware(res: HardwareResult, model_name: str, commands: Commands, footer: str) -> str:
    """The text: each GPU type's deployment, ranked, with its launch lines; the types without one; ``footer``."""
    head = f"Deployments for {model_name}: requests of {res.need_context:,} tokens" + \
        f" x {res.needs.concurrency} at once; each GPU type's smallest layout, ranked by GPUs used" + \
        (" then cost" if any(d.cost_per_hour is not None for d in res.deployments) else "")
    lines = [head, ""]
    if not res.deployments:
        lines.append("Verdict: NOTHING FEASIBLE on the GPU types given")
    for k, d in enumerate(res.deployments, 1):
        cost = f", ${d.cost_per_hour:,.2f}/h" if d.cost_per_hour is not None else ""
        over = f" over {d.layout.dp} ranks" if d.layout.dp > 1 else ""
        lines.append(f"{k:>2}. {d.gpu.id}: {d.label()}{cost}; {d.concurrency} requests at the needed "
                     f"length, {d.kv_tokens:,} KV tokens{over}" + ("" if d.searched else "; defaults"))
        for role, lay, flags, _, _ in servers(d):
            if role != "server":
                lines.append(f"      # {role} server")
            lines.extend(f"      {c}" for c in commands(lay, flags))
    if res.skipped:
        lines.append("")
        lines.append("No deployment:")
        lines.extend(f"  {g}: {w}" for g, w in res.skipped)
    lines.append("")
    line = footer
    if any(not d.searched for d in res.deployments):
        line += f" 'defaults': planned with {DEFAULTS_NOTE}."
    lines.append(line)
    return "\n".join(lines)
