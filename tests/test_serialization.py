"""st.save / st.load: safetensors round trips (every dtype, state_dicts, optimizer state, single tensors),
the byte layout of the format, and clear errors for truncated, oversized and malformed files."""

from __future__ import annotations

import io
import json
import struct
from collections import OrderedDict
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import torch

import shapetorch as st
from shapetorch import nn, optim

CODES = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16", "int64": "I64", "int32": "I32",
         "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL", "complex64": "C64"}


def roundtrip(obj):
    buf = io.BytesIO()
    st.save(obj, buf)
    return st.load(io.BytesIO(buf.getvalue())), buf.getvalue()


@pytest.mark.parametrize("dtype", list(CODES))
def test_every_dtype_round_trips(dtype):
    t = (st.arange(12).reshape(3, 4) % 3 == 0) if dtype == "bool" else st.arange(12).reshape(3, 4).to(getattr(st, dtype))
    back, raw = roundtrip({"t": t})
    assert back["t"].dtype is t.dtype and tuple(back["t"].shape) == (3, 4)
    np.testing.assert_array_equal(back["t"].numpy(), t.numpy())
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    assert header["t"]["dtype"] == CODES[dtype] and header["t"]["shape"] == [3, 4]


def test_byte_layout_follows_the_spec(tmp_path):
    sd = {"a": st.tensor([1.0, 2.0]), "b": st.tensor([[7]], dtype=st.int32)}
    path = tmp_path / "m.safetensors"
    st.save(sd, path)
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    assert (8 + n) % 8 == 0
    header = json.loads(raw[8:8 + n])
    assert header["a"] == {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
    assert header["b"] == {"dtype": "I32", "shape": [1, 1], "data_offsets": [8, 12]}
    data = raw[8 + n:]
    assert np.frombuffer(data[:8], "<f4").tolist() == [1.0, 2.0] and np.frombuffer(data[8:], "<i4").tolist() == [7]
    assert list(st.load(path)) == ["a", "b"]


def test_reads_a_hand_written_file():
    body = np.array([1.5, -2.0], "<f8").tobytes() + np.array([1, 0, 1], bool).tobytes()
    header = json.dumps({"__metadata__": {"k": "v"}, "z": {"dtype": "BOOL", "shape": [3], "data_offsets": [16, 19]},
                         "y": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]}}).encode()
    got = st.load(struct.pack("<Q", len(header)) + header + body)
    assert got["y"].tolist() == [1.5, -2.0] and got["z"].tolist() == [True, False, True]


def test_state_dicts_tensors_and_optimizer_state():
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    back, _ = roundtrip(m.state_dict())
    assert list(back) == list(m.state_dict())
    m2 = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    m2.load_state_dict(back)
    for a, b in zip(m.state_dict().values(), m2.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    t, _ = roundtrip(st.randn(2, 3))
    assert isinstance(t, st.Tensor) and tuple(t.shape) == (2, 3)
    o = optim.Adam(m.parameters(), lr=0.01, betas=(0.8, 0.9))
    m(st.randn(5, 3)).sum().backward()
    o.step()
    sd, _ = roundtrip(o.state_dict())
    assert sd["param_groups"][0]["betas"] == (0.8, 0.9) and list(sd["state"]) == [0, 1, 2, 3]
    o2 = optim.Adam(m2.parameters())
    o2.load_state_dict(sd)
    assert o2.param_groups[0]["lr"] == 0.01
    nested, _ = roundtrip({"epoch": 3, "model": m.state_dict(), "hist": [1.5, None, "x"], 4: (st.ones(1),)})
    assert nested["epoch"] == 3 and nested["hist"] == [1.5, None, "x"] and nested[4][0].tolist() == [1.0]


def test_bf16_values_survive():
    t = st.tensor([1.0, 3.140625, -2.5], dtype=st.bfloat16)
    back, raw = roundtrip({"w": t})
    assert back["w"].numpy().dtype == np.dtype(ml_dtypes.bfloat16)
    assert back["w"].float().tolist() == [1.0, 3.140625, -2.5]


def bad(data: bytes, match: str):
    with pytest.raises(st.ShapetorchError, match=match) as e:
        st.load(data)
    assert e.value.code == "serialization_error_malformed_file"


def file_with(header: dict, body: bytes) -> bytes:
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + body


def test_malformed_files_give_clear_errors():
    good = roundtrip({"a": st.ones(4)})[1]
    bad(good[:5], "truncated")
    bad(good[:-3], "truncated")
    bad(struct.pack("<Q", 2**40) + b"{}", "larger than the limit")
    bad(struct.pack("<Q", 30) + b"{}", "truncated")
    bad(struct.pack("<Q", 4) + b"{no}", "not valid UTF-8 JSON")
    bad(struct.pack("<Q", 2) + b"[]", "not a JSON object")
    bad(file_with({"a": {"dtype": "F99", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4), "unknown dtype")
    bad(file_with({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 4), "needs 8")
    bad(file_with({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4), "invalid shape")
    bad(file_with({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}, b"\0" * 4), "invalid data_offsets")
    bad(file_with({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 8), "trailing bytes")
    bad(file_with({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                   "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4), "overlapping")
    bad(file_with({"a": {"dtype": "F32", "shape": [1]}}, b"\0" * 4), "exactly dtype")
    bad(file_with({"__metadata__": {"shapetorch.structure": "{bad"}}, b""), "structure")


def test_loading_never_executes_code_and_saving_refuses_objects():
    payload = file_with({"__metadata__": {"shapetorch.structure": json.dumps({"__reduce__": "os.system"})}}, b"")
    bad(payload, "unknown object")
    with pytest.raises(st.ShapetorchError) as e:
        st.save({"f": lambda: 0}, io.BytesIO())
    assert e.value.code == "serialization_error_unsupported_object"
    with pytest.raises(st.ShapetorchError):
        st.save({"c": st.ones(2, dtype=st.complex128)}, io.BytesIO())
    assert "save" in st.list_ops() and st.get_op_info("load")["category"] == "serialization"


def _structure(skeleton_json: str) -> bytes:
    return file_with({"__metadata__": {"shapetorch.structure": skeleton_json}}, b"")


def test_hostile_headers_and_structures_give_coded_errors():
    """Deep nesting and fields of the wrong JSON type are refused with a code, never a raw Python error."""
    deep = "[" * 100_000 + "]" * 100_000
    h = ('{"a": ' + deep + "}").encode()
    bad(struct.pack("<Q", len(h)) + h, "nested too deeply")
    bad(_structure(deep), "nested too deeply")
    bad(_structure("[" * 400 + "]" * 400), "deeper than")
    bad(file_with({"a": {"dtype": ["F32"], "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4), "unknown dtype")
    bad(file_with({"a": {"dtype": {"F32": 1}, "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4), "unknown dtype")
    bad(_structure(json.dumps({"__tensor__": ["a"]})), "missing tensor")
    bad(_structure(json.dumps({"__tuple__": 3})), "unknown object")
    bad(_structure(json.dumps({"__dict__": [[["k"], 1]]})), "malformed dict")
    bad(_structure(json.dumps({"__dict__": [[{"k": 1}, 1]]})), "malformed dict")
    # a shallow, legal structure with every JSON type still loads
    assert st.load(_structure(json.dumps({"__dict__": [["a", [1, 2.5, None, True, "s"]], [3, {"__tuple__": []}]]}))) \
        == {"a": [1, 2.5, None, True, "s"], 3: ()}


def test_valid_files_shapetorch_cannot_hold_are_refused_with_a_code():
    """NumPy holds at most 64 dims and sizes a shape by its nonzero dims even when a dim is 0."""
    for shape in ([1] * 65, [0, 2**62], [0, 2**40, 2**40]):
        with pytest.raises(st.ShapetorchError, match="at most 64|can address") as e:
            st.load(file_with({"a": {"dtype": "F32", "shape": shape, "data_offsets": [0, 0 if 0 in shape else 4]}},
                              b"" if 0 in shape else b"\0" * 4))
        assert e.value.code == "serialization_error_too_large" and isinstance(e.value, RuntimeError)
    assert st.load(file_with({"a": {"dtype": "F32", "shape": [1] * 64, "data_offsets": [0, 4]}}, b"\0" * 4))["a"].dim() == 64
    assert st.load(file_with({"a": {"dtype": "F32", "shape": [0, 2**40], "data_offsets": [0, 0]}}, b""))["a"].shape == (0, 2**40)


def test_loaded_dicts_keep_their_type_as_torch() -> None:
    """A checkpoint saved as a plain dict loads as a dict, a state_dict as an OrderedDict, at every level (what a
    user sees printing it or its ``keys()``)."""
    def objects(lib: Any) -> list[Any]:
        lin = lib.nn.Linear(2, 1)
        return [{"a": lib.ones(2)}, lin.state_dict(), {"model": lin.state_dict(), "epoch": 3},
                [lib.ones(1), {"a": lib.tensor(3), "b": OrderedDict(x=lib.ones(1))}]]

    def types(obj: Any) -> Any:
        if isinstance(obj, dict):
            return type(obj).__name__, {k: types(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [types(v) for v in obj]
        return type(obj).__name__.replace("Parameter", "Tensor")

    for theirs, ours in zip(objects(torch), objects(st)):
        buf_t, buf_o = io.BytesIO(), io.BytesIO()
        torch.save(theirs, buf_t)
        st.save(ours, buf_o)
        buf_t.seek(0)
        buf_o.seek(0)
        assert types(st.load(buf_o)) == types(torch.load(buf_t))
