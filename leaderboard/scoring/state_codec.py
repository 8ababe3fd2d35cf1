"""A fanned-out scoring's prepared state as bytes, and back, without pickle.

The prepare step of a fanned-out scoring (``leaderboard.scoring.fanout``) stores what every chunk task
needs (a tabular task's per-item statistics and predictions, a detection entry's matched curves) in a
database row. Pickle would store any object, and unpickling runs whatever a row says: the project's rule
is that no code unpickles (tests/reliability/test_security.py). So the state is written as an ``.npz``
archive of plain arrays, read back with ``allow_pickle=False``, plus one JSON document that describes the
nesting: dicts, lists, numbers and strings as they are, and instances of the few dataclasses registered
below, field by field. Anything else is refused when the state is written, not when it is read.

Written by hand because no library does this: ``np.savez`` alone stores flat arrays, and the general
serializers (pickle, joblib, cloudpickle) all execute code when they load.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import zlib
from typing import Any

import numpy as np
from scipy import sparse

#: The dataclasses a state may hold, by name (registered by :func:`register`).
_TYPES: dict[str, type] = {}


def register(*classes: type) -> None:
    """Allow instances of ``classes`` (dataclasses) in a state."""
    for cls in classes:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__name__} is not a dataclass")
        _TYPES[f"{cls.__module__}.{cls.__qualname__}"] = cls


def dumps(state: Any, *, level: int = 1) -> bytes:
    """``state`` as zlib-compressed npz bytes (``level``: zlib's; 1 is fast and compresses these well)."""
    arrays: dict[str, np.ndarray] = {}

    def enc(x: Any) -> Any:
        if x is None or isinstance(x, bool | int | str):
            return x
        if isinstance(x, float):
            return {"__float__": repr(x)} if not math.isfinite(x) else x
        if isinstance(x, np.generic):
            return enc(x.item())
        if isinstance(x, np.ndarray):
            a = x
            if a.dtype == object:
                if not all(isinstance(v, str) for v in a.flat):
                    raise TypeError("an object array that is not all strings cannot be stored")
                a = a.astype(str)
            key = f"a{len(arrays)}"
            arrays[key] = a
            return {"__array__": key}
        if sparse.issparse(x):
            m = sparse.csr_matrix(x)
            return {"__csr__": [enc(m.data), enc(m.indices), enc(m.indptr), list(m.shape)]}
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            name = f"{type(x).__module__}.{type(x).__qualname__}"
            if name not in _TYPES:
                raise TypeError(f"{name} is not registered in leaderboard.scoring.state_codec")
            fields = {f.name: enc(getattr(x, f.name)) for f in dataclasses.fields(x) if f.init}
            return {"__dataclass__": name, "fields": fields}
        if isinstance(x, dict):
            if not all(isinstance(k, str) for k in x):
                raise TypeError("only dicts with string keys can be stored")
            return {"__dict__": {k: enc(v) for k, v in x.items()}}
        if isinstance(x, list | tuple):
            return {"__tuple__": [enc(v) for v in x]} if isinstance(x, tuple) else [enc(v) for v in x]
        raise TypeError(f"a {type(x).__name__} cannot be stored in a prepared state")

    meta = json.dumps(enc(state), allow_nan=False).encode()
    buffer = io.BytesIO()
    savez: Any = np.savez  # plain arrays only (object arrays were refused above)
    savez(buffer, __meta__=np.frombuffer(meta, dtype=np.uint8), **arrays)
    return zlib.compress(buffer.getvalue(), level)


def loads(data: bytes | memoryview) -> Any:
    """A state written by :func:`dumps` (arrays read with ``allow_pickle=False``)."""
    with np.load(io.BytesIO(zlib.decompress(bytes(data))), allow_pickle=False) as archive:
        arrays = {key: archive[key] for key in archive.files}
    meta = json.loads(arrays.pop("__meta__").tobytes().decode())

    def dec(x: Any) -> Any:
        if isinstance(x, list):
            return [dec(v) for v in x]
        if not isinstance(x, dict):
            return x
        if "__array__" in x:
            return arrays[x["__array__"]]
        if "__float__" in x:
            return float(x["__float__"])
        if "__tuple__" in x:
            return tuple(dec(v) for v in x["__tuple__"])
        if "__dict__" in x:
            return {k: dec(v) for k, v in x["__dict__"].items()}
        if "__csr__" in x:
            data_, indices, indptr, shape = (dec(v) for v in x["__csr__"])
            return sparse.csr_matrix((data_, indices, indptr), shape=tuple(shape))
        if "__dataclass__" in x:
            cls = _TYPES.get(x["__dataclass__"])
            if cls is None:
                raise ValueError(f"unknown type {x['__dataclass__']!r} in a prepared state")
            return cls(**{k: dec(v) for k, v in x["fields"].items()})
        raise ValueError("a prepared state holds an unknown entry")

    return dec(meta)
