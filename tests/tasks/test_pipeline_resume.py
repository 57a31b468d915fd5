"""Pipeline training that loses nothing (``Pipeline.fit(checkpoint=DIR)`` / ``resume=True``): each stage and fold
saved as it ends, Ctrl-C in the parser stage (at a safe point: its training state is kept; before its epochs: it
starts again), the resumed model byte for byte the uninterrupted one, refusals of another run's checkpoint, and the
training file too small for the folds; the worker processes of ``jobs``."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import signal

import pytest

import swvp.tasks.pipeline as pipeline_module
from swvp.data.toy_treebank import toy_treebank
from swvp.exceptions import DataError
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.persistence import load_model
from swvp.tasks.graph_parser import GraphDependencyParser
from swvp.tasks.lemmatizer import Lemmatizer
from swvp.tasks.morphology import MorphologicalTagger
from swvp.tasks.pipeline import Pipeline
from swvp.tasks.pipeline_checkpoint import MANIFEST, PipelineCheckpoint
from swvp.tasks.process_pool import WorkerDied
from swvp.tasks.tokenizer import Tokenizer
from swvp.tasks.transition_parser import TransitionDependencyParser

ORDER = ["tokenizer", "tagger", "lemmatizer", "fold 0", "fold 1", "parser"]


def graph_parser() -> GraphDependencyParser:
    return GraphDependencyParser(order=2, hash_bits=14, tag_features=("Case",),
                                 learner=Perceptron(epochs=4, stop_when_separated=False))


def small_pipeline(tagger_epochs: int = 3, **kwargs) -> Pipeline:
    stages = dict(tokenizer=Tokenizer(learner=Perceptron(epochs=3)),
                  tagger=MorphologicalTagger(learner=Perceptron(epochs=tagger_epochs)),
                  lemmatizer=Lemmatizer(learner=Perceptron(epochs=3)),
                  parser=TransitionDependencyParser(hash_bits=14, move_hash_bits=14, tag_features=("Case",),
                                                    learner=Perceptron(search=Beam(4), epochs=4,
                                                                       stop_when_separated=False)),
                  jackknife=2)
    stages.update(kwargs)
    return Pipeline(**stages)


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("resume")
    paths = {"train": root / "train.conllu", "dev": root / "dev.conllu", "model": root / "full.npz"}
    paths["train"].write_text(toy_treebank(40), encoding="utf-8")
    paths["dev"].write_text(toy_treebank(8, seed=1), encoding="utf-8")
    small_pipeline().fit(paths["train"], dev=paths["dev"]).save(paths["model"])
    small_pipeline(parser=graph_parser()).fit(paths["train"], dev=paths["dev"]).save(root / "graph.npz")
    paths["graph"] = root / "graph.npz"
    return paths


def manifest(folder) -> dict:
    return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))


def done(folder) -> list[str]:
    """The parts the checkpoint's manifest names as done, in the run's order."""
    return [name for name in ORDER if name in manifest(folder)["done"]]


def test_the_model_file_is_the_same_for_the_same_data_and_options(data, tmp_path):
    again = small_pipeline().fit(data["train"], dev=data["dev"])
    again.save(tmp_path / "again.npz")
    assert sha256(tmp_path / "again.npz") == sha256(data["model"])
    meta, _ = load_model(data["model"])
    assert "stage_cpu_seconds" not in meta  # timings are printed, not stored: they differ from run to run
    assert all("seconds" not in h for s in meta["stages"].values() for h in s["header"]["history"])
    assert set(again.stage_cpu_seconds_) >= {"tokenizer", "tagger", "lemmatizer", "jackknife", "parser", "total"}


@pytest.mark.parametrize("kind", ["transition", "graph"])
def test_ctrl_c_in_the_parsers_epochs_keeps_its_state_and_resume_gives_the_same_bytes(kind, data, tmp_path,
                                                                                       monkeypatch):
    folder = tmp_path / "ckpt"
    pipe, reference = (small_pipeline, data["model"]) if kind == "transition" else (
        lambda: small_pipeline(parser=graph_parser()), data["graph"])
    real = pipeline_module._StageBar.__call__
    calls = []

    def ctrl_c_in_epoch_2(bar, epoch, done, total, stats=None):  # a real SIGINT, as the terminal sends it
        real(bar, epoch, done, total, stats)
        calls.append((bar.desc, epoch))
        if bar.desc == "parser" and epoch == 2 and calls.count(("parser", 2)) == 3:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(pipeline_module._StageBar, "__call__", ctrl_c_in_epoch_2)
    with pytest.raises(KeyboardInterrupt):
        pipe().fit(data["train"], dev=data["dev"], checkpoint=folder, progress=True)
    monkeypatch.undo()
    m = manifest(folder)
    assert m["order"] == ORDER and done(folder) == ORDER[:-1]
    assert m["partial"]["parser"]["epochs_run"] == 1 and m["partial"]["parser"]["epoch"] == 2
    assert (folder / "parser.partial.npz").is_file()
    ckpt = PipelineCheckpoint(folder)
    assert ckpt.describe().startswith("tokenizer, tagger, lemmatizer, fold 0, fold 1 done (5 of 6); the parser's "
                                      "training state (1 epoch and ")

    resumed = pipe().fit(data["train"], dev=data["dev"], checkpoint=folder, resume=True)
    assert resumed.resumed_ == tuple(ORDER[:-1]) and set(resumed.stage_cpu_seconds_) == {"parser", "total"}
    resumed.save(tmp_path / "resumed.npz")
    assert sha256(tmp_path / "resumed.npz") == sha256(reference)
    assert done(folder) == ORDER and not (folder / "parser.partial.npz").exists()
    # a complete checkpoint trains nothing and gives the model again; remove() leaves no trace
    again = pipe().fit(data["train"], dev=data["dev"], checkpoint=folder, resume=True)
    assert again.resumed_ == tuple(ORDER)
    again.save(tmp_path / "again.npz")
    assert sha256(tmp_path / "again.npz") == sha256(reference)
    PipelineCheckpoint(folder).remove()
    assert not folder.exists()


def test_ctrl_c_before_the_parsers_epochs_trains_it_again_to_the_same_bytes(data, tmp_path, monkeypatch):
    folder = tmp_path / "ckpt"

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(TransitionDependencyParser, "_training_problems", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        small_pipeline().fit(data["train"], dev=data["dev"], checkpoint=folder)
    monkeypatch.undo()
    m = manifest(folder)
    assert done(folder) == ORDER[:-1] and m["partial"] == {}
    resumed = small_pipeline().fit(data["train"], dev=data["dev"], checkpoint=folder, resume=True)
    resumed.save(tmp_path / "resumed.npz")
    assert sha256(tmp_path / "resumed.npz") == sha256(data["model"])


def test_a_stage_cut_short_is_trained_again_and_the_folds_saved_are_kept(data, tmp_path, monkeypatch):
    folder = tmp_path / "ckpt"
    record = PipelineCheckpoint._record

    def ctrl_c_after_fold_0(self, name, *args):
        record(self, name, *args)
        if name == "fold 0":
            raise KeyboardInterrupt

    monkeypatch.setattr(PipelineCheckpoint, "_record", ctrl_c_after_fold_0)
    with pytest.raises(KeyboardInterrupt):
        small_pipeline().fit(data["train"], dev=data["dev"], checkpoint=folder)
    monkeypatch.undo()
    assert done(folder) == ORDER[:4]
    ran = []
    run_task = pipeline_module._run_task
    monkeypatch.setattr(pipeline_module, "_run_task", lambda name, *a: ran.append(name) or run_task(name, *a))
    resumed = small_pipeline().fit(data["train"], dev=data["dev"], checkpoint=folder, resume=True)
    assert ran == ["fold 1"]
    resumed.save(tmp_path / "resumed.npz")
    assert sha256(tmp_path / "resumed.npz") == sha256(data["model"])


def test_a_checkpoint_of_other_data_or_options_is_refused(data, tmp_path):
    folder = tmp_path / "ckpt"
    PipelineCheckpoint(folder).start(
        {"train": {"name": "x", "sentences": 1, "sha256": "0"}, "dev": None}, {"jackknife": 2}, ORDER)
    with pytest.raises(ValueError, match=r"other training data: x \(1 sentences.*train.conllu \(40 sentences"):
        small_pipeline().fit(data["train"], dev=data["dev"], checkpoint=folder, resume=True)

    def interrupted(pipe, **kwargs):
        def ctrl_c(*args, **kw):
            raise KeyboardInterrupt

        orig = PipelineCheckpoint._record
        PipelineCheckpoint._record = lambda self, *a: (orig(self, *a), ctrl_c())
        try:
            pipe.fit(data["train"], checkpoint=tmp_path / "c2", **kwargs)
        except KeyboardInterrupt:
            pass
        finally:
            PipelineCheckpoint._record = orig

    interrupted(small_pipeline(), dev=data["dev"])
    with pytest.raises(ValueError, match=r"other options: tagger.learner.epochs = 3 there, 4 here"):
        small_pipeline(tagger_epochs=4).fit(data["train"], dev=data["dev"], checkpoint=tmp_path / "c2", resume=True)
    with pytest.raises(ValueError, match=r"jackknife = 2 there, 3 here"):
        small_pipeline(jackknife=3).fit(data["train"], dev=data["dev"], checkpoint=tmp_path / "c2", resume=True)
    with pytest.raises(ValueError, match=r"other dev data: \S*dev.conllu \(8 sentences, sha256 \w+\) there, none here"):
        small_pipeline().fit(data["train"], checkpoint=tmp_path / "c2", resume=True)
    with pytest.raises(ValueError, match=r"holds a pipeline checkpoint already: resume it"):
        small_pipeline().fit(data["train"], dev=data["dev"], checkpoint=tmp_path / "c2")
    with pytest.raises(ValueError, match=r"no pipeline checkpoint there"):
        small_pipeline().fit(data["train"], checkpoint=tmp_path / "none", resume=True)
    with pytest.raises(ValueError, match=r"integer random_state in every stage: tagger has learner.random_state = "
                                         r"None"):
        small_pipeline(tagger=MorphologicalTagger(learner=Perceptron(random_state=None))).fit(
            data["train"], checkpoint=tmp_path / "c3")
    assert not (tmp_path / "c3").exists()


@pytest.mark.parametrize(("sentences", "jackknife", "needed"), [(1, 5, "jackknife=0 / --jackknife 0"),
                                                                (3, 5, "K from 2 to 3; or 0"),
                                                                (1, 2, "jackknife=0 / --jackknife 0")])
def test_a_training_file_too_small_for_the_folds_is_one_error_before_any_training(sentences, jackknife, needed,
                                                                                 tmp_path, monkeypatch):
    path = tmp_path / "small.conllu"
    path.write_text(toy_treebank(sentences), encoding="utf-8")
    monkeypatch.setattr(pipeline_module, "_run_tasks", lambda *a, **k: pytest.fail("training started"))
    s = "s" if sentences > 1 else ""
    with pytest.raises(DataError, match=rf"small.conllu: {sentences} sentence{s}, too few for {jackknife} jack-knife "
                                        rf"folds of the parser's tags: at least {jackknife} needed \(.*{needed}"):
        small_pipeline(jackknife=jackknife).fit(path, checkpoint=tmp_path / "ckpt")
    assert not (tmp_path / "ckpt").exists()
    # without the parser (or with gold tags) there are no folds: the size is not checked
    monkeypatch.undo()
    assert small_pipeline(stages=("tokenizer",), jackknife=jackknife).fit(path).stages_.keys() == {"tokenizer"}


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="the workers inherit the patch")
def test_the_workers_hand_back_results_errors_and_their_death(monkeypatch):
    def task(name, progress=False):
        if name == "bad":
            raise DataError("x.conllu", 3, "broken")
        if name == "dies":
            os._exit(3)
        return name.upper(), 0.5

    monkeypatch.setattr(pipeline_module, "_run_task", task)
    ended = []
    out = pipeline_module._run_tasks(["a", "b", "c"], 2, {}, on_done=lambda *args: ended.append(args))
    assert out == {"a": ("A", 0.5), "b": ("B", 0.5), "c": ("C", 0.5)} and sorted(ended) == sorted(
        (k, v, 0.5) for k, v in (("a", "A"), ("b", "B"), ("c", "C")))
    with pytest.raises(DataError, match="x.conllu:3: broken") as err:
        pipeline_module._run_tasks(["a", "bad", "c"], 2, {})
    assert "in the worker process that trained bad" in str(err.value.__cause__)
    with pytest.raises(WorkerDied, match="the worker process training dies died"):
        pipeline_module._run_tasks(["dies", "a"], 2, {})
