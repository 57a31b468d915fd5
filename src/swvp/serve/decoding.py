"""Requests analyzed off the event loop, several at a time: :func:`run_jobs` turns a list of
:class:`~swvp.serve.udpipe_api.Job` into their answers, in a thread of this process (:class:`ThreadDecoder`) or in
worker processes forked once the models are loaded (:class:`PoolDecoder`, on :mod:`swvp.tasks.process_pool`), so
that the server answers other requests meanwhile.

*The same analysis as* ``swvp parse``. A request's bytes are read as a file's (:func:`swvp.tasks.streaming.
read_batches` over a :class:`~swvp.data.textio.BytesInput`), analyzed by
:func:`~swvp.tasks.streaming.analyze_batches` and written by :func:`~swvp.tasks.streaming.conllu_text`: the CoNLL-U
result is what ``swvp parse --model PATH --input raw|conllu|tokenized`` writes for a file holding the same bytes.

*Batching.* A worker that is free takes every request waiting for it (up to ``BATCH_BYTES`` of text, at least one
request) and analyzes them in one call of each stage (``analyze_batches``: the same documents as one call each). No
request waits for a batch to fill: only those already waiting are joined, so a lone request goes at once, while
under load the cost of a call (large for short texts) is paid once for many. A request whose text is bad is
answered 400 on its own; if the joined analysis fails, each request is analyzed alone.

*Bounds.* At most ``workers + queue`` requests are in progress (waiting or being analyzed); one more is refused at
once (503) rather than queued without bound. A request past its time limit is answered 504: dropped if it was still
waiting; if it was being analyzed, that analysis runs to its end unseen (a running decode cannot be stopped
halfway) and counts against the bound until then.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from swvp.data.paragraphs import RawTextDecoder
from swvp.data.textio import BytesInput
from swvp.exceptions import DataError
from swvp.serve.udpipe_api import Job, RequestError, format_sentences, runs_with, vertical_to_horizontal
from swvp.tasks.process_pool import pool_processes, run_in_pool, start_pool, stop_pool
from swvp.tasks.streaming import analyze_batches, conllu_text, read_batches

__all__ = ["BATCH_BYTES", "PoolDecoder", "ThreadDecoder", "run_jobs", "stage_view"]

log = logging.getLogger("swvp.serve")
#: the name a request's text goes by in error messages (``data:3: ...``)
DATA_NAME = "data"
#: requests waiting for a worker are joined into one analysis up to this many bytes of text
BATCH_BYTES = 1 << 16
INTERNAL_ERROR = "An internal error occurred during processing (the server's log has the details)."
_VIEWS: dict[tuple[int, tuple[str, ...]], object] = {}


def stage_view(pipeline, components: tuple[str, ...]):
    """``pipeline`` running only the stages of ``components`` (UDPipe's tokenizer / tagger / parser): the pipeline
    itself when that is all of them, else a shallow copy sharing its stages (cached)."""
    keep = {name for name, stage in pipeline.stages_.items() if any(runs_with(stage, c) for c in components)}
    if keep >= set(pipeline.stages_):
        return pipeline
    key = (id(pipeline), tuple(sorted(keep)))
    view = _VIEWS.get(key)
    if view is None:
        view = copy.copy(pipeline)
        view.stages_ = {name: stage for name, stage in pipeline.stages_.items() if name in keep}
        _VIEWS[key] = view
    return view


def _read(job: Job) -> list:
    """The batches of a request's text, read as ``swvp parse`` reads a file of its bytes (bad data: DataError or
    RequestError 400)."""
    data = job.data
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:  # named as swvp parse names it in raw text: line and byte offset of the first bad byte
        decoder = RawTextDecoder(DATA_NAME)
        decoder.feed(data)
        decoder.end()
        raise
    kind = job.input
    if kind == "vertical":
        data, kind = vertical_to_horizontal(data.decode("utf-8")).encode("utf-8"), "tokenized"
    elif kind == "tokenized" and b"\xc2\xa0" in data:
        line = data[:data.index(b"\xc2\xa0")].count(b"\n") + 1
        raise RequestError(400, f"{DATA_NAME}:{line}: horizontal input: a no-break space (U+00A0, UDPipe's space "
                                "inside a token): swvp's tokens hold no spaces.")
    return list(read_batches(BytesInput(DATA_NAME, data), kind))


def _answer(job: Job, docs: list) -> bytes:
    if job.output == "conllu":
        result = conllu_text(docs)
    else:
        result = "".join(format_sentences(doc.sentences, job.output, job.paragraphs, first=not i)
                         for i, doc in enumerate(docs))
    answer = {"model": job.model, "acknowledgements": list(job.acknowledgements), "result": result}
    return json.dumps(answer, ensure_ascii=False).encode("utf-8")


def _failed(err: BaseException) -> RequestError:
    if isinstance(err, RequestError):
        return err
    if isinstance(err, DataError):
        return RequestError(400, str(err))
    log.error("swvp serve: a request failed", exc_info=err)
    return RequestError(500, INTERNAL_ERROR)


def run_jobs(models: dict, jobs: list[Job]) -> list[bytes | RequestError]:
    """The answer to each job, in order: its JSON (``{"model", "acknowledgements", "result"}``, UTF-8), or the
    RequestError to answer (400 for bad data). ``models``: name → Pipeline. The jobs of one model and stages are
    analyzed together (see the module docstring). A module-level function: worker processes find it by name."""
    answers: list = [None] * len(jobs)
    groups: dict[int, list] = {}
    for i, job in enumerate(jobs):
        try:
            batches = _read(job)
        except Exception as err:  # noqa: BLE001 - each request answered on its own
            answers[i] = _failed(err)
            continue
        model = stage_view(models[job.model], job.components)
        groups.setdefault(id(model), []).append((i, model, batches))
    for members in groups.values():
        model = members[0][1]
        try:
            docs = analyze_batches(model, [b for _, _, batches in members for b in batches]) if len(members) > 1 \
                else None
        except Exception:  # noqa: BLE001 - analyzed one by one below, so that a failure is pinned on its request
            docs = None
        at = 0
        for i, _, batches in members:
            try:
                own = docs[at:at + len(batches)] if docs is not None else analyze_batches(model, batches)
                answers[i] = _answer(jobs[i], own)
            except Exception as err:  # noqa: BLE001
                answers[i] = _failed(err)
            at += len(batches)
    return answers


@dataclass(eq=False)
class _Waiting:
    job: Job
    future: asyncio.Future
    size: int = field(init=False)

    def __post_init__(self) -> None:
        self.size = len(self.job.data)


class _Decoder:
    """What both decoders share: the queue, the batches, the bound on requests in progress and the time limit."""

    def __init__(self, models: dict, workers: int, queue: int):
        self.models, self.workers, self.queue = models, int(workers), int(queue)
        self.in_progress = 0
        self._waiting: deque[_Waiting] = deque()
        self._idle = self.workers
        self.batches = self.batched_requests = 0

    @property
    def capacity(self) -> int:
        return self.workers + self.queue

    def _submit(self, jobs: list[Job]) -> tuple[Future, object]:
        """The future of ``run_jobs(models, jobs)``, and what runs it (the pool a failure is pinned on)."""
        raise NotImplementedError

    async def run(self, job: Job, timeout: float | None) -> bytes:
        """The answer to ``job``: 503 when ``capacity`` requests are in progress, 504 past ``timeout`` seconds."""
        if self.in_progress >= self.capacity:
            raise RequestError(503, f"Busy: {self.in_progress} requests are being analyzed or waiting; try again "
                                    "later.")
        entry = _Waiting(job, asyncio.get_running_loop().create_future())
        self._waiting.append(entry)
        self.in_progress += 1
        self._dispatch()
        try:
            return await asyncio.wait_for(asyncio.shield(entry.future), timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError) as err:
            if entry in self._waiting:  # not started: dropped (a running one finishes unseen)
                self._waiting.remove(entry)
                self.in_progress -= 1
            entry.future.cancel()
            if isinstance(err, asyncio.CancelledError):
                raise
            raise RequestError(504, f"The analysis did not finish within the time limit of {timeout:g} s.") from None

    def _dispatch(self) -> None:
        """Give the waiting requests to the idle workers, joined into batches."""
        loop = asyncio.get_running_loop()
        while self._idle > 0 and self._waiting:
            batch = [self._waiting.popleft()]
            size = batch[0].size
            while self._waiting and size + self._waiting[0].size <= BATCH_BYTES:
                size += self._waiting[0].size
                batch.append(self._waiting.popleft())
            try:
                future, runner = self._submit([e.job for e in batch])
            except Exception as err:  # noqa: BLE001 - no worker could be started: these requests fail, one line each
                self.in_progress -= len(batch)
                for e in batch:
                    if not e.future.done():
                        e.future.set_exception(_failed(err))
                continue
            self._idle -= 1
            self.batches += 1
            self.batched_requests += len(batch)
            future.add_done_callback(lambda f, batch=batch, runner=runner: loop.call_soon_threadsafe(
                self._done, batch, f, runner))

    def _done(self, batch: list[_Waiting], future: Future, runner: object) -> None:
        self._idle += 1
        self.in_progress -= len(batch)
        try:
            answers = future.result()
        except BrokenProcessPool:
            self._broken(runner)
            answers = [RequestError(503, "A worker process died during the analysis (killed, or out of memory); "
                                         "the workers are started again: retry the request.")] * len(batch)
        except BaseException as err:  # noqa: BLE001 - answered, not raised in the event loop
            answers = [_failed(err)] * len(batch)
        for entry, answer in zip(batch, answers, strict=True):
            if entry.future.done():  # past its time limit
                continue
            if isinstance(answer, BaseException):
                entry.future.set_exception(answer)
            else:
                entry.future.set_result(answer)
        self._dispatch()

    def _broken(self, runner: object) -> None:
        pass

    def stats(self) -> dict:
        return {"in_progress": self.in_progress, "waiting": len(self._waiting), "limit": self.capacity,
                "batches": self.batches, "requests_batched": self.batched_requests}

    def health(self) -> dict:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class ThreadDecoder(_Decoder):
    """``--workers 1``: the analyses run in one thread of the server's process, a batch at a time."""

    def __init__(self, models: dict, *, queue: int = 16):
        super().__init__(models, 1, queue)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="swvp-decode")

    def _submit(self, jobs: list[Job]) -> tuple[Future, object]:
        return self._executor.submit(run_jobs, self.models, jobs), self._executor

    def health(self) -> dict:
        return {"kind": "thread", "configured": 1, "alive": 1}

    def close(self) -> None:
        self._executor.shutdown(wait=True)


class PoolDecoder(_Decoder):
    """``--workers N``: N worker processes forked once the models are loaded (their pages shared), a batch each at
    a time; a pool whose worker died is started again."""

    def __init__(self, models: dict, workers: int, *, queue: int = 16):
        super().__init__(models, workers, queue)
        self._pool = None
        self.restarts = 0

    def start(self) -> None:
        if self._pool is None:
            self._pool = start_pool(self.models, self.workers, service=True)

    def _submit(self, jobs: list[Job]) -> tuple[Future, object]:
        self.start()
        try:
            return run_in_pool(self._pool, run_jobs, jobs), self._pool
        except BrokenProcessPool:  # a worker died between requests
            self._broken(self._pool)
            self.start()
            return run_in_pool(self._pool, run_jobs, jobs), self._pool

    def _broken(self, runner: object) -> None:
        if runner is self._pool:  # not a pool started again since
            log.error("swvp serve: a worker process died; starting the workers again")
            stop_pool(self._pool, wait=False)
            self._pool = None
            self.restarts += 1

    def health(self) -> dict:
        procs = pool_processes(self._pool) if self._pool is not None else []
        return {"kind": "processes", "configured": self.workers, "alive": sum(p.is_alive() for p in procs),
                "restarts": self.restarts}

    def close(self) -> None:
        if self._pool is not None:
            stop_pool(self._pool, wait=True)
            self._pool = None
