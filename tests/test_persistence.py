"""Model files: save/load round trips, the .npz + JSON header layout, damaged files, atomic writes."""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np
import pytest

import swvp
from model_files import write_v2
from swvp import ModelFormatError, Perceptron, SequenceTagger, persistence
from swvp.learn.updates import WeightedViolations
from swvp.model.compact import CompactVector
from swvp.persistence import FORMAT_VERSION, load_model, save_model


def tiny_language(n: int, seed: int):
    """Tags decided by the word and its left neighbour; some words are rare (spelling features fire)."""
    rng = np.random.default_rng(seed)
    words = [f"w{k}" for k in range(20)] + ["Run-1", "walk2", "Xy", "q-q"]
    X, Y = [], []
    for _ in range(n):
        ks = rng.integers(0, len(words), int(rng.integers(2, 9)))
        X.append([words[k] for k in ks])
        Y.append(["NV"[(k + (ks[i - 1] if i else 0)) % 2] for i, k in enumerate(ks)])
    return X, Y


TRAIN = tiny_language(120, 0)
# held-out: the same words plus unseen ones (rare-word features must be rebuilt identically after loading)
HELD_OUT = tiny_language(30, 1)[0] + [["unseen", "w3", "Zz-9"], ["w1"], ["Brand-New", "words", "only"]]


def same_history(a: list[dict], b: list[dict]) -> bool:
    """Equal per-epoch records, NaN equal to NaN (CSP epochs have no violation ratio)."""
    def same(x, y):
        return x == y or (isinstance(x, float) and isinstance(y, float) and np.isnan(x) and np.isnan(y))

    return len(a) == len(b) and all(d.keys() == e.keys() and all(same(d[k], e[k]) for k in d) for d, e in zip(a, b))


def fitted(**kw) -> SequenceTagger:
    learner = kw.pop("learner", None) or Perceptron(epochs=3)
    return SequenceTagger(learner=learner, rare_threshold=3, **kw).fit(*TRAIN)


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "tagger.npz"
    tagger = fitted()
    tagger.save(path)
    return path, tagger


def read_members(path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files}


def envelope(path) -> dict:
    return json.loads(read_members(path)["__meta__"].tobytes().decode("utf-8"))


def header(path) -> dict:
    """The full header as stored: version 3's compressed ``__header__`` (with its ``arrays`` entry), or
    ``__meta__`` of earlier versions."""
    members = read_members(path)
    env = json.loads(members["__meta__"].tobytes().decode("utf-8"))
    if env.get("format_version") != 3:
        return env
    text = persistence._decompress(members["__header__"].tobytes(), env["codec"], env["header_bytes"])
    return json.loads(text)


def with_v3_header(members: dict, meta: dict) -> dict:
    """The members of a version 3 file with its header replaced by ``meta`` (compressed as the file's codec)."""
    env = json.loads(members["__meta__"].tobytes().decode("utf-8"))
    text = json.dumps(meta).encode("utf-8")
    env["header_bytes"] = len(text)
    return {**members, "__meta__": np.frombuffer(json.dumps(env).encode("utf-8"), np.uint8),
            "__header__": np.frombuffer(persistence._compress(text, env["codec"], 3), np.uint8)}


def write_npz(path, members: dict) -> None:
    np.savez(path, **members)


def with_header(members: dict, meta) -> dict:
    out = dict(members)
    out["__meta__"] = np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8)
    return out


# ------------------------------------------------------------------------------------------------ round trips


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"order": 2},
        {"learner": Perceptron(update=WeightedViolations(gamma="wmr", mode="balanced", beta=0.5), epochs=3)},
        {"learner": Perceptron(average=False, epochs=2)},
        {"features": "ner"},
        {"features": "pos"},
    ],
    ids=["order1", "order2", "swvp-B-WMR", "not-averaged", "ner", "pos"],
)
def test_identical_predictions_after_reload(tmp_path, kw):
    tagger = fitted(**kw)
    path = tmp_path / "m.npz"
    tagger.save(path)
    loaded = SequenceTagger.load(path)
    assert loaded.predict(HELD_OUT) == tagger.predict(HELD_OUT)
    assert loaded.predict(TRAIN[0]) == tagger.predict(TRAIN[0])
    assert np.array_equal(loaded.coef_, tagger.coef_)
    assert loaded.coef_.dtype == tagger.coef_.dtype
    assert loaded.labels_ == tagger.labels_
    assert loaded.order == tagger.order and loaded.features == tagger.features
    assert loaded.rare_threshold == tagger.rare_threshold
    assert same_history(loaded.history_, tagger.history_)
    assert loaded.best_epoch_ == tagger.best_epoch_
    assert loaded.score(*TRAIN) == tagger.score(*TRAIN)


def test_reload_of_a_chunk_tagger_with_pos_column(tmp_path):
    X = [[(w, "P" + w[-1]) for w in s] for s in TRAIN[0]]
    tagger = SequenceTagger(features="chunk", learner=Perceptron(epochs=2)).fit(X, TRAIN[1])
    tagger.save(tmp_path / "c.npz")
    loaded = SequenceTagger.load(tmp_path / "c.npz")
    held = [[(w, "P" + w[-1]) for w in s] for s in HELD_OUT]
    assert loaded.predict(held) == tagger.predict(held)


def test_save_overwrites_and_load_reads_the_new_model(tmp_path):
    path = tmp_path / "m.npz"
    first = fitted()
    first.save(path)
    second = fitted(learner=Perceptron(epochs=1, average=False))
    second.save(path)
    assert np.array_equal(SequenceTagger.load(path).coef_, second.coef_)
    assert sorted(os.listdir(tmp_path)) == ["m.npz"]


def test_save_creates_parent_folders(tmp_path):
    path = tmp_path / "a" / "b" / "m.npz"
    fitted().save(path)
    assert SequenceTagger.load(str(path)).predict([["w1"]])


def test_loaded_tagger_refits(tmp_path, model_file):
    loaded = SequenceTagger.load(model_file[0])
    loaded.learner = Perceptron(epochs=1)
    loaded.fit(*TRAIN)
    assert len(loaded.history_) == 1


# ------------------------------------------------------------------------------------------------ file layout


def test_file_is_a_plain_npz_with_a_json_header(model_file):
    path, tagger = model_file
    assert zipfile.is_zipfile(path)
    members = read_members(path)  # allow_pickle=False: every member is a plain array
    assert all(arr.dtype == np.uint8 for arr in members.values())  # JSON and compressed streams
    env = envelope(path)  # what any swvp reads first: the version, the kind, the codec
    assert env == {"format_version": FORMAT_VERSION, "library_version": swvp.__version__, "kind": "sequence-tagger",
                   "codec": env["codec"], "header_bytes": env["header_bytes"]}
    assert env["codec"] in ("zstd", "zlib")
    meta = header(path)
    assert meta["format_version"] == FORMAT_VERSION == 3
    assert meta["library_version"] == swvp.__version__
    assert meta["kind"] == "sequence-tagger"
    assert meta["labels"] == tagger.labels_
    assert meta["order"] == 1
    assert meta["settings"]["update"] == "CSP" and meta["settings"]["epochs"] == 3
    assert meta["features"]["templates"] == tagger.features
    assert "vocab" in meta["features"]
    assert set(meta["arrays"]) == {"coef", "feature_keys", "feature_ids"}
    meta2, arrays = load_model(path, "sequence-tagger")
    assert meta2 == {k: v for k, v in meta.items() if k != "arrays"} and "__meta__" not in arrays
    assert arrays["coef"].tobytes() == tagger.coef_.tobytes()


def test_header_is_strict_json(model_file):
    members = read_members(model_file[0])
    env = envelope(model_file[0])
    text = persistence._decompress(members["__header__"].tobytes(), env["codec"], env["header_bytes"]).decode()

    def refuse(name):
        raise ValueError(f"non-JSON constant {name}")

    json.loads(text, parse_constant=refuse)


def test_swvp_settings_are_recorded(tmp_path):
    tagger = fitted(learner=Perceptron(update=WeightedViolations(gamma="wm", mode="balanced", beta=2.5), epochs=2))
    tagger.save(tmp_path / "m.npz")
    settings = header(tmp_path / "m.npz")["settings"]
    assert settings["update"] == "B-WM"
    assert settings["update_params"]["beta"] == 2.5
    assert settings["update_params"]["gamma"] == "wm"


def test_save_model_refuses_object_arrays_and_the_reserved_name(tmp_path):
    with pytest.raises(TypeError, match="object"):
        save_model(tmp_path / "x.npz", "k", {}, {"a": np.array([{"x": 1}], dtype=object)})
    with pytest.raises(ValueError, match="reserved"):
        save_model(tmp_path / "x.npz", "k", {}, {"__meta__": np.zeros(2)})
    assert not (tmp_path / "x.npz").exists()


# ------------------------------------------------------------------------------------------------ bad files


def _other_version(path, src):
    write_npz(path, with_header(read_members(src), {**envelope(src), "format_version": FORMAT_VERSION + 98}))
    return f"format version {FORMAT_VERSION + 98} is not supported"


def _truncated(path, src):
    data = src.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return "damaged or unreadable"


def _tail_cut(path, src):
    data = src.read_bytes()
    path.write_bytes(data[:-30])  # the zip's central directory is gone
    return "damaged or unreadable"


def _not_zip(path, src):
    path.write_text("1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n")
    return "not a swvp model file (a model is an .npz archive; this file is not one)"


def _empty(path, src):
    path.write_bytes(b"")
    return "not a swvp model file (a model is an .npz archive"


def _no_meta(path, src):
    members = read_members(src)
    del members["__meta__"]
    write_npz(path, members)
    return "not a swvp model file"


def _zip_of_text(path, src):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "hello")
    return "not a swvp model file"


def _meta_not_json(path, src):
    members = read_members(src)
    members["__meta__"] = np.frombuffer(b"{not json", np.uint8)
    write_npz(path, members)
    return "damaged or unreadable"


def _meta_not_utf8(path, src):
    members = read_members(src)
    members["__meta__"] = np.frombuffer(b"\xff\xfe{}", np.uint8)
    write_npz(path, members)
    return "damaged or unreadable"


def _meta_without_version(path, src):
    meta = envelope(src)
    del meta["format_version"]
    write_npz(path, with_header(read_members(src), meta))
    return "lacks a format version"


def _meta_a_list(path, src):
    write_npz(path, with_header(read_members(src), [1, 2, 3]))
    return "lacks a format version"


def _pickled_member(path, src):
    members = read_members(src)
    stream = min(name for name in members if "#" in name)  # one the header names
    members[stream] = np.array([{"evil": 1}], dtype=object)  # needs pickle to load
    write_npz(path, members)
    return "damaged or unreadable"


def _pickled_stray_member(path, src):
    members = read_members(src)
    members["coef"] = np.array([{"evil": 1}], dtype=object)  # never read: the header does not name it
    write_npz(path, members)
    return "members ['coef'] are not in the header"


def _other_kind(path, src):
    save_model(path, "graph-parser", {"labels": []}, {"coef": np.zeros(3)})
    return "'graph-parser' model, expected 'sequence-tagger'"


def _wrong_coef_shape(path, src):
    meta = header(src)
    meta["arrays"]["coef"]["shape"] = [meta["arrays"]["coef"]["shape"][0] + 1]
    write_npz(path, with_v3_header(read_members(src), meta))
    return "inconsistent model file"


def _flipped_stream(path, src):
    members = read_members(src)
    name = max((k for k in members if k.startswith("coef#")), key=lambda k: members[k].size)
    data = members[name].copy()
    data[len(data) // 2:] ^= 0x5A  # the compressed bytes no longer decompress to the stream
    members[name] = data
    write_npz(path, members)
    return "damaged or unreadable"


def _header_not_compressed(path, src):
    members = read_members(src)
    members["__header__"] = np.frombuffer(b"{}", np.uint8)
    write_npz(path, members)
    return "damaged or unreadable"


def _header_of_another_kind(path, src):
    write_npz(path, with_v3_header(read_members(src), {**header(src), "kind": "graph-parser"}))
    return "disagrees with the envelope"


def _stream_missing(path, src):
    members = read_members(src)
    del members[next(k for k in members if k.startswith("feature_keys"))]
    write_npz(path, members)
    return "missing"


def _stray_member(path, src):
    write_npz(path, {**read_members(src), "extra": np.zeros(3)})
    return "not in the header"


def _unknown_codec(path, src):
    write_npz(path, with_header(read_members(src), {**envelope(src), "codec": "brotli"}))
    return "unknown codec"


BAD_FILES = [_other_version, _truncated, _tail_cut, _not_zip, _empty, _no_meta, _zip_of_text, _meta_not_json,
             _meta_not_utf8, _meta_without_version, _meta_a_list, _pickled_member, _pickled_stray_member, _other_kind,
             _wrong_coef_shape, _flipped_stream, _header_not_compressed, _header_of_another_kind, _stream_missing,
             _stray_member, _unknown_codec]


@pytest.mark.parametrize("make_bad", BAD_FILES, ids=[f.__name__.strip("_") for f in BAD_FILES])
def test_damaged_or_foreign_files_raise_model_format_error(tmp_path, model_file, make_bad):
    path = tmp_path / "bad.npz"
    expected = make_bad(path, model_file[0])
    with pytest.raises(ModelFormatError) as err:
        SequenceTagger.load(path)
    message = str(err.value)
    assert message.startswith(str(path)), message
    assert expected in message, message


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(ModelFormatError, match="no such model file"):
        SequenceTagger.load(tmp_path / "absent.npz")
    with pytest.raises(ModelFormatError, match="no such model file"):
        load_model(tmp_path)


def test_load_model_without_kind_accepts_any_kind(tmp_path):
    save_model(tmp_path / "g.npz", "graph-parser", {"x": [1, 2]}, {"a": np.arange(3)})
    meta, arrays = load_model(tmp_path / "g.npz")
    assert meta["kind"] == "graph-parser" and meta["x"] == [1, 2]
    assert np.array_equal(arrays["a"], np.arange(3))


@pytest.mark.parametrize("damage", ["coef", "feature_keys", "settings"])
def test_incomplete_model_raises_model_format_error(tmp_path, model_file, damage):
    members = read_members(model_file[0])
    meta = header(model_file[0])
    if damage == "settings":
        del meta["settings"]
    else:  # the array and its streams
        del meta["arrays"][damage]
        members = {k: v for k, v in members.items() if k.split("#")[0] != damage}
    write_npz(tmp_path / "m.npz", with_v3_header(members, meta))
    with pytest.raises(ModelFormatError):
        SequenceTagger.load(tmp_path / "m.npz")


# ------------------------------------------------------------------------------------------------ atomic writes


class _HalfWriter:
    """Stands in for the temp file: writes half the bytes, then fails like a full disk."""

    def __init__(self, f):
        self.f = f

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()

    def write(self, data):
        self.f.write(data[: len(data) // 2])
        self.f.flush()
        raise OSError(28, "No space left on device")


def _fail_mid_write(monkeypatch):
    real = os.fdopen
    monkeypatch.setattr(persistence.os, "fdopen", lambda fd, *a, **k: _HalfWriter(real(fd, *a, **k)))


def _fail_fsync(monkeypatch):
    def boom(fd):
        raise OSError(5, "I/O error")

    monkeypatch.setattr(persistence.os, "fsync", boom)


def _fail_rename(monkeypatch):
    def boom(src, dst):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(persistence.os, "replace", boom)


def _interrupt_mid_write(monkeypatch):
    real = os.fdopen

    class Interrupted(_HalfWriter):
        def write(self, data):
            self.f.write(data[:100])
            raise KeyboardInterrupt

    monkeypatch.setattr(persistence.os, "fdopen", lambda fd, *a, **k: Interrupted(real(fd, *a, **k)))
    return KeyboardInterrupt


FAILURES = [_fail_mid_write, _fail_fsync, _fail_rename, _interrupt_mid_write]


@pytest.mark.parametrize("fail", FAILURES, ids=[f.__name__.strip("_") for f in FAILURES])
def test_failed_save_keeps_the_previous_file_and_leaves_no_temp_file(tmp_path, monkeypatch, fail):
    path = tmp_path / "m.npz"
    old = fitted()
    old.save(path)
    before = path.read_bytes()
    new = fitted(learner=Perceptron(epochs=1, average=False))
    with monkeypatch.context() as m:
        error = fail(m) or OSError
        with pytest.raises(error):
            new.save(path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["m.npz"]
    assert SequenceTagger.load(path).predict(HELD_OUT) == old.predict(HELD_OUT)


def test_failed_first_save_leaves_nothing(tmp_path, monkeypatch):
    _fail_mid_write(monkeypatch)
    with pytest.raises(OSError, match="No space"):
        save_model(tmp_path / "m.npz", "k", {}, {"a": np.arange(10)})
    assert os.listdir(tmp_path) == []


def test_atomic_write_bytes_replaces_content(tmp_path):
    path = tmp_path / "f.bin"
    persistence.atomic_write_bytes(path, b"one")
    persistence.atomic_write_bytes(path, b"two")
    assert path.read_bytes() == b"two"
    persistence.atomic_write_text(path, "drei \u00fc")
    assert path.read_bytes() == "drei \u00fc".encode()
    assert os.listdir(tmp_path) == ["f.bin"]


def test_npz_written_to_memory_matches_file(tmp_path, model_file):
    """The file is exactly one .npz archive (no trailing bytes a stricter reader would reject)."""
    data = model_file[0].read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.testzip() is None
        assert sorted(zf.namelist()) == sorted(f"{k}.npy" for k in read_members(model_file[0]))


# ------------------------------------------------------------------------------------------------ sparse arrays (v2)


def _mostly_zero(n: int = 5000) -> np.ndarray:
    w = np.zeros(n)
    w[[3, 17, 999, n - 1]] = [1.5, -0.0, np.nan, -2.25]  # -0.0 and NaN must come back bit for bit
    return w


def test_version_2_mostly_zero_arrays_read_back_bit_identical(tmp_path):
    w = _mostly_zero()
    ints = np.zeros((40, 50), np.int32)
    ints[7, 9] = -4
    dense = np.arange(3000, dtype=np.float64)  # not sparse: stays as it is
    write_v2(tmp_path / "m.npz", "k", {"x": 1}, {"w": w, "ints": ints, "dense": dense, "small": np.zeros(3)})
    members = read_members(tmp_path / "m.npz")
    assert "w" not in members and members["__sparse_index__w"].tolist() == [3, 17, 999, 4999]
    assert "ints" not in members and "dense" in members and "small" in members
    meta, arrays = load_model(tmp_path / "m.npz", "k")
    assert meta["x"] == 1 and meta["format_version"] == 2 and "sparse_arrays" not in meta
    assert sorted(arrays) == ["dense", "ints", "small", "w"]
    assert arrays["w"].dtype == w.dtype and arrays["w"].view(np.uint64).tolist() == w.view(np.uint64).tolist()
    assert arrays["ints"].dtype == np.int32 and np.array_equal(arrays["ints"], ints)
    assert np.array_equal(arrays["dense"], dense)


def test_version_2_files_still_load(tmp_path):
    tagger = fitted(features="pos")
    tagger.save(tmp_path / "v3.npz")
    meta, arrays = load_model(tmp_path / "v3.npz")
    write_v2(tmp_path / "v2.npz", meta["kind"], meta, arrays)
    assert header(tmp_path / "v2.npz")["format_version"] == 2
    loaded = SequenceTagger.load(tmp_path / "v2.npz")
    assert loaded.coef_.tobytes() == tagger.coef_.tobytes() and loaded.predict(HELD_OUT) == tagger.predict(HELD_OUT)


def test_a_large_tagger_round_trips_through_a_sparse_coef(tmp_path):
    X = TRAIN[0]
    Y = [[f"T{len(w) % 4}{w[-1]}" for w in s] for s in X]  # many labels: most (feature, label) weights stay 0
    tagger = SequenceTagger(learner=Perceptron(epochs=3), rare_threshold=3).fit(X, Y)
    assert tagger.coef_.size >= persistence._SPARSE_MIN_SIZE
    tagger.save(tmp_path / "m.npz")
    assert header(tmp_path / "m.npz")["arrays"]["coef"]["kind"] == "sparse"
    loaded = SequenceTagger.load(tmp_path / "m.npz")
    assert loaded.coef_.view(np.uint64).tolist() == tagger.coef_.view(np.uint64).tolist()
    assert loaded.predict(HELD_OUT) == tagger.predict(HELD_OUT)


def _as_version_1(src, dst) -> None:
    """Rewrite a model file the way format version 1 wrote it: dense arrays, ``np.savez_compressed``."""
    meta, arrays = load_model(src)
    meta["format_version"] = 1
    arrays = {k: v.dense() if isinstance(v, CompactVector) else v for k, v in arrays.items()}
    np.savez_compressed(dst, __meta__=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)


def test_version_1_files_still_load(tmp_path):
    tagger = fitted(features="pos")
    tagger.save(tmp_path / "v3.npz")
    _as_version_1(tmp_path / "v3.npz", tmp_path / "v1.npz")
    assert "coef" in read_members(tmp_path / "v1.npz") and header(tmp_path / "v1.npz")["format_version"] == 1
    loaded = SequenceTagger.load(tmp_path / "v1.npz")
    assert np.array_equal(loaded.coef_, tagger.coef_) and loaded.predict(HELD_OUT) == tagger.predict(HELD_OUT)
    # a version-1 file is read as such: a stray ``sparse_arrays`` entry in its header means nothing
    write_npz(tmp_path / "v1b.npz", with_header(read_members(tmp_path / "v1.npz"),
                                                {**header(tmp_path / "v1.npz"), "sparse_arrays": {"coef": 1}}))
    assert np.array_equal(SequenceTagger.load(tmp_path / "v1b.npz").coef_, tagger.coef_)


def _sparse_file(tmp_path):
    write_v2(tmp_path / "good.npz", "k", {}, {"w": _mostly_zero()})
    return read_members(tmp_path / "good.npz"), header(tmp_path / "good.npz")


@pytest.mark.parametrize("damage", ["index_out_of_range", "index_not_increasing", "values_missing", "stray_member",
                                    "dense_and_sparse", "wrong_dtype", "bad_shape", "spec_not_object",
                                    "object_dtype", "length_mismatch"])
def test_inconsistent_version_2_sparse_members_are_format_errors(tmp_path, damage):
    members, meta = _sparse_file(tmp_path)
    spec = meta["sparse_arrays"]["w"]
    if damage == "index_out_of_range":
        members["__sparse_index__w"] = members["__sparse_index__w"] + np.uint32(10)
    elif damage == "index_not_increasing":
        members["__sparse_index__w"] = members["__sparse_index__w"][::-1].copy()
    elif damage == "values_missing":
        del members["__sparse_values__w"]
    elif damage == "stray_member":
        members["__sparse_index__v"] = np.zeros(1, np.uint32)
    elif damage == "dense_and_sparse":
        members["w"] = np.zeros(5000)
    elif damage == "wrong_dtype":
        spec["dtype"] = "<f4"
    elif damage == "bad_shape":
        spec["shape"] = [-1]
    elif damage == "spec_not_object":
        meta["sparse_arrays"] = ["w"]
    elif damage == "object_dtype":
        spec["dtype"] = "|O"
    else:
        members["__sparse_values__w"] = members["__sparse_values__w"][:2].copy()
    write_npz(tmp_path / "bad.npz", with_header(members, meta))
    with pytest.raises(ModelFormatError):
        load_model(tmp_path / "bad.npz")


def test_sparse_member_names_are_reserved(tmp_path):
    for name in ("__sparse_index__w", "__sparse_values__w"):
        with pytest.raises(ValueError, match="reserved"):
            save_model(tmp_path / "x.npz", "k", {}, {name: np.zeros(2)})


# ------------------------------------------------------------------------------------------------ version 3 storage


def _averaged(n: int, nnz: int, c: int, seed: int) -> np.ndarray:
    """Weights as averaging leaves them: w − u/c for integers w, u (most are k/c; some a few ulps off)."""
    rng = np.random.default_rng(seed)
    w = np.zeros(n)
    at = rng.choice(n, nnz, replace=False)
    ints = rng.integers(-40, 40, nnz).astype(np.float64)
    w[at] = ints - rng.integers(-40 * c, 40 * c, nnz) / c
    return w


def test_compact_vectors_round_trip_exactly_and_stay_compact(tmp_path):
    w = _averaged(200_000, 9000, 24930, 0)
    w[[5, 6]] = [-0.0, 1e-300]  # kept bit for bit
    cv = CompactVector.from_dense(w)
    save_model(tmp_path / "m.npz", "k", {}, {"w": cv, "dense": w})
    spec = header(tmp_path / "m.npz")["arrays"]
    assert spec["w"]["kind"] == "compact" and spec["w"]["values"]["coding"] == "ratio"
    assert spec["w"]["values"]["den"] % 24930 == 0 and spec["dense"]["kind"] == "sparse"
    _, arrays = load_model(tmp_path / "m.npz")
    assert isinstance(arrays["w"], CompactVector) and arrays["w"] == cv
    assert arrays["dense"].tobytes() == w.tobytes()
    # k/c and residuals compress to well under the float64 bytes
    assert os.path.getsize(tmp_path / "m.npz") < 2 * 9000 * (8 + 4) * 0.6


def test_values_that_are_not_ratios_are_stored_as_floats(tmp_path):
    rng = np.random.default_rng(1)
    w = np.zeros(10_000)
    w[rng.choice(10_000, 300, replace=False)] = rng.normal(size=300)
    w[7] = np.nan  # not finite: no denominator
    save_model(tmp_path / "m.npz", "k", {}, {"w": CompactVector.from_dense(w), "f": w})
    spec = header(tmp_path / "m.npz")["arrays"]
    assert spec["w"]["values"]["coding"] == "float"
    _, arrays = load_model(tmp_path / "m.npz")
    assert arrays["w"].dense().tobytes() == w.tobytes() and arrays["f"].tobytes() == w.tobytes()


def test_quantised_vectors_round_to_a_power_of_two_step_and_stay_quantised(tmp_path):
    w = _averaged(50_000, 4000, 997, 2)
    cv = CompactVector.from_dense(w)
    save_model(tmp_path / "q.npz", "k", {}, {"w": cv, "exact": w}, lossless=False)
    spec = header(tmp_path / "q.npz")["arrays"]
    step = 2.0 ** spec["w"]["values"]["exp"]
    med = np.median(np.abs(cv.values))
    assert med / 2 ** (persistence.QUANTIZE_BITS + 1) < step <= med / 2 ** persistence.QUANTIZE_BITS
    _, arrays = load_model(tmp_path / "q.npz")
    q = arrays["w"]
    assert q.quantized and q.values.dtype in (np.int16, np.int32) and q.scale == step
    assert np.abs(q.dense() - w).max() <= step / 2
    assert np.array_equal(q.dense() != 0, np.abs(w) >= step / 2)  # weights that round to 0 are dropped
    assert arrays["exact"].tobytes() == w.tobytes()  # plain arrays are never quantised
    for lossless in (True, False):  # a quantised vector is saved as it is, either way
        save_model(tmp_path / "again.npz", "k", {}, {"w": q}, lossless=lossless)
        assert load_model(tmp_path / "again.npz")[1]["w"] == q


def test_increasing_keys_are_stored_as_differences(tmp_path):
    keys = np.sort(np.random.default_rng(3).choice(2 ** 62, 20_000, replace=False)).astype(np.int64)
    save_model(tmp_path / "m.npz", "k", {}, {"keys": keys, "rev": keys[::-1].copy()})
    spec = header(tmp_path / "m.npz")["arrays"]
    assert spec["keys"].get("delta") and not spec["rev"].get("delta")
    _, arrays = load_model(tmp_path / "m.npz")
    assert np.array_equal(arrays["keys"], keys) and np.array_equal(arrays["rev"], keys[::-1])
    assert arrays["keys"].dtype == np.int64


def test_a_long_list_in_several_header_entries_is_stored_once(tmp_path):
    words = [f"λέξη{i}" for i in range(1000)]
    meta = {"a": {"vocab": words}, "b": {"vocab": list(words), "other": words[:10]}, "c": [{"x": list(words)}]}
    save_model(tmp_path / "m.npz", "k", meta, {})
    raw = header(tmp_path / "m.npz")
    assert raw["shared_lists"] == [words] and raw["a"]["vocab"] == {"__shared_list__": 0}
    assert raw["b"]["other"] == words[:10]
    loaded, _ = load_model(tmp_path / "m.npz")
    assert {k: loaded[k] for k in meta} == meta and loaded["a"]["vocab"] is loaded["b"]["vocab"]
    assert "shared_lists" not in loaded
    bad = {**raw, "a": {"vocab": {"__shared_list__": 5}}}
    write_npz(tmp_path / "bad.npz", with_v3_header(read_members(tmp_path / "m.npz"), bad))
    with pytest.raises(ModelFormatError, match="shared-list"):
        load_model(tmp_path / "bad.npz")


def test_non_ascii_text_is_stored_as_utf8(tmp_path):
    save_model(tmp_path / "m.npz", "k", {"w": ["σπίτι"]}, {})
    members, env = read_members(tmp_path / "m.npz"), envelope(tmp_path / "m.npz")
    assert "σπίτι".encode() in persistence._decompress(members["__header__"].tobytes(), env["codec"],
                                                      env["header_bytes"])
    save_model(tmp_path / "m.npz", "k", {"w": ["σπίτι", "\ud800"]}, {})  # a lone surrogate: escaped, as before
    assert load_model(tmp_path / "m.npz")[0]["w"] == ["σπίτι", "\ud800"]


@pytest.mark.parametrize("damage", ["gaps_beyond", "nnz_too_big", "den_zero", "exp_huge", "coding_unknown",
                                    "kind_unknown", "stream_dtype", "stream_length", "spec_not_object",
                                    "no_arrays", "size_negative"])
def test_inconsistent_version_3_specs_are_format_errors(tmp_path, damage):
    w = _averaged(20_000, 500, 101, 4)
    save_model(tmp_path / "good.npz", "k", {}, {"w": CompactVector.from_dense(w), "q": CompactVector.from_dense(w)},
               lossless=True)
    members, meta = read_members(tmp_path / "good.npz"), header(tmp_path / "good.npz")
    spec = meta["arrays"]["w"]
    if damage == "gaps_beyond":
        spec["size"] = 100
    elif damage == "nnz_too_big":
        spec["nnz"] = 10 ** 6
    elif damage == "den_zero":
        spec["values"]["den"] = 0
    elif damage == "exp_huge":
        spec["values"] = {"coding": "step", "exp": 5000, "q": spec["values"]["k"]}
    elif damage == "coding_unknown":
        spec["values"]["coding"] = "magic"
    elif damage == "kind_unknown":
        spec["kind"] = "magic"
    elif damage == "stream_dtype":
        spec["gaps"]["dtype"] = "|O"
    elif damage == "stream_length":
        spec["gaps"]["n"] += 1
    elif damage == "spec_not_object":
        meta["arrays"]["w"] = [1]
    elif damage == "no_arrays":
        del meta["arrays"]
    else:
        spec["size"] = -5
    write_npz(tmp_path / "bad.npz", with_v3_header(members, meta))
    with pytest.raises(ModelFormatError):
        load_model(tmp_path / "bad.npz")


def test_zlib_files_load_where_zstandard_is_missing(tmp_path, monkeypatch):
    w = _averaged(20_000, 500, 101, 5)
    with monkeypatch.context() as m:
        m.setattr(persistence, "_zstd", lambda: None)
        save_model(tmp_path / "z.npz", "k", {"v": [1]}, {"w": CompactVector.from_dense(w), "d": w})
        assert envelope(tmp_path / "z.npz")["codec"] == "zlib"
        if persistence._codec() == "zlib":
            return
    meta, arrays = load_model(tmp_path / "z.npz")
    assert meta["v"] == [1] and arrays["w"].dense().tobytes() == w.tobytes()
    save_model(tmp_path / "s.npz", "k", {}, {"d": w})
    with monkeypatch.context() as m:
        m.setattr(persistence, "_zstd", lambda: None)
        with pytest.raises(ModelFormatError, match="zstandard"):
            load_model(tmp_path / "s.npz")


def test_quantised_values_wider_than_int16_stay_integers(tmp_path):
    w = np.zeros(5000)
    w[:100] = 1.0
    w[100] = 5000.0  # 5000 / 2**-9 does not fit int16
    save_model(tmp_path / "q.npz", "k", {}, {"w": CompactVector.from_dense(w)}, lossless=False)
    q = load_model(tmp_path / "q.npz")[1]["w"]
    assert q.values.dtype == np.int32 and q.dense().tobytes() == w.tobytes()


def test_mostly_zero_arrays_of_every_type_round_trip(tmp_path):
    arrays = {}
    for dt in (np.int8, np.int32, np.int64, np.uint16, np.float32, np.float64):
        a = np.zeros((40, 50), dt)
        a[7, 9], a[39, 49] = 3, 1
        arrays[np.dtype(dt).name] = a
    save_model(tmp_path / "m.npz", "k", {}, arrays)
    spec = header(tmp_path / "m.npz")["arrays"]
    assert {s["kind"] for s in spec.values()} == {"sparse"}
    _, back = load_model(tmp_path / "m.npz")
    for k, a in arrays.items():
        assert back[k].dtype == a.dtype and back[k].shape == a.shape and back[k].tobytes() == a.tobytes(), k


def test_loading_holds_one_member_and_one_byte_plane_at_a_time(tmp_path):
    """A model's compressed members are read one at a time, and a compact vector's values are decompressed one byte
    plane at a time into their final array (with the 0 an absent entry reads): no second copy of the values, and
    not every compressed member at once (en_ewt's parser: 31 MB of values, 21 MB of members)."""
    import tracemalloc

    rng = np.random.default_rng(5)
    n = 1 << 20
    index = np.sort(rng.choice(6 * n, n, replace=False))
    values = rng.integers(-3000, 3000, n).astype(np.int32)
    values[values == 0] = 1
    values[7] = 1 << 20  # int32, stored as four byte planes
    parts = {f"w{i}": CompactVector.from_entries(6 * n, index, values, scale=0.5) for i in range(3)}
    save_model(tmp_path / "m.npz", "k", {}, parts, level=3)
    member = max(os.path.getsize(tmp_path / "m.npz") // 3, 1)
    tracemalloc.start()
    try:
        _, arrays = load_model(tmp_path / "m.npz")
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    loaded = sum(a.nbytes for a in arrays.values())
    assert all(a.values.dtype == np.int32 and a == parts[k] for k, a in arrays.items())
    assert all(np.shares_memory(a._padded, a.values) for a in arrays.values())
    # what stays, plus one member, a plane and one vector's gaps (uint8) and directory at most
    assert peak - current < member + 3 * n + 2 * (6 * n // 64) * 8, (peak - current, loaded)
