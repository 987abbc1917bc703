"""vLLM as a second engine (issue #26): vLLM 0.33 and 0.34's own sizing chain, citing their lines.

The modules, one concern each (as vLLM's own ``vllm/v1/kv_cache_interface.py`` keeps one spec class per cache kind):

* :mod:`.inputs`: one launch as vLLM would get it (the model's config, the ``vllm serve`` flags, the device, and the
  measured quantities under the vLLM oracle's own names), the releases modelled;
* ``config``: ``VllmConfig`` resolution and validation (defaults by GPU memory tier, ``max_model_len``, the
  batched-token / sequence defaults, block size, prefix caching, attention backends, CUDA-graph capture sizes, vLLM's
  error messages);
* ``kv_spec`` / ``grouping`` / ``memory`` / ``capacity``: each layer's KV-cache spec, the hybrid allocator's grouping
  and page-size unification, ``Worker.determine_available_memory`` (0.33) and 0.34's sizing after warmup, the number
  of blocks, the concurrency figure and the admission checks;
* ``sizing``: the chain in order, ``size(launch) -> VllmResult`` whose ``summary`` carries the oracle's summary field
  names (``summary_version`` 1), so golden cases compare field by field;
* ``estimates``: what vLLM measures at boot (weights, non-torch memory, the profile run's activation peak, CUDA-graph
  memory), estimated before boot and calibrated on public logs; ``logs``: reading a vLLM boot log.

The core reaches this package only through :mod:`planner.engines.registry`.
"""
