"""The child processes of ``pipeline.py``: what runs inside each measured process.

``python _pipeline_children.py MODE SPEC_JSON``; a child hands its in-process timings back as one JSON line on
stdout prefixed ``RESULT``. Only the standard library and the system measured are imported (no numpy, no swvp for
UDPipe's children), so a whole-process measurement holds nothing but interpreter start-up beside that system.
Timings are ``[wall, CPU]`` seconds (``time.perf_counter``, ``time.process_time``).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

RESULT = "RESULT "


def stamp() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(t0: tuple[float, float], t1: tuple[float, float] | None = None) -> list[float]:
    t1 = stamp() if t1 is None else t1
    return [t1[0] - t0[0], t1[1] - t0[1]]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def child_result(obj: dict) -> None:
    """Hand ``obj`` back to the parent (one prefixed JSON line on stdout)."""
    print(RESULT + json.dumps(obj), flush=True)


def udpipe_read(path: str) -> list:
    """Sentences of a CoNLL-U file through UDPipe's own reader."""
    import ufal.udpipe as u

    fmt = u.InputFormat.newConlluInputFormat()
    fmt.setText(Path(path).read_text(encoding="utf-8"))
    err = u.ProcessingError()
    out, s = [], u.Sentence()
    while fmt.nextSentence(s, err):
        out.append(s)
        s = u.Sentence()
    if err.occurred():
        raise RuntimeError(f"UDPipe could not read {path}: {err.message}")
    return out


def udpipe_train_child(spec: dict) -> None:
    """Child: read train + dev with UDPipe's reader, ``Trainer.train`` with the given options, write the model."""
    import ufal.udpipe as u

    t0 = stamp()
    train, dev = udpipe_read(spec["train"]), udpipe_read(spec["dev"])
    t1 = stamp()
    err = u.ProcessingError()
    model = u.Trainer.train("morphodita_parsito", train, dev, spec["tokenizer"], spec["tagger"], spec["parser"], err)
    t2 = stamp()
    if err.occurred() or not model:
        raise RuntimeError(f"UDPipe training failed: {err.message}")
    Path(spec["model"]).write_bytes(model)
    child_result({"read_s": since(t0, t1), "train_call_s": since(t1, t2), "train_sentences": len(train),
                  "dev_sentences": len(dev)})


def udpipe_pipeline(model_path: str, input_format: str):
    """The loaded model and a pipeline over it (keep both alive: the pipeline does not own the model)."""
    import ufal.udpipe as u

    model = u.Model.load(model_path)
    if not model:
        raise RuntimeError(f"UDPipe cannot load {model_path}")
    return model, u.Pipeline(model, input_format, u.Pipeline.DEFAULT, u.Pipeline.DEFAULT, "conllu")


def udpipe_process(pipe, text: str) -> str:
    import ufal.udpipe as u

    err = u.ProcessingError()
    out = pipe.process(text, err)
    if err.occurred():
        raise RuntimeError(f"UDPipe failed: {err.message}")
    return out


def udpipe_run_child(spec: dict) -> None:
    """Child, whole process: load the model, read the input, process it, write the CoNLL-U output."""
    t0 = stamp()
    model, pipe = udpipe_pipeline(spec["model"], spec["input_format"])
    t1 = stamp()
    text = Path(spec["input"]).read_text(encoding="utf-8")
    t2 = stamp()
    out = udpipe_process(pipe, text)
    t3 = stamp()
    Path(spec["output"]).write_text(out, encoding="utf-8")
    del pipe, model
    child_result({"load_s": since(t0, t1), "read_s": since(t1, t2), "process_s": since(t2, t3),
                  "write_s": since(t3)})


def udpipe_inprocess_child(spec: dict) -> None:
    """Child: load the model, then time ``repeats`` calls on the input (after loading)."""
    t0 = stamp()
    model, pipe = udpipe_pipeline(spec["model"], spec["input_format"])
    load_s = since(t0)
    text = Path(spec["input"]).read_text(encoding="utf-8")
    runs, out = [], ""
    for _ in range(spec["repeats"]):
        t = stamp()
        out = udpipe_process(pipe, text)
        runs.append(since(t))
    del pipe, model
    child_result({"load_s": load_s, "runs_s": runs, "output_sha256": sha256(out)})



def swvp_inprocess_child(spec: dict) -> None:
    """Child: ``Pipeline.load(M)``, then time ``repeats`` calls on the raw text (the first one apart)."""
    from swvp.tasks.pipeline import Pipeline

    t0 = stamp()
    p = Pipeline.load(spec["model"])
    load_s = since(t0)
    text = Path(spec["input"]).read_text(encoding="utf-8")
    runs, out = [], ""
    for _ in range(spec["repeats"] + 1):
        t = stamp()
        out = p(text)
        runs.append(since(t))
    if not isinstance(out, str):
        raise TypeError(f"Pipeline(raw_text) returned {type(out).__name__}, expected the CoNLL-U text (str)")
    child_result({"load_s": load_s, "first_s": runs[0], "runs_s": runs[1:], "output_sha256": sha256(out)})




CHILDREN = {"udpipe-train": udpipe_train_child, "udpipe-run": udpipe_run_child,
            "udpipe-inprocess": udpipe_inprocess_child, "swvp-inprocess": swvp_inprocess_child}

if __name__ == "__main__":
    CHILDREN[sys.argv[1]](json.loads(sys.argv[2]))
