"""The edge where a checkpoint's JSON files enter the planner: read once, checked once, one line when broken.

``read_json_file`` reads a config.json / model.safetensors.index.json / hf_quant_config.json as transformers reads
it (UTF-8 text, ``json.loads``; a BOM, bytes that are not UTF-8, truncated JSON or a directory are bad input).
``validate_config`` checks every key of a config the planner reads, at every nesting level (``text_config``,
``vision_config``, ``quantization_config`` and its groups, ``rope_scaling``, ``dflash_config`` / ``dspark_config``)
against the type the planner expects, and returns the config with those keys checked (integral floats as ints);
keys it does not read are kept as they are. ``validate_index`` does the same for a checkpoint index.

So no later stage (plan, check, search, TUI, batch) meets a ``text_config`` that is ``true`` or a layer count that
is a string: a wrong type is one :class:`BadInput` line naming the file, the field path and what is expected
(exit 2). A frozen table checked by hand rather than a pydantic model, like the GPU profiles
(planner/hardware/profiles.py): the default command does not import pydantic.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable

from planner.errors import BadInput

# the largest value a size / count field may hold: past these no model exists, and the sizing chain's
# arrays (int64) and layer lists would overflow or not fit in memory
MAX_LAYERS = 100_000
MAX_DIM = 1 << 24  # hidden sizes, heads, head dims, vocabulary, intermediate sizes, experts
MAX_POSITIONS = 1 << 34  # context lengths


def _shown(value: Any) -> str:
    text = "true" if value is True else "false" if value is False else "null" if value is None else repr(value)
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


class _Invalid(Exception):
    def __init__(self, path: str, expected: str, value: Any):
        super().__init__(path)
        self.path, self.expected, self.value = path, expected, value


# --------------------------------------------------------------------------- value checks
# each takes (value, path) and returns the checked value or raises _Invalid; None (JSON null) is accepted by all
# of them (a key set to null is read as absent everywhere the planner reads it)

Check = Callable[[Any, str], Any]


def _int(lo: int, hi: int, what: str) -> Check:
    def check(v: Any, path: str) -> Any:
        if v is None:
            return v
        if isinstance(v, float) and math.isfinite(v) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise _Invalid(path, what, v)
        return v
    return check


COUNT = _int(0, MAX_DIM, f"a whole number from 0 to {MAX_DIM:,}")
LAYERS = _int(0, MAX_LAYERS, f"a whole number of layers from 0 to {MAX_LAYERS:,}")
POSITIONS = _int(0, MAX_POSITIONS, f"a whole number of tokens from 0 to {MAX_POSITIONS:,}")
ANY_INT = _int(-MAX_DIM, MAX_DIM, "a whole number")


def _number(v: Any, path: str) -> Any:
    if v is None:
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 < v <= MAX_DIM:
        raise _Invalid(path, "a finite number above 0", v)
    return v


def _str(v: Any, path: str) -> Any:
    if v is not None and not isinstance(v, str):
        raise _Invalid(path, "a string", v)
    return v


def _bool(v: Any, path: str) -> Any:
    if v is not None and not isinstance(v, bool):
        raise _Invalid(path, "true or false", v)
    return v


def _list_of(item: Check, what: str, size: int | None = None) -> Check:
    def check(v: Any, path: str) -> Any:
        if v is None:
            return v
        if not isinstance(v, list) or (size is not None and len(v) != size):
            raise _Invalid(path, what, v)
        return [item(x, f"{path}[{i}]") for i, x in enumerate(v)]
    return check


def _str_item(v: Any, path: str) -> Any:
    if not isinstance(v, str):
        raise _Invalid(path, "a string", v)
    return v


def _int_item(v: Any, path: str) -> Any:
    if v is None:
        raise _Invalid(path, "a whole number", v)
    return ANY_INT(v, path)


STRINGS = _list_of(_str_item, "a list of strings")
INTS = _list_of(_int_item, "a list of whole numbers")


def _object(schema: dict[str, Check]) -> Check:
    """A JSON object whose listed keys are checked (the others kept as they are)."""
    def check(v: Any, path: str) -> Any:
        if v is None:
            return v
        if not isinstance(v, dict):
            raise _Invalid(path, "an object ({...})", v)
        out = dict(v)
        for key, sub in schema.items():
            if key in v:
                out[key] = sub(v[key], f"{path}.{key}" if path else key)
        return out
    return check


def _map_of(item: Check) -> Check:
    """A JSON object of any keys, each value checked by ``item``."""
    def check(v: Any, path: str) -> Any:
        if v is None:
            return v
        if not isinstance(v, dict):
            raise _Invalid(path, "an object ({...})", v)
        return {k: item(x, f"{path}.{k}") for k, x in v.items()}
    return check


def _required(sub: Check) -> Check:
    def check(v: Any, path: str) -> Any:
        if v is None:
            raise _Invalid(path, "an object ({...})", v)
        return sub(v, path)
    return check


# --------------------------------------------------------------------------- the keys the planner reads

_KV_SCHEME = _object({"type": _str, "num_bits": COUNT, "strategy": _str, "symmetric": _bool, "dynamic": _bool})
_CT_ARGS = _object({"num_bits": COUNT, "type": _str, "strategy": _str, "group_size": COUNT, "symmetric": _bool,
                    "dynamic": _bool, "scale_dtype": _str, "actorder": _str, "block_structure": INTS})
_CT_GROUP = _required(_object({"weights": _CT_ARGS, "input_activations": _CT_ARGS, "targets": STRINGS,
                               "format": _str}))
_QUANT_LAYER = _required(_object({"quant_algo": _str, "group_size": COUNT}))
QUANTIZATION = _object({
    "quant_method": _str, "quant_algo": _str, "kv_cache_quant_algo": _str, "kv_cache_scheme": _KV_SCHEME,
    "ignored_layers": STRINGS, "modules_to_not_convert": STRINGS, "exclude_modules": STRINGS, "ignore": STRINGS,
    "weight_block_size": _list_of(_int_item, "a list of two whole numbers [n, k]", size=2),
    "activation_scheme": _str, "group_size": COUNT, "quantized_layers": _map_of(_QUANT_LAYER),
    "config_groups": _map_of(_CT_GROUP), "format": _str, "bits": COUNT, "w_bit": COUNT, "q_group_size": COUNT,
    "dynamic": _object({}), "lm_head": _bool,
})
_ROPE = _object({"factor": _number, "rope_type": _str, "original_max_position_embeddings": POSITIONS})
VISION = _object({"num_hidden_layers": LAYERS, "depth": LAYERS, "hidden_size": COUNT, "intermediate_size": COUNT})
_DRAFT_HEAD = _object({"block_size": COUNT, "target_layer_ids": INTS, "num_target_layers": LAYERS,
                       "markov_rank": ANY_INT, "markov_head_type": _str})

# the keys ModelSpec and the pipeline read from the top level and from text_config (planner/catalog/spec.py,
# weights.py, quant_tensors.py, drafts.py, engines/sglang/pipeline/, engines/sglang/support.py)
_TEXT_KEYS: dict[str, Check] = {
    "model_type": _str, "torch_dtype": _str, "dtype": _str, "mamba_ssm_dtype": _str,
    "hybrid_override_pattern": _str, "layer_types": STRINGS, "mlp_only_layers": INTS,
    "num_hidden_layers": LAYERS, "mtp_num_hidden_layers": LAYERS, "num_nextn_predict_layers": LAYERS,
    "first_k_dense_replace": LAYERS, "decoder_sparse_step": LAYERS, "full_attention_interval": LAYERS,
    "hidden_size": COUNT, "vocab_size": COUNT, "num_attention_heads": COUNT, "head_dim": COUNT, "v_head_dim": COUNT,
    "n_head_kv": COUNT, "num_kv_heads": COUNT, "num_key_value_heads": COUNT, "multi_query_group_num": COUNT,
    "num_attention_groups": COUNT, "intermediate_size": COUNT, "moe_intermediate_size": COUNT,
    "shared_expert_intermediate_size": COUNT, "moe_shared_expert_intermediate_size": COUNT,
    "n_shared_experts": COUNT, "num_experts": COUNT, "n_routed_experts": COUNT, "num_local_experts": COUNT,
    "num_experts_per_tok": COUNT,
    "linear_num_value_heads": COUNT, "linear_num_key_heads": COUNT, "linear_key_head_dim": COUNT,
    "linear_value_head_dim": COUNT, "linear_conv_kernel_dim": COUNT,
    "mamba_num_heads": COUNT, "mamba_head_dim": COUNT, "mamba_n_heads": COUNT, "mamba_d_head": COUNT,
    "mamba_d_ssm": COUNT, "mamba_n_groups": COUNT, "mamba_d_state": COUNT, "mamba_d_conv": COUNT,
    "n_groups": COUNT, "ssm_state_size": COUNT, "conv_kernel": COUNT, "mamba_chunk_size": COUNT, "chunk_size": COUNT,
    "max_sequence_length": POSITIONS, "seq_length": POSITIONS, "max_seq_len": POSITIONS,
    "model_max_length": POSITIONS, "max_position_embeddings": POSITIONS,
    "rope_scaling": _ROPE, "tie_word_embeddings": _bool, "attention_bias": _bool, "is_causal": _bool,
    "quantization_config": QUANTIZATION,
    "target_hidden_size": COUNT, "num_target_layers": LAYERS, "block_size": COUNT, "target_layer_ids": INTS,
    "dflash_config": _DRAFT_HEAD, "dspark_config": _DRAFT_HEAD, "dspark_target_layer_ids": INTS,
    "dspark_markov_rank": ANY_INT, "dspark_markov_head_type": _str, "markov_rank": ANY_INT,
    "markov_head_type": _str,
}
_TEXT = _object(_TEXT_KEYS)
CONFIG = _object({
    **_TEXT_KEYS,
    "architectures": _list_of(_str_item, "a non-empty list of strings (e.g. [\"Qwen3ForCausalLM\"])"),
    "text_config": _TEXT, "vision_config": VISION,
})

INDEX = _object({"metadata": _object({"total_size": _int(0, 1 << 60, "a whole number of bytes (>= 0)")}),
                 "weight_map": _map_of(_str_item)})


# --------------------------------------------------------------------------- entry points


def _validate(data: Any, schema: Check, source: str, flag: str) -> Any:
    if not isinstance(data, dict):
        raise BadInput(f"{flag}: {source} must hold a JSON object ({{...}}), got {_shown(data)}")
    try:
        return schema(data, "")
    except _Invalid as exc:
        raise BadInput(f"{flag}: {source}: '{exc.path}' must be {exc.expected}, got {_shown(exc.value)}") from None


def validate_config(cfg: Any, source: str = "config.json", flag: str = "--model") -> dict[str, Any]:
    """``cfg`` with every key the planner reads checked (see the module docstring); BadInput naming the field."""
    out = _validate(cfg, CONFIG, source, flag)
    archs = out.get("architectures")
    if not archs:
        raise BadInput(f"{flag}: {source}: 'architectures' must be a non-empty list of strings "
                       "(e.g. [\"Qwen3ForCausalLM\"]), got " + _shown(archs))
    return out


def validate_index(data: Any, source: str, flag: str = "--model") -> dict[str, Any]:
    """A model.safetensors.index.json: ``metadata.total_size`` a byte count, ``weight_map`` names -> files."""
    return _validate(data, INDEX, source, flag)


def validate_quant_file(data: Any, source: str, flag: str = "--model") -> dict[str, Any]:
    """An hf_quant_config.json (ModelOpt export): ``quantization`` holds a quantization_config block."""
    out = _validate(data, _object({"quantization": QUANTIZATION}), source, flag)
    if "quantization" not in out:  # the flat form: the block itself
        out = _validate(out, QUANTIZATION, source, flag)
    return out


def read_json_file(path: Path, flag: str = "--model", shown: str | None = None) -> Any:
    """The JSON document in ``path``, as transformers reads it (UTF-8 text, no BOM); BadInput naming the file."""
    name = shown or str(path)
    if len(name) > 200:
        name = name[:197] + "..."
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        raise BadInput(f"{flag}: {name} is a directory, not a JSON file") from None
    except OSError as exc:
        raise BadInput(f"{flag}: cannot read {name}: {exc.strerror or exc}") from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raise BadInput(f"{flag}: {name} starts with a UTF-8 byte-order mark, which transformers' JSON reader "
                       "refuses; save it as UTF-8 without BOM")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{flag}: {name} is not UTF-8 text ({exc.reason} at byte {exc.start}); a JSON file is "
                       "expected") from None
    if not text.strip():
        raise BadInput(f"{flag}: {name} is empty; a JSON object ({{...}}) is expected")
    try:
        return json.loads(text)
    except RecursionError:
        raise BadInput(f"{flag}: {name} nests too deeply to be a config") from None
    except ValueError as exc:  # JSONDecodeError; also an integer of more than 4300 digits
        msg = f"{exc.msg}: line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)[:80]
        raise BadInput(f"{flag}: {name} is not valid JSON ({msg})") from None
