"""A pipeline's training saved as it goes (``Pipeline.fit(checkpoint=DIR)``, ``swvp train pipeline --checkpoint``):
every finished stage and jack-knife fold in a folder beside a manifest, so that a run stopped by Ctrl-C (or a crash)
continues with ``resume`` — what is done is skipped — and ends with the model an uninterrupted run writes, byte for
byte.

The folder holds
  * ``manifest.json`` — the format and its version, the swvp version, the digest of the training and dev data, the
    pipeline's options, the order of its stages and folds, and those done (their file and CPU seconds);
  * ``<stage>.npz`` — a finished stage, its own model file (``.npz`` + JSON header, weights stored exactly);
  * ``fold-<k>.npz`` — a finished jack-knife fold: the held-out sentences and the values its stages (the tagger)
    predicted for them, column by column (what the parser's training data needs; the fold's stages are not kept);
  * ``parser.partial.npz`` — the parser stopped by Ctrl-C at a safe point, with its training state: the run goes on
    from there (as ``swvp train parser --resume``).

Every file is written atomically (temp file + rename) and named in the manifest only once it is complete, so
Ctrl-C at any moment leaves a folder that resumes. Why the resumed model is the same: each stage and fold draws
its shuffles from a generator of its own learner's ``random_state`` (none advances another's), a stage saved
losslessly loads back to the same file contents, and a pipeline's model file records no timings.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from swvp._config import INT
from swvp._version import __version__
from swvp.data.conllu import ConlluCorpus, format_conllu
from swvp.exceptions import ModelFormatError
from swvp.persistence import atomic_write_text, load_model, save_model
from swvp.tasks.base import Estimator, _flat, encode

__all__ = ["FORMAT", "MANIFEST", "VERSION", "PipelineCheckpoint", "data_record", "default_folder", "options_record"]

FORMAT = "swvp-pipeline-checkpoint"
VERSION = 1
MANIFEST = "manifest.json"
FOLD_KIND = "pipeline-fold"
#: zstd level of the files of a checkpoint (written once each, read back at most once: fast beats small)
LEVEL = 3


def default_folder(model: str | os.PathLike) -> str:
    """The checkpoint folder of a model file when none is named: ``<model>.checkpoint``."""
    return os.fspath(model) + ".checkpoint"


def data_record(corpus: ConlluCorpus | None) -> dict | None:
    """What a checkpoint records of a treebank: its name, its sentences and the SHA-256 of its CoNLL-U text (the
    same for a file and its compressed copy; None: no data)."""
    if corpus is None:
        return None
    digest = hashlib.sha256(format_conllu(corpus).encode("utf-8")).hexdigest()
    return {"name": corpus.path, "sentences": len(corpus.sentences), "sha256": digest}


def options_record(stages: tuple[str, ...], jackknife: int, missing: str, estimators: dict[str, Estimator]) -> dict:
    """The options that shape a pipeline's model, flat (``tagger.learner.epochs``): the stages asked for, the folds,
    what a lacking column does, and every stage's class and parameters. ValueError when a stage's ``random_state``
    is not an integer (None or a Generator draws what a resumed run cannot draw again)."""
    out = {"stages": list(stages), "jackknife": int(jackknife), "missing": missing}
    for name, est in estimators.items():
        out[f"{name}.class"] = type(est).__name__
        if not callable(getattr(est, "get_params", None)):  # a user's stage without parameters to compare
            continue
        seeds = {k: v for k, v in est.get_params(deep=True).items() if k.endswith("random_state")}
        if callable(getattr(est, "_learner", None)):
            seeds["learner__random_state"] = est._learner().random_state  # the default learner's too
        for k, v in seeds.items():
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"a checkpoint needs an integer random_state in every stage: {name} has "
                                 f"{k.replace('__', '.')} = {v!r} (None or a Generator cannot be drawn again by a "
                                 f"resumed run)")
        out.update({f"{name}.{k}": v for k, v in _flat({k: encode(v) for k, v in
                                                           est.get_params(deep=False).items()}).items()})
    return out


def _fold_file(name: str) -> str:
    return name.replace(" ", "-") + ".npz"


class PipelineCheckpoint:
    """The checkpoint folder of one pipeline training run (see the module docstring).

    ``folder``: where it is (created when the run starts); ``command_line``: the command-line options of the run
    (``swvp train pipeline`` records them, so that ``--resume`` can take them and name one that differs).
    """

    def __init__(self, folder: str | os.PathLike, *, command_line: dict | None = None):
        self.folder = Path(folder)
        self.command_line = command_line
        self.manifest: dict | None = None

    # -- the manifest -------------------------------------------------------------------------------------------
    @property
    def path(self) -> Path:
        return self.folder / MANIFEST

    def exists(self) -> bool:
        """Whether the folder holds a checkpoint (its manifest)."""
        return self.path.is_file()

    def read(self) -> dict:
        """The manifest (ValueError: no checkpoint there; ModelFormatError: not one this swvp reads)."""
        if not self.exists():
            raise ValueError(f"{self.folder}: no pipeline checkpoint there (no {MANIFEST})")
        try:
            manifest = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as err:
            raise ModelFormatError(f"{self.path}: not a readable checkpoint manifest ({err})") from err
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise ModelFormatError(f"{self.path}: not a pipeline checkpoint manifest")
        if manifest.get("version") != VERSION:
            raise ModelFormatError(f"{self.path}: checkpoint format version {manifest.get('version')!r}; this swvp "
                                   f"reads version {VERSION}")
        for key, kind in (("data", dict), ("options", dict), ("order", list), ("done", dict), ("partial", dict)):
            if not isinstance(manifest.get(key), kind):
                raise ModelFormatError(f"{self.path}: the manifest has no valid {key!r}")
        self.manifest = manifest
        if self.command_line is None:
            self.command_line = manifest.get("command_line")
        return manifest

    def _write(self) -> None:
        atomic_write_text(self.path, json.dumps(self.manifest, indent=1, sort_keys=True) + "\n")

    def start(self, data: dict, options: dict, order: list[str]) -> None:
        """Begin a new run's checkpoint (ValueError if the folder already holds one: resume it, or remove it)."""
        if self.exists():
            raise ValueError(f"{self.folder} holds a pipeline checkpoint already: resume it (--resume "
                             f"{self.folder}) or delete the folder")
        if self.folder.exists() and not self.folder.is_dir():
            raise ValueError(f"{self.folder}: not a folder")
        self.manifest = {"format": FORMAT, "version": VERSION, "swvp": __version__, "data": data,
                         "options": options, "order": list(order), "done": {}, "partial": {}}
        if self.command_line is not None:
            self.manifest["command_line"] = self.command_line
        self.folder.mkdir(parents=True, exist_ok=True)
        self._write()

    def resume(self, data: dict, options: dict, order: list[str]) -> set[str]:
        """Open the checkpoint of an interrupted run of the same data and options: the names of its finished parts.
        ValueError naming what differs otherwise."""
        manifest = self.read()
        for which in ("train", "dev"):
            there, here = manifest["data"].get(which), data.get(which)
            if (there or {}).get("sha256") != (here or {}).get("sha256"):
                raise ValueError(f"{self.folder}: the checkpoint's run read other {_WHICH[which]}: "
                                 f"{_describe(there)} there, {_describe(here)} here")
        theirs = manifest["options"]
        differ = sorted(k for k in theirs.keys() | options.keys() if theirs.get(k) != options.get(k))
        if differ:
            raise ValueError(f"{self.folder}: the checkpoint was trained with other options: "
                             + ", ".join(f"{k} = {theirs.get(k)!r} there, {options.get(k)!r} here" for k in differ))
        if manifest.get("swvp") != __version__:
            raise ValueError(f"{self.folder}: the checkpoint was written by swvp {manifest.get('swvp')}, this is "
                             f"{__version__} (its stages may differ from this version's)")
        if manifest["order"] != list(order):
            raise ValueError(f"{self.folder}: the checkpoint's stages {manifest['order']} are not this run's {order}")
        return {name for name in manifest["done"] if name in order}

    # -- what is done ---------------------------------------------------------------------------------------------
    def done(self) -> list[str]:
        """The finished parts, in the run's order."""
        return [n for n in self.manifest["order"] if n in self.manifest["done"]]

    def _record(self, name: str, file: str, cpu_seconds: float) -> None:
        self.manifest["done"][name] = {"file": file, "cpu_seconds": round(float(cpu_seconds), 3)}
        self._write()

    def save_stage(self, name: str, estimator: Estimator, cpu_seconds: float) -> None:
        """A finished stage: its model file (weights exact), then its line in the manifest."""
        file = f"{name}.npz"
        meta, arrays = estimator.file_contents()
        save_model(self.folder / file, estimator.MODEL_KIND, meta, arrays, lossless=True, level=LEVEL)
        self.manifest["partial"].pop(name, None)
        self._record(name, file, cpu_seconds)
        (self.folder / f"{name}.partial.npz").unlink(missing_ok=True)

    def load_stage(self, name: str, cls: type) -> object:
        path = self.folder / self.manifest["done"][name]["file"]
        meta, arrays = load_model(path, cls.MODEL_KIND)
        return cls.from_file_contents(meta, arrays, path)

    def save_fold(self, name: str, held: list[int], columns: tuple[str, ...], values: list[list[tuple[str, ...]]],
                  cpu_seconds: float) -> None:
        """A finished jack-knife fold: its held-out sentence indices and, per word, the predicted values of
        ``columns`` (each column stored as indices into its list of distinct values)."""
        arrays = {"held": np.asarray(held, INT), "offsets": np.cumsum([0, *(len(s) for s in values)]).astype(INT)}
        labels = {}
        for c, column in enumerate(columns):
            labels[column] = sorted({v[c] for sent in values for v in sent})
            index = {t: i for i, t in enumerate(labels[column])}
            arrays[f"column.{column}"] = np.fromiter((index[v[c]] for s in values for v in s), INT)
        file = _fold_file(name)
        save_model(self.folder / file, FOLD_KIND, {"fold": name, "columns": list(columns), "labels": labels},
                   arrays, lossless=True, level=LEVEL)
        self._record(name, file, cpu_seconds)

    def load_fold(self, name: str) -> tuple[list[int], list[list[tuple[str, ...]]]]:
        path = self.folder / self.manifest["done"][name]["file"]
        meta, arrays = load_model(path, FOLD_KIND)
        try:
            offsets, held = arrays["offsets"], [int(i) for i in arrays["held"]]
            columns = [[meta["labels"][c][int(t)] for t in arrays[f"column.{c}"]] for c in meta["columns"]]
            flat = list(zip(*columns, strict=True)) if columns else [()] * int(offsets[-1])
            out = [flat[offsets[i]:offsets[i + 1]] for i in range(len(held))]
        except (KeyError, IndexError, TypeError, ValueError) as err:
            raise ModelFormatError(f"{path}: incomplete or inconsistent fold ({err!r})") from err
        return held, out

    def cpu_seconds(self, name: str) -> float:
        return float(self.manifest["done"][name].get("cpu_seconds", 0.0))

    # -- a stage stopped half-way ---------------------------------------------------------------------------------
    def save_partial(self, name: str, estimator: Estimator) -> None:
        """A stage stopped by Ctrl-C at a safe point, with its training state (``estimator.save`` keeps it)."""
        file = f"{name}.partial.npz"
        estimator.save(self.folder / file)
        entry = {"file": file, "epochs_run": len(getattr(estimator, "history_", []))}
        partial = getattr(getattr(estimator, "_training", None), "partial", None)
        if partial is not None:
            entry.update(epoch=int(partial.epoch), done=int(partial.done), of=int(partial.order.shape[0]))
        self.manifest["partial"][name] = entry
        self._write()

    def partial(self, name: str) -> Path | None:
        """The file of a stage stopped half-way, to resume it from (None: none)."""
        entry = self.manifest["partial"].get(name) if self.manifest else None
        return None if entry is None else self.folder / entry["file"]

    # -- the end --------------------------------------------------------------------------------------------------
    def describe(self) -> str:
        """What is done, in words: ``tokenizer, tagger done (2 of 6)``, then a stage stopped half-way:
        ``; the parser's training state (1 epoch and 12 of 40 sentences of epoch 2)``."""
        manifest = self.manifest if self.manifest is not None else self.read()
        done = self.done()
        text = (", ".join(done) if done else "nothing") + f" done ({len(done)} of {len(manifest['order'])})"
        for name, entry in manifest["partial"].items():
            k = int(entry.get("epochs_run", 0))
            what = f"{k} epoch{'s' if k != 1 else ''}"
            if "epoch" in entry:
                what += f" and {entry['done']} of {entry['of']} sentences of epoch {entry['epoch']}"
            text += f"; the {name}'s training state ({what})"
        return text

    def remove(self) -> None:
        """Delete the checkpoint's files (those the manifest names, the manifest) and the folder if it is then
        empty: once the model is saved it has nothing left to give."""
        manifest = self.manifest if self.manifest is not None else self.read()
        for entry in (*manifest["done"].values(), *manifest["partial"].values()):
            (self.folder / entry["file"]).unlink(missing_ok=True)
        self.path.unlink(missing_ok=True)
        try:
            self.folder.rmdir()
        except OSError:
            pass  # other files there: not ours to delete


_WHICH = {"train": "training data", "dev": "dev data"}


def _describe(record: dict | None) -> str:
    if not record:
        return "none"
    return f"{record.get('name') or 'a corpus'} ({record.get('sentences')} sentences, sha256 " \
           f"{str(record.get('sha256'))[:12]})"
