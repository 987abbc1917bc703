"""Which hardware under vLLM's rules: ``plan --engine vllm --model M --gpu any`` (or ``--gpu a,b,c``).

For each GPU type, TP widths 1, 2, 4, 8 (one node) are tried smallest first, each launch evaluated end to end as
``plan --engine vllm`` does (:func:`planner.engines.vllm.search.evaluate`: vLLM's argument resolution, the
estimates of what vLLM measures at boot, ``sizing.size``), with ``--max-model-len`` set to the needed request
length (vLLM counts its concurrency at ``max_model_len``, ``v1/core/kv_cache_utils.py:1082 @0.34.0``, so the
figure is the requests of that length at once). A launch that does not reach the needs gets vLLM's knob search
(:func:`planner.engines.vllm.search.search`) and the front end's robust pick (``frontend.robust_best``: it must
still reach the needs with every estimate raised by its residual on public logs). The first width that reaches
them is the GPU type's deployment; the ranking and the output are the SGLang search's
(planner/engines/deployments.py).

Pipeline parallelism (``--pipeline-parallel-size``) is tried where TP alone does not reach the needs at a size
(``--layouts auto``), or as ``--layouts tp,pp`` asks: vLLM's planner refuses it by name today (the per-stage
weights are not modelled without measured figures), which is recorded as "not this layout". A GPU type vLLM's
planner refuses (AMD / ROCm, unified memory: ``frontend.device_of``; anything its resolution refuses) is
listed as skipped with that refusal. DP attention, expert parallel and PD are SGLang's kinds, not searched here.
Multi-node (``--nnodes``) is not searched for vLLM.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from planner.catalog.catalog import ResolvedModel
from planner.engines import deployments as D
from planner.engines.deployments import Deployment, HardwareResult, gpu_set, parse_prices
from planner.engines.vllm import launch as L
from planner.engines.vllm.frontend import ESTIMATED, RESERVED_SPREAD_MIB, device_of, pessimistic, robust_best, version_of
from planner.engines.vllm.inputs import GIB, MIB
from planner.engines.vllm.search import Context, concurrency_of, evaluate, reaches, search
from planner.errors import BadInput
from planner.hardware.profiles import GpuProfile

COUNTS = (1, 2, 4, 8)
KINDS = ("tp", "pp")
LAYOUT_FLAGS = ("--tensor-parallel-size", "-tp", "--pipeline-parallel-size", "-pp", "--data-parallel-size", "-dp")


@dataclass(frozen=True)
class Layout(D.Layout):
    """One vLLM server's shape with its flags."""

    def flags(self) -> list[str]:
        return ["--tensor-parallel-size", str(self.tp)] + \
            (["--pipeline-parallel-size", str(self.pp)] if self.pp > 1 else [])


@dataclass(frozen=True)
class Needs:
    context: int | None = None
    concurrency: int = 1


def base_flags(flags: list[str], need_ctx: int) -> list[str]:
    """The user's flags without a layout flag (refused by name: the search sets the layout), with
    ``--max-model-len`` the needed length unless given."""
    for f in flags:
        name = f.split("=", 1)[0]
        if name in LAYOUT_FLAGS:
            raise BadInput(f"{name}: the hardware search sets the layout per deployment; drop it (--layouts "
                           f"{','.join(KINDS)} asks for the kinds), or plan one GPU type")
        if name == "--nnodes":
            raise BadInput("--nnodes: vLLM's hardware search is one node (1, 2, 4, 8 GPUs); multi-node is not searched")
    given = L.flag_value(flags, "--max-model-len")
    return list(flags) if given else [*flags, "--max-model-len", str(need_ctx)]


def _context(version: str, model: ResolvedModel, gpu: GpuProfile, lay: Layout, env: dict[str, str]) -> Context:
    device, src = device_of(gpu, {}, lay.gpus)
    cuda_res = int(RESERVED_SPREAD_MIB * MIB) if src.startswith(ESTIMATED) else 0
    return Context(version, model.spec, device, {}, dict(env), None, None, cuda_res, None)


def _try(version, model, gpu, lay: Layout, base: list[str], env, need_ctx: int, needs: Needs,
         out: HardwareResult) -> Deployment | str:
    """One layout: the launch as given if it reaches the needs (also with the estimates raised by their
    residuals), else vLLM's search's robust pick; why not otherwise. BadInput: vLLM's planner refuses it."""
    ctx = _context(version, model, gpu, lay, env)
    flags = [*lay.flags(), *base]
    out.tried += 1
    ev = evaluate(ctx, flags)
    if reaches(ev.summary, need_ctx, needs.concurrency):
        worse = pessimistic(ctx, ev)
        if worse is None or reaches(worse.summary, need_ctx, needs.concurrency):
            return _deployment(gpu, lay, ev.flags, ev.summary)
    weights = getattr(ev.measured, "weights_gib", None)
    if weights is not None and weights * GIB >= ctx.device.cuda_total_bytes:  # no knob frees the weights' memory
        return f"{lay.label()}: the weights ({weights:.2f} GiB per GPU) exceed the device's memory"
    if ev.summary.get("stage") == "serve_args":  # vLLM's parser refuses the flags: no knob fixes that
        return f"{lay.label()}: {ev.summary.get('error_type')}: {ev.summary.get('error_message')}"
    found = search(ctx, ev, need_ctx, needs.concurrency)
    best, _ = robust_best(ctx, found, need_ctx, needs.concurrency)
    if best is None:
        return f"{lay.label()}: the needs are not met by vLLM's searched flags"
    return _deployment(gpu, lay, best.ev.flags, best.ev.summary)


def _deployment(gpu, lay, flags, summary) -> Deployment:
    return Deployment(gpu, lay, list(flags), concurrency_of(summary), int(summary.get("kv_cache_size_tokens") or 0))


def _best_for(version, model, gpu, base, env, need_ctx, needs, out: HardwareResult) -> Deployment | str:
    kinds, auto = out.kinds, out.auto
    why = "no layout tried"
    tp_ok = "tp" in kinds
    for n in COUNTS:
        found: list[Deployment] = []
        if tp_ok:
            try:
                got = _try(version, model, gpu, Layout(n, 1, n), base, env, need_ctx, needs, out)
            except BadInput as e:  # vLLM's planner refuses this GPU type (or the model on it): every width alike
                return str(e)
            if isinstance(got, Deployment):
                found.append(got)
            else:
                why = got
        if "pp" in kinds and not (found and auto):
            p = 2
            while p <= n:
                lay = Layout(n, 1, n // p, pp=p)
                p *= 2
                try:
                    got = _try(version, model, gpu, lay, base, env, need_ctx, needs, out)
                except BadInput as e:
                    out.refused.setdefault("pp", str(e))
                    break  # not this layout: vLLM's planner says which (a wider PP is refused alike)
                if isinstance(got, Deployment):
                    found.append(got)
                    break
                why = got
        if found:
            return min(found, key=D.rank_key)
    return f"nothing fits up to TP {COUNTS[-1]} on {COUNTS[-1]} GPU(s) ({why})"


def search_hardware(profiles: list[GpuProfile], model: ResolvedModel, flags: list[str], env: dict[str, str],
                    needs: Needs, version: str | None = None, prices: dict[str, float] | None = None,
                    layouts_text: str | None = None) -> HardwareResult:
    """Each GPU type's smallest vLLM deployment that meets ``needs``, ranked (see the module docstring)."""
    version = version_of(version)[0]
    need_ctx = needs.context if needs.context is not None else min(32768, model.spec.derived_context_len)
    given = L.flag_value(flags, "--max-model-len")
    if given and given.isdigit() and needs.context is None:  # vLLM counts its concurrency at the length given
        need_ctx = int(given)
    base = base_flags(flags, need_ctx)
    kinds, auto = D.parse_layouts(layouts_text, KINDS, KINDS)
    out = HardwareResult(needs=needs, deployments=[], kinds=kinds, auto=auto, need_context=need_ctx)
    prices = prices or {}
    for gpu in profiles:
        got = _best_for(version, model, gpu, base, env, need_ctx, needs, out)
        if isinstance(got, Deployment):
            got.price_per_gpu_hour = prices.get(gpu.id)
            out.deployments.append(got)
        else:
            out.skipped.append((gpu.id, got))
    out.deployments.sort(key=D.rank_key)
    return out


def footer(res: HardwareResult) -> str:
    what = ("vLLM: TP on 1, 2, 4, 8 GPUs; TP x PP where TP alone does not reach the needs and vLLM's planner models "
            "it" if res.auto else "vLLM: --layouts " + ",".join(res.kinds))
    return f"{res.tried} layouts evaluated ({what}); each launch sized as plan --engine vllm sizes it."


def hardware_main(ns, model: ResolvedModel, flags: list[str], env: dict[str, str], version: str | None,
                  write) -> int:
    """``plan --engine vllm --model M --gpu any|a,b [--price GPU=USD/h] [--layouts tp,pp] [--json]``: exit 0
    when some GPU type has a deployment, 1 when none does, 2 on bad input."""
    needs = Needs(ns.need_context, ns.need_concurrency or 1)
    res = search_hardware(gpu_set(ns.gpu), model, flags, env, needs, version, parse_prices(ns.price),
                          getattr(ns, "layouts", None))
    serve = L.model_arg(model)

    def commands(lay, fl):
        return [L.serve_line(serve, fl, env)]

    if ns.json:
        write(json.dumps(D.hardware_dict(res, model.spec.name, commands, "vllm", version_of(version)[0]), indent=2)
              + "\n")
    else:
        write(D.render_hardware(res, model.spec.name, commands, footer(res)) + "\n")
    return 0 if res.deployments else 1


__all__ = ["Layout", "Needs", "hardware_main", "search_hardware"]
