"""Per-version code for SGLang 0.5.11 (also 0.5.12 / 0.5.13): the shared oracle's 0.5.11 adapter plus the DFLASH
block of ``ModelRunner.__init__`` that its ``make_runner`` leaves out.

The shared adapter (/work/shared/tools/sglang-oracle/versions/v0_5_11.py, copied beside this file as
``shared_v0_5_11.py`` by scripts/oracle/oracle_copy.sh) builds a ModelRunner without running ``__init__`` and
sets ``dflash_draft_num_layers = None``; SGLang's own ``__init__`` sets it from the draft config for a DFLASH
target (srt/model_executor/model_runner.py:417-460 @0.5.11), and the pool configurator scales the cell by it
(srt/model_executor/pool_configurator.py:95-111 @0.5.11). Without the block every DFLASH case reports the cell
without the draft's KV term and never reaches the target-layer check. ``make_runner`` below runs SGLang's
own functions in that block's order (parse_dflash_draft_config, require_num_layers, resolve_target_layer_ids);
everything else is the shared adapter, unchanged.

The checkpoint's quantization (also for 0.5.9 / 0.5.10 / 0.5.12 / 0.5.13, which reuse ``after_load_model``): the
shared adapter's empty model has no quant config, so ``--kv-cache-dtype auto`` never saw the checkpoint's KV scheme.
``after_load_model`` below gives the empty model the quant config SGLang's loader builds
(standins.give_model_quant_config: model_loader/loader.py _get_quantization_config with the LoadConfig of
ModelRunner.load_model's own statements, model_runner.py:920-941 @0.5.9, :1404-1426 @0.5.12), set only if the
architecture's class keeps ``self.quant_config``, just before SGLang's ModelRunner.configure_kv_cache_dtype reads
``getattr(self.model, "quant_config", None).kv_cache_quant_algo`` (model_runner.py:1669-1690 @0.5.9, :2210-2230
@0.5.11, :2244-2264 @0.5.13). In these releases only ModelOpt's configs (and petit) set ``kv_cache_quant_algo``
(layers/quantization/modelopt_quant.py): compressed-tensors' ``kv_cache_scheme`` and Fp8Config's
``kv_cache_quant_algo`` key are not read (no such attribute), so those keep the model dtype under ``auto``.
Unquantized checkpoints are unchanged (no quant config).
"""
from versions import shared_v0_5_11 as _base
from versions.standins import dflash_runner_fields, give_model_quant_config
from versions.shared_v0_5_11 import *  # noqa: F401,F403  (re-exported for oracle.py and the adapters built on it)

globals().update({k: getattr(_base, k) for k in dir(_base) if k.startswith("_") and not k.startswith("__")})


def make_runner(S, server_args, model_config, is_draft_worker=False, req_to_token_pool=None,
                token_to_kv_pool_allocator=None, memory_pool_config=None):
    r = _base.make_runner(S, server_args, model_config, is_draft_worker, req_to_token_pool,
                          token_to_kv_pool_allocator, memory_pool_config)
    sa = server_args
    # (0.5.9 / 0.5.10 reuse this make_runner: their SpeculativeAlgorithm has no DFLASH)
    if getattr(r.spec_algorithm, "is_dflash", lambda: False)() and not is_draft_worker:  # model_runner.py:417-460 @0.5.11
        dflash_runner_fields(r, sa, model_config)
    return r


def after_load_model(S, r):
    """The shared adapter's after_load_model (model_runner.py:651-697 @0.5.11), with the loader's quant config on
    the empty model when SGLang's own configure_kv_cache_dtype runs (see the module docstring)."""
    def configure_kv_cache_dtype():
        give_model_quant_config(r, S.ModelRunner)
        return type(r).configure_kv_cache_dtype(r)  # SGLang's own

    r.configure_kv_cache_dtype = configure_kv_cache_dtype
    try:
        _base.after_load_model(S, r)
    finally:
        del r.configure_kv_cache_dtype
