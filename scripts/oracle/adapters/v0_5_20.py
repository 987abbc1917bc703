"""SGLang 0.5.20: the v0_5_19 adapter unchanged (it reads ServerArgs' fields with arg_utils.record_fields,
since 0.5.20 builds ServerArgs as a msgspec Struct). Kept as a separate file only because oracle.py picks
versions/v<newest <= installed>.py."""
from versions.v0_5_19 import *  # noqa: F401,F403

VERSION = "0.5.20"


# ---- DP attention: one attention-DP rank (tests/golden/dp_ep/) ----
# SGLang 0.5.20 publishes the attention-DP widths it resolved (runtime_context.get_parallel()._config: attn_dp_size =
# dp_size with --enable-dp-attention, attn_tp_size = tp // attn_dp_size // attn_cp_size), but v0_5_19's stand-ins
# stamp attn_dp_size 1 / attn_tp_size tp into the parallel overrides and into the ParallelState the KV configurator
# divides --max-running-requests by (mem_cache/kv_cache_configurator.py:2272 @0.5.20). Both keep the published widths
# here, for rank 0 of the first attention-DP group (as v0_5_21.py / v0_5_23.py do for theirs).
import dataclasses as _dc  # noqa: E402

from versions import v0_5_19 as _v19  # noqa: E402

_v19_install = _v19.install_distributed_standins
from versions.standins import published_attn_widths, with_attn_dp_widths  # noqa: E402
_v19_ps = _v19._ps
_published = published_attn_widths  # (standins.py)


install_distributed_standins = with_attn_dp_widths(_v19_install)


def _ps_dp(S, sa):
    ps = _v19_ps(S, sa)
    attn_dp, attn_tp = _published(S, sa.tp_size)
    if ps is not None and attn_dp > 1:
        ps = _dc.replace(ps, attn_dp_size=attn_dp, attn_tp_size=attn_tp)
    return ps


_v19._ps = _ps_dp  # make_runner (v0_5_19) reads the module global: only this 0.5.20 process imports v0_5_20
