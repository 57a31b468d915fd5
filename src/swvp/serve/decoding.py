"""Requests analyzed off the event loop: :func:`run_job` turns a :class:`~swvp.serve.udpipe_api.Job` into the
answer's JSON, in a thread of this process (:class:`ThreadDecoder`, one analysis at a time) or in worker processes
forked once the models are loaded (:class:`PoolDecoder`, on :mod:`swvp.tasks.process_pool`'s pool), so the
server keeps answering other requests meanwhile.

The analysis is ``swvp parse``'s (:func:`swvp.tasks.streaming.conllu_text` over the request's bytes,
:class:`~swvp.data.textio.BytesInput`): the same reading, batches, stages and numbering, so the CoNLL-U result is
what ``swvp parse --model PATH --input raw|conllu|tokenized`` writes for a file holding the same bytes.

Both decoders bound the work they accept: at most ``workers + queue`` requests in progress (running or waiting);
one more is refused at once (:class:`~swvp.serve.udpipe_api.RequestError` 503) rather than queued without bound.
A request that runs past its time limit is answered 504; its analysis runs to its end all the same (a running
decode cannot be stopped halfway) and counts against the bound until then.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from swvp.data.paragraphs import RawTextDecoder
from swvp.data.textio import BytesInput
from swvp.exceptions import DataError
from swvp.serve.udpipe_api import COMPONENTS, Job, RequestError, format_sentences, vertical_to_horizontal
from swvp.tasks.process_pool import pool_processes, run_in_pool, start_pool, stop_pool
from swvp.tasks.streaming import analyzed_documents, conllu_text

__all__ = ["PoolDecoder", "ThreadDecoder", "run_job", "stage_view"]

log = logging.getLogger("swvp.serve")
#: the name a request's text goes by in error messages (``data:3: ...``)
DATA_NAME = "data"
_VIEWS: dict[tuple[int, tuple[str, ...]], object] = {}


def stage_view(pipeline, components: tuple[str, ...]):
    """``pipeline`` running only the stages of ``components`` (UDPipe's tokenizer / tagger / parser): the pipeline
    itself when that is all of them, else a shallow copy sharing its stages (cached)."""
    keep = {stage for c in components for stage in COMPONENTS[c]}
    if keep >= set(pipeline.stages_):
        return pipeline
    key = (id(pipeline), tuple(sorted(keep)))
    view = _VIEWS.get(key)
    if view is None or view.stages_.keys() - pipeline.stages_.keys():
        view = copy.copy(pipeline)
        view.stages_ = {name: stage for name, stage in pipeline.stages_.items() if name in keep}
        _VIEWS[key] = view
    return view


def _check_utf8(data: bytes) -> None:
    """Bad UTF-8 named as ``swvp parse`` names it in raw text: line and byte offset of the first bad byte."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        decoder = RawTextDecoder(DATA_NAME)
        decoder.feed(data)
        decoder.end()
        raise  # the decoder raised DataError above; this is never reached


def run_job(models: dict, job: Job) -> bytes:
    """The JSON answer to ``job`` (``{"model", "acknowledgements", "result"}``, UTF-8), run on ``models`` (name →
    Pipeline); bad data raises :class:`RequestError` 400. A module-level function: worker processes find it by
    name."""
    try:
        data = job.data
        _check_utf8(data)
        kind = job.input
        if kind == "vertical":
            text = vertical_to_horizontal(data.decode("utf-8"))
            data, kind = text.encode("utf-8"), "tokenized"
        elif kind == "tokenized" and b"\xc2\xa0" in data:
            line = data[:data.index(b"\xc2\xa0")].count(b"\n") + 1
            raise RequestError(400, f"{DATA_NAME}:{line}: horizontal input: a no-break space (U+00A0, UDPipe's space "
                                    "inside a token): swvp's tokens hold no spaces.")
        model = stage_view(models[job.model], job.components)
        source = BytesInput(DATA_NAME, data)
        if job.output == "conllu":
            result = conllu_text(model, source, kind)
        else:
            parts = []
            for doc in analyzed_documents(model, source, kind):
                parts.append(format_sentences(doc.sentences, job.output, job.paragraphs, first=not parts))
            result = "".join(parts)
    except DataError as err:
        raise RequestError(400, str(err)) from None
    answer = {"model": job.model, "acknowledgements": list(job.acknowledgements), "result": result}
    return json.dumps(answer, ensure_ascii=False).encode("utf-8")


class _Decoder:
    """What both decoders share: the bound on requests in progress and the time limit."""

    def __init__(self, models: dict, workers: int, queue: int):
        self.models, self.workers, self.queue = models, int(workers), int(queue)
        self.in_progress = 0

    @property
    def capacity(self) -> int:
        return self.workers + self.queue

    def _submit(self, job: Job) -> tuple[Future, object]:
        """The job's future, and what runs it (the pool a failure is pinned on)."""
        raise NotImplementedError

    async def run(self, job: Job, timeout: float | None) -> bytes:
        """The answer to ``job``: 503 when ``capacity`` requests are in progress, 504 past ``timeout`` seconds."""
        if self.in_progress >= self.capacity:
            raise RequestError(503, f"Busy: {self.in_progress} requests are being analyzed or waiting; try again "
                                    "later.")
        loop = asyncio.get_running_loop()
        future, runner = self._submit(job)
        self.in_progress += 1

        def done(_: Future) -> None:  # when the analysis really ends (also after a 504)
            loop.call_soon_threadsafe(self._finished)

        future.add_done_callback(done)
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError) as err:
            future.cancel()  # a request still waiting is dropped; a running one finishes unseen
            if isinstance(err, asyncio.CancelledError):
                raise
            raise RequestError(504, f"The analysis did not finish within the time limit of {timeout:g} s.") from None
        except BrokenProcessPool:
            self._broken(runner)
            raise RequestError(503, "A worker process died during the analysis (killed, or out of memory); the "
                                    "workers are started again: retry the request.") from None

    def _finished(self) -> None:
        self.in_progress -= 1

    def _broken(self, runner: object) -> None:
        pass

    def health(self) -> dict:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class ThreadDecoder(_Decoder):
    """``--workers 1``: the analyses run one at a time in a thread of the server's process."""

    def __init__(self, models: dict, *, queue: int = 16):
        super().__init__(models, 1, queue)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="swvp-decode")

    def _submit(self, job: Job) -> tuple[Future, object]:
        return self._executor.submit(run_job, self.models, job), self._executor

    def health(self) -> dict:
        return {"kind": "thread", "configured": 1, "alive": 1}

    def close(self) -> None:
        self._executor.shutdown(wait=True)


class PoolDecoder(_Decoder):
    """``--workers N``: N worker processes forked once the models are loaded (their pages shared), one analysis
    each at a time; a pool whose worker died is started again at the next request."""

    def __init__(self, models: dict, workers: int, *, queue: int = 16):
        super().__init__(models, workers, queue)
        self._pool = None
        self.restarts = 0

    def start(self) -> None:
        if self._pool is None:
            self._pool = start_pool(self.models, self.workers, service=True)

    def _submit(self, job: Job) -> tuple[Future, object]:
        self.start()
        try:
            return run_in_pool(self._pool, run_job, job), self._pool
        except BrokenProcessPool:  # a worker died between requests
            self._broken(self._pool)
            self.start()
            return run_in_pool(self._pool, run_job, job), self._pool

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
