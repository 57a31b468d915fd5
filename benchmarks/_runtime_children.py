"""The in-process children of ``runtime.py``: one fresh process each, handing its timings back as ``RESULT {json}``
(``_pipeline_children.child_result``). Timings are ``[wall, CPU]`` seconds; CPU is ``time.process_time`` (every
thread of the process).

``python _runtime_children.py MODE SPEC_JSON``:

- ``swvp-inprocess``: import swvp, ``swvp.tasks.load(model)``, then one untimed call on the raw text (kernels load
  from numba's cache) and ``calls`` timed calls of the pipeline (``model(text)``: the CoNLL-U text). During the timed
  calls every stage's method is wrapped by a clock — ``tokenizer.tokenize``, ``tagger.annotate``,
  ``lemmatizer.annotate``, ``parser.parse`` on the loaded stage objects, and ``Document.to_conllu`` (writing) — so
  the stages are timed as the pipeline itself calls them, whatever its glue; a call inside another timed call counts
  for the inner one only; what no clock saw is ``other``. The CPU seconds of child processes that finished during a
  call (a worker pool) and the count of those still running after it are recorded beside. With ``profile``: one
  more call under cProfile (clocks removed, CPU clock), its statistics written as text there; with
  ``profile_load``: a second ``load`` likewise.
- ``udpipe-inprocess``: ``ufal.udpipe``: load, one untimed ``Pipeline.process``, ``calls`` timed ones; then one run
  stage by stage through the model's own calls (``newTokenizer`` → ``tag`` → ``parse`` → the CoNLL-U output
  format), each stage timed, and whether that run's output equals ``Pipeline.process``'s.
"""

from __future__ import annotations

import cProfile
import functools
import io
import json
import os
import pstats
import re
import resource
import sys
import threading
import time
from pathlib import Path

from _pipeline_children import child_result, sha256, since, stamp, udpipe_pipeline, udpipe_process

#: the method of each stage object the pipeline calls (swvp.tasks.pipeline.Pipeline.analyze / annotate)
SWVP_STAGE_METHODS = {"tokenizer": "tokenize", "tagger": "annotate", "lemmatizer": "annotate", "parser": "parse"}
WRITE = "write CoNLL-U"


def rss_mb() -> dict:
    """This process's resident memory now and at its peak (``VmRSS``, ``VmHWM``), in MB."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return {"rss_mb": out.get("VmRSS"), "peak_rss_mb": out.get("VmHWM")}


def children_cpu_s() -> float:
    """CPU seconds (user + sys) of this process's finished, waited-for child processes (a worker pool's, say)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def live_children() -> int:
    """Child processes of this one still running (their CPU time is in no clock of this process yet)."""
    me, n = str(os.getpid()), 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            n += stat.read_text().rsplit(")", 1)[1].split()[1] == me
        except (OSError, IndexError):
            continue
    return n


class StageClocks:
    """Wall and CPU seconds per stage of functions wrapped by :meth:`wrap`, exclusive of nested wrapped calls."""

    def __init__(self):
        self.local = threading.local()
        self.reset()

    def reset(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, name: str, fn):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            stack = self.local.__dict__.setdefault("stack", [])
            t0 = stamp()
            stack.append([0.0, 0.0])  # wall, CPU of the timed calls made inside this one
            try:
                return fn(*args, **kwargs)
            finally:
                wall, cpu = since(t0)
                inner = stack.pop()
                self.wall[name] = self.wall.get(name, 0.0) + wall - inner[0]
                self.cpu[name] = self.cpu.get(name, 0.0) + cpu - inner[1]
                self.calls[name] = self.calls.get(name, 0) + 1
                if stack:
                    stack[-1][0] += wall
                    stack[-1][1] += cpu
        return timed

    def snapshot(self, total: list[float]) -> dict:
        """{stage: [wall, CPU]} with ``other``: the call's total less every stage."""
        out = {k: [self.wall[k], self.cpu[k]] for k in self.wall}
        out["other"] = [total[0] - sum(self.wall.values()), total[1] - sum(self.cpu.values())]
        return out


def wrap_swvp_stages(model, clocks: StageClocks) -> tuple[list, list[str]]:
    """Put clocks on the loaded pipeline's stage methods and on ``Document.to_conllu``; (undo list, stages the
    clocks could not find)."""
    from swvp.data.text import Document

    undo, missing = [], []
    stages = getattr(model, "stages_", None) or {}
    for name, method in SWVP_STAGE_METHODS.items():
        est = stages.get(name)
        if est is None or not callable(getattr(est, method, None)):
            missing.append(f"{name}.{method}")
            continue
        setattr(est, method, clocks.wrap(name, getattr(est, method)))  # an instance attribute: the class is untouched
        undo.append((est, method, None))
    original = Document.to_conllu
    Document.to_conllu = clocks.wrap(WRITE, original)
    undo.append((Document, "to_conllu", original))
    return undo, missing


def unwrap(undo: list) -> None:
    for obj, name, original in undo:
        if original is None:
            delattr(obj, name)
        else:
            setattr(obj, name, original)


def short_path(filename: str) -> str:
    """A profile's file name from the package down (``swvp/tasks/pipeline.py``, ``heapq.py``), or as it is."""
    for marker in ("/site-packages/", "/src/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return re.sub(r"^.*/lib/python\d+\.\d+/", "", filename)


def profile_call(fn, path: str, top: int) -> dict:
    """Run ``fn`` under cProfile (CPU seconds); write the top ``top`` functions by total and by cumulative time to
    ``path``; the top functions by total time as records."""
    prof = cProfile.Profile(time.process_time)  # CPU seconds: the machine is shared, its wall clock is not ours
    t0 = stamp()
    prof.runcall(fn)
    total = since(t0)
    text = io.StringIO()
    stats = pstats.Stats(prof, stream=text)
    text.write(f"cProfile of one in-process call, timed in CPU seconds: {total[0]:.3f} s wall, {total[1]:.3f} s CPU "
               f"(profiler overhead included)\n\n== by total time (the function's own) ==\n")
    stats.sort_stats("tottime").print_stats(top)
    text.write("\n== by cumulative time ==\n")
    stats.sort_stats("cumulative").print_stats(top)
    Path(path).write_text(text.getvalue(), encoding="utf-8")
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]
    return {"path": path, "total_s": total,
            "top_tottime": [{"function": f"{short_path(f)}:{line}({name})", "ncalls": nc, "tottime_s": tt,
                             "cumtime_s": ct} for (f, line, name), (_, nc, tt, ct, _) in rows]}


def swvp_inprocess_child(spec: dict) -> None:
    t0 = stamp()
    import swvp.tasks

    import_s = since(t0)
    mem_import = rss_mb()
    t1 = stamp()
    model = swvp.tasks.load(spec["model"])
    load_s = since(t1)
    mem_load = rss_mb()
    text = Path(spec["input"]).read_text(encoding="utf-8")
    t2 = stamp()
    out = model(text)
    first_s = since(t2)
    if not isinstance(out, str):
        raise TypeError(f"the pipeline returned {type(out).__name__} on raw text, expected the CoNLL-U text (str)")
    clocks = StageClocks()
    undo, missing = wrap_swvp_stages(model, clocks)
    runs = []
    try:
        for _ in range(spec["calls"]):
            clocks.reset()
            kids = children_cpu_s()
            t = stamp()
            out = model(text)
            total = since(t)
            runs.append({"total_s": total, "stages_s": clocks.snapshot(total), "stage_calls": dict(clocks.calls),
                         "children_cpu_s": children_cpu_s() - kids, "live_children": live_children()})
    finally:
        unwrap(undo)
    mem_runs = rss_mb()  # before the profiles: their second model is not the pipeline's memory
    top = spec.get("profile_top", 40)
    profile = profile_call(lambda: model(text), spec["profile"], top) if spec.get("profile") else None
    load_profile = profile_call(lambda: swvp.tasks.load(spec["model"]), spec["profile_load"], top) \
        if spec.get("profile_load") else None
    child_result({"import_s": import_s, "load_s": load_s, "first_s": first_s, "runs": runs,
                  "unclocked": missing, "memory": {"after_import": mem_import, "after_load": mem_load,
                                                   "after_calls": mem_runs},
                  "output_sha256": sha256(out), "profile": profile, "load_profile": load_profile,
                  "pid": os.getpid()})


def udpipe_stage_run(model, text: str) -> tuple[dict, str]:
    """One analysis of ``text`` through the model's own calls, each stage timed: {stage: [wall, CPU]} and the
    CoNLL-U output."""
    import ufal.udpipe as u

    err = u.ProcessingError()
    t = stamp()
    tokenizer = model.newTokenizer(u.Model.DEFAULT)
    tokenizer.setText(text)
    sentences, s = [], u.Sentence()
    while tokenizer.nextSentence(s, err):
        sentences.append(s)
        s = u.Sentence()
    stages = {"tokenizer": since(t)}
    for name, call in (("tagger", model.tag), ("parser", model.parse)):
        t = stamp()
        for s in sentences:
            if not call(s, u.Model.DEFAULT, err):
                raise RuntimeError(f"UDPipe {name} failed: {err.message}")
        stages[name] = since(t)
    t = stamp()
    output = u.OutputFormat.newOutputFormat("conllu")
    out = "".join(output.writeSentence(s) for s in sentences) + output.finishDocument()
    stages[WRITE] = since(t)
    if err.occurred():
        raise RuntimeError(f"UDPipe failed: {err.message}")
    return stages, out


def udpipe_inprocess_child(spec: dict) -> None:
    t0 = stamp()
    model, pipe = udpipe_pipeline(spec["model"], "tokenize")
    load_s = since(t0)
    mem_load = rss_mb()
    text = Path(spec["input"]).read_text(encoding="utf-8")
    t1 = stamp()
    out = udpipe_process(pipe, text)
    first_s = since(t1)
    runs = []
    for _ in range(spec["calls"]):
        t = stamp()
        out = udpipe_process(pipe, text)
        runs.append({"total_s": since(t)})
    stages, staged_out = udpipe_stage_run(model, text)
    mem_runs = rss_mb()
    del pipe, model
    child_result({"load_s": load_s, "first_s": first_s, "runs": runs, "stage_run": {"stages_s": stages,
                  "same_output_as_pipeline": staged_out == out}, "memory": {"after_load": mem_load,
                                                                           "after_calls": mem_runs},
                  "output_sha256": sha256(out), "pid": os.getpid()})


CHILDREN = {"swvp-inprocess": swvp_inprocess_child, "udpipe-inprocess": udpipe_inprocess_child}

if __name__ == "__main__":
    CHILDREN[sys.argv[1]](json.loads(sys.argv[2]))
