"""Model files: one ``.npz`` of plain arrays (loaded with ``allow_pickle=False``) holding a JSON header.

The header (entry ``__meta__``, UTF-8 JSON as uint8) records the format version, the library version, the
model kind, labels, vocabularies, templates and settings. Files are written atomically (temp file + rename, by
:func:`swvp.data.textio.atomic_write_bytes`, the one atomic writer), so an interrupted save never leaves a
truncated model behind.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np

from swvp._version import __version__
from swvp.data.textio import atomic_write_bytes, atomic_write_text
from swvp.exceptions import ModelFormatError

__all__ = ["FORMAT_VERSION", "atomic_write_bytes", "atomic_write_text", "load_model", "save_model"]

FORMAT_VERSION = 1
_META = "__meta__"


def save_model(path: str | os.PathLike, kind: str, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """Save ``arrays`` and a JSON-serialisable ``meta`` as one model file of the given ``kind``."""
    header = {"format_version": FORMAT_VERSION, "library_version": __version__, "kind": kind, **meta}
    if _META in arrays:
        raise ValueError(f"array name {_META!r} is reserved")
    for name, arr in arrays.items():
        if np.asarray(arr).dtype == object:
            raise TypeError(f"array {name!r} has dtype object; model files hold plain arrays only")
    buf = io.BytesIO()
    text = json.dumps(_json_safe(header), allow_nan=False)
    np.savez_compressed(buf, **{_META: np.frombuffer(text.encode("utf-8"), np.uint8)}, **arrays)
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


def load_model(path: str | os.PathLike, kind: str | None = None) -> tuple[dict, dict[str, np.ndarray]]:
    """Read a model file; returns ``(meta, arrays)``. Raises :class:`ModelFormatError` on any defect."""
    path = Path(path)
    if not path.is_file():
        raise ModelFormatError(f"{path}: no such model file")
    try:
        with np.load(path, allow_pickle=False) as npz:
            if _META not in npz.files:
                raise ModelFormatError(f"{path}: not a swvp model file (no {_META} header)")
            meta = json.loads(npz[_META].tobytes().decode("utf-8"))
            arrays = {name: npz[name] for name in npz.files if name != _META}
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
    if meta["format_version"] != FORMAT_VERSION:
        raise ModelFormatError(f"{path}: model format version {meta['format_version']} is not supported "
                               f"(this swvp reads version {FORMAT_VERSION}); retrain or use a matching swvp")
    if kind is not None and meta.get("kind") != kind:
        raise ModelFormatError(f"{path}: a {meta.get('kind')!r} model, expected {kind!r}")
    return meta, arrays
