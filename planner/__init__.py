"""gpu-memory-planner: predict what an LLM server (SGLang) allocates before it boots."""

__version__ = "0.1.0"

from planner.api import Needs, Plan, SearchResult, capacity, check_log, plan, render_text, search, summary  # noqa: E402

__all__ = ["plan", "search", "summary", "check_log", "capacity", "render_text", "Plan", "SearchResult", "Needs", "__version__"]
