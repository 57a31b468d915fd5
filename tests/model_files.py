"""Model files as earlier swvp versions wrote them, for the tests that check they still load and decode the same.

Format version 2: an uncompressed ``.npz`` whose ``__meta__`` member is the whole JSON header, a mostly-zero array
stored as ``__sparse_index__NAME`` / ``__sparse_values__NAME`` (its shape and dtype in the header's
``sparse_arrays``); the transition parser's weights as ``coef_idx`` / ``coef_val`` / ``coef_size``, the candidate
taggers' dense, tagging feature keys in feature-id order, the candidate lexicon and the rare words in the header.
"""

from __future__ import annotations

import json

import numpy as np

import swvp
from swvp.model.compact import CompactVector

__all__ = ["read_header", "rewrite_header", "v2_contents", "write_v1", "write_v2"]


def write_v2(path, kind: str, meta: dict, arrays: dict) -> None:
    """Write ``meta`` and ``arrays`` (numpy arrays) as format version 2 did."""
    meta = {**meta, "format_version": 2, "library_version": swvp.__version__, "kind": kind}
    members, sparse = {}, {}
    for name, arr in arrays.items():
        arr = np.asarray(arr)
        flat = arr.reshape(-1)
        index = np.flatnonzero(flat.view(np.dtype(f"u{flat.dtype.itemsize}"))) if arr.dtype.kind in "iuf" else None
        if index is not None and arr.size >= 1024 and index.size * (4 + flat.dtype.itemsize) * 2 <= flat.nbytes:
            members["__sparse_index__" + name] = index.astype(np.uint32)
            members["__sparse_values__" + name] = flat[index]
            sparse[name] = {"shape": list(arr.shape), "dtype": arr.dtype.str}
        else:
            members[name] = arr
    if sparse:
        meta["sparse_arrays"] = sparse
    members["__meta__"] = np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8)
    np.savez(path, **members)


def write_v1(path, kind: str, meta: dict, arrays: dict) -> None:
    """Write ``meta`` and ``arrays`` as format version 1 did: dense arrays, ``np.savez_compressed``."""
    meta = {**meta, "format_version": 1, "library_version": swvp.__version__, "kind": kind}
    np.savez_compressed(path, __meta__=np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8), **arrays)


def _stage_v2(kind: str, meta: dict, arrays: dict) -> tuple[dict, dict]:
    """One estimator's (header, arrays) as format version 2 held them."""
    meta = json.loads(json.dumps(meta))
    arrays = dict(arrays)
    coef = arrays.pop("coef")
    if isinstance(coef, CompactVector):
        coef = coef.dense()
    if kind == "transition-parser":
        nz = np.flatnonzero(coef)
        arrays.update(coef_idx=nz.astype(np.uint32), coef_val=coef[nz], coef_size=np.array([coef.shape[0]]))
    else:
        arrays["coef"] = coef
    if "feature_ids" in arrays:  # tagging features: the key of every feature id
        keys, ids = arrays.pop("feature_keys"), arrays.pop("feature_ids")
        by_id = np.empty_like(keys)
        by_id[ids] = keys
        arrays["feature_keys"] = by_id
        meta["features"]["rare_words"] = []  # ignored by every reader
    lex = {k[len("lexicon."):]: arrays.pop(k) for k in list(arrays) if k.startswith("lexicon.")}
    if lex:
        from swvp.features.lexicon import CandidateLexicon

        lexicon = CandidateLexicon.from_state(meta["lexicon"], lex)
        meta["lexicon"] = {**{k: meta["lexicon"][k] for k in ("max_candidates", "suffix_length", "rare", "n_labels")},
                           "forms": {fk: [[y, c] for y, c in d.items()] for fk, d in lexicon.forms.items()},
                           "guesser": {lev: {t: [[y, c] for y, c in lst] for t, lst in by.items()}
                                       for lev, by in lexicon.guesser.items()}}
    return meta, arrays


def v2_contents(estimator) -> tuple[dict, dict]:
    """(header, arrays) of ``estimator`` (a stage estimator or a pipeline) as format version 2 wrote them."""
    meta, arrays = estimator.file_contents()
    if estimator.MODEL_KIND != "pipeline":
        return _stage_v2(estimator.MODEL_KIND, meta, arrays)
    out = {}
    for name, entry in meta["stages"].items():
        prefix = name + "/"
        smeta, sarrays = _stage_v2(entry["kind"], entry["header"],
                                   {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)})
        entry["header"] = smeta
        out.update({prefix + k: v for k, v in sarrays.items()})
    return meta, out


def read_header(path) -> dict:
    """The full JSON header of a model file as stored (version 3: the compressed ``__header__`` member)."""
    from swvp import persistence

    with np.load(path, allow_pickle=False) as npz:
        env = json.loads(npz["__meta__"].tobytes())
        if env.get("format_version") != 3:
            return env
        return json.loads(persistence._decompress(npz["__header__"].tobytes(), env["codec"], env["header_bytes"]))


def rewrite_header(path, meta: dict) -> None:
    """Replace the header of the version 3 model file ``path`` by ``meta`` (the arrays are kept)."""
    from swvp import persistence

    with np.load(path, allow_pickle=False) as npz:
        members = {k: npz[k] for k in npz.files}
    env = json.loads(members["__meta__"].tobytes())
    text = json.dumps(meta).encode("utf-8")
    env["header_bytes"] = len(text)
    members["__meta__"] = np.frombuffer(json.dumps(env).encode("utf-8"), np.uint8)
    members["__header__"] = np.frombuffer(persistence._compress(text, env["codec"], 3), np.uint8)
    np.savez(path, **members)
