"""Which hardware: ``plan --model M --gpu any`` (or ``--gpu h100-sxm,h200,b200``).

For each GPU type, deployment sizes are tried smallest first (1, 2, 4, 8 GPUs on one node; 8 per node on
2..``--nnodes`` nodes); the first size at which some layout meets the needs is that GPU type's deployment.
Deployments are ranked by GPUs used, then by cost per hour when ``--price GPU=USD/h`` names the type (a type
without a price ranks after the priced ones of the same size), then by concurrency at the needed length.

The layout kinds (:class:`Layout`, ``--layouts``):

* ``tp``: one tensor-parallel group over every GPU (over ``--nnodes`` nodes too: the planner plans the per-GPU
  memory as for one node). Its flags come from the search (:func:`planner.engines.sglang.search.run_search`, the
  same needs and fixed flags as one ``plan``).
* ``dp``: DP attention (``--tp-size T --dp-size D --enable-dp-attention``, D attention-DP ranks of attention-TP
  T / D), with ``--ep-size T`` for an MLA MoE model (expert parallel, ``--moe-a2a-backend`` left at its default
  ``none``). Planned per rank (planner/engines/sglang/pipeline/dp_attention.py); a request lives on one rank,
  so the deployment holds D x one rank's requests.
* ``pp``: ``--tp-size T --pp-size P``, one plan per rank, the token capacity the MIN over the ranks
  (planner/engines/sglang/pp.py); across nodes T = 8 and P = the node count.
* ``pd``: a prefill server and a decode server (``--disaggregation-mode prefill|decode``), each planned alone
  (planner/engines/sglang/pipeline/disaggregation.py) at its own smallest TP: the decode server holds the
  concurrency at the needed length, the prefill server one request of that length; the deployment's GPUs are
  both servers'.

``dp`` and each ``pd`` role take the search's flags too (the search runs per attention-DP rank and per PD role:
planner/engines/sglang/search.py); ``pp`` is planned with SGLang's defaults for the layout (the search does not
run per pipeline rank). Whether a model / release has the mode is asked of the pipeline: its by-name refusal
(BadInput) means "not this layout", never a guess. By default (``--layouts auto``) ``dp`` and ``pp`` are tried only at a size where TP alone does
not meet the needs (so a GPU type stops at its first fitting size, and a model TP serves costs nothing more),
and ``pd`` only when ``--layouts`` names it (its two servers never use fewer GPUs than one). AMD profiles are
not searched: SGLang's ROCm path is refused by the pipeline (``planner/engines/sglang/pipeline/__init__.py``),
and each is listed as skipped with that reason.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.catalog.catalog import ResolvedModel
from planner.engines import deployments as D
from planner.engines.deployments import (  # noqa: F401 - the engine-neutral parts, re-exported for SGLang's callers
    KIND_NAMES, KINDS, Deployment, HardwareResult, Server, gpu_set, is_gpu_set, parse_prices)
from planner.errors import BadInput
from planner.engines.sglang.pipeline.rocm import GFX_CAPABILITY as ROCM_GFX
from planner.hardware.amdsmi import ROCM_NOT_MODELLED
from planner.hardware.profiles import GpuProfile
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.export import FORMATS, export_text, layout_commands, node_commands
from planner.engines.sglang.search import Needs, run_search

COUNTS_PER_NODE = (1, 2, 4, 8)  # GPUs per node tried (one node); more nodes take 8 each
MAX_NNODES = 64
# flags that set a layout: the search sets them per layout, so one given is refused by name (ask with --layouts)
LAYOUT_FLAGS = ("--pp-size", "--pipeline-parallel-size", "--dp-size", "--data-parallel-size", "--enable-dp-attention",
                "--attn-dp-size", "--ep-size", "--expert-parallel-size", "--disaggregation-mode")


@dataclass(frozen=True)
class Layout(D.Layout):
    """One server's shape (planner.engines.deployments.Layout) with its SGLang flags."""

    def flags(self) -> list[str]:
        out = ["--tp-size", str(self.tp)]
        if self.pp > 1:
            out += ["--pp-size", str(self.pp)]
        if self.dp > 1:
            out += ["--dp-size", str(self.dp), "--enable-dp-attention"]
        if self.ep > 1:
            out += ["--ep-size", str(self.ep)]
        if self.role:
            out += ["--disaggregation-mode", self.role]
        return out + (["--nnodes", str(self.nnodes)] if self.nnodes > 1 else [])


def layouts(max_nnodes: int = 1, tp: int | None = None, gpu: GpuProfile | None = None) -> list[Layout]:
    """The tensor-parallel layouts, fewest GPUs first: one TP group over every GPU of the deployment (1, 2, 4,
    8 on one node; 8 per node on 2..``max_nnodes`` nodes). A unified-memory ``gpu`` (DGX Spark, Jetson Thor: one
    GPU per box) has one GPU per node. ``tp``: the user fixed ``--tp-size``, only layouts of that width."""
    if gpu is not None and gpu.unified_memory:
        out = [Layout(1, k, k) for k in range(1, max_nnodes + 1)]
    else:
        out = [Layout(n, 1, n) for n in COUNTS_PER_NODE]
        out += [Layout(8, k, 8 * k) for k in range(2, max_nnodes + 1)]
    return [lay for lay in out if tp is None or lay.tp == tp]


def extra_layouts(size: Layout, model: ResolvedModel, kinds: tuple[str, ...]) -> list[Layout]:
    """The DP-attention and PP layouts on the GPUs of the TP layout ``size`` (its nodes and GPUs per node), in
    the order tried: DP attention with the most attention-DP ranks first (each rank holds its own requests),
    then PP with the widest TP first. Whether the pipeline models each is asked when it is planned."""
    n, k = size.gpus_per_node, size.nnodes
    out: list[Layout] = []
    if "dp" in kinds and size.tp > 1:
        # --ep-size T on the MoE models whose expert parallel the pipeline models (MLA: expert_parallel.ep_refusal);
        # with --moe-a2a-backend none EP holds the same expert bytes per GPU as the 1/tp split, so a GQA MoE
        # model's DP layout leaves it off rather than be refused for it
        ep = size.tp if model.spec.num_experts and model.spec.mla is not None else 1
        d = size.tp
        while d >= 2 and size.tp % d == 0:
            out.append(Layout(n, k, size.tp, dp=d, ep=ep))
            d //= 2
    if "pp" in kinds:
        if k == 1:
            p = 2
            while p <= n:
                out.append(Layout(n, 1, n // p, pp=p))
                p *= 2
        else:  # across nodes: TP within a node, one pipeline rank per node (unified-memory boxes: TP 1)
            out.append(Layout(n, k, n, pp=k))
    return out


def parse_layouts(text: str | None) -> tuple[tuple[str, ...], bool]:
    """``--layouts`` -> (the kinds tried, auto). ``auto`` (the default): tp, then dp and pp where TP alone does
    not meet the needs; ``all``: every kind at every size; else a comma list of tp, dp, pp, pd."""
    return D.parse_layouts(text)


def split_layout_flags(flags: list[str]) -> tuple[list[str], int | None, int]:
    """The user's flags without ``--tp-size`` / ``--nnodes`` (the search sets them per layout), the fixed TP
    (None: free) and the most nodes to try (``--nnodes``, default 1). Another layout flag (``--pp-size``,
    ``--dp-size``, ``--enable-dp-attention``, ``--ep-size``, ``--disaggregation-mode``, ...) is refused by name:
    the search sets those per layout (``--layouts`` asks for a kind)."""
    rest: list[str] = []
    tp, nnodes = None, 1
    i = 0
    while i < len(flags):
        f = flags[i]
        name, eq, val = f.partition("=")
        if name in LAYOUT_FLAGS:
            raise BadInput(f"{name}: the hardware search sets the layout per deployment; drop it and ask for the kind "
                           f"with --layouts ({', '.join(KINDS)}), or plan one GPU type")
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


_rank = D.rank_key


class _Ctx:
    """One search's fixed inputs and counters."""

    def __init__(self, model, base, env, needs, version, out: HardwareResult):
        self.model, self.base, self.env, self.needs, self.version, self.out = model, base, env, needs, version, out
        self.need_ctx = needs.context if needs.context is not None else min(32768, model.spec.derived_context_len)
        self.weights_fail: set[tuple[str, int, int]] = set()  # (gpu, tp, nnodes) whose TP plan's weights do not load

    def refused(self, kind: str, why: str) -> str:
        self.out.refused.setdefault(kind, why)
        return why


def _try_tp(c: _Ctx, gpu: GpuProfile, lay: Layout) -> Deployment | str:
    """A TP layout: the search's best flags for the needs, or why none."""
    lf = c.base + lay.flags()
    c.out.tried += 1
    try:
        plan = make_plan(gpu, c.model, lf, c.env, version=c.version)
    except BadInput as e:  # this profile is refused for TP as a whole (e.g. a part the pipeline does not model)
        raise _Refused(str(e)) from None
    if plan.stage in ("model_config", "load_model"):  # no searched flag changes TP divisibility or weights
        if plan.stage == "load_model":
            c.weights_fail.add((gpu.id, lay.tp, lay.nnodes))
        return f"{lay.label()}: {plan.error_message or plan.stage}"
    res = run_search(gpu, c.model, lf, c.env, c.needs, top=1, relax=False, version=c.version, prune=True)
    if res.recommended is None:
        return f"{lay.label()}: the needs are not met by any searched flags"
    best = res.ranked[0]
    return Deployment(gpu, lay, best.flags, best.concurrency, best.kv_tokens)


class _Refused(Exception):
    """The pipeline refuses the layout by name."""


def _one_plan(c: _Ctx, gpu: GpuProfile, lay: Layout, prefill: bool = False) -> tuple[int, int] | str:
    """A layout planned with SGLang's defaults: (requests of the needed length at once over the deployment, KV
    tokens over it), or why it does not serve them. Raises _Refused when the pipeline refuses it by name.
    ``prefill``: a PD prefill server, which must hold one request of the needed length."""
    from planner.engines.sglang.report import capacity  # noqa: PLC0415

    flags = c.base + lay.flags()
    c.out.tried += 1
    try:
        if lay.pp > 1:
            plans, tokens = _pp_plans(c, gpu, flags, lay.pp)
        else:
            p = make_plan(gpu, c.model, flags, c.env, version=c.version)
            plans, tokens = [p], None
    except BadInput as e:
        raise _Refused(c.refused(lay.kind, str(e))) from None
    for p in plans:
        if p.verdict != "fits":
            return f"{lay.label()}: {p.verdict}" + (f" ({p.error_message})" if p.error_message else "")
    cap = capacity(plans[0])
    if cap is None:
        return f"{lay.label()}: no capacity"
    n = tokens if tokens is not None else cap["kv_tokens"]
    if min(cap["context_len"] - 1, n - 1) < c.need_ctx:
        return f"{lay.label()}: the longest request is {min(cap['context_len'] - 1, n - 1):,} tokens"
    conc = min(cap["max_running_requests"], n // max(c.need_ctx, 1)) * lay.dp
    if not prefill and conc < c.needs.concurrency:
        return f"{lay.label()}: {conc} requests at the needed length"
    return conc, n * lay.dp


def _pp_plans(c: _Ctx, gpu: GpuProfile, flags: list[str], size: int):
    """Every pipeline rank's plan (planner/engines/sglang/pp.py) and the MIN token capacity, or BadInput naming
    what pp.refusal does not model."""
    from planner.engines.sglang.pp import make_pp_plans, refusal  # noqa: PLC0415
    from planner.engines.sglang.rules import default_version  # noqa: PLC0415

    why = refusal(c.model, flags, c.version or default_version()[0])
    if why:
        raise BadInput(why)
    stages = make_pp_plans(gpu, c.model, flags, c.env, size, version=c.version)
    caps = [s.capacity for s in stages]
    return [s.plan for s in stages], (min(caps) if all(x is not None for x in caps) else None)


def _try_plain(c: _Ctx, gpu: GpuProfile, lay: Layout) -> Deployment | str:
    if lay.pp == 1:  # DP attention (+ EP): the search runs per attention-DP rank (search.run_search)
        got = _searched(c, gpu, lay, c.needs)
        if isinstance(got, str):
            return got
        return Deployment(gpu, lay, got[0], got[1], got[2])
    got = _one_plan(c, gpu, lay)
    if isinstance(got, str):
        return got
    return Deployment(gpu, lay, c.base + lay.flags(), got[0], got[1], searched=False)


from planner.engines.sglang.pipeline.post_capture import HYBRID_DP_SEARCH_SKIPPED, SEARCH_SKIPPED  # noqa: E402

_SEARCH_NOT_RUN = (HYBRID_DP_SEARCH_SKIPPED, SEARCH_SKIPPED)


def _searched(c: _Ctx, gpu: GpuProfile, lay: Layout, needs: Needs) -> tuple[list[str], int, int] | str:
    """A DP-attention layout or a PD role with the search's best flags for ``needs``: (flags, requests of the
    needed length at once over the layout's ranks, KV tokens over them), or why none. Raises _Refused when the
    pipeline refuses the layout by name. The search's numbers are one attention-DP rank's; a request lives on
    one rank, so the layout holds D x them (pipeline/dp_attention.rank_note)."""
    lf = c.base + lay.flags()
    c.out.tried += 1
    try:
        plan = make_plan(gpu, c.model, lf, c.env, version=c.version)
    except BadInput as e:
        raise _Refused(c.refused(lay.kind, str(e))) from None
    if plan.stage in ("model_config", "load_model"):  # no searched flag changes the weights
        return f"{lay.label()}: {plan.error_message or plan.stage}"
    # exact_top=1: only the first ranked point is read (proved as the exhaustive search's first)
    res = run_search(gpu, c.model, lf, c.env, needs, top=1, relax=False, version=c.version, prune=True, exact_top=1)
    if res.skipped_why in _SEARCH_NOT_RUN:  # the search does not model this layout (e.g. DP attention on a hybrid)
        raise _Refused(c.refused(lay.kind, res.skipped_why))
    if res.recommended is None:
        return f"{lay.label()}: the needs are not met by any searched flags"
    best = res.ranked[0]
    return best.flags, best.concurrency * lay.dp, best.kv_tokens * lay.dp


def _try_pd(c: _Ctx, gpu: GpuProfile, tp: int | None) -> Deployment | str:
    """Prefill and decode servers, each at its smallest TP on one node (1, 2, 4, 8 GPUs; one on a
    unified-memory box; ``tp``: the user's --tp-size only): decode holds the concurrency, prefill one request of
    the needed length."""
    widths = tuple(w for w in ((1,) if gpu.unified_memory else COUNTS_PER_NODE) if tp is None or w == tp)
    if not widths:
        return f"PD: --tp-size {tp} is not a server width searched"
    why = ""
    found: dict[str, tuple[Layout, tuple[int, int]]] = {}
    for role in ("decode", "prefill"):
        # the decode server holds the concurrency; the prefill server one request of the needed length
        needs = c.needs if role == "decode" else replace(c.needs, concurrency=1)
        for t in widths:
            lay = Layout(t, 1, t, role=role)
            got = _searched(c, gpu, lay, needs)
            if not isinstance(got, str):
                found[role] = (lay, got)
                break
            why = got
        else:
            return f"PD: no {role} server fits up to {widths[-1]} GPU(s) ({why})"
    (dl, (dflags, dconc, dkv)), (pl, (pflags, pconc, pkv)) = found["decode"], found["prefill"]
    prefill = Server(pl, pflags, pconc, pkv)
    return Deployment(gpu, dl, dflags, dconc, dkv, prefill=prefill)


def _best_for(c: _Ctx, gpu: GpuProfile, tp: int | None, max_nnodes: int) -> Deployment | str:
    """One GPU type's smallest deployment, or why none."""
    kinds, auto = c.out.kinds, c.out.auto
    sizes = layouts(max_nnodes, tp, gpu)
    if not sizes:
        return f"--tp-size {tp}: one GPU per node (unified memory) on at most {max_nnodes} node(s)"
    why, tp_ok = "no layout tried", "tp" in kinds
    tp_why = None  # why the largest TP layout planned does not serve (the skipped line's reason when set)
    refusals: list[str] = []  # the pipeline's by-name refusals of the layouts asked for, in order
    evaluated = False  # some layout was planned (not refused)
    best: Deployment | None = None
    for size in sizes:
        found: list[Deployment] = []
        if tp_ok:
            try:
                got = _try_tp(c, gpu, size)
            except _Refused as e:  # TP is refused on this type: every TP size alike
                tp_ok = False
                refusals.append(c.refused("tp", str(e)))
                got = None
            if isinstance(got, Deployment):
                found.append(got)
            elif got is not None:
                why = tp_why = got
                evaluated = True
        if not (found and auto):
            for lay in extra_layouts(size, c.model, kinds):
                if tp is not None and lay.tp != tp:
                    continue  # the user fixed --tp-size
                if lay.dp > 1 and (gpu.id, lay.tp, lay.nnodes) in c.weights_fail:
                    continue  # DP attention holds at least TP's weights per GPU (attention split over attn-TP
                    # <= TP, the rest as TP: pipeline/dp_attention.py) on the same free memory: it cannot load
                try:
                    got = _try_plain(c, gpu, lay)
                except _Refused as e:
                    refusals.append(str(e))  # not this layout (HardwareResult.refused keeps each kind's first)
                    continue
                if isinstance(got, Deployment):
                    found.append(got)
                    if auto:
                        break  # auto: the first extra layout that serves the needs at this size
                else:
                    why, evaluated = got, True
        if found:  # the first size that serves the needs: no larger one ranks before it
            best = min(found, key=_rank)
            break
    if "pd" in kinds:
        try:
            got = _try_pd(c, gpu, tp)
        except _Refused as e:
            refusals.append(f"PD: {e}")
            got = None
        if isinstance(got, Deployment):
            best = got if best is None else min((best, got), key=_rank)
        elif got is not None and best is None:
            why, evaluated = got, True
    if best is not None:
        return best
    if not evaluated:  # every layout asked for is refused by name: the first refusal says what is not modelled
        return refusals[0] if refusals else why
    largest = sizes[-1].label() if "tp" in kinds else f"{sizes[-1].gpus} GPU(s)"
    return f"nothing fits up to {largest} ({tp_why or why})"


def search_hardware(profiles: list[GpuProfile], model: ResolvedModel, flags: list[str], env: dict[str, str],
                    needs: Needs, version: str | None = None, prices: dict[str, float] | None = None,
                    layouts_text: str | None = None) -> HardwareResult:
    """Each GPU type's smallest deployment that meets ``needs`` (see the module docstring), ranked."""
    base, tp, max_nnodes = split_layout_flags(flags)
    kinds, auto = parse_layouts(layouts_text)
    prices = prices or {}
    need_ctx = needs.context if needs.context is not None else min(32768, model.spec.derived_context_len)
    out = HardwareResult(needs=needs, deployments=[], kinds=kinds, auto=auto, need_context=need_ctx)
    if not layouts(max_nnodes, tp):
        raise BadInput(f"--tp-size {tp}: not a layout searched (1, 2, 4, 8 GPUs on one node, 8 per node on "
                       f"--nnodes nodes)")
    if needs.speculative and needs.speculative != "off" and kinds != ("tp",):
        kinds = out.kinds = tuple(k for k in kinds if k == "tp")  # the other kinds plan SGLang's defaults only
        for k in KINDS[1:]:
            out.refused[k] = "--speculative: only TP layouts are searched with speculative decoding"
        if not kinds:
            raise BadInput("--speculative with --layouts: only the TP layouts (--layouts tp) are searched with "
                           "speculative decoding")
    c = _Ctx(model, base, env, needs, version, out)
    for gpu in profiles:
        if gpu.vendor != "nvidia" and gpu.gfx_arch not in ROCM_GFX:  # AMD: the gfx targets pipeline/rocm.py models
            out.skipped.append((gpu.id, ROCM_NOT_MODELLED))
            continue
        got = _best_for(c, gpu, tp, max_nnodes)
        if isinstance(got, Deployment):
            got.price_per_gpu_hour = prices.get(gpu.id)
            out.deployments.append(got)
        else:
            out.skipped.append((gpu.id, got))
    out.deployments.sort(key=_rank)
    return out


def hardware_dict(res: HardwareResult, model: ResolvedModel, engine: str = "sglang",
                  version: str | None = None) -> dict:
    """``plan --gpu any --json`` (the "hardware" branch of ``plan schema plan``; docs/json.md)."""
    return D.hardware_dict(res, model.spec.name, lambda lay, flags: layout_commands(model, lay, flags), engine,
                           version)


def footer(res: HardwareResult) -> str:
    """The last line: what was searched."""
    if res.auto:
        what = ("auto: TP; DP attention + EP and TP x PP where TP does not serve the needs at a size and the "
                "pipeline models them; PD with --layouts pd")
    else:
        what = "--layouts " + ",".join(res.kinds)
    return f"{res.tried} layouts evaluated ({what}); multi-node layouts need --nnodes N."


def render_hardware(res: HardwareResult, model: ResolvedModel) -> str:
    return D.render_hardware(res, model.spec.name, lambda lay, flags: layout_commands(model, lay, flags),
                             footer(res))


def hardware_main(ns, resolved: ResolvedModel | None, flags: list[str], env: dict[str, str], build_needs,
                  write) -> int:
    """``plan --model M --gpu any|a,b [--price GPU=USD/h] [--nnodes N] [--layouts K] [--json]`` (planner.cli
    hands over here): exit 0 when some GPU type has a deployment, 1 when none does, 2 on bad input."""
    import json  # noqa: PLC0415

    for name, given in (("--no-search", ns.no_search), ("--batch", ns.batch),
                        ("--free-before-load-gib", ns.free_before_load_gib is not None),
                        ("--free-after-load-gib", ns.free_after_load_gib is not None),
                        ("--compare-releases", ns.compare_releases)):
        if given:
            raise BadInput(f"{name}: not with --gpu {ns.gpu} (the hardware search plans each type's own memory); "
                           f"drop it, or plan one GPU type")
    if ns.json and ns.export:
        raise BadInput(f"--json with --export {ns.export}: the export is the output; drop one")
    if not resolved:
        raise BadInput("--model: required (e.g. --model qwen3.6-27b)")
    needs = build_needs(ns.need_context, ns.need_concurrency, ns.speculative, ns.allow_fp8_kv, ns.allow_bf16_ssm,
                        ns.objective, ns.allow_no_radix)
    res = search_hardware(gpu_set(ns.gpu), resolved, flags, env, needs, version=ns.sglang_version,
                          prices=parse_prices(ns.price), layouts_text=getattr(ns, "layouts", None))
    if ns.export and ns.export != "launch" and not res.deployments:
        raise BadInput(f"--export {ns.export}: no deployment meets the needs on the GPU types given; nothing to export")
    if ns.json:
        from planner.engines.sglang.plan import default_version  # noqa: PLC0415

        version = ns.sglang_version or default_version()[0]
        write(json.dumps(hardware_dict(res, resolved, "sglang", version), indent=2) + "\n")
    elif ns.export and res.deployments:  # the first-ranked deployment, alone on stdout (a file to apply)
        write(export_text(ns.export, resolved, res.deployments[0]))
    else:
        write(render_hardware(res, resolved) + "\n")
    return 0 if res.deployments else 1


def add_hardware_args(p) -> None:
    """planner.cli's parser: the options only --gpu any / a list takes."""
    p.add_argument("--price", action="append", metavar="GPU=USD/h", help="--gpu any: a GPU type's price per hour")
    p.add_argument("--export", choices=FORMATS, help="--gpu any: print the first deployment as launch lines per "
                   "node, a Dynamo DynamoGraphDeployment or llm-d modelservice Helm values (planner/engines/sglang/export.py)")
    p.add_argument("--layouts", metavar="KINDS", help="--gpu any: the layout kinds searched: auto (default: TP, "
                   "then DP attention + EP and PP where TP alone needs more GPUs), all, or a list of tp, dp, pp, pd")
