"""Reading a vLLM boot log into facts: what vLLM printed about the launch, its memory and how it ended.

:func:`read_log` takes the text of a log (a whole boot, or an excerpt of one pasted from an issue) and returns
:class:`VllmLogFacts`. Every pattern is searched anywhere in a line, so the prefixes vLLM's processes add
(``(EngineCore_DP0 pid=123) INFO 12-01 10:00:00 [gpu_worker.py:460]``, ``(Worker_TP1 pid=9)``, a container's
timestamp, a ``[Stage-0]`` tag, a Markdown quote or backtick) do not matter. Where several ranks print the same
line, the first rank's value is the fact and every rank's value is kept (``per_rank``).

The lines and where vLLM prints them (0.34.0 wheel; earlier V1 releases print the same words):

* ``Model loading took %s GiB memory and %.6f seconds`` (``v1/worker/gpu/model_runner.py:442``; V1 runner
  ``gpu_model_runner.py``; before ~0.11 ``Model loading took 65.9651 GiB and ...``);
* ``Available KV cache memory: %s GiB`` (``v1/worker/gpu_worker.py:796``);
* ``GPU KV cache size: %s tokens`` / ``Maximum concurrency for %s tokens per request: %.2fx``
  (``v1/core/kv_cache_utils.py:1165-1170``);
* ``Profiling CUDA graph memory: PIECEWISE=N (largest=L), FULL=M (largest=K)`` and ``Estimated CUDA graph memory:
  X GiB total`` (the capture profile of ``profile_cudagraph_memory``), ``CUDA graph pool memory: X GiB (actual),
  Y GiB (estimated)`` (``gpu_worker.py:1113``), ``Graph capturing finished in %.0f secs, took %.2f GiB``
  (``gpu/model_runner.py:1217``);
* ``Free memory on device (F/T GiB) on startup. Desired GPU memory utilization is (u, R GiB). Actual usage is
  C GiB for consumed memory (weights + non-torch), P GiB for peak activation, and G GiB for CUDAGraph memory``
  (``gpu_worker.py:1152-1172``; ``P`` is the transient peak plus the CUDA-graph estimate, ``gpu_worker.py:771-773``);
* ``init engine (profile, create kv cache, warmup model) took %.2f s`` (``v1/engine/core.py:442-459``);
* ``non-default args: {...}`` (``entrypoints/common/startup.py:96``), ``Initializing a V1 LLM engine (vX)``;
* the V0 engine's lines (before the V1 engine): ``total_gpu_memory (T GiB) x gpu_memory_utilization (u)``, ``model
  weights take W GiB; non_torch_memory takes N GiB; PyTorch activation peak memory takes P GiB; the rest ... is A GiB``,
  ``# cuda blocks: B``, ``Graph capturing finished in N secs, took X GiB`` (``worker/model_runner.py``);
* the failures: ``max_num_seqs (N) exceeds available Mamba cache blocks (M)`` (``config/compilation.py:1675``),
  ``To serve at least one request with the model's max seq len (L), (X GiB KV cache is needed, ... (Y GiB) ...
  estimated maximum model length is E`` (``v1/core/kv_cache_planning.py:125``), ``No available memory for the cache
  blocks`` (``kv_cache_planning.py:108``), a CUDA out-of-memory error, a negative ``Available KV cache memory``.

Pure: no I/O (the caller reads the file).
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass, field

_NUM = r"(-?[\d,]+(?:\.\d+)?)"


def _f(s: str) -> float:
    return float(s.replace(",", ""))


def _i(s: str) -> int:
    return int(s.replace(",", ""))


@dataclass(frozen=True)
class VllmFailure:
    """How the boot ended when it did not start: ``kind`` names the check, ``message`` is vLLM's line (from the
    error's first words), ``numbers`` the figures it prints."""

    kind: str  # mamba_blocks | max_model_len | no_kv_memory | cuda_oom | engine_failed
    message: str
    numbers: dict = field(default_factory=dict)


@dataclass
class VllmLogFacts:
    version: str | None = None
    model: str | None = None
    architecture: str | None = None
    gpu: str | None = None  # a device name the log prints (rarely: FP8 kernel-config paths, OOM messages)
    args: dict = field(default_factory=dict)  # the `non-default args: {...}` vLLM printed
    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    kv_cache_dtype: str | None = None
    weights_gib: float | None = None  # Model loading took X GiB
    available_kv_gib: float | None = None  # Available KV cache memory
    kv_tokens: int | None = None  # GPU KV cache size
    concurrency: float | None = None  # Maximum concurrency ... : Xx
    concurrency_tokens: int | None = None  # ... for N tokens per request (the max_model_len it was computed at)
    cudagraph_capture: dict = field(default_factory=dict)  # {"PIECEWISE": [n, largest], "FULL": [n, largest]}
    cudagraph_estimate_gib: float | None = None
    cudagraph_actual_gib: float | None = None
    graph_capture_s: float | None = None
    startup_free_gib: float | None = None  # Free memory on device (F/T GiB) on startup
    cuda_total_gib: float | None = None
    requested_gib: float | None = None
    consumed_gib: float | None = None  # weights + non-torch (total_consumed)
    peak_activation_gib: float | None = None  # as printed: the transient peak + the CUDA-graph estimate
    non_torch_gib: float | None = None  # V0's profile breakdown only
    num_gpu_blocks: int | None = None  # V0's "# cuda blocks" / "# GPU blocks"
    init_engine_s: float | None = None
    attention_block_size: int | None = None
    mamba_page_padding_pct: float | None = None
    padding_layers: int | None = None
    failure: VllmFailure | None = None
    per_rank: dict = field(default_factory=dict)  # fact -> every value printed, in order

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def booted(self) -> bool | None:
        """True when the log reached the KV cache report without a failure, False on a failure, None if unknown."""
        if self.failure is not None:
            return False
        return True if self.kv_tokens is not None or self.init_engine_s is not None else None


# (fact, pattern, converter): the first match of a line sets the fact; every match is kept per rank
_SIMPLE = (
    ("weights_gib", re.compile(r"Model loading took " + _NUM + r" GiB"), _f),
    ("available_kv_gib", re.compile(r"Available KV cache memory: " + _NUM + r" GiB"), _f),
    ("kv_tokens", re.compile(r"GPU KV cache size: " + _NUM + r" tokens"), _i),
    ("cudagraph_estimate_gib", re.compile(r"Estimated CUDA graph memory: " + _NUM + r" GiB"), _f),
    ("init_engine_s", re.compile(r"init engine \(profile, create kv cache, warmup model\) took " + _NUM), _f),
    ("attention_block_size", re.compile(r"Setting attention block size to " + _NUM + r" tokens"), _i),
    ("mamba_page_padding_pct", re.compile(r"Padding mamba page size by " + _NUM + r"%"), _f),
    ("padding_layers", re.compile(r"Add " + _NUM + r" padding layers"), _i),
)
_CONCURRENCY = re.compile(r"Maximum concurrency for " + _NUM + r" tokens per request: " + _NUM + r"x")
_CAPTURE_PROFILE = re.compile(r"Profiling CUDA graph memory: (.*)")
_CAPTURE_MODE = re.compile(r"([A-Z_]+)=(\d+) \(largest=(\d+)\)")
_POOL = re.compile(r"CUDA graph pool memory: " + _NUM + r" GiB \(actual\), " + _NUM + r" GiB \(estimated\)")
_CAPTURED = re.compile(r"Graph capturing finished in " + _NUM + r" secs?, took " + _NUM + r" GiB")
_FREE = re.compile(r"Free memory on device \(" + _NUM + r"/" + _NUM + r" GiB\) on startup\. Desired GPU memory "
                   r"utilization is \(" + _NUM + r", " + _NUM + r" GiB\)")
_CONSUMED = re.compile(_NUM + r" GiB for consumed memory \(weights \+ non-torch\), " + _NUM + r" GiB for peak activation")
_OLD_USAGE = re.compile(r"Actual usage is " + _NUM + r" GiB for weight, " + _NUM + r" GiB for peak activ")
_V0_BUDGET = re.compile(r"total_gpu_memory \(" + _NUM + r" ?GiB\) x gpu_memory_utilization \(" + _NUM + r"\)")
_V0_BREAKDOWN = re.compile(r"model weights take " + _NUM + r" ?GiB; non_torch_memory takes " + _NUM + r" ?GiB; PyTorch "
                           r"activation peak memory takes " + _NUM + r" ?GiB; the rest of the memory reserved for KV Cache "
                           r"is " + _NUM + r" ?GiB")
_V0_BLOCKS = re.compile(r"# (?:cuda|GPU) blocks: " + _NUM)
_UTIL = re.compile(r"current --gpu-memory-utilization=" + _NUM)
_ARGS = re.compile(r"non-default args: (\{.*\})\s*$")
_VERSION = (re.compile(r"Initializing a V\d LLM engine \(v?([0-9][^)\s]*)\)"),
            re.compile(r"\bversion (\d+\.\d+\.\d+[^\s]*)"),
            re.compile(r"vLLM API server version (\d+\.\d+\.\d+[^\s]*)"))
_MODEL = (re.compile(r"\bmodel\s{2,}(\S+)\s*$"),  # the startup banner
          re.compile(r"Starting to load model (\S+?)\.\.\."),
          re.compile(r"with config: model='([^']+)'"))
_ARCH = re.compile(r"Resolved architecture: (\w+)")
_WORKER = re.compile(r"Worker_(?:DP\d+_)?(?:PP(\d+)_)?TP(\d+)")
_WORLD = re.compile(r"rank \d+ in world size (\d+) is assigned as DP rank \d+, PP rank (\d+), TP rank (\d+)")
_GPU = (re.compile(r"device_name=(NVIDIA_[A-Za-z0-9_]+)"),
        re.compile(r"GPU \d+ has a total capacity of " + _NUM + r" GiB"))

_MAMBA = re.compile(r"max_num_seqs \(" + _NUM + r"\) exceeds available Mamba cache blocks \(" + _NUM + r"\)")
_MAXLEN = re.compile(r"To serve at least one request with the models?'s max seq len \(" + _NUM + r"\), \(" + _NUM +
                     r" GiB KV cache is needed, which is larger than the available KV cache memory \(" + _NUM +
                     r" GiB\)(?:\. Based on the available memory, the estimated maximum model length is " + _NUM + r")?")
_NO_MEMORY = re.compile(r"No available memory for the cache blocks")
_OOM = re.compile(r"(?:torch\.OutOfMemoryError|CUDA out of memory|Tried to allocate " + _NUM + r" (MiB|GiB))")
_FAILED = re.compile(r"EngineCore failed to start|Engine core initialization failed")


def _literal(text: str) -> dict:
    """The args dict vLLM printed: a Python literal, except values printed as ``<Enum: x>`` or ``Class(...)``
    (kept as their text)."""
    try:
        v = ast.literal_eval(text)
        return v if isinstance(v, dict) else {}
    except (ValueError, SyntaxError):
        pass
    cleaned = re.sub(r"<[^<>]*>", "None", text)
    cleaned = re.sub(r"\b[A-Z]\w*\((?:[^()]|\([^()]*\))*\)", "None", cleaned)
    try:
        v = ast.literal_eval(cleaned)
        return v if isinstance(v, dict) else {}
    except (ValueError, SyntaxError):
        return {}


def _message_from(line: str, start: int) -> str:
    return line[start:].strip().strip("`").strip()


def _failure(line: str) -> VllmFailure | None:
    m = _MAMBA.search(line)
    if m:
        seqs, blocks = _i(m.group(1)), _i(m.group(2))
        return VllmFailure("mamba_blocks", _message_from(line, m.start()), {"max_num_seqs": seqs, "mamba_blocks": blocks})
    m = _MAXLEN.search(line)
    if m:
        nums = {"max_model_len": _i(m.group(1)), "needed_gib": _f(m.group(2)), "available_gib": _f(m.group(3))}
        if m.group(4):
            nums["estimated_max_model_len"] = _i(m.group(4))
        return VllmFailure("max_model_len", _message_from(line, m.start()), nums)
    m = _NO_MEMORY.search(line)
    if m:
        return VllmFailure("no_kv_memory", _message_from(line, m.start()), {})
    m = _OOM.search(line)
    if m:
        nums = {}
        if m.group(1):
            nums["tried_mib"] = _f(m.group(1)) * (1024 if m.group(2) == "GiB" else 1)
        return VllmFailure("cuda_oom", _message_from(line, m.start()), nums)
    return None


def _keep(facts: VllmLogFacts, name: str, value) -> None:
    facts.per_rank.setdefault(name, []).append(value)
    if getattr(facts, name) is None:
        setattr(facts, name, value)


def _apply_args(facts: VllmLogFacts, args: dict) -> None:
    facts.args = args
    for key, name in (("tensor_parallel_size", "tp"), ("pipeline_parallel_size", "pp"), ("data_parallel_size", "dp"),
                      ("max_model_len", "max_model_len"), ("max_num_seqs", "max_num_seqs"),
                      ("max_num_batched_tokens", "max_num_batched_tokens"), ("kv_cache_dtype", "kv_cache_dtype"),
                      ("gpu_memory_utilization", "gpu_memory_utilization")):
        if key in args and args[key] is not None and getattr(facts, name) is None:
            setattr(facts, name, args[key])
    if facts.model is None:
        model = args.get("model") or args.get("model_tag")
        if isinstance(model, str):
            facts.model = model


def read_log(text: str) -> VllmLogFacts:
    """The facts of one vLLM boot log (see the module docstring for the lines read)."""
    facts = VllmLogFacts()
    failures: list[VllmFailure] = []
    max_tp = max_pp = -1
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        for name, pat, conv in _SIMPLE:
            m = pat.search(line)
            if m:
                _keep(facts, name, conv(m.group(1)))
        m = _CONCURRENCY.search(line)
        if m:
            _keep(facts, "concurrency_tokens", _i(m.group(1)))
            _keep(facts, "concurrency", _f(m.group(2)))
        m = _CAPTURE_PROFILE.search(line)
        if m and not facts.cudagraph_capture:
            facts.cudagraph_capture = {mode: [int(n), int(largest)] for mode, n, largest in _CAPTURE_MODE.findall(m.group(1))}
        m = _POOL.search(line)
        if m:
            _keep(facts, "cudagraph_actual_gib", _f(m.group(1)))
            _keep(facts, "cudagraph_estimate_gib", _f(m.group(2)))
        m = _CAPTURED.search(line)
        if m:
            _keep(facts, "graph_capture_s", _f(m.group(1)))
            _keep(facts, "cudagraph_actual_gib", _f(m.group(2)))
        m = _FREE.search(line)
        if m:
            _keep(facts, "startup_free_gib", _f(m.group(1)))
            _keep(facts, "cuda_total_gib", _f(m.group(2)))
            if facts.gpu_memory_utilization is None:
                facts.gpu_memory_utilization = _f(m.group(3))
            _keep(facts, "requested_gib", _f(m.group(4)))
        m = _CONSUMED.search(line)
        if m:
            _keep(facts, "consumed_gib", _f(m.group(1)))
            _keep(facts, "peak_activation_gib", _f(m.group(2)))
        m = _OLD_USAGE.search(line)
        if m:
            _keep(facts, "weights_gib", _f(m.group(1)))
            _keep(facts, "peak_activation_gib", _f(m.group(2)))
        m = _V0_BUDGET.search(line)
        if m:
            _keep(facts, "cuda_total_gib", _f(m.group(1)))
            if facts.gpu_memory_utilization is None:
                facts.gpu_memory_utilization = _f(m.group(2))
        m = _V0_BREAKDOWN.search(line)
        if m:
            for name, g in (("weights_gib", 1), ("non_torch_gib", 2), ("peak_activation_gib", 3), ("available_kv_gib", 4)):
                _keep(facts, name, _f(m.group(g)))
        m = _V0_BLOCKS.search(line)
        if m:
            _keep(facts, "num_gpu_blocks", _i(m.group(1)))
        m = _UTIL.search(line)
        if m and facts.gpu_memory_utilization is None:
            facts.gpu_memory_utilization = _f(m.group(1))
        m = _ARGS.search(line)
        if m and not facts.args:
            _apply_args(facts, _literal(m.group(1)))
        if facts.version is None:
            for pat in _VERSION:
                m = pat.search(line)
                if m:
                    facts.version = m.group(1)
                    break
        if facts.model is None:
            for pat in _MODEL:
                m = pat.search(line)
                if m:
                    facts.model = m.group(1)
                    break
        m = _ARCH.search(line)
        if m and facts.architecture is None:
            facts.architecture = m.group(1)
        for w in _WORKER.finditer(line):
            max_tp = max(max_tp, int(w.group(2)))
            if w.group(1):
                max_pp = max(max_pp, int(w.group(1)))
        m = _WORLD.search(line)
        if m:
            max_pp, max_tp = max(max_pp, int(m.group(2))), max(max_tp, int(m.group(3)))
        if facts.gpu is None:
            m = _GPU[0].search(line)
            if m:
                facts.gpu = m.group(1).replace("_", " ").rstrip()
        if facts.cuda_total_gib is None:
            m = _GPU[1].search(line)
            if m:
                facts.cuda_total_gib = _f(m.group(1))
        f = _failure(line)
        if f is not None:
            failures.append(f)
        elif _FAILED.search(line):
            failures.append(VllmFailure("engine_failed", _message_from(line, _FAILED.search(line).start()), {}))
    if facts.tp is None and max_tp >= 0:
        facts.tp = max_tp + 1  # the highest TP rank that printed, + 1 (a lower bound on an excerpt)
    if facts.pp is None and max_pp >= 0:
        facts.pp = max_pp + 1
    if facts.max_model_len is None and facts.concurrency_tokens is not None:
        facts.max_model_len = facts.concurrency_tokens
    specific = [f for f in failures if f.kind != "engine_failed"]
    if specific:
        facts.failure = specific[0]
    elif facts.available_kv_gib is not None and facts.available_kv_gib <= 0:
        facts.failure = VllmFailure("no_kv_memory", f"Available KV cache memory: {facts.available_kv_gib} GiB",
                                    {"available_gib": facts.available_kv_gib})
    elif failures:
        facts.failure = failures[0]
    if facts.failure is not None and facts.failure.kind == "max_model_len" and facts.max_model_len is None:
        facts.max_model_len = facts.failure.numbers["max_model_len"]
    return facts


# vLLM's log-line prefix (vllm/logger.py's format): "INFO 05-18 06:16:52 [gpu_model_runner.py:4917] ..."
_LOG_LINE = re.compile(r"(?m)\b(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\s+(?:\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+)?"
                       r"\[[\w.]+\.py:\d+\]")
# the facts only a vLLM log prints: one of them, on lines with vLLM's prefix, makes a text vLLM's log
_LOG_FACTS = ("weights_gib", "available_kv_gib", "kv_tokens", "concurrency", "attention_block_size",
              "mamba_page_padding_pct", "cudagraph_estimate_gib", "cudagraph_actual_gib", "failure", "version")


def is_log(text: str) -> bool:
    """``text`` is a vLLM server's log: vLLM's logger prefix, and a line this reader takes a fact from (a document
    quoting vLLM's messages, such as a README, has the messages but not the prefix)."""
    if not _LOG_LINE.search(text):
        return False
    facts = read_log(text)
    return any(getattr(facts, k, None) not in (None, {}, []) for k in _LOG_FACTS)
