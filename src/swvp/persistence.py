"""Model files: one ``.npz`` of plain arrays (loaded with ``allow_pickle=False``) holding a JSON header.

The header records the format version, the library version, the model kind, labels, vocabularies, templates and
settings. Files are written atomically (temp file + rename, by :func:`swvp.data.textio.atomic_write_bytes`, the one
atomic writer), so an interrupted save never leaves a truncated model behind.

Format version 3 (written now) is small. Member ``__meta__`` (UTF-8 JSON as uint8) holds only the format version,
the library version, the kind and the codec (``zstd``, or ``zlib`` where the zstandard package is missing), so that
any swvp names the version it cannot read; the whole header is member ``__header__``, compressed JSON. Every array
is stored compressed (its bytes split into byte planes first: a plane of high bytes is mostly equal) and described in
the header's ``arrays`` entry:

* ``packed``: the array itself (an increasing integer array as its differences);
* ``sparse``: a mostly-zero numeric array as the gaps between its bitwise non-zero entries (``-0.0`` and NaN
  payloads included) and their values; it reads back as the same dense array;
* ``compact``: a :class:`~swvp.model.compact.CompactVector` (a trained weight vector), stored the same way and read
  back as one, so that a model is never materialised dense.

Float values are stored exactly. Averaged perceptron weights are w − u/c with integers w, u and the example count
c, so most of them are k/c for an integer k: they are stored as k and the difference of their bit pattern from k/c's
(mostly 0), which compresses far better than their float64 bytes. A compact vector may instead be stored quantised
(``save_model(..., lossless=False)``; a pipeline's ``save`` does so unless asked for a lossless file): its values
rounded to multiples of a power of two ``QUANTIZE_BITS`` binary orders below their median magnitude, which moves
scores by far less than the margins that decide outputs (benchmarks/README.md, "Model files").

Version 2 files (uncompressed archive, header in ``__meta__``, mostly-zero arrays as ``__sparse_index__NAME`` /
``__sparse_values__NAME``) and version 1 files (``np.savez_compressed``, dense) still load.
"""

from __future__ import annotations

import io
import json
import os
import zlib
from fractions import Fraction
from math import lcm
from pathlib import Path

import numpy as np

from swvp._version import __version__
from swvp.data.textio import atomic_write_bytes, atomic_write_text
from swvp.exceptions import ModelFormatError
from swvp.model.compact import CompactVector

__all__ = ["FORMAT_VERSION", "QUANTIZE_BITS", "atomic_write_bytes", "atomic_write_text", "load_model", "save_model"]

FORMAT_VERSION = 3
#: Format versions :func:`load_model` reads (1: dense arrays, compressed archive; 2: sparse arrays, uncompressed).
READ_VERSIONS = (1, 2, 3)
_META = "__meta__"
_HEADER = "__header__"
_ARRAYS = "arrays"  # version 3 header entry: {name: how the array is stored}
_SPARSE = "sparse_arrays"  # version 2 header entry: {name: {"shape": [...], "dtype": "<f8"}}
_INDEX = "__sparse_index__"
_VALUES = "__sparse_values__"
_SEP = "#"  # member NAME#stream holds one stream of array NAME
#: Arrays smaller than this stay dense; larger ones go sparse when that at least halves their bytes.
_SPARSE_MIN_SIZE = 1024
#: Quantised weights are multiples of 2**e, e this many binary orders below the median magnitude of the non-zero
#: weights (rounding changes a weight by at most half of that, under 1/256 of a median weight; with 6, UAS and LAS
#: moved by 0.07-0.12 points on hu_szeged and tr_imst: benchmarks/README.md, "Model files").
QUANTIZE_BITS = 8
#: zstd level of saved models (decompression speed does not depend on it); ``save_model(level=...)`` for checkpoints
LEVEL = 19


# --------------------------------------------------------------------------------------------------- codecs


def _zstd():
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard


def _codec() -> str:
    return "zstd" if _zstd() is not None else "zlib"


def _compress(data: bytes, codec: str, level: int) -> bytes:
    if codec == "zstd":
        return _zstd().ZstdCompressor(level=level).compress(data)
    return zlib.compress(data, min(max(level, 1), 9))


class _Damaged(ValueError):
    """A compressed stream that does not decompress to what the header says."""


def _decompress(data, codec: str, size: int) -> bytes:
    """The ``size`` bytes ``data`` (a bytes-like object) holds (:class:`_Damaged` if it holds anything else)."""
    out = bytearray(size)
    _decompress_into(data, codec, [memoryview(out)], size)
    return bytes(out)


def _decompress_into(data, codec: str, buffers, size: int) -> None:
    """Decompress ``data`` into the writable byte buffers (an iterable: the next one is asked for when the last is
    full) in turn, filling each; :class:`_Damaged` unless the stream holds exactly their total ``size``."""
    if codec == "zstd":
        zstd = _zstd()
        if zstd is None:
            raise ValueError("the file is compressed with zstd: install the zstandard package")
        error = zstd.ZstdError
        stream = zstd.ZstdDecompressor().stream_reader(data)
        readinto = stream.readinto

        def at_end() -> bool:
            return not stream.read(1)
    elif codec == "zlib":
        error = zlib.error
        d = zlib.decompressobj()
        rest = [data]

        def readinto(buf: memoryview) -> int:
            chunk = d.decompress(rest[0], len(buf))
            rest[0] = d.unconsumed_tail
            buf[:len(chunk)] = chunk
            return len(chunk)

        def at_end() -> bool:
            return not d.decompress(rest[0], 1) and d.eof
    else:
        raise ValueError(f"unknown codec {codec!r}")
    held = 0
    try:
        for buf in buffers:
            while len(buf):
                n = readinto(buf)
                if not n:
                    raise _Damaged(f"a compressed stream holds {held} bytes, {size} expected")
                held += n
                buf = buf[n:]
        if not at_end():
            raise _Damaged("a compressed stream is longer than its array")
    except error as err:
        raise _Damaged(f"{codec}: {err}") from err


# --------------------------------------------------------------------------------------------------- streams


def _narrow(a: np.ndarray) -> np.ndarray:
    """An integer array in the narrowest (little-endian) integer type holding its values."""
    if a.size == 0:
        return a.astype("<i1")
    lo, hi = int(a.min()), int(a.max())
    kinds = ("u1", "u2", "u4", "u8") if lo >= 0 else ("i1", "i2", "i4", "i8")
    for k in kinds:
        info = np.iinfo(k)
        if info.min <= lo and hi <= info.max:
            return a.astype("<" + k)
    raise ValueError("integers out of the 64-bit range")


class _Writer:
    """The members of a file being written and the codec of its streams."""

    def __init__(self, codec: str, level: int):
        self.codec, self.level = codec, level
        self.members: dict[str, np.ndarray] = {}

    def stream(self, member: str, a: np.ndarray) -> dict:
        """Store the 1-d array ``a`` compressed as ``member``, byte planes first; returns its description."""
        a = np.ascontiguousarray(a)
        dt = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
        a = a.astype(dt, copy=False)
        planes = a.view(np.uint8).reshape(a.shape[0], dt.itemsize).T.tobytes() if a.size else b""
        self.members[member] = np.frombuffer(_compress(planes, self.codec, self.level), np.uint8)
        return {"member": member, "dtype": dt.str, "n": int(a.shape[0])}


class _Reader:
    """The members of a file being read and the codec of its streams."""

    def __init__(self, codec: str, members: _Members | dict[str, np.ndarray]):
        self.codec, self.members = codec, members
        self.used: set[str] = set()

    def stream(self, spec, n: int | None = None, extra: int = 0) -> np.ndarray:
        """The 1-d array a stream description names (``n``: the length it must have), followed by ``extra``
        zeros."""
        if not isinstance(spec, dict) or not isinstance(spec.get("member"), str):
            raise ValueError("a stream must name its member")
        dt = np.dtype(spec["dtype"])
        count = spec["n"]
        if dt.kind not in "iufb" or dt.hasobject or type(count) is not int or not 0 <= count < 2 ** 40 or (
                n is not None and count != n):
            raise ValueError(f"stream {spec['member']!r}: bad type or length")
        raw = self.members.get(spec["member"])
        if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
            raise ValueError(f"stream {spec['member']!r} is missing or not bytes")
        self.used.add(spec["member"])
        out = np.empty(count + extra, dt)
        out[count:] = 0
        if dt.itemsize == 1:
            _decompress_into(raw, self.codec, [memoryview(out[:count].view(np.uint8))], count)
        else:  # one byte plane at a time: no second copy of the array
            _decompress_into(raw, self.codec, _planes_into(out[:count]), count * dt.itemsize)
        return out


class _Members:
    """The members of an open ``.npz``, each read when it is asked for: a model's compressed streams are read one
    after another, never all held at once (read errors are :class:`_Damaged`)."""

    def __init__(self, npz):
        self._npz = npz
        self.names = frozenset(npz.files)

    def __iter__(self):
        return iter(self.names)

    def get(self, name: str) -> np.ndarray | None:
        if name not in self.names:
            return None
        try:
            return self._npz[name]
        except Exception as err:  # noqa: BLE001 - a damaged member surfaces as many types (see load_model)
            raise _Damaged(f"member {name!r}: {err}") from err


#: entries merged per step when byte planes are combined (bounds the temporary array)
_MERGE_CHUNK = 1 << 16


def _planes_into(out: np.ndarray):
    """Byte buffers for the byte planes of ``out`` (1-d, little-endian, least significant plane first) in turn, each
    merged into ``out`` when it is full: plane j shifted left by 8·j and or-ed in, a chunk at a time (four times
    faster than scattering it into every itemsize-th byte)."""
    n = out.shape[0]
    u = out.view(np.dtype(f"<u{out.dtype.itemsize}"))
    plane = np.empty(n, np.uint8)
    tmp = np.empty(min(n, _MERGE_CHUNK), u.dtype)
    for j in range(out.dtype.itemsize):
        yield memoryview(plane)
        for a in range(0, n, _MERGE_CHUNK):
            b = min(a + _MERGE_CHUNK, n)
            if j == 0:
                np.copyto(u[a:b], plane[a:b])
            else:
                t = tmp[:b - a]
                np.copyto(t, plane[a:b])
                np.left_shift(t, 8 * j, out=t)
                np.bitwise_or(u[a:b], t, out=u[a:b])


# ------------------------------------------------------------------------------------------ float values


def _denominator(values: np.ndarray) -> int | None:
    """The common denominator c of values that are (nearly all) k/c for integers k: the least common multiple of
    the denominators of a sample of them (None when it grows past 2**32 or a value is not finite)."""
    den = 1
    for v in values[np.linspace(0, values.shape[0] - 1, min(values.shape[0], 64)).astype(np.int64)].tolist():
        if not np.isfinite(v):
            return None
        den = lcm(den, Fraction(v).limit_denominator(1 << 24).denominator)
        if den > 1 << 32:
            return None
    return den


def _put_values(w: _Writer, name: str, values: np.ndarray) -> dict:
    """Float values stored exactly: as integers k and bit-pattern residuals from k/c when most of them are k/c
    (``ratio``), else as they are (``float``)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.size:
        den = _denominator(values)
        if den is not None:
            with np.errstate(all="ignore"):
                k = np.rint(values * den)
            if np.all(np.isfinite(k)) and np.abs(k).max() < 2.0 ** 53:
                k = k.astype(np.int64)  # -0.0 becomes 0: its residual keeps the sign bit
                with np.errstate(over="ignore"):
                    residual = values.view(np.int64) - (k / den).view(np.int64)
                if np.count_nonzero(residual) <= values.shape[0] // 2:
                    return {"coding": "ratio", "den": den, "k": w.stream(name + _SEP + "k", _narrow(k)),
                            "residual": w.stream(name + _SEP + "residual", _narrow(residual))}
    return {"coding": "float", "values": w.stream(name + _SEP + "values", values)}


def _get_values(r: _Reader, spec, n: int) -> np.ndarray:
    coding = spec.get("coding") if isinstance(spec, dict) else None
    if coding == "float":
        out = r.stream(spec["values"], n)
        if out.dtype != np.float64:
            raise ValueError("float values must be float64")
        return out
    if coding == "ratio":
        den = spec["den"]
        if type(den) is not int or not 1 <= den <= 1 << 32:
            raise ValueError("bad denominator")
        k = r.stream(spec["k"], n)
        if k.dtype.kind not in "iu":
            raise ValueError("ratio streams must be integers")
        out = np.divide(k, den, dtype=np.float64)  # in place below: one float64 array, no temporaries
        del k
        residual = r.stream(spec["residual"], n)
        if residual.dtype.kind not in "iu":
            raise ValueError("ratio streams must be integers")
        with np.errstate(over="ignore"):
            np.add(out.view(np.int64), residual, out=out.view(np.int64), casting="unsafe")
        return out
    if coding == "step":
        e = spec["exp"]
        q = r.stream(spec["q"], n)
        if type(e) is not int or not -1000 < e < 1000 or q.dtype.kind not in "iu":
            raise ValueError("bad quantised values")
        return np.ldexp(q.astype(np.float64), e)
    raise ValueError(f"unknown value coding {coding!r}")


def _quantised(values: np.ndarray, bits: int) -> tuple[int, np.ndarray] | None:
    """(e, q): values ≈ q·2**e, e ``bits`` binary orders below the median magnitude (None: not finite)."""
    mags = np.abs(values[values != 0])
    if mags.size and not np.all(np.isfinite(mags)):
        return None
    e = int(np.floor(np.log2(np.median(mags)))) - int(bits) if mags.size else 0
    return e, np.rint(np.ldexp(values, -e)).astype(np.int64)


# --------------------------------------------------------------------------------------------------- arrays


def _entries(w: _Writer, name: str, index: np.ndarray, values: np.ndarray, quantize: int | None,
             scale: float | None = None) -> dict:
    """Positions (as gaps) and values of the stored entries of a vector (with ``scale``, a compact vector's: integer
    values times ``scale`` are a quantised one, stored as it is)."""
    spec = {}
    if scale is not None and values.dtype.kind in "iu":
        spec["values"] = {"coding": "step", "exp": int(np.frexp(scale)[1]) - 1,
                          "q": w.stream(name + _SEP + "q", _narrow(values))}
    elif quantize is not None and values.dtype == np.float64 and (q := _quantised(values, quantize)) is not None:
        e, q = q
        keep = q != 0
        index = index[keep]
        spec["values"] = {"coding": "step", "exp": e, "bits": int(quantize),
                          "q": w.stream(name + _SEP + "q", _narrow(q[keep]))}
    elif values.dtype == np.float64:
        spec["values"] = _put_values(w, name, values)
    else:
        spec["values"] = {"coding": "plain", "values": w.stream(name + _SEP + "values", values)}
    gaps = np.diff(index.astype(np.int64), prepend=-1) - 1
    spec["gaps"] = w.stream(name + _SEP + "gaps", _narrow(gaps))
    spec["nnz"] = int(index.shape[0])
    return spec


def _read_entries(r: _Reader, spec: dict, size: int, dtype: np.dtype, scaled: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, float | None]:
    """(gaps, values, scale) of stored entries: with ``scaled``, quantised values come back as their integers
    followed by a 0, and the scale (None: float64 values, not followed by a 0)."""
    n = spec["nnz"]
    if type(n) is not int or not 0 <= n <= size:
        raise ValueError("bad entry count")
    gaps = r.stream(spec["gaps"], n)
    if gaps.dtype.kind not in "iu" or (gaps.size and (gaps.min() < 0 or gaps.max() >= size)):
        raise ValueError("bad gaps")
    vs = spec["values"]
    if not isinstance(vs, dict):
        raise ValueError("bad values")
    if vs.get("coding") == "plain":
        values = r.stream(vs["values"], n)
        if values.dtype != dtype:
            raise ValueError("values of the wrong type")
        return gaps, values, None
    if dtype != np.float64:
        raise ValueError("float-coded values of a non-float64 array")
    if scaled and vs.get("coding") == "step":
        q, e = r.stream(vs["q"], n, extra=1), vs["exp"]  # followed by the 0 a compact vector's absent entry reads
        if q.dtype.kind not in "iu" or type(e) is not int or not -1000 < e < 1000:
            raise ValueError("bad quantised values")
        for t in (np.int16, np.int32):  # kept as integers: the narrower of two types (two compiled decoders)
            if q.size == 1 or (int(q.min()) >= np.iinfo(t).min and int(q.max()) <= np.iinfo(t).max):
                return gaps, q.astype(t, copy=False), float(np.ldexp(1.0, e))
    return gaps, _get_values(r, vs, n), None


def _put_array(w: _Writer, name: str, arr, quantize: int | None) -> dict:
    if isinstance(arr, CompactVector):
        return {"kind": "compact", "size": arr.size,
                **_entries(w, name, arr.entries(), arr.values, quantize, arr.scale)}
    arr = np.asarray(arr)
    if arr.dtype == object:
        raise TypeError(f"array {name!r} has dtype object; model files hold plain arrays only")
    if arr.dtype.kind not in "iufb":  # strings: stored as they are
        w.members[name] = arr
        return {"kind": "npy"}
    head = {"shape": list(arr.shape), "dtype": arr.dtype.newbyteorder("<").str if arr.dtype.byteorder == ">"
            else arr.dtype.str}
    flat = np.ascontiguousarray(arr).reshape(-1)
    if flat.dtype.kind in "iuf" and flat.size >= _SPARSE_MIN_SIZE:
        index = np.flatnonzero(flat.view(np.dtype(f"u{flat.dtype.itemsize}")))
        if index.size * (flat.dtype.itemsize + 4) * 2 <= flat.nbytes:
            return {"kind": "sparse", **head, **_entries(w, name, index, flat[index], None)}
    if flat.dtype == np.int64 and flat.size > 1 and flat[0] >= 0 and np.all(flat[1:] >= flat[:-1]):
        # increasing keys (feature hashes): their differences are a fraction of their bytes
        return {"kind": "packed", **head, "delta": True, "data": w.stream(name, _narrow(np.diff(flat, prepend=0)))}
    if flat.dtype == np.float64 and flat.size:
        return {"kind": "packed", **head, "float": _put_values(w, name, flat)}
    return {"kind": "packed", **head, "data": w.stream(name, flat)}


def _get_array(r: _Reader, name: str, spec) -> np.ndarray | CompactVector:
    if not isinstance(spec, dict):
        raise ValueError(f"{_ARRAYS}[{name!r}] must be an object")
    kind = spec.get("kind")
    if kind == "npy":
        arr = r.members.get(name)
        if arr is None:
            raise ValueError(f"array {name!r} is missing")
        r.used.add(name)
        return arr
    if kind == "compact":
        size = spec["size"]
        if type(size) is not int or not 0 <= size < 2 ** 40:
            raise ValueError(f"{name}: bad size")
        gaps, values, scale = _read_entries(r, spec, size, np.dtype(np.float64), scaled=True)
        if scale is None:
            return CompactVector.from_gaps(size, gaps, values)
        return CompactVector.from_gaps(size, gaps, values[:-1], scale, padded=values)
    shape, dtype = spec.get("shape"), np.dtype(spec.get("dtype"))
    if not isinstance(shape, list) or not all(type(d) is int and 0 <= d < 2 ** 40 for d in shape) or \
            dtype.kind not in "iufb":
        raise ValueError(f"{name}: bad shape or type")
    size = int(np.prod(shape, dtype=np.int64))
    if kind == "sparse":
        gaps, values, _ = _read_entries(r, spec, size, dtype)
        index = np.cumsum(gaps.astype(np.int64) + 1) - 1
        if index.size and index[-1] >= size:
            raise ValueError("entry positions beyond the array")
        out = np.zeros(size, dtype)
        out[index] = values
        return out.reshape(shape)
    if kind != "packed":
        raise ValueError(f"{name}: unknown storage {kind!r}")
    if "float" in spec:
        if dtype != np.float64:
            raise ValueError(f"{name}: float coding of a {dtype} array")
        return _get_values(r, spec["float"], size).reshape(shape)
    data = r.stream(spec["data"], size)
    if spec.get("delta"):
        if dtype.kind != "i" or data.dtype.kind not in "iu":
            raise ValueError(f"{name}: differences of a non-integer array")
        data = np.cumsum(data, dtype=np.int64)
    return data.astype(dtype, copy=False).reshape(shape)


# ---------------------------------------------------------------------------------------------------- files


def save_model(path: str | os.PathLike, kind: str, meta: dict, arrays: dict, *, lossless: bool = True,
               level: int = LEVEL) -> None:
    """Save ``arrays`` (numpy arrays, or :class:`~swvp.model.compact.CompactVector` weight vectors) and a
    JSON-serialisable ``meta`` as one model file of the given ``kind``.

    ``lossless=False``: compact vectors are stored quantised (module docstring); everything else is always exact.
    ``level``: the compression level (lower: faster saves, larger files).
    """
    codec = _codec()
    envelope = {"format_version": FORMAT_VERSION, "library_version": __version__, "kind": kind}
    header = {**envelope, **meta}
    for key in (_SPARSE, _ARRAYS):  # storage details of this file, never carried over from another one
        header.pop(key, None)
    writer = _Writer(codec, level)
    specs = {}
    for name, arr in arrays.items():
        if not isinstance(name, str) or name in (_META, _HEADER) or _SEP in name or name.startswith((_INDEX, _VALUES)):
            raise ValueError(f"array name {name!r} is reserved")
        specs[name] = _put_array(writer, name, arr, None if lossless else QUANTIZE_BITS)
    header[_ARRAYS] = specs
    text = _header_text(_shared_lists(_json_safe(header)))
    envelope.update(codec=codec, header_bytes=len(text))
    members = {_META: np.frombuffer(json.dumps(envelope).encode("utf-8"), np.uint8),
               _HEADER: np.frombuffer(_compress(text, codec, level), np.uint8), **writer.members}
    buf = io.BytesIO()
    np.savez(buf, **members)
    atomic_write_bytes(path, buf.getvalue())


def _json_safe(obj):
    """Strict JSON: NaN/inf become null, numpy scalars plain numbers, tuples lists."""
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


_SHARED = "shared_lists"  # version 3 header entry: lists that several header entries hold, stored once
_SHARED_REF = "__shared_list__"  # {_SHARED_REF: i} in their place
_SHARED_MIN = 256  # shorter lists are written where they are


def _shared_lists(header: dict) -> dict:
    """The header with every long list that is the value of several dict entries (a pipeline's tagger and
    lemmatizer read the same vocabularies) replaced by a reference to one copy in ``shared_lists``."""
    seen: dict[str, int] = {}
    shared: list[list] = []
    count: dict[str, int] = {}

    def key(v: list) -> str:
        return json.dumps(v, ensure_ascii=False, allow_nan=False)

    def walk(obj, visit):
        if isinstance(obj, dict):
            for k, v in obj.items():
                if isinstance(v, list) and len(v) >= _SHARED_MIN:
                    obj[k] = visit(v)
                else:
                    walk(v, visit)
        elif isinstance(obj, list):
            for v in obj:
                walk(v, visit)

    def tally(v):
        count[key(v)] = count.get(key(v), 0) + 1
        return v

    def replace(v):
        k = key(v)
        if count[k] < 2:
            return v
        if k not in seen:
            seen[k] = len(shared)
            shared.append(v)
        return {_SHARED_REF: seen[k]}

    walk(header, tally)
    if any(c > 1 for c in count.values()):
        walk(header, replace)
        header[_SHARED] = shared
    return header


#: what a JSON list of scalars holds (the header's vocabularies: lists of tens of thousands of strings)
_FLAT_TYPES = frozenset((str, int, float, bool, type(None)))


def _resolve_shared(header: dict) -> dict:
    """Inverse of :func:`_shared_lists`: every reference becomes the shared list itself (one object)."""
    shared = header.pop(_SHARED, None)
    if shared is None:
        return header
    if not isinstance(shared, list) or not all(isinstance(x, list) for x in shared):
        raise ValueError(f"{_SHARED} must be a list of lists")

    def walk(obj):
        if isinstance(obj, dict):
            for k, v in obj.items():
                if isinstance(v, dict) and _SHARED_REF in v:
                    i = v[_SHARED_REF]
                    if len(v) != 1 or type(i) is not int or not 0 <= i < len(shared):
                        raise ValueError("a bad shared-list reference")
                    obj[k] = shared[i]
                elif isinstance(v, (dict, list)):
                    walk(v)
        elif isinstance(obj, list) and not _FLAT_TYPES.issuperset(map(type, obj)):  # a vocabulary: no look
            for v in obj:
                if isinstance(v, (dict, list)):
                    walk(v)

    walk(header)
    return header


def _header_text(header: dict) -> bytes:
    """The header as UTF-8 JSON; non-ASCII characters as themselves (a Greek word is half the bytes of its
    ``\\u`` escapes, and parses faster), or escaped where a string holds a lone surrogate."""
    try:
        return json.dumps(header, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(header, allow_nan=False).encode("utf-8")


def _unpack_v3(meta: dict, npz_members: _Members | dict[str, np.ndarray]) -> tuple[dict, dict]:
    """The full header and the arrays of a version 3 file, from its envelope and members."""
    codec, size = meta.get("codec"), meta.get("header_bytes")
    raw = npz_members.get(_HEADER)
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1 or type(size) is not int or not 0 < size < 2 ** 32:
        raise ValueError("no compressed header")
    header = json.loads(_decompress(raw, codec, size).decode("utf-8"))
    if not isinstance(header, dict) or any(header.get(k) != meta.get(k) for k in ("format_version", "kind")):
        raise ValueError("the header disagrees with the envelope")
    header = _resolve_shared(header)
    specs = header.pop(_ARRAYS, None)
    if not isinstance(specs, dict):
        raise ValueError(f"the header has no {_ARRAYS} entry")
    reader = _Reader(codec, npz_members)
    arrays = {name: _get_array(reader, name, spec) for name, spec in specs.items()}
    stray = set(npz_members) - reader.used - {_META, _HEADER}
    if stray:
        raise ValueError(f"members {sorted(stray)} are not in the header")
    return header, arrays


def _unpack_sparse(meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """Replace the sparse members of ``arrays`` by the dense arrays they encode (ValueError if inconsistent)."""
    spec = meta.pop(_SPARSE, {})
    if meta["format_version"] == 1:
        spec = {}
    if not isinstance(spec, dict):
        raise ValueError(f"{_SPARSE} must be an object")
    for name, s in spec.items():
        if not isinstance(s, dict) or not isinstance(s.get("shape"), list) or not isinstance(s.get("dtype"), str):
            raise ValueError(f"{_SPARSE}[{name!r}] must hold a shape list and a dtype string")
        shape = s["shape"]
        if not all(type(d) is int and 0 <= d < 2 ** 40 for d in shape):
            raise ValueError(f"{_SPARSE}[{name!r}]: bad shape {shape!r}")
        dtype = np.dtype(s["dtype"])
        if dtype.kind not in "iuf":
            raise ValueError(f"{_SPARSE}[{name!r}]: dtype {dtype} is not numeric")
        if name in arrays or _INDEX + name not in arrays or _VALUES + name not in arrays:
            raise ValueError(f"array {name!r} must be stored either dense or as its two sparse members")
        index, values = arrays.pop(_INDEX + name), arrays.pop(_VALUES + name)
        size = int(np.prod(shape, dtype=np.int64))
        if (index.ndim != 1 or index.dtype.kind not in "iu" or values.ndim != 1 or values.dtype != dtype
                or index.shape != values.shape):
            raise ValueError(f"sparse members of {name!r} have the wrong shape or dtype")
        if index.size and (index[0] < 0 or index[-1] >= size or np.any(index[1:] <= index[:-1])):
            raise ValueError(f"sparse positions of {name!r} are out of range or not increasing")
        dense = np.zeros(size, dtype)
        dense[index] = values
        arrays[name] = dense.reshape(shape)
    stray = [k for k in arrays if k.startswith((_INDEX, _VALUES))]
    if stray:
        raise ValueError(f"sparse members {stray} without a header entry")


def _read_members(path: Path, npz, kind: str | None) -> tuple[dict, dict | _Members]:
    """The envelope of an open model file, checked, and its members: a version 3 file's read when asked for,
    an older one's read now."""
    try:
        if _META not in npz.files:
            raise ModelFormatError(f"{path}: not a swvp model file (no {_META} header)")
        meta = json.loads(npz[_META].tobytes().decode("utf-8"))
        lazy = isinstance(meta, dict) and meta.get("format_version") == 3
        arrays = _Members(npz) if lazy else {name: npz[name] for name in npz.files if name != _META}
    except ModelFormatError:
        raise
    except Exception as err:  # noqa: BLE001
        # Only reading and parsing happen above, so any failure means a damaged file. Damaged bytes surface as
        # many types besides OSError / ValueError / BadZipFile: zlib.error (deflate data), NotImplementedError and
        # RuntimeError (zip flags flipped to another method / "encrypted"), tokenize.TokenError (a .npy header),
        # RecursionError (deeply nested JSON), struct.error, MemoryError (a huge claimed shape).
        raise ModelFormatError(f"{path}: damaged or unreadable model file ({err})") from err
    if not isinstance(meta, dict) or "format_version" not in meta:
        raise ModelFormatError(f"{path}: model header lacks a format version")
    version = meta["format_version"]
    if type(version) is not int or version not in READ_VERSIONS:
        raise ModelFormatError(f"{path}: model format version {version} is not supported "
                               f"(this swvp reads versions {', '.join(map(str, READ_VERSIONS))}); retrain or use a "
                               f"matching swvp")
    if kind is not None and meta.get("kind") != kind:
        raise ModelFormatError(f"{path}: a {meta.get('kind')!r} model, expected {kind!r}")
    return meta, arrays


def load_model(path: str | os.PathLike, kind: str | None = None) -> tuple[dict, dict[str, np.ndarray]]:
    """Read a model file; returns ``(meta, arrays)``. Raises :class:`ModelFormatError` on any defect."""
    path = Path(path)
    if not path.is_file():
        raise ModelFormatError(f"{path}: no such model file")
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as err:
        raise ModelFormatError(f"{path}: unreadable model file ({err.strerror or err})") from err
    if magic[:2] != b"PK":  # not a zip archive, so not an .npz: refused before numpy reads it
        raise ModelFormatError(f"{path}: not a swvp model file (a model is an .npz archive; this file is not one)")
    try:
        npz = np.load(path, allow_pickle=False)
    except Exception as err:  # noqa: BLE001 - any type: see _read_members
        raise ModelFormatError(f"{path}: damaged or unreadable model file ({err})") from err
    with npz:
        meta, arrays = _read_members(path, npz, kind)
        try:
            if meta["format_version"] == 3:
                meta, arrays = _unpack_v3(meta, arrays)
            else:
                _unpack_sparse(meta, arrays)
        except (_Damaged, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
            raise ModelFormatError(f"{path}: damaged or unreadable model file ({err})") from err
        except (ValueError, TypeError, KeyError, OverflowError, MemoryError, IndexError) as err:
            raise ModelFormatError(f"{path}: inconsistent model file ({err})") from err
    return meta, arrays
