"""``swvp serve`` as a process (issue 34 items 1-2): SIGTERM lets the request in flight finish and exits 0;
``--workers 2`` forks two workers that answer as one process does, and a worker that dies is replaced; a port in use
and a missing ``serve`` extra are one line each."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

from serve.conftest import SRC, big_text

FULL = {"tokenizer": "", "tagger": "", "parser": ""}


def _wait(condition, limit: float = 60.0) -> None:
    end = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def test_sigterm_finishes_the_request_in_flight_and_exits_0(toy, server):
    srv = server(["--model", f"toy={toy.model}"])
    text = big_text(toy, 120_000)  # about a second of work (40 K took 0.3 s here)
    answer = {}

    def slow() -> None:
        with httpx.Client(base_url=srv.url, timeout=120) as client:
            answer["response"] = client.post("/process", data={"data": text, **FULL})

    with httpx.Client(base_url=srv.url, timeout=60) as client:
        expected = client.post("/process", data={"data": text, **FULL}).json()["result"]
        thread = threading.Thread(target=slow)
        thread.start()
        _wait(lambda: client.get("/health").json()["requests"]["in_progress"] == 1)
    srv.proc.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    with pytest.raises(httpx.TransportError):  # no longer accepting
        httpx.get(srv.url + "/health", timeout=5)
    thread.join(120)
    response = answer["response"]
    assert response.status_code == 200 and response.json()["result"] == expected
    assert srv.proc.wait(60) == 0
    assert srv.stderr().rstrip().endswith("swvp serve: stopped") and "Traceback" not in srv.stderr()


def test_two_workers_answer_as_one_process_does_and_a_dead_one_is_replaced(toy, server):
    srv = server(["--model", f"toy={toy.model}", "--model", f"again={toy.model}", "--workers", "2"])
    texts = [big_text(toy, 3_000 + 500 * i) for i in range(6)]
    with httpx.Client(base_url=srv.url, timeout=60) as client:
        health = client.get("/health").json()
        assert health["status"] == "ok" and health["workers"]["alive"] == health["workers"]["configured"] == 2
        workers = srv.workers()
        assert len(workers) == 2
        assert client.get("/models").json()["models"] == {"toy": ["tokenizer", "tagger", "parser"],
                                                           "again": ["tokenizer", "tagger", "parser"]}

        async def parallel():
            async with httpx.AsyncClient(base_url=srv.url, timeout=60) as ac:
                import asyncio

                return await asyncio.gather(*(ac.post("/process", data={"data": t, "model": m, **FULL})
                                              for t in texts for m in ("toy", "again")))

        import asyncio

        answers = asyncio.run(parallel())
        results = [toy.pipeline.analyze(t).to_conllu() for t in texts]
        assert [r.json()["result"] for r in answers] == [r for r in results for _ in range(2)]

        os.kill(workers[0], signal.SIGKILL)
        _wait(lambda: client.get("/health").status_code == 503)  # degraded while a worker is missing
        statuses = [client.post("/process", data={"data": texts[0], **FULL}).status_code for _ in range(2)]
        assert statuses in ([503, 200], [200, 200])  # the request the pool broke under, if any, says so
        health = client.get("/health").json()
        assert health["status"] == "ok" and health["workers"]["alive"] == 2 and health["workers"]["restarts"] == 1
        assert len(srv.workers()) == 2 and workers[0] not in srv.workers()
    assert srv.stop() == 0
    _wait(lambda: not srv.workers(), 10)


def _swvp(args: list[str], code: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    script = f"import sys\n{code}\nfrom swvp.cli.main import main\nsys.exit(main({args!r}))"
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)


def test_a_port_in_use_is_one_line(toy, server):
    srv = server(["--model", f"toy={toy.model}"])
    port = srv.url.rsplit(":", 1)[1]
    done = _swvp(["serve", "--model", f"toy={toy.model}", "--port", port])
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"swvp: error: serve: cannot listen on 127.0.0.1:{port}: "
                                                "Address already in use"]


def test_a_missing_serve_extra_is_one_line(toy):
    done = _swvp(["serve", "--model", f"toy={toy.model}"], "sys.modules['starlette'] = None")
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("swvp: error: swvp serve needs Starlette") and "pip install 'swvp[serve]'" in line
    check = ("import sys; sys.modules['uvicorn'] = sys.modules['starlette'] = None; import swvp, swvp.serve; "
             "import swvp.serve.udpipe_api, swvp.serve.limits; print('ok')")
    assert subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(SRC)}).stdout.strip() == "ok"
