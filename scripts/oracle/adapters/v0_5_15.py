"""SGLang 0.5.15: the v0_5_14 adapter with 0.5.15's ModelRunner.__init__ differences.

The sizing chain (model_runner_kv_cache_mixin.py + pool_configurator.py) has the same entry points as
0.5.14; 0.5.15 adds MemoryPoolConfigurator.finalize_with_max_running_requests (called inside SGLang's
own _resolve_memory_pool_config, identity for the default configurator) and, for hybrid SWA only,
budgets the EAGLE draft's full-attention layers in HybridSWAPoolConfigurator. Neither needs adapter code.

ModelRunner.__init__ (0.5.15 model_runner.py:367-530) differs from 0.5.14 in what the oracle must copy:
- it sets dcp_size = server_args.dcp_size and dcp_rank = tp_rank % dcp_size (read by _init_pools);
- set_global_server_args_for_scheduler(server_args) is called for the target worker only, and the
  `use_mla_backend` write on the global server args is gone;
- load_model sets prefill_aware_swa = hasattr(model, "is_prefill_aware_swa") and model.is_prefill_aware_swa()
  (False for the empty model stand-in).
"""
from versions import v0_5_14 as _base
from versions.v0_5_14 import *  # noqa: F401,F403

VERSION = "0.5.15"


def make_runner(S, server_args, model_config, is_draft_worker=False, req_to_token_pool=None,
                token_to_kv_pool_allocator=None, memory_pool_config=None):
    r = _base.parse_args_block(S, server_args, model_config, is_draft_worker, req_to_token_pool,
                               token_to_kv_pool_allocator, memory_pool_config)
    r.dcp_size = server_args.dcp_size  # model_runner.py:382-383
    r.dcp_rank = r.tp_rank % r.dcp_size
    r.model_specific_adjustment()
    if not is_draft_worker:  # model_runner.py:526-529
        S.set_global_server_args_for_scheduler(server_args)
    _base.init_tail(S, r)
    return r


def after_load_model(S, r):
    r.prefill_aware_swa = False  # load_model: the empty model has no is_prefill_aware_swa
    _base.after_load_model(S, r)
