"""The raw-text pipeline at run time (issue 33, items 3-6): streaming memory and first-output latency, ``--jobs``,
a Dask LocalCluster, and ``Pipeline.pipe``'s CPU per short text.

```
.venv/bin/python benchmarks/runtime_pipeline.py --part streaming [--sizes 0.1,50] [--baseline-src DIR]
.venv/bin/python benchmarks/runtime_pipeline.py --part jobs [--mb 5] [--repeats 2]
.venv/bin/python benchmarks/runtime_pipeline.py --part dask [--mb 5]
.venv/bin/python benchmarks/runtime_pipeline.py --part pipe [--texts 1000] [--baseline-src DIR]
```

Every part uses a trained default pipeline (``--model``, default ``/work/models/el_gdt.npz`` or
``$SWVP_BENCH_MODEL``) and its test set's raw text (``--text``, default the model's ``.test.txt`` beside it),
repeated to the size asked for (whole copies, then cut at a paragraph break). Each part writes
``results/runtime_<part>.json`` with the machine, the load averages around every run, and the figures:

* ``streaming`` — whole ``swvp parse`` processes on inputs of ``--sizes`` MB (default 0.1 and 50), standard output
  read by this script: peak RSS of the process (``os.wait4``), wall and CPU seconds, and when the first output byte
  arrived. ``--baseline-src DIR`` runs the same on another source tree (``PYTHONPATH=DIR``, e.g. the code before
  streaming: ``git archive <commit> src | tar -x -C DIR/..``) on ``--baseline-sizes``.
* ``jobs`` — ``swvp parse --jobs 1`` and ``--jobs 2`` on ``--mb`` MB, interleaved, ``--repeats`` times: words (word
  lines of the output) per wall second of the whole process (the model's load, one process either way, included)
  and after the first output (the analysis alone), the ratios of the best runs, CPU seconds, and the
  summed proportional set size (PSS: shared pages split among the processes sharing them) of the process and its
  workers, sampled every 0.2 s, against its RSS: a model shared by fork counts once; the CPU seconds of the parent
  alone (reading, numbering, writing; the last sample before it ended). Outputs compared byte for byte. Before and
  after, :func:`spin_calibration` records the speed-up the machine offers this session then (two busy loops
  against one): on a shared machine with autogroup scheduling, other sessions' work caps it.
* ``dask`` — :func:`swvp.tasks.dask_parsing.parse_files` on a ``LocalCluster`` of 1 and of 2 worker processes (one
  thread each): wall seconds of the call (the model's scatter included, and without it), words per second, the
  ratio; outputs compared with ``swvp parse``'s.
* ``pipe`` — ``--texts`` texts of about 10 words (the test text cut at every 10th whitespace), in one process after
  loading: CPU milliseconds per text of ``[analyze(t) for t in texts]`` and of ``list(pipe(texts))``, best of
  ``--repeats``, and the functions that took the most time per ``analyze`` call (cProfile, by own time).
  ``--baseline-src`` runs the ``analyze`` loop on another source tree too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _harness import RESULTS, load, log, meta, write_json

DEFAULT_MODEL = os.environ.get("SWVP_BENCH_MODEL", "/work/models/el_gdt.npz")
SWVP = [sys.executable, "-m", "swvp.cli.main"]


def repeated_text(src: Path, mb: float, dest: Path) -> Path:
    """``src``'s text repeated to ``mb`` megabytes (UTF-8), cut after the last paragraph that fits."""
    text = src.read_text(encoding="utf-8").rstrip("\n") + "\n\n"
    want = int(mb * 1e6)
    data = text.encode()
    copies = max(want // len(data), 0)
    out = data * copies
    if len(out) < want:
        rest = data[:want - len(out)]
        cut = rest.rfind(b"\n\n")
        out += rest[:cut + 2] if cut > 0 else b""
    if not out:
        out = data[:want]
        out = out[:out.rfind(b"\n\n") + 2] or data
    dest.write_bytes(out)
    return dest


def run_parse(model: str, inputs: list[Path], *, jobs: int = 1, pythonpath: str | None = None,
              sample_pss: bool = False) -> dict:
    """One whole ``swvp parse`` process, its standard output read here: wall and CPU seconds, peak RSS, the time of
    the first output byte, output bytes and words (and the peak summed PSS of its process tree)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    argv = [*SWVP, "parse", "--model", model, *map(str, inputs)] + (["--jobs", str(jobs)] if jobs > 1 else [])
    load0 = load()
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    pss = {"max_mb": 0.0, "rss_max_mb": 0.0}
    stop = threading.Event()
    if sample_pss:
        threading.Thread(target=_sample_pss, args=(proc.pid, pss, stop), daemon=True).start()
    first = None
    first_words = 0
    size = 0
    words = 0
    digest = _Digest()
    tail = b""
    while True:
        chunk = proc.stdout.read1(1 << 20)
        if not chunk:
            break
        if first is None:
            first = time.perf_counter() - t0
            first_words = None
        size += len(chunk)
        data = tail + chunk
        cut = data.rfind(b"\n") + 1
        words += len(_WORD_LINE.findall(data[:cut]))
        if first_words is None:
            first_words = words
        tail = data[cut:]
        digest.update(chunk)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    stop.set()
    err = proc.stderr.read().decode(errors="replace")
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        raise RuntimeError(f"{argv} exited {rc}: {err}")
    out = {"argv": [str(a) for a in argv[2:]], "jobs": jobs, "wall_s": round(wall, 2),
           "cpu_s": round(usage.ru_utime + usage.ru_stime, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
           "first_output_s": None if first is None else round(first, 2), "output_bytes": size, "words": words,
           "words_per_wall_s": round(words / wall, 1),
           # after the first output (the model loaded, the first batch out): the rate of the analysis itself
           "words_per_wall_s_after_first_output": None if first is None or wall <= first else
           round((words - first_words) / (wall - first), 1),
           "sha256": digest.hexdigest(), "load_before": load0,
           "load_after": load()}
    if sample_pss:
        out["peak_pss_sum_mb"] = round(pss["max_mb"], 1)
        out["peak_rss_sum_mb"] = round(pss["rss_max_mb"], 1)
        out["parent_cpu_s_last_sample"] = round(pss.get("parent_cpu_s", 0.0), 2)
    return out


_WORD_LINE = re.compile(rb"^[0-9]+\t", re.MULTILINE)


class _Digest:
    def __init__(self):
        import hashlib

        self.h = hashlib.sha256()

    def update(self, b: bytes) -> None:
        self.h.update(b)

    def hexdigest(self) -> str:
        return self.h.hexdigest()


def _sample_pss(pid: int, out: dict, stop: threading.Event) -> None:
    """Every 0.2 s: the summed PSS and RSS of ``pid`` and its descendants (from /proc/*/smaps_rollup)."""
    import psutil

    while not stop.is_set():
        try:
            procs = [psutil.Process(pid)]
            procs += procs[0].children(recursive=True)
            t = procs[0].cpu_times()
            out["parent_cpu_s"] = t.user + t.system  # the parent alone: reading, numbering, writing
            pss = rss = 0.0
            for p in procs:
                try:
                    m = p.memory_full_info()
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                pss += m.pss / 2**20
                rss += m.rss / 2**20
            out["max_mb"] = max(out["max_mb"], pss)
            out["rss_max_mb"] = max(out["rss_max_mb"], rss)
        except psutil.NoSuchProcess:
            return
        stop.wait(0.2)


# --------------------------------------------------------------------------------------------------- parts


def part_streaming(args, tmp: Path) -> dict:
    runs = []
    for mb in args.sizes:
        path = repeated_text(args.text, mb, tmp / f"in-{mb}.txt")
        log(f"streaming: {path.stat().st_size / 1e6:.2f} MB ...")
        r = run_parse(args.model, [path])
        r["input_mb"] = round(path.stat().st_size / 1e6, 3)
        r["code"] = "this tree"
        runs.append(r)
        log(f"  {r}")
    if args.baseline_src:
        for mb in args.baseline_sizes:
            path = repeated_text(args.text, mb, tmp / f"in-{mb}.txt")
            log(f"streaming baseline ({args.baseline_src}): {path.stat().st_size / 1e6:.2f} MB ...")
            r = run_parse(args.model, [path], pythonpath=args.baseline_src)
            r["input_mb"] = round(path.stat().st_size / 1e6, 3)
            r["code"] = f"baseline {args.baseline_name}"
            runs.append(r)
            log(f"  {r}")
    ours = [r for r in runs if r["code"] == "this tree"]
    summary = {}
    if len(ours) >= 2:
        small, large = min(ours, key=lambda r: r["input_mb"]), max(ours, key=lambda r: r["input_mb"])
        summary = {"small_mb": small["input_mb"], "large_mb": large["input_mb"],
                   "peak_rss_small_mb": small["peak_rss_mb"], "peak_rss_large_mb": large["peak_rss_mb"],
                   "peak_rss_growth_mb": round(large["peak_rss_mb"] - small["peak_rss_mb"], 1),
                   "target_growth_mb": 100, "first_output_large_s": large["first_output_s"],
                   "wall_large_s": large["wall_s"]}
    return {"runs": runs, "summary": summary}


def part_jobs(args, tmp: Path) -> dict:
    path = repeated_text(args.text, args.mb, tmp / "in.txt")
    calibration = [spin_calibration()]
    log(f"jobs: CPU available to 1 and 2 processes of this session: {calibration[0]}")
    runs = []
    for rep in range(args.repeats):
        for jobs in (1, 2):
            log(f"jobs: repeat {rep + 1}, --jobs {jobs} on {path.stat().st_size / 1e6:.2f} MB ...")
            r = run_parse(args.model, [path], jobs=jobs, sample_pss=True)
            r["repeat"] = rep + 1
            runs.append(r)
            log(f"  {r}")
    calibration.append(spin_calibration())
    log(f"jobs: CPU available to 1 and 2 processes of this session: {calibration[1]}")
    best = {j: max(r["words_per_wall_s"] for r in runs if r["jobs"] == j) for j in (1, 2)}
    steady = {j: max(r["words_per_wall_s_after_first_output"] for r in runs if r["jobs"] == j) for j in (1, 2)}
    same = len({r["sha256"] for r in runs}) == 1
    return {"input_mb": round(path.stat().st_size / 1e6, 3), "runs": runs, "spin_before_after": calibration,
            "summary": {"available_ratio_2_over_1_before_after": [c["available_ratio_2_over_1"] for c in calibration],
                        "best_words_per_wall_s": best, "ratio_2_over_1": round(best[2] / best[1], 3),
                        "best_words_per_wall_s_after_first_output": steady,
                        "ratio_2_over_1_after_first_output": round(steady[2] / steady[1], 3),
                        "target_ratio": 1.8, "outputs_identical": same,
                        "ratios_per_repeat": [round(next(r["words_per_wall_s"] for r in runs if r["repeat"] == k
                                                         and r["jobs"] == 2)
                                                    / next(r["words_per_wall_s"] for r in runs if r["repeat"] == k
                                                           and r["jobs"] == 1), 3)
                                              for k in range(1, args.repeats + 1)]}}


def part_dask(args, tmp: Path) -> dict:
    from distributed import Client, LocalCluster

    from swvp.tasks import load as load_model
    from swvp.tasks.dask_parsing import parse_files

    path = repeated_text(args.text, args.mb, tmp / "in.txt")
    calibration = [spin_calibration()]
    local = run_parse(args.model, [path])
    log(f"dask: local swvp parse {local}")
    model = load_model(args.model)
    runs = []
    for rep in range(args.repeats):
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                              dashboard_address=":0") as cluster, Client(cluster) as client:
                client.wait_for_workers(workers)
                load0 = load()
                t0 = time.perf_counter()
                fut = client.scatter(model, broadcast=True, hash=False)
                scatter = time.perf_counter() - t0
                fut.release()
                out_dir = tmp / f"dask{workers}"
                t0 = time.perf_counter()
                [out] = parse_files(model, [path], out_dir, client=client)
                wall = time.perf_counter() - t0
                import hashlib

                data = out.read_bytes()
                r = {"workers": workers, "repeat": rep + 1, "wall_s": round(wall, 2),
                     "scatter_alone_s": round(scatter, 2), "words": len(_WORD_LINE.findall(data)),
                     "identical_to_local": hashlib.sha256(data).hexdigest() == local["sha256"],
                     "load_before": load0, "load_after": load()}
                r["words_per_wall_s"] = round(r["words"] / wall, 1)
                runs.append(r)
                log(f"  {r}")
    calibration.append(spin_calibration())
    best = {w: max(r["words_per_wall_s"] for r in runs if r["workers"] == w) for w in (1, 2)}
    return {"input_mb": round(path.stat().st_size / 1e6, 3), "local": local, "runs": runs,
            "spin_before_after": calibration,
            "summary": {"available_ratio_2_over_1_before_after": [c["available_ratio_2_over_1"] for c in calibration],
                        "best_words_per_wall_s": best, "ratio_2_over_1": round(best[2] / best[1], 3),
                        "target_ratio": 1.8, "outputs_identical": all(r["identical_to_local"] for r in runs)}}


PIPE_CHILD = r'''
import cProfile, io, json, pstats, sys, time
from swvp.tasks import load
model = load(sys.argv[1])
texts = json.loads(open(sys.argv[2], encoding="utf-8").read())
repeats, do_pipe = int(sys.argv[3]), sys.argv[4] == "1"
def cpu_per_text(fn):
    fn(texts[:20])
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time(); fn(texts); best = min(best, time.process_time() - t0)
    return 1000 * best / len(texts)
out = {"analyze_loop_ms_per_text": cpu_per_text(lambda ts: [model.analyze(t) for t in ts])}
if do_pipe:
    out["pipe_ms_per_text"] = cpu_per_text(lambda ts: list(model.pipe(ts)))
    out["pipe_batch_1000_ms_per_text"] = cpu_per_text(lambda ts: list(model.pipe(ts, batch_size=1000)))
prof = cProfile.Profile()
prof.enable()
for t in texts[:200]:
    model.analyze(t)
prof.disable()
s = io.StringIO()
stats = pstats.Stats(prof, stream=s)
rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:12]
out["profile_top_own_time_ms_per_call"] = [
    {"function": f"{k[0].split('/src/')[-1]}:{k[1]}({k[2]})", "ms_per_analyze": round(1000 * v[2] / 200, 3)}
    for k, v in rows]
print(json.dumps(out))
'''


def part_pipe(args, tmp: Path) -> dict:
    words = args.text.read_text(encoding="utf-8").split()
    texts = [" ".join(words[i:i + 10]) for i in range(0, 10 * args.texts, 10)]
    texts = texts[:args.texts]
    tpath = tmp / "texts.json"
    tpath.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    child = tmp / "pipe_child.py"
    child.write_text(PIPE_CHILD, encoding="utf-8")
    out = {"texts": len(texts), "words_per_text": 10}
    for name, src, pipe in (("this tree", None, True), ("baseline", args.baseline_src, False)):
        if name == "baseline" and not src:
            continue
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        if src:
            env["PYTHONPATH"] = src
        load0 = load()
        proc = subprocess.run([sys.executable, str(child), args.model, str(tpath), str(args.repeats),
                               "1" if pipe else "0"], capture_output=True, text=True, env=env, check=True)
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        r.update({"code": name if not src else f"baseline {args.baseline_name}", "load_before": load0,
                  "load_after": load()})
        out[name] = r
        log(f"pipe: {name}: {r}")
    return out


SPIN = "import time\nt0 = time.time(); c0 = time.process_time()\nwhile time.time() - t0 < {s}: pass\n" \
       "print(time.process_time() - c0)"


def spin_calibration(seconds: float = 5.0) -> dict:
    """What parallel speed-up this session can get now: CPU seconds one busy-looping process gets in ``seconds`` of
    wall time, and what two get together (on free cores: twice as much; with other sessions busy and autogroup
    scheduling on, the same)."""
    def spin(n: int) -> float:
        procs = [subprocess.Popen([sys.executable, "-c", SPIN.format(s=seconds)], stdout=subprocess.PIPE, text=True)
                 for _ in range(n)]
        return sum(float(p.communicate()[0]) for p in procs)

    one, two = spin(1), spin(2)
    return {"seconds": seconds, "cpu_one_process_s": round(one, 2), "cpu_two_processes_s": round(two, 2),
            "available_ratio_2_over_1": round(two / one, 3)}


def _scheduler_note() -> dict:
    """Whether Linux's autogroup scheduling is on, and the busiest other process groups now: with it on, the CPU is
    shared equally between sessions first, so N worker processes of one run share one session's part of a busy
    machine — a wall-clock speed-up over one process shows only when the other sessions leave cores idle."""
    note: dict = {}
    try:
        note["autogroup_enabled"] = open("/proc/sys/kernel/sched_autogroup_enabled").read().strip() == "1"
    except OSError:
        note["autogroup_enabled"] = None
    try:
        import psutil

        def cpu_by_group() -> dict:  # each process's CPU % since the previous call, summed per autogroup
            busy: dict = {}
            for p in psutil.process_iter(["pid"]):
                try:
                    group = open(f"/proc/{p.pid}/autogroup").read().split()[0]
                    busy[group] = busy.get(group, 0.0) + p.cpu_percent(interval=None)
                except (OSError, psutil.Error, IndexError):
                    continue
            return busy

        cpu_by_group()  # the first call only starts every process's count
        time.sleep(1.0)
        busy = cpu_by_group()
        mine = open("/proc/self/autogroup").read().split()[0]
        note["this_group"] = mine
        note["other_groups_cpu_percent"] = {g: round(c) for g, c in busy.items() if g != mine and c >= 5}
    except Exception:  # noqa: BLE001 - a note, not a measurement
        pass
    return note


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--part", choices=["streaming", "jobs", "dask", "pipe"], required=True)
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--text", type=Path, default=None, help="raw text (default: the model's .test.txt beside it)")
    p.add_argument("--sizes", default="0.1,50", help="streaming: input sizes in MB")
    p.add_argument("--baseline-src", default=None, help="streaming/pipe: also run this source tree (PYTHONPATH)")
    p.add_argument("--baseline-name", default="baseline", help="what the baseline tree is (e.g. its commit)")
    p.add_argument("--baseline-sizes", default="5", help="streaming: input sizes in MB for the baseline")
    p.add_argument("--mb", type=float, default=5.0, help="jobs/dask: input size in MB")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--texts", type=int, default=1000, help="pipe: number of texts")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    args.text = args.text or Path(args.model).with_suffix(".test.txt")
    args.sizes = [float(x) for x in args.sizes.split(",")]
    args.baseline_sizes = [float(x) for x in args.baseline_sizes.split(",")]
    m = meta(packages=("dask", "distributed"), model=args.model, text=str(args.text), part=args.part,
             scheduler=_scheduler_note())
    with tempfile.TemporaryDirectory(prefix="swvp-runtime-") as tmp:
        result = {"streaming": part_streaming, "jobs": part_jobs, "dask": part_dask, "pipe": part_pipe}[args.part](
            args, Path(tmp))
    m["load_end"] = load()
    path = Path(args.out) if args.out else RESULTS / f"runtime_{args.part}.json"
    write_json(path, {**m, **result})
    print(json.dumps(result.get("summary", result), indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
