"""Stand-ins shared by the adapters of several releases (0.5.14-0.5.23). Not an adapter itself: oracle.py
picks only versions/v<X>_<Y>_<Z>.py, and this name does not start with "v". Copied next to the adapters by
scripts/oracle/oracle_copy.sh."""
import contextlib


@contextlib.contextmanager
def no_kernel_warmups(S):
    """Kernel stand-in: MHATokenToKVPool._init_kv_copy_and_warmup (on with speculative decoding)
    reads data_strides[0].item() and launches a Triton copy kernel on a 128-slot dummy; it
    allocates nothing that lasts. Replaced by a no-op that leaves _kv_copy_config = None, on every
    memory_pool class that defines it (none where this release has no such warm-up)."""
    from sglang.srt.mem_cache import memory_pool as mp

    patched = []
    for obj in list(vars(mp).values()):
        if isinstance(obj, type) and "_init_kv_copy_and_warmup" in vars(obj):
            patched.append((obj, vars(obj)["_init_kv_copy_and_warmup"]))

            def _noop(self):
                self._kv_copy_config = None

            obj._init_kv_copy_and_warmup = _noop
    try:
        yield
    finally:
        for obj, orig in patched:
            obj._init_kv_copy_and_warmup = orig


# summary/server-arg names of 0.5.11 -> attribute names in 0.5.14+ (cuda_graph_config per phase since 0.5.14,
# --mamba-scheduler-strategy renamed --mamba-radix-cache-strategy in 0.5.14)
SERVER_ARG_ALIASES = {
    # resolved decode-graph max bs lives in the per-phase cuda_graph_config
    "cuda_graph_max_bs": lambda sa: sa.cuda_graph_config.decode.max_bs,
    "cuda_graph_bs": lambda sa: sa.cuda_graph_config.decode.bs,
    "mamba_scheduler_strategy": "mamba_radix_cache_strategy",
}


def dflash_runner_fields(r, sa, model_config):
    """The DFLASH block of ModelRunner.__init__ the oracle does not run (model_runner.py:417-460 @0.5.11,
    :513-538 @0.5.14): SGLang's own draft-config parsing and target-layer resolution, the fields set on ``r``."""
    from sglang.srt.speculative.dflash_utils import parse_dflash_draft_config

    dmc = r._build_model_config(sa, model_path=sa.speculative_draft_model_path,
                                model_revision=sa.speculative_draft_model_revision, is_draft_model=True)
    dcfg = parse_dflash_draft_config(draft_hf_config=dmc.hf_config)
    draft_num_layers = dcfg.require_num_layers()
    target_num_layers = getattr(model_config.hf_text_config, "num_hidden_layers", None)
    if target_num_layers is None:
        raise ValueError("DFLASH requires target num_hidden_layers in config. "
                         f"Got target={target_num_layers}.")
    r.dflash_use_aux_hidden_state = True
    r.dflash_draft_num_layers = int(draft_num_layers)
    r.dflash_target_layer_ids = dcfg.resolve_target_layer_ids(
        target_num_layers=int(target_num_layers), draft_num_layers=int(draft_num_layers))


# --- the checkpoint's quant config on the empty model (0.5.9-0.5.16; 0.5.17+ use v0_5_21._quant_config_for) ---

def _load_model_assignments(ModelRunner, targets):
    """The ``<target> = ...`` statements of SGLang's own ModelRunner.load_model (and the function-local imports
    they use), in source order, compiled with its file name and line numbers (one of each target, or ImportError)."""
    import ast
    import inspect
    import textwrap

    fn = ModelRunner.load_model
    src_lines, first = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(src_lines)))
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and ast.unparse(n.targets[0]) in targets]
    if sorted(ast.unparse(n.targets[0]) for n in found) != sorted(targets):
        raise ImportError(f"ModelRunner.load_model: expected one assignment to each of {targets}")
    used = {x.id for n in found for x in ast.walk(n.value) if isinstance(x, ast.Name)}
    # the function-local imports those statements need (``from sglang.srt.configs.modelopt_config import
    # ModelOptConfig``, model_runner.py:918 @0.5.9)
    found += [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
              and any((a.asname or a.name) in used for a in n.names)]
    found.sort(key=lambda n: n.lineno)
    mod = ast.Module(body=found, type_ignores=[])
    ast.increment_lineno(mod, first - 1)
    return compile(mod, inspect.getsourcefile(fn), "exec")


class _LoadModelSelf:
    """``self`` for the load_model statements: the runner's attributes, plus the values ModelRunner.__init__ gives
    the remote-instance weight transfer fields when no transfer engine is started (``remote_instance_transfer_engine
    = None``, ``..._session_id = ""``: model_runner.py:340-341 @0.5.9, :439-440 @0.5.13; 0.5.16's
    RemoteInstanceWeightTransporter defaults engine=None, session_id="", remote_instance_weight_transporter.py:21-28
    @0.5.16): the oracle loads no weights from a remote instance. Writes stay on this object."""

    def __init__(self, runner):
        import types

        self.__dict__["_r"] = runner
        self.__dict__.update(remote_instance_transfer_engine=None, remote_instance_transfer_engine_session_id="",
                             remote_instance_weight_transporter=types.SimpleNamespace(engine=None, session_id=""))

    def __getattr__(self, name):
        return getattr(self.__dict__["_r"], name)

    def __setattr__(self, name, value):
        self.__dict__[name] = value


def load_model_load_config(r, ModelRunner):
    """The LoadConfig ModelRunner.load_model builds, from its own ``modelopt_config = ModelOptConfig(...)`` /
    ``self.load_config = LoadConfig(...)`` statements (model_runner.py:920-941 @0.5.9), run here on the runner."""
    import inspect

    from sglang.srt.model_executor import model_runner as mr_mod

    src = inspect.getsource(ModelRunner.load_model)
    targets = ["self.load_config"] + (["modelopt_config"] if "modelopt_config = ModelOptConfig(" in src else [])
    code = _load_model_assignments(ModelRunner, targets)
    me = _LoadModelSelf(r)
    exec(code, dict(vars(mr_mod)), {"self": me})
    return me.load_config


def loader_quant_config(r, load_config):
    """What SGLang's loader hands the model class as ``quant_config``: model_loader/loader.py
    _get_quantization_config(model_config, load_config) (loader.py:192-259 @0.5.9, :198-290 @0.5.16; called by
    DefaultModelLoader.load_model -> _initialize_model) with ``load_config`` (a callable: built only for a
    quantized checkpoint). None for an unquantized checkpoint (no quant config, as before)."""
    if r.model_config.quantization is None:
        return None
    from sglang.srt.model_loader import loader

    return loader._get_quantization_config(r.model_config, load_config())


def model_class_keeps_quant_config(r):
    """True if the class SGLang's loader picks stores the quant_config it is built with
    (``self.quant_config = quant_config`` in an __init__ of its MRO): configure_kv_cache_dtype reads
    getattr(model, "quant_config", None). (v0_5_21._model_class_keeps_quant_config calls it too.)"""
    import inspect

    from sglang.srt.model_loader import loader

    try:
        cls, _ = loader.get_model_architecture(r.model_config)
    except Exception:  # noqa: BLE001 - unknown class: let SGLang's own dtype code see the config
        return True
    for k in cls.__mro__:
        init = vars(k).get("__init__")
        try:
            src = inspect.getsource(init) if init is not None else ""
        except (OSError, TypeError):
            continue
        if "self.quant_config = " in src or "self.quant_config=" in src:
            return True
    return False


def give_model_quant_config(r, ModelRunner=None, load_config=None):
    """Put the loader's quant config on the (empty) model, where the class keeps it; returns it (or None).
    The LoadConfig: ``load_config()`` if given, else ModelRunner.load_model's own statements."""
    qc = loader_quant_config(r, load_config or (lambda: load_model_load_config(r, ModelRunner)))
    if qc is not None and model_class_keeps_quant_config(r):
        r.model.quant_config = qc
    return qc


def give_model_sliding_window(model, model_config):
    """The loaded model's ``get_attention_sliding_window_size``, on the empty model: resolve_sliding_window_size asks
    the model first and the config only when the model has no such method (load_model_utils.py:144-157 @0.5.23,
    model_runner.py ModelRunner.load_model's block of the same statements in earlier releases). gpt-oss's answers
    ``sliding_window - 1`` (srt/models/gpt_oss.py:129-132, 1374-1375 @0.5.23: HF's window counts the last token),
    so the real server validates its SWA pool against 127, not the config's 128 (validate_swa_pool_size,
    pool_configurator.py:198-215 @0.5.23). The class's own method runs, over the real hf_config; a class without
    one is left alone."""
    import types

    from sglang.srt.model_loader import loader

    try:
        cls, _ = loader.get_model_architecture(model_config)
    except Exception:  # noqa: BLE001 - unknown class: the config's value, as before
        return
    fn = vars(cls).get("get_attention_sliding_window_size")
    if fn is None or model is None:
        return
    holder = types.SimpleNamespace(config=model_config.hf_config)
    model.get_attention_sliding_window_size = lambda: fn(holder)


def load_model_sliding_window(S, r):
    """0.5.9 / 0.5.10: ``ModelRunner.load_model`` sets ``self.sliding_window_size`` in its "Parse other args" block
    (model_runner.py:1020-1034 @0.5.9, :1222-1236 @0.5.10), which the oracle skips with the rest of load_model; the
    hybrid SWA sizing then reads it (set_num_tokens_hybrid_swa asserts it, model_runner_kv_cache_mixin.py:251-254
    @0.5.9), so without it every gpt-oss / Llama 4 case stopped at an AttributeError. The block's own statements
    (the assignment to None and the if/elif chain after it) are taken from SGLang's source with ast and run on the
    runner, after the empty model got the class's get_attention_sliding_window_size (give_model_sliding_window)."""
    import ast
    import inspect
    import textwrap

    give_model_sliding_window(r.model, r.model_config)
    fn = S.ModelRunner.load_model
    src_file = inspect.getsourcefile(fn)
    lines, start = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    body = tree.body[0].body
    for i, node in enumerate(body):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute)
                and node.targets[0].attr == "sliding_window_size" and i + 1 < len(body)
                and isinstance(body[i + 1], ast.If)):
            block = ast.Module(body=[node, body[i + 1]], type_ignores=[])
            ast.increment_lineno(block, start - 1)
            code = compile(block, src_file, "exec")
            exec(code, dict(vars(inspect.getmodule(fn))), {"self": r})  # noqa: S102 - SGLang's own statements
            return
    raise RuntimeError("ModelRunner.load_model: the sliding_window_size block was not found")



# ---- the parallel widths SGLang publishes, stamped on the distributed stand-ins (0.5.20-0.5.23) ----
# The v0_5_19 stand-in builds one rank's ParallelState with attn_dp_size 1 and dcp off whatever the flags; the
# releases that publish the resolved widths get them back through these wrappers (one copy for every release).

def published_attn_widths(S, tp_size):
    """(attn_dp_size, attn_tp_size) from the published parallel config, not a previous case's overrides."""
    cfg = getattr(S.get_parallel(), "_config", None)
    try:
        return int(cfg.attn_dp_size), int(cfg.attn_tp_size)
    except Exception:
        return 1, tp_size


def with_attn_dp_widths(base):
    """``base`` (an install_distributed_standins), then the attention-DP widths SGLang computes
    (layers/dp_attention.py compute_dp_attention_world_info) on the overrides and the _ATTN_TP group."""
    def install_distributed_standins(S, tp_size):
        attn_dp, attn_tp = published_attn_widths(S, tp_size)
        base(S, tp_size)
        if attn_dp > 1:
            ov = S.get_parallel()._overrides
            ov.update(attn_dp_size=attn_dp, attn_tp_size=attn_tp,
                      attn_tp_group=type(ov["attn_tp_group"])(**{**vars(ov["attn_tp_group"]), "world_size": attn_tp,
                                                                "ranks": list(range(attn_tp))}))
            if hasattr(S.parallel_state, "_ATTN_TP"):
                S.parallel_state._ATTN_TP = ov["attn_tp_group"]
    return install_distributed_standins


def with_dcp_widths(base):
    """``base``, then decode context parallel as SGLang publishes it: dcp_enabled = dcp_size > 1, attn_dcp_size =
    dcp_size (runtime_context.py:144-169 @0.5.22 / 0.5.23), rank 0's dcp_rank = tp_rank % dcp_size = 0
    (runtime_context.py:1585 @0.5.22); only when --dcp-size > 1, so no other golden moves."""
    def install_distributed_standins(S, tp_size):
        cfg = getattr(S.get_parallel(), "_config", None)
        try:
            dcp = int(cfg.dcp_size)
        except Exception:
            dcp = 1
        base(S, tp_size)
        if dcp > 1:
            ov = S.get_parallel()._overrides
            ov.update(dcp_enabled=True, dcp_size=dcp, dcp_rank=0, attn_dcp_size=dcp, attn_dcp_rank=0,
                      dcp_group=type(ov["dcp_group"])(**{**vars(ov["dcp_group"]), "world_size": dcp,
                                                        "ranks": list(range(dcp))}))
    return install_distributed_standins
