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
