"""``swvp serve``'s limits and safety (issue 34 item 2): every bad request is answered 4xx with one line and the
server answers a good request after each; 100 parallel requests of 100 KB are answered or refused (413/503), never
a crash; the time limit (504), the bounded queue (503), a failure of the server's own (500, one line, no
traceback) and the Host check."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest

from serve.conftest import TESTCLIENT_WARNING, big_text, one_line
from swvp.serve import create_app
from swvp.serve.app import LOOPBACK_HOSTS

pytestmark = pytest.mark.filterwarnings(TESTCLIENT_WARNING)


def _multipart(body: bytes, boundary: str = "b0undary") -> tuple[bytes, dict]:
    return body, {"content-type": f"multipart/form-data; boundary={boundary}"}


def test_every_bad_request_is_answered_4xx_with_one_line_and_the_server_goes_on(toy, server):
    srv = server(["--model", f"toy={toy.model}", "--max-request-bytes", "20000"])
    good_text = "Lo bol baf lo begogm. Lo bak."
    good = {"data": good_text, "tokenizer": "", "tagger": "", "parser": ""}
    conllu = toy.conllu.read_text(encoding="utf-8")
    bad_conllu = conllu.replace("\t", " ", 3)
    truncated = b'--b0undary\r\nContent-Disposition: form-data; name="data"\r\n\r\nLo bak.\r\n'
    # (what, method, path, keyword arguments, status, a piece of the message)
    bad = [
        ("bad UTF-8 in raw text", "POST", "/process", {"data": {"tokenizer": ""}, "files": {
            "data": ("a.txt", b"Lo bak.\n\nLo " + b"\xff\xfe bol.")}}, 400, "byte offset 12"),
        ("bad UTF-8 in CoNLL-U", "POST", "/process", {"data": {"input": "conllu"}, "files": {
            "data": ("a.conllu", conllu.encode()[:200] + b"\xc3(" + conllu.encode()[200:])}}, 400, "byte offset 200"),
        ("bad UTF-8 in the URL", "GET", "/process?data=%C3%28&tokenizer=", {}, 400, "byte offset 0"),
        ("unknown model", "POST", "/process", {"data": {**good, "model": "nope"}}, 400, "does not exist"),
        ("a path for a model", "POST", "/process", {"data": {**good, "model": str(toy.model)}}, 400,
         "does not exist"),
        ("missing data", "POST", "/process", {"data": {"tokenizer": ""}}, 400, "'data' is missing"),
        ("no parameters at all", "GET", "/process", {}, 400, "'data' is missing"),
        ("too large", "POST", "/process", {"data": {**good, "data": "Lo bak. " * 5000}}, 413, "20000 bytes"),
        ("unknown parameter", "POST", "/process", {"data": {**good, "colour": "red"}}, 400, "'colour'"),
        ("bad input", "POST", "/process", {"data": {"data": good_text, "input": "xml"}}, 400, "input format"),
        ("bad output", "POST", "/process", {"data": {**good, "output": "xml"}}, 400, "output format"),
        ("output refused", "POST", "/process", {"data": {**good, "output": "matxin"}}, 400, "not supported"),
        ("tokenizer option refused", "POST", "/process", {"data": {**good, "tokenizer": "ranges"}}, 400,
         "ranges"),
        ("tagger options", "POST", "/process", {"data": {**good, "tagger": "guesser=0"}}, 400, "no options"),
        ("malformed CoNLL-U", "POST", "/process", {"data": {"data": bad_conllu, "input": "conllu"}}, 400,
         "data:"),
        ("empty CoNLL-U", "POST", "/process", {"data": {"data": "", "input": "conllu"}}, 400, "empty"),
        ("control character", "POST", "/process", {"data": {"data": "1\tLo\x00", "input": "conllu"}}, 400,
         "data:1"),
        ("vertical token with a space", "POST", "/process", {"data": {"data": "Lo\u00a0bak\n", "input": "vertical"}},
         400, "space"),
        ("multipart without its end", "POST", "/process", dict(zip(("content", "headers"), _multipart(truncated))),
         400, "multipart"),
        ("multipart without boundary", "POST", "/process", {"content": b"x", "headers": {
            "content-type": "multipart/form-data"}}, 400, "boundary"),
        ("unsupported body", "POST", "/process", {"content": b'{"data": "x"}', "headers": {
            "content-type": "application/json"}}, 415, "Content-Type"),
        ("unknown URL", "GET", "/process/../etc/passwd", {}, 404, "No handler"),
        ("wrong method", "DELETE", "/process", {}, 405, "not allowed"),
        ("foreign Host", "GET", "/models", {"headers": {"host": "attacker.example"}}, 400, "host"),
    ]
    with httpx.Client(base_url=srv.url, timeout=60) as client:
        expected = client.post("/process", data=good).json()["result"]
        assert expected.count("# sent_id") == 2
        for what, method, path, kwargs, status, piece in bad:
            r = client.request(method, path, **kwargs)
            assert r.status_code == status, (what, r.status_code, r.text)
            assert one_line(r), (what, r.text)
            assert piece.lower() in r.text.lower(), (what, r.text)
            after = client.post("/process", data=good)
            assert after.status_code == 200 and after.json()["result"] == expected, what
        assert client.get("/health").json()["status"] == "ok"
    assert srv.stop() == 0
    assert "Traceback" not in srv.stderr()


def test_a_hundred_parallel_requests_of_100_kb_are_answered_or_refused(toy, server):
    """80 requests of ~100 KB over the (lowered) size limit, 20 of ~8 KB that fit, all at once on a server that
    keeps 2 waiting at most: the large ones 413, the small ones answered or 503 — never a failed connection."""
    srv = server(["--model", f"toy={toy.model}", "--max-request-bytes", "64kB", "--queue", "2"])
    large, small = big_text(toy, 100_000), big_text(toy, 8_000)
    expected = {}

    async def send(client, i: int):
        text = small if i % 5 == 0 else large
        if i % 2:
            return i, await client.post("/process", data={"data": text, "tokenizer": "", "tagger": "", "parser": ""})
        return i, await client.post("/process", data={"tokenizer": "", "tagger": "", "parser": ""},
                                    files={"data": ("t.txt", text.encode())})

    async def run():
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=srv.url, timeout=120, limits=limits) as client:
            return await asyncio.gather(*(send(client, i) for i in range(100)))

    answers = asyncio.run(run())
    statuses = {}
    for i, r in answers:
        statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
        if i % 5:
            assert r.status_code == 413 and one_line(r), r.text
        else:
            assert r.status_code in (200, 503), r.text
            if r.status_code == 200:
                expected.setdefault("result", r.json()["result"])
                assert r.json()["result"] == expected["result"]
            else:
                assert one_line(r) and r.headers.get("retry-after")
    assert statuses[413] == 80 and statuses.get(200, 0) >= 1, statuses
    with httpx.Client(base_url=srv.url, timeout=60) as client:
        health = client.get("/health").json()
        assert health["status"] == "ok" and health["requests"]["in_progress"] == 0
        r = client.post("/process", data={"data": small, "tokenizer": "", "tagger": "", "parser": ""})
        assert r.status_code == 200 and r.json()["result"] == expected["result"]
    assert srv.stop() == 0


@pytest.fixture
def app_client(toy):
    from starlette.testclient import TestClient

    def make(**kwargs):
        return TestClient(create_app({"toy": toy.pipeline}, **kwargs), raise_server_exceptions=False)

    return make


def test_a_request_past_the_time_limit_is_answered_504_and_the_next_is_served(toy, app_client):
    text = big_text(toy, 240_000)  # several times the 0.5 s limit of work for the toy pipeline (60 K: 0.4 s here)
    with app_client(timeout=0.5) as client:
        t0 = time.monotonic()
        r = client.post("/process", data={"data": text, "tokenizer": "", "tagger": "", "parser": ""})
        assert r.status_code == 504 and one_line(r) and "0.5 s" in r.text
        assert time.monotonic() - t0 < 5
        deadline = time.monotonic() + 60  # the analysis runs on unseen (and counts as in progress) until its end
        while client.get("/health").json()["requests"]["in_progress"] and time.monotonic() < deadline:
            time.sleep(0.05)
        r = client.post("/process", data={"data": "Lo bak.", "input": "horizontal"})
        assert r.status_code == 200


def test_the_queue_is_bounded_503_beyond_it(toy, app_client):
    text = big_text(toy, 240_000)  # in progress for over a second while the next request comes
    with app_client(queue=0) as client:
        first = {}
        thread = threading.Thread(target=lambda: first.setdefault("r", client.post(
            "/process", data={"data": text, "tokenizer": "", "tagger": "", "parser": ""})))
        thread.start()
        deadline = time.monotonic() + 30
        while client.get("/health").json()["requests"]["in_progress"] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        r = client.post("/process", data={"data": "Lo bak.", "input": "horizontal"})
        assert r.status_code == 503 and one_line(r) and r.headers["retry-after"] == "1"
        thread.join(60)
        assert first["r"].status_code == 200
        assert client.post("/process", data={"data": "Lo bak.", "input": "horizontal"}).status_code == 200


def test_a_failure_of_the_servers_own_is_one_line_without_traceback(toy, app_client, monkeypatch, caplog):
    from swvp.serve import decoding

    def broken(model, batches):
        raise RuntimeError("secret internal detail")

    with app_client() as client:
        monkeypatch.setattr(decoding, "analyze_batches", broken)
        r = client.post("/process", data={"data": "Lo bak.", "tokenizer": ""})
        assert r.status_code == 500 and one_line(r)
        assert "secret" not in r.text and "internal error" in r.text
        monkeypatch.undo()
        assert client.post("/process", data={"data": "Lo bak.", "tokenizer": ""}).status_code == 200
    assert "secret internal detail" in caplog.text  # the log has it


def test_only_loopback_host_names_are_answered_where_asked(toy, app_client):
    with app_client(allowed_hosts=LOOPBACK_HOSTS) as client:
        for host in ("localhost", "127.0.0.1:8001", "[::1]:8001"):
            assert client.get("/models", headers={"host": host}).status_code == 200, host
        r = client.get("/models", headers={"host": "rebound.example:8001"})
        assert r.status_code == 400 and one_line(r)
