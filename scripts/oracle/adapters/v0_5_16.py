"""SGLang 0.5.16: the shared oracle's own 0.5.16 adapter (copied beside this file as shared_v0_5_16.py by
oracle_copy.sh) plus the DSPARK draft worker, which the shared adapter refuses (NotImplementedError).

DSparkWorkerV2.__init__ (srt/speculative/dspark_components/dspark_worker_v2.py:64-112 @0.5.16) builds its draft
with build_draft_tp_worker(algo_label="DSPARK") (srt/speculative/draft_worker_common.py:57-112 @0.5.16): a deep
copy of the server args with context_length = the target's and the draft attention backend, then
TpModelWorker(is_draft_worker=True), i.e. an ordinary draft ModelRunner with its own KV pool; its
alloc_memory_pool (dspark_worker_v2.py:278-290) passes the target's memory_pool_config, req_to_token_pool and
token_to_kv_pool_allocator straight through, as every other draft worker does. So the oracle's generic draft
runner (is_draft_worker=True, the target's context length) is what SGLang builds; no arithmetic is added.
The draft attention backend only matters for is_dflash() (configure_kv_cache_dtype's fa4 branch), which
ModelRunner.configure_kv_cache_dtype passes as spec_algorithm.is_dflash() (model_runner.py:1082-1096): False
for DSPARK. A DeepSeek-V4 (MoE) self-drafting checkpoint is not modelled (it raises as before).
"""
from versions import shared_v0_5_16 as _base
from versions.shared_v0_5_16 import *  # noqa: F401,F403

VERSION = _base.VERSION


def __getattr__(name):  # private helpers oracle.py may reach for
    return getattr(_base, name)


def has_draft_worker(S, spec, server_args):
    """DSPARK builds a draft TpModelWorker (dspark_worker_v2.py:94-104 @0.5.16) unless the draft is a
    DeepSeek-V4 checkpoint (draft_is_deepseek_v4, dspark_config.py:24-38), which the oracle does not model."""
    if spec.name == "DSPARK" and not getattr(server_args, "enable_multi_layer_eagle", False):
        from sglang.srt.speculative.dspark_components.dspark_config import draft_is_deepseek_v4

        if draft_is_deepseek_v4(server_args=server_args):
            raise NotImplementedError("DSPARK with a DeepSeek-V4 draft is not modelled by the oracle")
        return True
    return _base.has_draft_worker(S, spec, server_args)
