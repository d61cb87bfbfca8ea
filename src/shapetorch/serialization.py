"""``shapetorch.save`` / ``shapetorch.load`` in the safetensors format, written here from its spec.

A file is: 8 bytes (little-endian u64) giving the header length N; N bytes of JSON mapping each tensor
name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (plus an optional ``"__metadata__"`` of
string values); then the raw little-endian bytes. A flat ``{name: tensor}`` dict (a state_dict) is a
plain safetensors file any reader understands. A single tensor, and nested containers of tensors and
plain values (an optimizer's state_dict), are flattened, with their structure kept as JSON in the
metadata. Loading only parses JSON and copies bytes: it never executes code.
"""

from __future__ import annotations

import io
import json
import os
import struct
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, BinaryIO, NoReturn

import ml_dtypes
import numpy as np

from ._errors import fail
from ._tensor import Tensor
from .ops._registry import public

MAX_HEADER = 100_000_000  # as the safetensors reference implementation
MAX_DEPTH = 256  # nesting of the structure metadata; optimizer state_dicts are a few levels deep
MAX_DIMS = 64  # NumPy's limit on an array's rank
MAX_BYTES = int(np.iinfo(np.intp).max)  # NumPy sizes a shape by its nonzero dims, zero-size or not

_TO_CODE = {
    "float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16", "int64": "I64", "int32": "I32",
    "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL", "complex64": "C64",
}
_FROM_CODE: dict[str, Any] = {
    "F32": np.dtype("<f4"), "F64": np.dtype("<f8"), "F16": np.dtype("<f2"), "BF16": np.dtype(ml_dtypes.bfloat16),
    "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"), "I8": np.dtype("i1"),
    "U8": np.dtype("u1"), "BOOL": np.dtype("bool"), "C64": np.dtype("<c8"),
}
_STRUCTURE = "shapetorch.structure"
# a flat dict of tensors saved as a plain dict (a state_dict is an OrderedDict): load gives back the same type, as
# torch's does (what a user sees printing it, or its keys())
_PLAIN_DICT = "shapetorch.plain_dict"


def _bad(problem: str) -> NoReturn:
    fail("serialization_error_malformed_file", op="load", problem=problem)


def _too_large(problem: str) -> NoReturn:
    fail("serialization_error_too_large", op="load", problem=problem)


def _json(text: str | bytes, what: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:  # the decoder recurses once per level of nesting
        _bad(f"{what} is nested too deeply")
    except (UnicodeDecodeError, ValueError) as e:
        _bad(f"{what} is not valid UTF-8 JSON ({e})")


def _unsupported(problem: str) -> NoReturn:
    fail("serialization_error_unsupported_object", op="save", problem=problem)


# -- saving ---------------------------------------------------------------------------------------------

def _flatten(obj: Any, tensors: dict[str, Tensor], path: str) -> Any:
    """Tensors go to ``tensors`` under a dotted key; the rest becomes JSON with markers for non-JSON types."""
    if isinstance(obj, Tensor):
        key = path or "tensor"
        while key in tensors:
            key += "_"
        tensors[key] = obj
        return {"__tensor__": key}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, Mapping):
        items = []
        for k, v in obj.items():
            if not isinstance(k, (str, int, float, bool)) and k is not None:
                _unsupported(f"dict keys must be str, int, float, bool or None, got {type(k).__name__}")
            items.append([k, _flatten(v, tensors, f"{path}.{k}" if path else str(k))])
        # "__dict__" (an OrderedDict on loading) predates "__plaindict__": files written before load as they did
        return {"__plaindict__" if type(obj) is dict else "__dict__": items}
    if isinstance(obj, tuple):
        return {"__tuple__": [_flatten(v, tensors, f"{path}.{i}" if path else str(i)) for i, v in enumerate(obj)]}
    if isinstance(obj, list):
        return [_flatten(v, tensors, f"{path}.{i}" if path else str(i)) for i, v in enumerate(obj)]
    _unsupported(f"cannot store an object of type {type(obj).__name__} (tensors, dicts, lists, tuples, "
                 "numbers, strings and None only; no pickling)")


def _is_flat(obj: Any) -> bool:
    return isinstance(obj, Mapping) and all(isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items())


def _encode(tensors: Mapping[str, Tensor], metadata: dict[str, str] | None) -> bytes:
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = metadata
    chunks = []
    offset = 0
    for name, t in tensors.items():
        arr = np.asarray(t.detach().cpu().numpy())
        code = _TO_CODE.get(t.dtype.name)
        if code is None:
            _unsupported(f"dtype {t.dtype} of {name!r} has no safetensors code")
        raw = np.ascontiguousarray(arr.astype(_FROM_CODE[code], copy=False)).tobytes()
        header[name] = {"dtype": code, "shape": list(arr.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % 8)  # the data starts 8-byte aligned, as the reference writer does
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


@public("serialization", method=False)
def save(obj: Any, f: str | os.PathLike[str] | BinaryIO, metadata: dict[str, str] | None = None) -> None:
    """Save a tensor, a state_dict, or nested dicts/lists/tuples of tensors and plain values as safetensors."""
    if _is_flat(obj):
        meta = {"format": "pt", **({_PLAIN_DICT: "1"} if type(obj) is dict else {}), **(metadata or {})}
        data = _encode(obj, meta)
    else:
        tensors: dict[str, Tensor] = {}
        skeleton = _flatten(obj, tensors, "")
        meta = {"format": "pt", _STRUCTURE: json.dumps(skeleton), **(metadata or {})}
        data = _encode(tensors, meta)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)


# -- loading --------------------------------------------------------------------------------------------

def _read(f: Any) -> bytes:
    if isinstance(f, (bytes, bytearray, memoryview)):
        return bytes(f)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return fh.read()
    data = f.read()
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("load() expects a path, bytes, or a binary file object")
    return bytes(data)


def _parse(data: bytes) -> tuple[dict[str, Any], dict[str, str], memoryview]:
    if len(data) < 8:
        _bad(f"file is truncated: {len(data)} bytes is shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if n > MAX_HEADER:
        _bad(f"header length {n} is larger than the limit of {MAX_HEADER} bytes (not a safetensors file?)")
    if 8 + n > len(data):
        _bad(f"file is truncated: the header needs {n} bytes but only {len(data) - 8} follow")
    header = _json(data[8:8 + n], "header")
    if not isinstance(header, dict):
        _bad("header is not a JSON object")
    meta = header.pop("__metadata__", None) or {}
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        _bad("__metadata__ must map strings to strings")
    buf = memoryview(data)[8 + n:]
    spans = []
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            _bad(f"entry {name!r} must have exactly dtype, shape and data_offsets")
        code, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(code, str) or code not in _FROM_CODE:
            _bad(f"entry {name!r} has unknown dtype {code!r}")
        if not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                                  for s in shape):
            _bad(f"entry {name!r} has an invalid shape {shape!r}")
        if (not isinstance(offs, list) or len(offs) != 2 or not all(isinstance(o, int) and not isinstance(o, bool)
                                                                    for o in offs) or not 0 <= offs[0] <= offs[1]):
            _bad(f"entry {name!r} has invalid data_offsets {offs!r}")
        if len(shape) > MAX_DIMS:
            _too_large(f"entry {name!r} has {len(shape)} dims; shapetorch holds at most {MAX_DIMS}")
        numel = nonzero = 1
        for s in shape:
            numel *= s
            nonzero *= max(s, 1)
        if nonzero * _FROM_CODE[code].itemsize > MAX_BYTES:
            _too_large(f"entry {name!r} of shape {tuple(shape)} is larger than this machine can address")
        if offs[1] - offs[0] != numel * _FROM_CODE[code].itemsize:
            _bad(f"entry {name!r}: data_offsets {offs} hold {offs[1] - offs[0]} bytes but shape {tuple(shape)} of "
                 f"{code} needs {numel * _FROM_CODE[code].itemsize}")
        if offs[1] > len(buf):
            _bad(f"file is truncated: entry {name!r} ends at byte {offs[1]} of a {len(buf)}-byte data section")
        spans.append((offs[0], offs[1], name))
    spans.sort()
    pos = 0
    for begin, end, name in spans:
        if begin != pos:
            _bad(f"entry {name!r} starts at byte {begin}, expected {pos} (overlapping or missing data)")
        pos = end
    if pos != len(buf):
        _bad(f"the data section has {len(buf) - pos} trailing bytes that no tensor uses")
    order = {name: i for i, (_, _, name) in enumerate(spans)}
    ordered = dict(sorted(header.items(), key=lambda kv: order[kv[0]]))
    return ordered, meta, buf


def _rebuild(node: Any, tensors: dict[str, Tensor], depth: int = 0) -> Any:
    """The saved object from its JSON skeleton; every field's JSON type is checked before it is used."""
    if depth > MAX_DEPTH:
        _bad(f"the structure in the metadata is nested deeper than {MAX_DEPTH} levels")
    if isinstance(node, list):
        return [_rebuild(v, tensors, depth + 1) for v in node]
    if isinstance(node, dict):
        if set(node) == {"__tensor__"}:
            key = node["__tensor__"]
            if not isinstance(key, str) or key not in tensors:
                _bad(f"the structure refers to a missing tensor {key!r}")
            return tensors[key]
        if set(node) == {"__tuple__"} and isinstance(node["__tuple__"], list):
            return tuple(_rebuild(v, tensors, depth + 1) for v in node["__tuple__"])
        if set(node) in ({"__dict__"}, {"__plaindict__"}):
            items = node.get("__dict__", node.get("__plaindict__"))
            if not isinstance(items, list) or not all(
                    isinstance(p, list) and len(p) == 2 and (p[0] is None or isinstance(p[0], (str, int, float)))
                    for p in items):
                _bad("malformed dict in the structure")
            kind = dict if "__plaindict__" in node else OrderedDict
            return kind((k, _rebuild(v, tensors, depth + 1)) for k, v in items)
        _bad("unknown object in the structure")
    return node


@public("serialization", method=False)
def load(f: str | os.PathLike[str] | BinaryIO | bytes, map_location: Any = None, weights_only: bool = True,
         **kwargs: Any) -> Any:
    """Load what :func:`save` wrote (or any safetensors file: a dict of tensors). Never runs code."""
    from ._device import device as make_device

    data = _read(f)
    header, meta, buf = _parse(data)
    tensors: dict[str, Tensor] = OrderedDict()
    for name, info in header.items():
        dt = _FROM_CODE[info["dtype"]]
        begin, end = info["data_offsets"]
        arr = np.frombuffer(buf[begin:end], dtype=dt).reshape(info["shape"]).copy()
        if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and not np.little_endian):
            arr = arr.astype(arr.dtype.newbyteorder("="))
        t = Tensor._make(arr)
        if map_location is not None and not callable(map_location) and not isinstance(map_location, dict):
            t = t.to(make_device(map_location) if isinstance(map_location, str) else map_location)
        tensors[name] = t
    if _STRUCTURE in meta:
        return _rebuild(_json(meta[_STRUCTURE], "the structure in the metadata"), tensors)
    return dict(tensors) if meta.get(_PLAIN_DICT) == "1" else tensors


def _roundtrip_bytes(obj: Any) -> bytes:
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()
