"""SGLang 0.5.22: the v0_5_21 adapter unchanged (it detects the 0.5.21-0.5.23 signature changes itself).
Kept as a separate file only because oracle.py picks versions/v<newest <= installed>.py."""
from versions.v0_5_21 import *  # noqa: F401,F403

VERSION = "0.5.22"


# ---- decode context parallel (tests/golden/cp/) ----
# v0_5_19's stand-in stamps dcp_enabled False / attn_dcp_size 1 whatever the flags. SGLang publishes
# dcp_enabled = dcp_size > 1 and attn_dcp_size = dcp_size (runtime_context.py:144-169 @0.5.22), and rank 0 has
# dcp_rank = tp_rank % dcp_size = 0 (runtime_context.py:1585 @0.5.22). Those widths are kept here
# (the same block as v0_5_23.py's).
from versions import v0_5_19 as _v19  # noqa: E402

_base_install = _v19.install_distributed_standins


def install_distributed_standins(S, tp_size):
    par = S.get_parallel()
    cfg = getattr(par, "_config", None)
    try:
        dcp = int(cfg.dcp_size)
    except Exception:
        dcp = 1
    _base_install(S, tp_size)
    if dcp > 1:
        ov = S.get_parallel()._overrides
        ov.update(dcp_enabled=True, dcp_size=dcp, dcp_rank=0, attn_dcp_size=dcp, attn_dcp_rank=0,
                  dcp_group=type(ov["dcp_group"])(**{**vars(ov["dcp_group"]), "world_size": dcp,
                                                    "ranks": list(range(dcp))}))
