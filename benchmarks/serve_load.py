"""Load on ``swvp serve`` (issue 34 item 5): bounded clients on loopback post the paragraphs of a test text to
``/process`` for a fixed time; throughput against ``swvp parse --jobs N`` on the same text.

```
.venv/bin/python benchmarks/serve_load.py --model el_gdt.npz [--workers 2] [--clients 8] [--seconds 60]
.venv/bin/python benchmarks/serve_load.py --url http://127.0.0.1:8001 --text article.txt [--name el]
```

``--model PATH`` starts ``swvp serve --model NAME=PATH --port 0 --workers N`` as a subprocess (stopped with SIGTERM
at the end, its exit status recorded); ``--url`` uses a server already running — loopback addresses only, anything
else is refused. The text is ``--text``, else the model's ``<name>.test.txt`` beside it (``el_gdt.default.npz`` →
``el_gdt.default.test.txt``, then ``el_gdt.test.txt``); its paragraphs (split at empty lines) are the requests, each
client going through them in order from its own starting point, each request the whole pipeline
(``tokenizer=&tagger=&parser=``, urlencoded). Every client waits for its answer before it sends the next request,
so at most ``--clients`` requests are in flight; the clients stop sending at ``--seconds``.

Before the timed run, every paragraph is sent once (not timed): its answer is the reference the timed answers are
compared with (an answer of another length counts as an error) and gives its word count (word lines of the
CoNLL-U, ``^[0-9]+\\t``, as ``benchmarks/runtime_pipeline.py`` counts them). Recorded: requests, errors by kind,
words per wall second, latency percentiles (p50, p90, p99, max), the server's CPU seconds (its process and its
workers, from /proc), and its memory — RSS and PSS of each process and summed — after the warm-up, after 100 timed
requests and after 5,000 (or at the end, if fewer).

Then, the server stopped, ``swvp parse --jobs N`` runs on the same text repeated to about as many words as the
service analyzed, and at least ``--parse-min-words`` (``--parse-repeats`` times): its words per wall second of the
whole process and after its first output (the model loaded: the analysis alone, the stricter comparison for a
server whose models are loaded), and the ratio of the service's rate to the best of each.
:func:`runtime_pipeline.spin_calibration` before and after records how much of two cores this session could get
(other sessions' load caps it). The clients' own CPU seconds are recorded too: they run on the same machine.
Writes ``results/serve_load_<name>.json`` (name: ``--name``, else the model file's name up to its first dot).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

from _harness import RESULTS, load, log, meta, write_json
from runtime_pipeline import _scheduler_note, run_parse, spin_calibration

SWVP = [sys.executable, "-m", "swvp.cli.main"]
_WORD_LINE = re.compile(r"^[0-9]+\t", re.MULTILINE)
MAX_CLIENTS, MAX_SECONDS = 64, 600


# ------------------------------------------------------------------------------------------------ the server


def check_loopback(url: str) -> str:
    """``url`` if its host is a loopback address (or a name that resolves only to loopback ones); else SystemExit."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname
    if parts.scheme != "http" or not host:
        raise SystemExit(f"serve_load: --url must be http://HOST:PORT on this machine, got {url!r}")
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, parts.port or 80, type=socket.SOCK_STREAM)}
    except socket.gaierror as err:
        raise SystemExit(f"serve_load: {host}: {err.strerror}") from None
    if not addresses or not all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses):
        raise SystemExit(f"serve_load: {host} is not a loopback address ({', '.join(sorted(addresses))}): this load "
                         "client sends requests on this machine only")
    return url.rstrip("/")


def start_server(name: str, model: str, workers: int, log_path: Path) -> tuple[subprocess.Popen, str]:
    logf = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - the child's standard error, for its life
    proc = subprocess.Popen([*SWVP, "serve", "--model", f"{name}={model}", "--port", "0", "--workers", str(workers)],
                            stdout=subprocess.DEVNULL, stderr=logf, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        m = re.search(r"listening on (http://\S+)", log_path.read_text(encoding="utf-8"))
        if m:
            return proc, m.group(1)
        if proc.poll() is not None:
            raise SystemExit(f"serve_load: swvp serve ended with {proc.returncode}:\n{log_path.read_text()}")
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"serve_load: swvp serve did not start in 300 s:\n{log_path.read_text()}")


def _proc_tree(pid: int) -> list[int]:
    """``pid`` and its children (Linux /proc)."""
    out = [pid]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def _kb(path: str, field: str) -> int:
    with open(path) as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def server_memory(pid: int) -> dict:
    """RSS and PSS (MB) of the server's process and each worker, and their sums."""
    procs = []
    for p in _proc_tree(pid):
        try:
            procs.append({"pid": p, "rss_mb": round(_kb(f"/proc/{p}/status", "VmRSS:") / 1024, 1),
                          "pss_mb": round(_kb(f"/proc/{p}/smaps_rollup", "Pss:") / 1024, 1)})
        except OSError:
            continue
    return {"processes": procs, "rss_sum_mb": round(sum(p["rss_mb"] for p in procs), 1),
            "pss_sum_mb": round(sum(p["pss_mb"] for p in procs), 1)}


def server_cpu(pid: int) -> dict:
    """CPU seconds (user + system) of the server's process and of its live workers."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {"server_process": 0.0, "workers": 0.0}
    for p in _proc_tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out["server_process" if p == pid else "workers"] += (int(fields[11]) + int(fields[12])) / tick
    return out


# ------------------------------------------------------------------------------------------------ the clients


def paragraphs_of(text: str) -> list[str]:
    return [p.strip("\n") for p in re.split(r"\n[ \t]*\n", text) if p.strip()]


async def warm_up(client, model: str, paragraphs: list[str]) -> list[dict]:
    """Every paragraph once: its answer's length and words (the reference of the timed run)."""
    refs = []
    for p in paragraphs:
        r = await client.post("/process", data={"data": p, "model": model, "tokenizer": "", "tagger": "",
                                                "parser": ""})
        r.raise_for_status()
        refs.append({"bytes": len(r.content), "words": len(_WORD_LINE.findall(r.json()["result"]))})
    return refs


async def timed_run(url: str, model: str, paragraphs: list[str], refs: list[dict], clients: int, seconds: float,
                    on_count) -> dict:
    import httpx

    latencies: list[float] = []
    errors: dict[str, int] = {}
    state = {"requests": 0, "words": 0}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=max(seconds, 60), limits=limits) as client:
        t0 = time.perf_counter()
        deadline = t0 + seconds

        async def one_client(k: int) -> None:
            i = k * len(paragraphs) // clients
            while time.perf_counter() < deadline:
                p = i % len(paragraphs)
                i += 1
                start = time.perf_counter()
                try:
                    r = await client.post("/process", data={"data": paragraphs[p], "model": model,
                                                            "tokenizer": "", "tagger": "", "parser": ""})
                    kind = None if r.status_code == 200 else f"http {r.status_code}"
                    if kind is None and len(r.content) != refs[p]["bytes"]:
                        kind = "answer differs from the warm-up's"
                except httpx.HTTPError as err:
                    kind = type(err).__name__
                latencies.append(time.perf_counter() - start)
                state["requests"] += 1
                if kind is None:
                    state["words"] += refs[p]["words"]
                else:
                    errors[kind] = errors.get(kind, 0) + 1
                on_count(state["requests"])

        await asyncio.gather(*(one_client(k) for k in range(clients)))
        wall = time.perf_counter() - t0
    latencies.sort()

    def pct(q: float) -> float:
        return round(1000 * latencies[min(len(latencies) - 1, int(q * len(latencies)))], 1)

    return {"wall_s": round(wall, 2), "requests": state["requests"], "errors": sum(errors.values()),
            "errors_by_kind": errors, "words": state["words"], "words_per_wall_s": round(state["words"] / wall, 1),
            "requests_per_s": round(state["requests"] / wall, 2),
            "latency_ms": {"p50": pct(0.50), "p90": pct(0.90), "p99": pct(0.99), "max": pct(1.0),
                           "mean": round(1000 * statistics.fmean(latencies), 1)}}


# ------------------------------------------------------------------------------------------------------ main


def default_text(model: str) -> Path:
    path = Path(model)
    for candidate in (path.with_suffix(".test.txt"), path.with_name(path.name.split(".")[0] + ".test.txt")):
        if candidate.exists():
            return candidate
    raise SystemExit(f"serve_load: no test text beside {model} ({path.with_suffix('.test.txt').name}): give --text")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--model", help="a pipeline model: start swvp serve on it")
    where.add_argument("--url", help="a running swvp serve (loopback only)")
    p.add_argument("--text", type=Path, default=None, help="raw text whose paragraphs are posted")
    p.add_argument("--name", default=None, help="the model's name on the server and in the result file's name")
    p.add_argument("--workers", type=int, default=2, help="swvp serve --workers and swvp parse --jobs (default 2)")
    p.add_argument("--clients", type=int, default=8, help=f"concurrent clients (at most {MAX_CLIENTS})")
    p.add_argument("--seconds", type=float, default=60.0, help=f"how long they send (at most {MAX_SECONDS})")
    p.add_argument("--parse-repeats", type=int, default=1, help="swvp parse --jobs N runs (0: none)")
    p.add_argument("--parse-min-words", type=int, default=150_000,
                   help="swvp parse's input: the text repeated to as many words as the service analyzed, and at "
                        "least this many (its rate after the first output then measures the analysis)")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    if not 1 <= args.clients <= MAX_CLIENTS or not 0 < args.seconds <= MAX_SECONDS:
        raise SystemExit(f"serve_load: --clients 1..{MAX_CLIENTS} and --seconds up to {MAX_SECONDS}")
    if args.model is None and args.text is None:
        raise SystemExit("serve_load: with --url, give --text")
    text_path = args.text or default_text(args.model)
    name = args.name or (Path(args.model).name.split(".")[0] if args.model else "server")
    paragraphs = paragraphs_of(text_path.read_text(encoding="utf-8"))
    m = meta(packages=("starlette", "uvicorn", "httpx", "python-multipart"), model=args.model, url=args.url,
             text=str(text_path), name=name, workers=args.workers, clients=args.clients, seconds=args.seconds,
             paragraphs=len(paragraphs), scheduler=_scheduler_note())
    spins = [spin_calibration()]
    log(f"serve_load: two cores' worth available to this session: {spins[0]}")
    result: dict = {}
    with tempfile.TemporaryDirectory(prefix="swvp-serve-load-") as tmp:
        tmp = Path(tmp)
        parse_runs = []
        repeated = None

        def parse_run() -> None:
            if args.model and repeated is not None:
                run = run_parse(args.model, [repeated], jobs=args.workers)
                log(f"serve_load: swvp parse --jobs {args.workers}: {run['words']} words, "
                    f"{run['words_per_wall_s']} words/s whole, {run['words_per_wall_s_after_first_output']} after "
                    f"the first output")
                parse_runs.append(run)

        if args.model and args.parse_repeats:
            repeated = tmp / "repeated.txt"
        proc = None
        url = check_loopback(args.url) if args.url else None
        server_log = tmp / "server.log"
        if args.model:
            t0 = time.perf_counter()
            proc, url = start_server(name, args.model, args.workers, server_log)
            log(f"serve_load: swvp serve on {url} ({time.perf_counter() - t0:.1f} s to start)")
        try:
            import httpx

            async def prepare():
                async with httpx.AsyncClient(base_url=url, timeout=300) as client:
                    models = (await client.get("/models")).json()
                    return models, await warm_up(client, name if name in models["models"] else
                                                 models["default_model"], paragraphs)

            models, refs = asyncio.run(prepare())
            model_name = name if name in models["models"] else models["default_model"]
            memory = {"after_warm_up": server_memory(proc.pid) if proc else None}
            snapshots = {100: "after_100_requests", 5000: "after_5000_requests"}

            def on_count(n: int) -> None:
                if proc is not None and n in snapshots:
                    memory[snapshots[n]] = {**server_memory(proc.pid), "requests": n}

            cpu0 = server_cpu(proc.pid) if proc else None
            load0, client0 = load(), time.process_time()
            run = asyncio.run(timed_run(url, model_name, paragraphs, refs, args.clients, args.seconds, on_count))
            run["load_before"], run["load_after"] = load0, load()
            run["client_cpu_s"] = round(time.process_time() - client0, 2)  # this script's clients, same machine
            if proc is not None:
                cpu1 = server_cpu(proc.pid)
                run["server_cpu_s"] = {k: round(cpu1[k] - cpu0[k], 2) for k in cpu1}
                total = sum(run["server_cpu_s"].values())
                run["words_per_server_cpu_s"] = round(run["words"] / max(total, 1e-9), 1)
                memory["at_end"] = {**server_memory(proc.pid), "requests": run["requests"]}
            log(f"serve_load: {run['requests']} requests, {run['errors']} errors, {run['words_per_wall_s']} words/s, "
                f"p50 {run['latency_ms']['p50']} ms, p99 {run['latency_ms']['p99']} ms")
        finally:
            if proc is not None:
                proc.send_signal(signal.SIGTERM)
                status = proc.wait(120)
                result["server_exit_status"] = status
                result["server_log_tail"] = server_log.read_text(encoding="utf-8").splitlines()[-5:]
        result.update({"model_name": model_name, "timed": run, "memory": memory,
                       "text_words_per_pass": sum(r["words"] for r in refs)})
        if repeated is not None:
            copies = max(1, round(max(run["words"], args.parse_min_words) / max(result["text_words_per_pass"], 1)))
            body = text_path.read_text(encoding="utf-8").rstrip("\n") + "\n\n"
            repeated.write_text(body * copies, encoding="utf-8")
            for _ in range(args.parse_repeats):
                parse_run()
            result["parse"] = {"copies_of_the_text": copies, "runs": parse_runs}
    spins.append(spin_calibration())
    log(f"serve_load: two cores' worth available to this session: {spins[1]}")
    summary = {"requests": run["requests"], "errors": run["errors"], "words_per_s": run["words_per_wall_s"],
               "p50_ms": run["latency_ms"]["p50"], "p99_ms": run["latency_ms"]["p99"],
               "available_ratio_2_over_1_before_after": [s["available_ratio_2_over_1"] for s in spins]}
    for key in ("after_100_requests", "after_5000_requests", "at_end"):
        if memory.get(key):
            summary[f"server_rss_sum_mb_{key}"] = memory[key]["rss_sum_mb"]
            summary[f"server_pss_sum_mb_{key}"] = memory[key]["pss_sum_mb"]
    if result.get("parse", {}).get("runs"):
        runs = result["parse"]["runs"]
        whole = max(r["words_per_wall_s"] for r in runs)
        after = max(r["words_per_wall_s_after_first_output"] or 0 for r in runs)
        summary.update({"parse_words_per_s_whole_process": whole, "parse_words_per_s_after_first_output": after,
                        "ratio_service_over_parse_whole": round(run["words_per_wall_s"] / whole, 3),
                        "ratio_service_over_parse_after_first_output": round(run["words_per_wall_s"] / after, 3)})
    m["load_end"] = load()
    out = Path(args.out) if args.out else RESULTS / f"serve_load_{name}.json"
    write_json(out, {**m, "spin_before_after": spins, "summary": summary, **result})
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
