"""SGLang 0.5.23: the v0_5_21 adapter unchanged (it detects the 0.5.21-0.5.23 signature changes itself).
Kept as a separate file only because oracle.py picks versions/v<newest <= installed>.py."""
from versions.v0_5_21 import *  # noqa: F401,F403

VERSION = "0.5.23"
