"""gpu-memory-planner: predict what an LLM server (SGLang) allocates before it boots."""

__version__ = "0.1.0"

import os as _os
import sys as _sys

if "numpy" not in _sys.modules and (_sys.argv[:1] == ["-m"] or _os.path.basename(_sys.argv[0] if _sys.argv else "")
                                    in ("plan", "plan.exe")):
    # The plan command (python -m planner, or the console script), before numpy loads: its arrays are elementwise
    # over a few thousand points, where OpenBLAS's worker threads only take CPU (about 12% of a 24-line search
    # batch's on the 2-core box: benchmarks/targets.py). A value in the environment wins; a program importing
    # planner as a library keeps its own threading.
    _os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from planner.api import Needs, Plan, SearchResult, capacity, check_log, plan, render_text, search, summary  # noqa: E402

__all__ = ["plan", "search", "summary", "check_log", "capacity", "render_text", "Plan", "SearchResult", "Needs", "__version__"]
