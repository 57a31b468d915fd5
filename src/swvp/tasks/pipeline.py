"""``Pipeline``: from raw text to a full UD analysis — tokens, sentences, multiword tokens, UPOS / XPOS / FEATS,
lemmas and a dependency tree — every stage trained by swvp's perceptron engine from one CoNLL-U treebank.

The pipeline is an ordered list of stages, each meeting one contract (:mod:`swvp.tasks.stages`: what it provides
and requires, ``fit`` and ``annotate`` on a :class:`~swvp.data.text.Document`); a user's own stage may replace a
built-in one or be added. The built-in stages (each an estimator usable on its own, :attr:`Pipeline.stages_`):

* ``tokenizer`` — :class:`~swvp.tasks.tokenizer.Tokenizer`: tokens, sentences and multiword tokens from raw text;
* ``tagger`` — :class:`~swvp.tasks.morphology.MorphologicalTagger`: UPOS, XPOS and FEATS as one joint tag;
* ``lemmatizer`` — :class:`~swvp.tasks.lemmatizer.Lemmatizer`: lemmas as edits of the form;
* ``parser`` — :class:`~swvp.tasks.transition_parser.TransitionDependencyParser` (default: UPOS joined with Case and
  VerbForm as its tag, non-projective training trees lifted) or :class:`~swvp.tasks.graph_parser.GraphDependencyParser`,
  trained on **jack-knifed** predicted tags: the training
  sentences are split into ``jackknife`` folds, each fold tagged by a tagger trained on the others, so that the
  parser learns from tags as wrong as those it will see (``jackknife=0``: gold tags). Any stage that declares
  ``trains_on_predicted`` is trained so, on the predictions of the earlier stages that provide what it requires.

Training runs the independent parts — tokenizer, tagger, lemmatizer and the jack-knife folds — in ``jobs`` worker
processes, then the parser; ``stage_cpu_seconds_`` records each stage's CPU time. A training file that lacks what a
stage needs (no LEMMA, no HEAD) stops training with a DataError, or with ``missing="skip"`` leaves that stage out
and says so in ``skipped_``. The whole pipeline is one model file (:meth:`save`): each stage's header and arrays
inside it, the format version of every model, and no timings — the same data and options give the same bytes.
``fit(checkpoint=DIR)`` saves each stage and fold as it ends, and ``resume=True`` skips them after Ctrl-C
(:mod:`swvp.tasks.pipeline_checkpoint`).

At run time: :meth:`Pipeline.analyze` (one text), :meth:`Pipeline.pipe` (a stream of texts, in batches, optionally on
worker processes; spaCy's ``nlp.pipe``), :meth:`Pipeline.parse_files` (files to CoNLL-U files as they are read, here or
on a Dask cluster: :mod:`swvp.tasks.streaming`, :mod:`swvp.tasks.dask_parsing`).
"""

from __future__ import annotations

import copy
import inspect
import multiprocessing
import multiprocessing.connection
import os
import resource
import signal
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable

import numpy as np

from swvp.data.conllu import ConlluCorpus, read_conllu
from swvp.data.text import Document, document_from_conllu, tokenized_document
from swvp.exceptions import DataError, ModelFormatError
from swvp.learn.folds import check_folds, fold_of, split
from swvp.tasks._parsing import parser_sentences as parser_view
from swvp.tasks.base import Estimator
from swvp.tasks.pipeline_checkpoint import PipelineCheckpoint, data_record, options_record
from swvp.tasks.process_pool import WorkerDied
from swvp.tasks.stages import BUILT_IN_KINDS, check_order, default_stage, fills, makes_tokens, stage_class, stage_kind
from swvp.tasks.stages import STAGE_NAMES as STAGES

MODEL_KIND = "pipeline"

__all__ = ["MODEL_KIND", "STAGES", "Pipeline", "parser_view", "tokenized_document"]


def _as_corpus(X) -> ConlluCorpus:
    if isinstance(X, ConlluCorpus):
        return X
    if isinstance(X, (str, os.PathLike)):
        return read_conllu(X)
    raise TypeError(f"a pipeline trains on a CoNLL-U path or a read ConlluCorpus, not {type(X).__name__}")


#: a document's sentences are annotated in groups of about this many characters of words: the stages' working memory
#: follows a call's words, so a long paragraph sets no higher peak than the batches ``swvp parse`` reads
ANNOTATE_CHARS = 1 << 14


def _sentence_groups(sentences: list, chars: int):
    """``sentences`` in consecutive groups of at most ``chars`` characters of word forms (a longer sentence alone)."""
    group, size = [], 0
    for sent in sentences:
        n = sum(len(t.form) + 1 for t in sent.tokens)
        if group and size + n > chars:
            yield group
            group, size = [], 0
        group.append(sent)
        size += n
    if group:
        yield group


def _providers(before: list[tuple[str, object]], stage) -> list[str]:
    """The stages of ``before`` whose predictions a ``trains_on_predicted`` stage learns from: those that provide an
    annotation it requires (the tokens aside: every stage reads the gold tokens in training)."""
    need = set(stage.requires) - {"tokens"}
    return [name for name, s in before if not makes_tokens(s) and need & set(s.provides)]


def _unfed(plan: list[tuple[str, object]]) -> tuple[str, object] | None:
    """The first ``trains_on_predicted`` stage of ``plan`` that no earlier stage feeds predictions (None if none)."""
    return next(((name, stage) for i, (name, stage) in enumerate(plan)
                 if getattr(stage, "trains_on_predicted", False) and not _providers(plan[:i], stage)), None)


# ------------------------------------------------------------------------------------------- training tasks
#: what the training tasks read: set in the parent before the worker processes start (inherited by fork, or passed
#: once per worker otherwise)
_SHARED: dict = {}


def _init_worker(shared: dict | None, progress_queue) -> None:
    """A worker process's start: the shared data (None: inherited by fork), and where to send its progress. Workers
    ignore SIGINT (a terminal sends Ctrl-C to them too): it reaches them as the parent stopping them, so that what
    the parent saved stays consistent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if shared is not None:
        _SHARED.update(shared)
    _SHARED["progress_queue"] = progress_queue


def _cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of its finished child processes."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def unfitted(stage):
    """A new stage with the same parameters and no fitted state (scikit-learn's ``clone``, without it); a user's
    stage without ``get_params``: a deep copy of it."""
    if callable(getattr(stage, "get_params", None)):
        return type(stage)(**stage.get_params(deep=False))
    return copy.deepcopy(stage)


def _completed(estimator: Estimator) -> Estimator:
    """The fitted estimator, or KeyboardInterrupt if Ctrl-C cut its training short (the perceptron loop keeps what it
    learned; a pipeline stage must not: the pipeline is saved whole or not at all, and a checkpoint keeps only the
    stages that ended, or a parser's training state)."""
    if getattr(estimator, "interrupted_", False):
        raise KeyboardInterrupt
    return estimator


class _StageBar:
    """A progress bar over a stage's epochs, as the stage's ``on_progress(epoch, done, total, stats)``: shown from
    :meth:`start` ("preparing": features, vocabularies, compiling) and sized by the first epoch's call (an epoch's
    examples are known only inside the stage); ``position``: its line among several bars."""

    def __init__(self, desc: str, epochs: int, position: int | None = None):
        self.desc, self.epochs, self.position, self.bar = desc, int(epochs), position, None

    def start(self) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=None, unit="ex", desc=f"{self.desc}: preparing", dynamic_ncols=True, leave=False,
                        position=self.position)

    def __call__(self, epoch: int, done: int, total: int, stats=None) -> None:
        if self.bar is None:
            self.start()
        if self.bar.total is None:
            self.bar.total = self.epochs * total
        self.bar.set_description(f"{self.desc} epoch {epoch}/{self.epochs}", refresh=False)
        self.bar.update((epoch - 1) * total + done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Relay:
    """A worker process's ``on_progress``: sends (task, epoch, done, total) to the parent, whose
    :class:`_WorkerBars` draws them; epoch 0 says the task started."""

    def __init__(self, name: str, queue):
        self.name, self.queue = name, queue

    def start(self) -> None:
        self.queue.put((self.name, 0, 0, 0))

    def __call__(self, epoch: int, done: int, total: int, stats=None) -> None:
        self.queue.put((self.name, epoch, done, total))

    def close(self) -> None:
        pass


class _WorkerBars:
    """In the parent: one bar per task running in a worker process, drawn from what the workers' :class:`_Relay`
    objects send (a thread reads them), each on a line of its own below the overall bar."""

    def __init__(self, queue, epochs: dict[str, int]):
        self.queue, self.epochs, self.bars = queue, epochs, {}
        self.thread = threading.Thread(target=self._read, name="swvp-stage-bars", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while (msg := self.queue.get()) is not None:
            name, epoch, done, total = msg
            if epoch < 0:  # the task finished
                bar = self.bars.pop(name, None)
                if bar is not None:
                    bar.close()
                continue
            bar = self.bars.get(name)
            if bar is None:
                used = {b.position for b in self.bars.values()}
                bar = self.bars[name] = _StageBar(name, self.epochs[name], min(set(range(1, len(used) + 2)) - used))
                bar.start()
            if epoch:
                bar(epoch, done, total)

    def done(self, name: str) -> None:
        """Close the bar of a finished task (called in the parent's thread once its result arrived)."""
        self.queue.put((name, -1, 0, 0))

    def close(self, timeout: float | None = None) -> None:
        """Stop drawing (``timeout``: seconds to wait for the reading thread, when workers were stopped and a message
        may never come whole)."""
        self.queue.put(None)
        self.thread.join(timeout)
        for bar in list(self.bars.values()):
            bar.close()


def _epochs(stage) -> int:
    """The epochs a stage's bar counts (1 for a user's stage without a perceptron learner)."""
    learner = getattr(stage, "_learner", None)
    return int(learner().epochs) if callable(learner) else 1


def _task_epochs(name: str) -> int:
    sh = _SHARED
    return sum(_epochs(sh["stages"][p]) for p in sh["providers"]) if name.startswith("fold") else \
        _epochs(sh["stages"][name])


def _run_task(name: str, progress: bool = False):
    """One training task, timed in CPU seconds: a stage fitted on the gold training document, or a jack-knife
    fold — the held-out sentences annotated by the providing stages trained on the other folds — as
    (held-out indices, each held-out word's values of the provided columns); ``progress``: a bar over its epochs
    (in a worker process: progress sent to the parent, when it asked for it)."""
    t0 = time.process_time()
    sh = _SHARED
    queue = sh.get("progress_queue")
    bar = _Relay(name, queue) if queue is not None else _StageBar(name, _task_epochs(name)) if progress else None
    if bar is not None:
        bar.start()
    try:
        if not name.startswith("fold"):
            result = _completed(sh["stages"][name].fit(sh["train_doc"], dev=sh["dev_doc"], on_progress=bar))
        else:
            doc = sh["train_doc"]
            rest, held = split(sh["folds"], int(name.split()[1]))
            train = Document([doc.sentences[i] for i in rest])
            tagged = Document([copy.deepcopy(doc.sentences[i]) for i in held])
            for provider in sh["providers"]:
                fitted = _completed(unfitted(sh["stages"][provider]).fit(train, dev=sh["dev_doc"], on_progress=bar))
                fitted.annotate(tagged)
            columns = sh["columns"]
            result = (held.tolist(), [[tuple(getattr(w, c) for c in columns) for w in s.words]
                                      for s in tagged.sentences])
    finally:
        if bar is not None:
            bar.close()
    return result, time.process_time() - t0


class _RemoteTraceback(Exception):
    """Where a worker process raised an error (shown as the cause of the error raised again here)."""

    def __str__(self) -> str:
        return self.args[0]


def _worker(conn, shared: dict | None, progress_queue) -> None:
    """A worker process: runs the tasks its pipe names (None: stop) and sends back ``(True, (result, CPU seconds))``
    or ``(False, error, traceback)``."""
    _init_worker(shared, progress_queue)
    while True:
        try:
            name = conn.recv()
        except EOFError:  # the parent is gone
            return
        if name is None:
            return
        try:
            reply = (True, _run_task(name))
        except Exception as err:  # noqa: BLE001 - raised again in the parent
            reply = (False, err, traceback.format_exc())
        try:
            conn.send(reply)
        except Exception as err:  # noqa: BLE001 - a result or error that does not pickle
            conn.send((False, RuntimeError(f"{name}: its result could not be sent back ({err!r})"), ""))


def _run_in_workers(names: list[str], jobs: int, shared: dict, on_done, queue, bars) -> dict:
    """The tasks on ``jobs`` worker processes, each with a pipe of its own: a worker stopped at any moment (Ctrl-C
    here, an error) corrupts no channel that another process or this one's exit would wait on."""
    fork = "fork" in multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if fork else None)
    workers = []
    busy: dict = {}  # connection → the task its worker runs
    pending = deque(names)
    out = {}
    finished = False
    try:
        for _ in range(min(jobs, len(names))):
            here, there = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(there, None if fork else shared, queue),
                               name="swvp-pipeline-worker", daemon=True)
            proc.start()
            there.close()
            workers.append((proc, here))
            busy[here] = pending.popleft()
            here.send(busy[here])
        while busy:
            for conn in multiprocessing.connection.wait(list(busy)):
                name = busy.pop(conn)
                try:
                    reply = conn.recv()
                except (EOFError, OSError):
                    raise WorkerDied(f"the worker process training {name} died before finishing it (killed, or out "
                                     f"of memory)") from None
                if not reply[0]:
                    raise reply[1] from _RemoteTraceback(f"in the worker process that trained {name}:\n{reply[2]}")
                out[name] = reply[1]
                if bars is not None:
                    bars.done(name)
                if on_done is not None:
                    on_done(name, *out[name])
                if pending:
                    busy[conn] = pending.popleft()
                    conn.send(busy[conn])
        finished = True
    finally:
        for proc, conn in workers:
            if finished:
                conn.send(None)
            else:  # Ctrl-C or an error: the running tasks are lost either way, so stop their workers now
                proc.terminate()
        for proc, conn in workers:
            proc.join()
            conn.close()
    return out


def _run_tasks(names: list[str], jobs: int, shared: dict, on_done: Callable[[str, object, float], None] | None = None,
               progress: bool = False) -> dict:
    """Run the named tasks (in ``jobs`` worker processes when > 1); {name: (result, CPU seconds)}. ``on_done(name,
    result, cpu)``: called here, in this process, as each task ends (a checkpoint saves it). ``progress``: a bar per
    task, from its start ("preparing") through its epochs, also for the tasks of worker processes. Ctrl-C (or an
    error) stops the workers at once: the tasks that ended before it have been handed to ``on_done``."""
    _SHARED.clear()
    _SHARED.update(shared)
    out = {}
    bars = queue = None
    finished = False
    try:
        if jobs <= 1 or len(names) <= 1:
            for name in names:
                out[name] = _run_task(name, progress)
                if on_done is not None:
                    on_done(name, *out[name])
        else:
            if progress:
                fork = "fork" in multiprocessing.get_all_start_methods()
                queue = multiprocessing.get_context("fork" if fork else None).Queue()
                # a worker stopped while it sent progress may hold the queue's lock for good: this process must
                # not wait for its own messages to go through as it exits
                queue.cancel_join_thread()
                bars = _WorkerBars(queue, {name: _task_epochs(name) for name in names})
            out = _run_in_workers(names, jobs, shared, on_done, queue, bars)
        finished = True
        return out
    finally:
        if bars is not None:
            bars.close(timeout=None if finished else 1.0)
        _SHARED.clear()


# ------------------------------------------------------------------------------------------------ batches of texts


def _batches(texts, size: int, as_tuples: bool):
    """(texts, contexts) lists of ``size`` items of ``texts`` (contexts None unless ``as_tuples``)."""
    batch, contexts = [], []
    for item in texts:
        if as_tuples:
            text, context = item
        else:
            text, context = item, None
        if not isinstance(text, str):
            raise TypeError(f"pipe takes str texts, got {type(text).__name__}")
        batch.append(text)
        contexts.append(context)
        if len(batch) == size:
            yield batch, contexts
            batch, contexts = [], []
    if batch:
        yield batch, contexts


def _analyze_texts(pipeline: Pipeline, texts: list[str]) -> list[Document]:
    return pipeline.analyze_texts(texts)


# ------------------------------------------------------------------------------------------------ the task


class Pipeline(Estimator):
    """Raw text → tokens, sentences, tags, lemmas and trees (see the module docstring).

    Parameters
    ----------
    tokenizer, tagger, lemmatizer, parser : the built-in stages (unfitted; a user's stage meeting the contract of
        :mod:`swvp.tasks.stages` may take a built-in one's place); None: each stage's default
        (:func:`~swvp.tasks.stages.default_stage`).
    stages : the stages, in order: names among ``("tokenizer", "tagger", "lemmatizer", "parser")`` and
        ``(name, stage)`` pairs adding a stage of one's own; checked against each other once (what a stage requires,
        an earlier one provides).
    jackknife : folds of the parser's predicted training tags (>= 2; 5 by default: on the dev sets, as accurate as
        10 at half the cost), or 0: the parser trains on gold tags.
    jobs : worker processes for the independent training tasks.
    missing : ``"refuse"`` (a DataError when the training file lacks what a stage needs) or ``"skip"`` the stage.

    After ``fit``: ``stages_`` (name → fitted estimator), ``stage_cpu_seconds_`` (of the stages this call trained),
    ``skipped_`` (what was left out and why: a stage, or a tagger column such as XPOS in a treebank without it) and
    ``resumed_`` (the stages and folds taken from a checkpoint). Ctrl-C during training raises KeyboardInterrupt and
    fits nothing (no stage is kept half-trained); with a checkpoint, what had ended is kept there for ``resume``.
    """

    MODEL_KIND = MODEL_KIND
    QUANTIZED_FILES = True  # a pipeline file stores its weights quantised unless saved with lossless=True
    FITTED_ATTRIBUTE = "stages_"

    def __init__(self, *, tokenizer=None, tagger=None, lemmatizer=None, parser=None, stages: tuple = STAGES,
                 jackknife: int = 5, jobs: int = 1, missing: str = "refuse"):
        self.tokenizer = tokenizer
        self.tagger = tagger
        self.lemmatizer = lemmatizer
        self.parser = parser
        self.stages = stages
        self.jackknife = jackknife
        self.jobs = jobs
        self.missing = missing

    def _plan(self) -> list[tuple[str, object]]:
        """The stages to train, in order, as (name, unfitted stage), checked against each other once (ValueError):
        a name in ``stages`` takes the stage of its parameter (or the built-in default), a ``(name, stage)`` pair
        its own; each meets the stage contract and is registered; what each requires, an earlier one provides."""
        if isinstance(self.stages, (str, bytes)) or not self.stages:
            raise ValueError(f"stages must be a non-empty list of stage names and (name, stage) pairs, got "
                             f"{self.stages!r}")
        plan = []
        for item in self.stages:
            if isinstance(item, str):
                if item not in STAGES:
                    raise ValueError(f"unknown stage {item!r}: the built-in stages are {', '.join(STAGES)}; give "
                                     f"another stage as a (name, stage) pair")
                stage = getattr(self, item) if getattr(self, item) is not None else default_stage(item)
                plan.append((item, stage))
            elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
                if item[0] in STAGES and getattr(self, item[0]) is not None:
                    raise ValueError(f"the {item[0]} stage is given twice: as {item[0]}= and in stages")
                plan.append(item)
            else:
                raise ValueError(f"a stage is a name or a (name, stage) pair, got {item!r}")
        for name, stage in plan:
            if not fills(name, getattr(type(stage), "MODEL_KIND", None)):
                raise ValueError(f"the {name} stage is one of {', '.join(BUILT_IN_KINDS[name])} models, not "
                                 f"{type(stage).__name__}")
        check_order(plan, raw_text=makes_tokens(plan[0][1]))
        for name, stage in plan:
            if stage_kind(stage) is None:
                raise ValueError(f"stage {name}: {type(stage).__name__} is not registered: decorate it with "
                                 f"@swvp.register_stage('a-kind-name') so that a saved pipeline can load it")
        return plan

    def _validate(self) -> list[tuple[str, object]]:
        plan = self._plan()
        if self.missing not in ("refuse", "skip"):
            raise ValueError(f"missing must be 'refuse' or 'skip', got {self.missing!r}")
        check_folds(self.jackknife, what="jackknife (0: the parser learns from gold tags)", zero_allowed=True)
        if isinstance(self.jobs, bool) or int(self.jobs) != self.jobs or self.jobs < 1:
            raise ValueError(f"jobs must be a positive integer, got {self.jobs!r}")
        unfed = _unfed(plan) if self.jackknife else None
        if unfed is not None:
            name, stage = unfed
            raise ValueError(f"jack-knifed {name} training needs a stage before it that provides "
                             f"{', '.join(a for a in stage.requires if a != 'tokens')} (or jackknife=0)")
        return plan

    # -- training ----------------------------------------------------------------------------------------------
    def fit(self, X, *, dev=None, progress: bool = False, checkpoint=None, resume: bool = False) -> Pipeline:
        """Train every stage on the CoNLL-U treebank ``X`` (a path or a read corpus); ``dev`` (same) selects epochs.

        ``progress``: progress bars (one per stage, or one over the parallel tasks). ``checkpoint``: a folder (or a
        :class:`~swvp.tasks.pipeline_checkpoint.PipelineCheckpoint`) where each stage and jack-knife fold is saved as
        it ends, and the parser's training state if Ctrl-C stops it; ``resume=True`` continues the checkpoint there
        (the same data and options, else ValueError naming what differs): what is done is skipped and the model is
        the one an uninterrupted run gives, byte for byte once saved. The folder is left complete: delete it once the
        model is saved (``PipelineCheckpoint(folder).remove()``; ``swvp train pipeline`` does).

        A training file with fewer sentences than jack-knife folds is refused (DataError) before any training.
        """
        plan = self._validate()
        t_start = _cpu_seconds()
        train_corpus = _as_corpus(X)
        dev_corpus = None if dev is None else _as_corpus(dev)
        train_doc = document_from_conllu(train_corpus)
        dev_doc = None if dev_corpus is None else document_from_conllu(dev_corpus)
        self.skipped_ = {}
        asked = tuple(name for name, _ in plan)
        plan = self._check_data(plan, train_doc, train_corpus.path)
        est = {name: unfitted(stage) for name, stage in plan}
        later = [name for name, stage in plan if getattr(stage, "trains_on_predicted", False)]
        providers = sorted({p for i, (name, stage) in enumerate(plan) if name in later
                            for p in _providers(plan[:i], stage) if p not in later},
                           key=[n for n, _ in plan].index) if self.jackknife else []
        folds = int(self.jackknife) if providers else 0
        self._check_size(len(train_doc.sentences), folds, train_corpus.path)
        tasks = [name for name, _ in plan if name not in later] + [f"fold {k}" for k in range(folds)]
        order = tasks + later
        ckpt = self._open_checkpoint(checkpoint, resume, asked, plan, train_corpus, dev_corpus, order)
        resumed = [] if ckpt is None else ckpt.done()
        results = {}
        for name in resumed:
            if name.startswith("fold"):
                results[name] = ckpt.load_fold(name)
            elif name not in later:  # those are loaded below, where they would be trained
                results[name] = ckpt.load_stage(name, type(est[name]))
        run = [n for n in tasks if n not in results]
        columns = tuple(dict.fromkeys(c for p in providers for c in est[p].provides if c != "tokens"))
        shared = {"stages": est, "train_doc": train_doc, "dev_doc": dev_doc, "providers": providers,
                  "columns": columns, "folds": fold_of(len(train_doc.sentences), folds, scheme="interleaved")
                  if folds else None}
        bar = None
        if progress and tasks:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(tasks), initial=len(tasks) - len(run), unit="task", desc="stages",
                       dynamic_ncols=True)
            if len(run) < len(tasks):
                bar.set_postfix_str(f"{len(tasks) - len(run)} done before (checkpoint)")

        def on_done(name: str, result, cpu: float) -> None:
            if ckpt is not None:
                if name.startswith("fold"):
                    ckpt.save_fold(name, result[0], columns, result[1], cpu)
                else:
                    ckpt.save_stage(name, result, cpu)
            if bar is not None:
                bar.set_postfix_str(f"{name} done", refresh=False)
                bar.update(1)

        try:
            ran = _run_tasks(run, int(self.jobs), shared, on_done, progress)
        finally:
            if bar is not None:
                bar.close()
        results.update({name: result for name, (result, _) in ran.items()})
        self.stages_ = {}
        cpu = {}
        for name, _ in plan:
            if name in results and name not in later:
                self.stages_[name] = results[name]
            if name in ran:
                cpu[name] = ran[name][1]
        for name, stage in self.stages_.items():
            for column in getattr(stage, "skipped_", ()):
                self.skipped_[f"{name}:{column}"] = f"the training file has no {column.upper()} ('_' for every word)"
        if any(name.startswith("fold") for name in ran):
            cpu["jackknife"] = sum(c for name, (_, c) in ran.items() if name.startswith("fold"))
        fold_values = [results[f"fold {k}"] for k in range(folds)]
        for name in later:
            if name in resumed:
                self.stages_[name] = ckpt.load_stage(name, type(est[name]))
                continue
            t0 = time.process_time()
            self.stages_[name] = self._fit_on_predicted(name, est[name], providers, columns, train_doc, dev_doc,
                                                        fold_values, progress, ckpt)
            cpu[name] = time.process_time() - t0
            if ckpt is not None:
                ckpt.save_stage(name, self.stages_[name], cpu[name])
        self.stages_ = {name: self.stages_[name] for name, _ in plan}
        cpu["total"] = _cpu_seconds() - t_start  # this process and its workers, reading the data included
        self.stage_cpu_seconds_ = cpu
        self.resumed_ = tuple(resumed)
        return self

    def _open_checkpoint(self, checkpoint, resume: bool, asked: tuple[str, ...], plan: list, train_corpus: ConlluCorpus,
                         dev_corpus: ConlluCorpus | None, order: list[str]) -> PipelineCheckpoint | None:
        """The checkpoint of this run: started afresh, or (``resume``) opened and checked against this run's data
        and options; None without one."""
        if checkpoint is None:
            if resume:
                raise ValueError("resume=True continues a checkpoint: name its folder (checkpoint=...)")
            return None
        ckpt = checkpoint if isinstance(checkpoint, PipelineCheckpoint) else PipelineCheckpoint(checkpoint)
        data = {"train": data_record(train_corpus), "dev": data_record(dev_corpus)}
        options = options_record(asked, self.jackknife, self.missing, dict(plan))
        if resume:
            ckpt.resume(data, options, order)
        else:
            ckpt.start(data, options, order)
        return ckpt

    @staticmethod
    def _check_size(sentences: int, folds: int, source: str | None) -> None:
        """One DataError, before any training, for a training file too small for the jack-knife folds (each fold
        must hold out a sentence and train on the others)."""
        if sentences == 0:
            raise DataError(source, None, "no sentences to train on")
        if folds and sentences < folds:
            fewer = f"fewer folds: jackknife=K / --jackknife K, K from 2 to {sentences}; or 0 for gold tags" \
                if sentences >= 2 else "jackknife=0 / --jackknife 0: gold tags"
            raise DataError(source, None, f"{sentences} sentence{'s' if sentences != 1 else ''}, too few for "
                                          f"{folds} jack-knife folds of the parser's tags: at least {folds} needed "
                                          f"({fewer})")

    def _check_data(self, plan: list, doc: Document, source: str | None) -> list:
        """The stages the training data allows: a stage whose ``check_data(doc)`` names what the data lacks is
        refused or skipped (``missing``), and so is a stage that needs what a skipped one provides."""
        lacks = {}
        for name, stage in plan:
            check = getattr(stage, "check_data", None)
            why = check(doc) if callable(check) else None
            if why:
                lacks[name] = why
        for name, why in lacks.items():
            if self.missing == "refuse":
                raise DataError(source, None, f"{name}: {why} (missing='skip' / --skip-missing leaves the stage out)")
            self.skipped_[name] = why
        kept = [(name, stage) for name, stage in plan if name not in lacks]
        unfed = _unfed(kept) if self.jackknife else None
        if unfed is not None:
            name, stage = unfed
            gone = [n for n, s in plan if n in lacks and set(s.provides) & set(stage.requires)]
            raise DataError(source, None, f"{name}: jack-knifed training needs the {' and '.join(gone)} stage, "
                                          f"which was left out")
        return kept

    def _fit_on_predicted(self, name: str, stage, providers: list[str], columns: tuple[str, ...],
                          train_doc: Document, dev_doc: Document | None, folds: list, progress: bool,
                          ckpt: PipelineCheckpoint | None = None):
        """A ``trains_on_predicted`` stage (the parser) trained on the jack-knifed predictions of the training data
        (gold ones without folds); its dev data is annotated by the full providing stages. With a checkpoint, it
        goes on from the training state that Ctrl-C left there, and Ctrl-C that stops it at a safe point saves
        that state."""
        train = copy.deepcopy(train_doc)
        for held, values in folds:
            for i, sent_values in zip(held, values, strict=True):
                for w, v in zip(train.sentences[i].words, sent_values, strict=True):
                    for c, x in zip(columns, v, strict=True):
                        setattr(w, c, x)
        dev = None
        if dev_doc is not None:
            dev = copy.deepcopy(dev_doc)
            if folds:
                for provider in providers:
                    self.stages_[provider].annotate(dev)
        bar = _StageBar(name, _epochs(stage)) if progress else None
        if bar is not None:
            bar.start()
        kwargs = {}
        if ckpt is not None and "resume" in inspect.signature(stage.fit).parameters:
            kwargs["resume"] = ckpt.partial(name)
        try:
            fitted = stage.fit(train, dev=dev, on_progress=bar, **kwargs)
        finally:
            if bar is not None:
                bar.close()
        if getattr(fitted, "interrupted_", False) and ckpt is not None and getattr(fitted, "_training", None):
            ckpt.save_partial(name, fitted)
        return _completed(fitted)

    # -- prediction --------------------------------------------------------------------------------------------
    @property
    def dev_scores_(self) -> dict[str, float]:
        """Each stage's dev score of the weights it kept, where it was trained with dev data (its own measure: the
        tokenizer's boundary F1, the taggers' accuracy, the parser's UAS)."""
        self._check_fitted()
        return {name: float(stage.dev_score_) for name, stage in self.stages_.items()
                if getattr(stage, "dev_score_", None) is not None}

    def _tokenizer(self):
        """The stage that makes the tokens of raw text (ValueError without one)."""
        self._check_fitted()
        first = next(iter(self.stages_.values()), None)
        if first is None or not makes_tokens(first):
            raise ValueError("this pipeline has no tokenizer: give it tokenized text (tokenized_document) or "
                             "CoNLL-U (annotate)")
        return first

    def analyze(self, text: str) -> Document:
        """The analysis of raw text (a blank line separates paragraphs) as a :class:`~swvp.data.text.Document`."""
        return self.analyze_texts([text])[0]

    def __call__(self, text: str) -> str:
        """The CoNLL-U analysis of raw text."""
        return self.analyze(text).to_conllu()

    def analyze_texts(self, texts) -> list[Document]:
        """``[analyze(t) for t in texts]`` — the same documents — analyzed together: one call of each stage for all
        of them, so that a short text costs what its words cost, not a call's overhead."""
        docs = self._tokenizer().tokenize_texts(texts)
        self.annotate(Document([s for d in docs for s in d.sentences]))
        return docs

    def pipe(self, texts, *, batch_size: int = 256, n_process: int = 1, as_tuples: bool = False):
        """Analyze a stream of raw texts: yields one :class:`~swvp.data.text.Document` per text, in order, as
        :meth:`analyze` would (spaCy's ``nlp.pipe``).

        ``texts``: any iterable of str, read lazily, ``batch_size`` texts at a time (each batch analyzed in one
        call, :meth:`analyze_texts`); ``n_process``: worker processes sharing this pipeline (forked once it is in
        memory; -1: one per core), the documents the same for any number; ``as_tuples``: the items are
        ``(text, context)`` pairs and ``(document, context)`` pairs come out.
        """
        from swvp.tasks.process_pool import ordered_map

        self._check_fitted()
        if isinstance(texts, (str, bytes)):
            raise TypeError("pipe takes an iterable of texts (a list, a generator ...); for one text: analyze(text)")
        if isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        jobs = (os.cpu_count() or 1) if n_process == -1 else n_process
        if isinstance(jobs, bool) or int(jobs) != jobs or jobs < 1:
            raise ValueError(f"n_process must be a positive integer or -1, got {n_process!r}")
        contexts: deque = deque()  # kept here, in step with the batches (a context may not pickle)

        def batches():
            for texts_, contexts_ in _batches(texts, int(batch_size), as_tuples):
                contexts.append(contexts_)
                yield texts_

        for docs in ordered_map(_analyze_texts, batches(), state=self, jobs=int(jobs)):
            context = contexts.popleft()
            if as_tuples:
                yield from zip(docs, context)
            else:
                yield from docs

    def parse_files(self, paths, output_dir, *, client=None, input: str = "raw", n_process: int = 1):
        """Analyze files into ``output_dir`` (created if missing), one CoNLL-U file per input named after it
        (``a.txt`` → ``a.conllu``; :func:`swvp.tasks.dask_parsing.output_paths`), each what ``swvp parse`` writes
        for it; returns the output paths.

        Every file is read and written as it goes (memory does not grow with the files); ``input``: ``"raw"``,
        ``"tokenized"`` or ``"conllu"``. ``client``: a ``distributed.Client`` or a Dask scheduler address —
        files are cut into parts at paragraph breaks and analyzed on the cluster's workers
        (:mod:`swvp.tasks.dask_parsing`); None: here, on ``n_process`` worker processes.
        """
        from pathlib import Path

        from swvp.tasks.dask_parsing import output_paths
        from swvp.tasks.dask_parsing import parse_files as on_cluster
        from swvp.tasks.streaming import DocumentStream

        self._check_fitted()
        paths = [os.fspath(p) for p in paths]
        if client is not None:
            return on_cluster(self, paths, output_dir, client=client, input=input)
        outputs = output_paths(paths, output_dir)
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        stream = DocumentStream(self, input=input, jobs=n_process)
        for path, out in zip(paths, outputs):
            stream.run([path], out)
        return outputs

    def annotate(self, doc: Document) -> Document:
        """Fill every column the pipeline predicts (FEATS, UPOS, XPOS, LEMMA, HEAD, DEPREL) of ``doc``'s words, in
        place, keeping its sentences and tokens; returns ``doc``."""
        self._check_fitted()
        stages = [stage for stage in self.stages_.values() if not makes_tokens(stage)]
        for part in _sentence_groups(doc.sentences, ANNOTATE_CHARS):
            group = doc if len(part) == len(doc.sentences) else Document(part)
            for stage in stages:
                stage.annotate(group)
        return doc

    # -- persistence -------------------------------------------------------------------------------------------
    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """The stages' headers and arrays. No timings (the stages' CPU seconds, each epoch's seconds): a model file
        is a function of its data and options, so that a resumed run writes the bytes an uninterrupted one does."""
        meta = {"stages": {}, "skipped": self.skipped_}
        arrays = {}
        for name, est in self.stages_.items():
            smeta, sarrays = est.file_contents()
            if isinstance(smeta.get("history"), list):
                smeta["history"] = [{k: v for k, v in h.items() if k != "seconds"} if isinstance(h, dict) else h
                                    for h in smeta["history"]]
            meta["stages"][name] = {"kind": stage_kind(est), "header": smeta}
            arrays.update({f"{name}/{k}": v for k, v in sarrays.items()})
        return meta, arrays

    def _set_state(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        stages = meta["stages"]
        if not isinstance(stages, dict):
            raise ValueError("stages must be an object: stage name -> its kind and header")
        self.stages_ = {}
        for name, entry in stages.items():
            kind = entry["kind"]
            cls = stage_class(kind)
            if cls is None:
                raise ValueError(f"stage {name}: unknown stage kind {kind!r} (a stage class registered with "
                                 f"swvp.register_stage must be imported before the pipeline is loaded)")
            if not fills(name, kind):
                raise ValueError(f"stage {name}: a {kind!r} model cannot fill it")
            prefix = name + "/"
            sarrays = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
            try:
                self.stages_[name] = cls.from_file_contents(entry["header"], sarrays, f"stage {name}")
            except ModelFormatError as err:
                raise ValueError(str(err)) from err
        self.stage_cpu_seconds_ = dict(meta.get("stage_cpu_seconds", {}))  # files written before they left it
        self.skipped_ = dict(meta.get("skipped", {}))
