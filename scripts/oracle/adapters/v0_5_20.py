"""SGLang 0.5.20: the v0_5_19 adapter unchanged (it reads ServerArgs' fields with arg_utils.record_fields,
since 0.5.20 builds ServerArgs as a msgspec Struct). Kept as a separate file only because oracle.py picks
versions/v<newest <= installed>.py."""
from versions.v0_5_19 import *  # noqa: F401,F403

VERSION = "0.5.20"
