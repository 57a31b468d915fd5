"""Documents analyzed on a Dask cluster: ``swvp parse --dask-scheduler``, :meth:`Pipeline.parse_files
<swvp.tasks.pipeline.Pipeline.parse_files>` with a client, and :func:`analyze_partition` /
:func:`conllu_partition` for ``dask.bag``'s ``map_partitions``.

:func:`parse_files` reads each input here as it goes, cut at paragraph breaks (or between CoNLL-U sentences) into
parts of about ``part_chars`` characters (:func:`swvp.tasks.streaming.read_batches`); every part is a task that
analyzes it on a worker and sends back its CoNLL-U. The model is scattered to every worker once, before the first
task. Each input gets its own output file, written in order, part after part, as the parts before it are back —
byte for byte what ``swvp parse --model M INPUT -o OUTPUT`` writes here. At most ``window`` parts are in flight, so
memory here does not grow with the inputs.

A worker that dies mid-run loses nothing: the scheduler runs its tasks again on the other workers (a task is a pure
function of the model and the part), and a part is written here once, when its result arrives. Workers without
swvp stop the run with the one-line :class:`~swvp.exceptions.ClusterError` that training on a cluster gives
(:mod:`swvp.learn.mixing`). Ctrl-C or a failing output stops the run with every output holding whole sentences.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

from swvp.data.output import StreamOutput
from swvp.data.text import Document
from swvp.data.textio import PathLike, display_name
from swvp.exceptions import ClusterError
from swvp.learn.mixing import _raise_worker_error
from swvp.tasks.process_pool import submitted_in_order
from swvp.tasks.streaming import BATCH_CHARS, ConlluWriter, _batch_blocks, read_batches

__all__ = ["PART_CHARS", "ClusterParse", "analyze_partition", "conllu_partition", "output_paths", "parse_files"]

#: an input is cut into parts of about this many characters (whole paragraphs), one task each
PART_CHARS = 16 * BATCH_CHARS


def output_paths(paths: Iterable[PathLike], output_dir: PathLike, suffix: str = ".conllu") -> list[Path]:
    """Where each input's analysis goes: ``output_dir/<name without its .txt/.xz/.gz/.conllu endings><suffix>``
    (standard input: ``stdin<suffix>``); ValueError when two inputs would share an output."""
    out = []
    for p in paths:
        name = "stdin" if os.fspath(p) == "-" else Path(p).name
        for ending in (".xz", ".gz", ".txt", ".conllu"):
            if name.endswith(ending) and len(name) > len(ending):
                name = name[:-len(ending)]
        out.append(Path(output_dir) / (name + suffix))
    seen: dict[Path, PathLike] = {}
    for p, o in zip(paths, out):
        if o in seen:
            raise ValueError(f"{display_name(seen[o])} and {display_name(p)} would both be written to {o}: give "
                             "inputs distinct names")
        seen[o] = p
    return out


def _client(scheduler):
    """A ``distributed.Client`` (given, or connected to the address) and whether it is ours to close."""
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - depends on the environment
        raise ClusterError("parsing on a Dask cluster needs dask.distributed here: pip install 'swvp[dask]'"
                           ) from None
    if isinstance(scheduler, str):
        return Client(scheduler), True
    return scheduler, False


def _cluster_error(err: BaseException) -> None:
    """A worker without swvp → ClusterError (as in training); a task whose workers kept dying → ClusterError."""
    _raise_worker_error(err)
    if type(err).__name__ == "KilledWorker":
        raise ClusterError(f"the Dask workers running a part died too often ({err}): a part that kills its worker "
                           "(out of memory?), or workers going away") from None


class ClusterParse:
    """Inputs analyzed on a Dask cluster into one output file each (see the module docstring).

    ``ClusterParse(model, client).run(paths, outputs)``; ``client``: a ``distributed.Client`` or a scheduler
    address. After :meth:`run` — also when it stopped on Ctrl-C or an error — ``sentences`` is the number of whole
    sentences written, over every output, and ``done`` the outputs finished.
    """

    def __init__(self, model, client, *, input: str = "raw", part_chars: int = PART_CHARS, window: int | None = None):
        self.model, self.scheduler, self.input = model, client, input
        self.part_chars, self.window = int(part_chars), window
        self.sentences = 0
        self.done: list[Path] = []

    def run(self, paths: Iterable[PathLike], outputs: Iterable[PathLike]) -> list[Path]:
        paths, outputs = list(paths), [Path(o) for o in outputs]
        if len(paths) != len(outputs):
            raise ValueError(f"{len(paths)} inputs and {len(outputs)} outputs")
        self.sentences, self.done = 0, []
        client, owned = _client(self.scheduler)
        try:
            try:
                [model] = client.scatter([self.model], broadcast=True, hash=False)
            except Exception as err:
                _cluster_error(err)
                raise
            try:
                self._run(client, model, paths, outputs)
            finally:
                model.release()
        finally:
            if owned:
                client.close()
        return self.done

    def _window(self, client) -> int:
        if self.window:
            return int(self.window)
        threads = sum(w.get("nthreads", 1) for w in client.scheduler_info().get("workers", {}).values())
        return 2 * max(threads, 1) + 1

    def _run(self, client, model, paths: list[PathLike], outputs: list[Path]) -> None:
        parts = ((i, b) for i, p in enumerate(paths) for b in read_batches(p, self.input,
                                                                          batch_chars=self.part_chars))
        submitted = submitted_in_order(parts, lambda part: (part[0], client.submit(_batch_blocks, model, part[1],
                                                                                   pure=False)),
                                       self._window(client))
        current, out, writer = -1, None, None
        fut = None
        try:
            for i, fut in submitted:
                try:
                    blocks = fut.result()
                except Exception as err:
                    _cluster_error(err)
                    raise
                while current < i:  # inputs without any part get an empty output too
                    if out is not None:
                        self._finish(out, writer, outputs[current])
                    current += 1
                    out = StreamOutput(outputs[current])
                    writer = ConlluWriter(out)
                writer.write(blocks)
                self.sentences += len(blocks)
            if out is not None:
                self._finish(out, writer, outputs[current])
            for k in range(current + 1, len(outputs)):
                self._finish(StreamOutput(outputs[k]), None, outputs[k])
        except BaseException:
            submitted.close()  # no more parts submitted (those in flight are released with their futures)
            if fut is not None:
                fut.cancel()
            if out is not None and outputs[current] not in self.done:
                out.__exit__(*sys.exc_info())  # what was written stays, whole
            raise

    def _finish(self, out: StreamOutput, writer, path: Path) -> None:
        out.close()
        self.done.append(path)


def parse_files(model, paths: Iterable[PathLike], output_dir: PathLike, *, client, input: str = "raw",
                part_chars: int = PART_CHARS) -> list[Path]:
    """Analyze every input on the Dask cluster of ``client`` (a ``distributed.Client`` or a scheduler address)
    into ``output_dir`` (created if missing), one CoNLL-U file each (:func:`output_paths`); returns their paths.
    See the module docstring."""
    paths = list(paths)
    outputs = output_paths(paths, output_dir)
    Path(output_dir).mkdir(parents=True, exist_ok=True)
    return ClusterParse(model, client, input=input, part_chars=part_chars).run(paths, outputs)


# ---------------------------------------------------------------------------------------------- dask.bag


def analyze_partition(texts: Iterable[str], model) -> list[Document]:
    """One partition of a ``dask.bag`` of raw texts, analyzed by a pipeline (or tokenized by a tokenizer): a
    :class:`~swvp.data.text.Document` per text, in order —
    ``bag.map_partitions(analyze_partition, client.scatter(pipeline, broadcast=True))``."""
    from swvp.tasks.stages import analyze_texts

    return analyze_texts(model, list(texts))


def conllu_partition(texts: Iterable[str], model) -> list[str]:
    """:func:`analyze_partition` as CoNLL-U: each text's document, its sentences numbered from 1 (what
    ``Document.to_conllu`` writes)."""
    return [doc.to_conllu() for doc in analyze_partition(texts, model)]
