"""SGLang 0.5.22: the v0_5_21 adapter unchanged (it detects the 0.5.21-0.5.23 signature changes itself).
Kept as a separate file only because oracle.py picks versions/v<newest <= installed>.py."""
from versions.v0_5_21 import *  # noqa: F401,F403

VERSION = "0.5.22"


# ---- decode context parallel (tests/golden/cp/) ----
# v0_5_19's stand-in stamps dcp_enabled False / attn_dcp_size 1 whatever the flags. SGLang publishes
# dcp_enabled = dcp_size > 1 and attn_dcp_size = dcp_size (runtime_context.py:144-169 @0.5.22), and rank 0 has
# dcp_rank = tp_rank % dcp_size = 0 (runtime_context.py:1585 @0.5.22). Those widths are kept here
# (the same block as v0_5_23.py's).
# It wraps v0_5_21's stand-in (which stamps the attention-DP widths), so DP attention keeps its widths here.
from versions.standins import with_dcp_widths  # noqa: E402

install_distributed_standins = with_dcp_widths(install_distributed_standins)  # noqa: F405 (v0_5_21's)
