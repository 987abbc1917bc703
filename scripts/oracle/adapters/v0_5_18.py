"""SGLang 0.5.18: the v0_5_19 adapter unchanged (its two 0.5.18 fallbacks: no ServerArgs.resolve_once,
resolution written onto the fields by __post_init__, no overrides.resolution_result). Kept as a
separate file only because oracle.py picks versions/v<newest <= installed>.py."""
from versions.v0_5_19 import *  # noqa: F401,F403

VERSION = "0.5.18"
