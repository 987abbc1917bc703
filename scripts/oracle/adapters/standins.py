"""Stand-ins shared by the adapters of several releases (0.5.14-0.5.23). Not an adapter itself: oracle.py
picks only versions/v<X>_<Y>_<Z>.py, and this name does not start with "v". Copied next to the adapters by
scripts/oracle/oracle_copy.sh."""
import contextlib


@contextlib.contextmanager
def no_kernel_warmups(S):
    """Kernel stand-in: MHATokenToKVPool._init_kv_copy_and_warmup (on with speculative decoding)
    reads data_strides[0].item() and launches a Triton copy kernel on a 128-slot dummy; it
    allocates nothing that lasts. Replaced by a no-op that leaves _kv_copy_config = None, on every
    memory_pool class that defines it (none where this release has no such warm-up)."""
    from sglang.srt.mem_cache import memory_pool as mp

    patched = []
    for obj in list(vars(mp).values()):
        if isinstance(obj, type) and "_init_kv_copy_and_warmup" in vars(obj):
            patched.append((obj, vars(obj)["_init_kv_copy_and_warmup"]))

            def _noop(self):
                self._kv_copy_config = None

            obj._init_kv_copy_and_warmup = _noop
    try:
        yield
    finally:
        for obj, orig in patched:
            obj._init_kv_copy_and_warmup = orig


# summary/server-arg names of 0.5.11 -> attribute names in 0.5.14+ (cuda_graph_config per phase since 0.5.14,
# --mamba-scheduler-strategy renamed --mamba-radix-cache-strategy in 0.5.14)
SERVER_ARG_ALIASES = {
    # resolved decode-graph max bs lives in the per-phase cuda_graph_config
    "cuda_graph_max_bs": lambda sa: sa.cuda_graph_config.decode.max_bs,
    "cuda_graph_bs": lambda sa: sa.cuda_graph_config.decode.bs,
    "mamba_scheduler_strategy": "mamba_radix_cache_strategy",
}


def dflash_runner_fields(r, sa, model_config):
    """The DFLASH block of ModelRunner.__init__ the oracle does not run (model_runner.py:417-460 @0.5.11,
    :513-538 @0.5.14): SGLang's own draft-config parsing and target-layer resolution, the fields set on ``r``."""
    from sglang.srt.speculative.dflash_utils import parse_dflash_draft_config

    dmc = r._build_model_config(sa, model_path=sa.speculative_draft_model_path,
                                model_revision=sa.speculative_draft_model_revision, is_draft_model=True)
    dcfg = parse_dflash_draft_config(draft_hf_config=dmc.hf_config)
    draft_num_layers = dcfg.require_num_layers()
    target_num_layers = getattr(model_config.hf_text_config, "num_hidden_layers", None)
    if target_num_layers is None:
        raise ValueError("DFLASH requires target num_hidden_layers in config. "
                         f"Got target={target_num_layers}.")
    r.dflash_use_aux_hidden_state = True
    r.dflash_draft_num_layers = int(draft_num_layers)
    r.dflash_target_layer_ids = dcfg.resolve_target_layer_ids(
        target_num_layers=int(target_num_layers), draft_num_layers=int(draft_num_layers))
