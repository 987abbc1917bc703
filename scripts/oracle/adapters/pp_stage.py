"""Pipeline-parallel stage stand-ins for the oracle: one process plays ONE pp rank of a ``--pp-size P`` launch.

Environment (read when the adapter's ``load()`` runs, before any sizing):
  ORACLE_PP_RANK=R          this process plays pp rank R (0 <= R < --pp-size); unset: pp stays 1 (no change)
  ORACLE_PP_MIN_TOKENS=N    the other ranks' token capacities, min-reduced (the all-reduce's answer, see below)
  ORACLE_PP_LOG=FILE        where the rank's own capacity at the all-reduce is appended (one integer a line)

What each stand-in replaces (no arithmetic of SGLang's is touched):
- the parallel state: get_parallel() answers pp_size = P, pp_rank = R, and a pp group of world size P with
  rank_in_group R (as init_distributed_environment / initialize_model_parallel give a real rank);
  ParallelState (<= 0.5.20) carries the same pp_size / pp_rank; the 0.5.21+ KVCacheConfigurator gets
  pp_size = P, as ModelRunner.init_kv_cache_configurator passes ``self.pp_group.world_size``.
- the loaded model's layer range: a real model class builds its layers with ``make_layers(..., pp_rank,
  pp_size)``, which calls ``get_pp_indices(num_hidden_layers, pp_rank, pp_size)`` (srt/distributed/utils.py:95-131
  @0.5.16, SGLANG_PP_LAYER_PARTITION included) and keeps ``start_layer`` / ``end_layer`` on the model, which
  ``resolve_layer_indices`` reads (layer_setup.py:182-186 @0.5.16). The oracle's empty model gets the same two
  attributes from SGLang's own ``get_pp_indices`` before resolve_layer_indices runs.
- the pp all-reduce: KVCacheConfigurator._apply_token_constraints min-reduces the token capacity over the world
  group when pp_size > 1 (mem_cache/kv_cache_configurator.py:1610-1618 @0.5.16). The oracle runs one process, so
  the reduce would return this rank's own value; the stand-in logs that value (ORACLE_PP_LOG) and, when
  ORACLE_PP_MIN_TOKENS gives the other ranks' minimum, answers min(own, given): the real reduce's result.
  scripts/oracle/pp_pd_cases.py runs every rank twice: first to log each capacity, then with the minimum.
"""
from __future__ import annotations

import dataclasses
import os
import types


def stage() -> tuple[int, int, int | None]:
    """(pp_rank, pp_size, min_tokens) of the case now running, read from the environment at each call (so a
    batch, whose cases each bring their own ``env``, plays a different rank per case); pp_rank -1 when this case
    plays no pp stage. ORACLE_PP_SIZE gives the size in batch mode (the case's flags are not in sys.argv)."""
    r = os.environ.get("ORACLE_PP_RANK")
    m = os.environ.get("ORACLE_PP_MIN_TOKENS")
    rank = int(r) if r not in (None, "") else -1
    if rank < 0:
        return -1, 1, None
    s = os.environ.get("ORACLE_PP_SIZE")
    size = int(s) if s not in (None, "") else _pp_size()
    if not 0 <= rank < size:
        raise ValueError(f"ORACLE_PP_RANK={rank} is outside --pp-size {size}")
    return rank, size, (int(m) if m not in (None, "") else None)


def current_size() -> int:
    """The pp group's world size for the case now running (1 off a pp stage)."""
    return stage()[1]


def _pp_size() -> int:
    import sys

    argv = sys.argv
    for i, a in enumerate(argv):
        if a in ("--pp-size", "--pipeline-parallel-size") and i + 1 < len(argv):
            return int(argv[i + 1])
        if a.startswith(("--pp-size=", "--pipeline-parallel-size=")):
            return int(a.split("=", 1)[1])
    return 1


def wrap_ps(base) -> None:
    """ParallelState (<= 0.5.20): the pp rank and size on the state ``base._ps`` builds (an adapter that replaces
    ``base._ps`` after install, as v0_5_17 does, wraps its own again)."""
    real_ps = base._ps

    def _ps(S_, sa):
        ps = real_ps(S_, sa)
        rank, size, _ = stage()
        if ps is None or rank < 0:
            return ps
        return dataclasses.replace(ps, pp_size=size, pp_rank=rank)

    base._ps = _ps


def install(S, base) -> None:
    """Patch ``base`` (the adapter module whose functions build the parallel state) and S; every stand-in asks
    :func:`stage` for the case now running and passes through unchanged when it plays no pp rank."""
    if getattr(S, "pp_stage_installed", False):  # v0_5_21 builds on v0_5_19, which installs it already
        return
    S.pp_stage_installed = True
    S.pp_stage = (0, 1)  # kept for adapters that read it; current_size() is the per-case answer
    real_overrides = base._parallel_overrides

    def _parallel_overrides(S_, tp):
        world, ov = real_overrides(S_, tp)
        rank, size, _ = stage()
        if rank < 0:
            return world, ov
        ov = dict(ov, pp_size=size, pp_rank=rank,
                  pp_group=types.SimpleNamespace(world_size=size, rank_in_group=rank, cpu_group=None,
                                                 device_group=None, ranks=list(range(size)), local_rank=0,
                                                 rank=rank, is_first_rank=rank == 0,
                                                 is_last_rank=rank == size - 1))
        return world, ov

    base._parallel_overrides = _parallel_overrides

    wrap_ps(base)

    from sglang.srt.distributed.utils import get_pp_indices  # SGLang's own partition

    real_indices = S.resolve_layer_indices

    def resolve_layer_indices(**kw):
        rank, size, _ = stage()
        if rank >= 0:
            model, cfg = kw["model"], kw["model_config"]
            model.start_layer, model.end_layer = get_pp_indices(cfg.num_hidden_layers, rank, size)
        return real_indices(**kw)

    S.resolve_layer_indices = resolve_layer_indices
    _patch_min_all_reduce()


def _patch_min_all_reduce() -> None:
    """The pp all-reduce MIN of the token capacity, answered as the real group answers it (see install)."""
    import torch

    real_all_reduce = torch.distributed.all_reduce
    if getattr(real_all_reduce, "pp_stage", False):
        return

    def all_reduce(tensor, op=torch.distributed.ReduceOp.SUM, group=None, async_op=False):
        rank, _, min_tokens = stage()
        if (rank >= 0 and op == torch.distributed.ReduceOp.MIN and tensor.numel() == 1
                and tensor.dtype == torch.int64):
            own = int(tensor.item())
            log = os.environ.get("ORACLE_PP_LOG")
            if log:
                with open(log, "a") as f:
                    f.write(f"{own}\n")
            if min_tokens is not None:
                tensor.fill_(min(own, min_tokens))
            return None
        return real_all_reduce(tensor, op=op, group=group, async_op=async_op)

    all_reduce.pp_stage = True
    torch.distributed.all_reduce = all_reduce


def install_v0_5_14(S) -> None:
    """0.5.14 / 0.5.15 (adapters v0_5_14.py, v0_5_15.py): the same stand-ins on that adapter's own structure.
    The parallel state: get_parallel()'s overrides and parallel_state._PP carry the pp rank and group; the
    runner's pp_rank (model_runner.py:367-530 Parse-args block sets it from the rank); the layer range: after
    load_model, ``self.start_layer`` / ``end_layer`` / ``num_effective_layers`` (model_runner.py:744-746 @0.5.14)
    from SGLang's own get_pp_indices, as a real model class built with make_layers carries them; the pp MIN
    (model_runner_kv_cache_mixin.py:971-976 @0.5.14)."""
    import sys

    from sglang.srt.distributed.utils import get_pp_indices

    mods = [m for m in (sys.modules.get("versions.v0_5_14"), sys.modules.get("versions.v0_5_15")) if m is not None]
    for mod in mods:
        if getattr(mod, "pp_stage_installed", False):
            continue
        mod.pp_stage_installed = True
        real_install, real_parse, real_after = (mod.install_distributed_standins, mod.parse_args_block,
                                                mod.after_load_model)

        def install_distributed_standins(S_, tp_size, _real=real_install):
            _real(S_, tp_size)
            rank, size, _ = stage()
            if rank < 0:
                return
            grp = types.SimpleNamespace(world_size=size, rank_in_group=rank, cpu_group=None, device_group=None,
                                        ranks=list(range(size)), local_rank=0, rank=rank, is_first_rank=rank == 0,
                                        is_last_rank=rank == size - 1)
            ov = S_.get_parallel()._overrides
            ov.update({k: v for k, v in dict(pp_size=size, pp_rank=rank, pp_group=grp).items() if k in ov})
            S_.parallel_state._PP = grp

        def parse_args_block(S_, *a, _real=real_parse, **kw):
            r = _real(S_, *a, **kw)
            rank, _, _ = stage()
            if rank >= 0:
                r.pp_rank = rank
            return r

        def after_load_model(S_, r, _real=real_after):
            _real(S_, r)
            rank, size, _ = stage()
            if rank >= 0 and not r.is_draft_worker:
                r.model.start_layer, r.model.end_layer = get_pp_indices(r.model_config.num_hidden_layers, rank, size)
                r.start_layer, r.end_layer = r.model.start_layer, r.model.end_layer
                r.num_effective_layers = r.end_layer - r.start_layer
                r.adjust_hybrid_swa_layers_for_pp()  # SGLang's own, with the rank's range

        mod.install_distributed_standins = install_distributed_standins
        mod.parse_args_block = parse_args_block
        if mod.__name__.endswith("v0_5_14"):
            mod.after_load_model = after_load_model
    # v0_5_15.after_load_model calls v0_5_14's (wrapped above); oracle.py calls the adapter module's own
    # install_distributed_standins, hence both modules
    _patch_min_all_reduce()
