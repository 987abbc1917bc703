"""gpu-memory-planner: predict what an LLM server (SGLang) allocates before it boots."""

__version__ = "0.1.0"
