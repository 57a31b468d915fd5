"""``swvp serve``'s UDPipe REST API (issue 34 item 1), in process (Starlette's TestClient): ``/models`` lists what
was loaded; a ``/process`` result is byte for byte ``swvp parse``'s output for a file holding the same bytes, for raw,
CoNLL-U and tokenized input, sent as a form field, an uploaded file or in the URL; the stages, input and output
formats and model names map as UDPipe's do."""

from __future__ import annotations

import copy
import json

import pytest

from serve.conftest import TESTCLIENT_WARNING, one_line
from swvp.cli.main import main
from swvp.serve import create_app
from swvp.serve.udpipe_api import RequestError, make_job, parse_form, resolve_model

pytestmark = pytest.mark.filterwarnings(TESTCLIENT_WARNING)


@pytest.fixture(scope="module")
def client(toy):
    from starlette.testclient import TestClient

    no_parser = copy.copy(toy.pipeline)
    no_parser.stages_ = {k: v for k, v in toy.pipeline.stages_.items() if k != "parser"}
    app = create_app({"toy-ud-1": toy.model, "toy-ud-2": toy.pipeline, "tagonly": no_parser},
                     acknowledgements={"toy-ud-1": "the toy treebank"})
    with TestClient(app) as c:
        yield c


def swvp_parse(toy, tmp_path, data: bytes, kind: str) -> str:
    """What ``swvp parse --model toy.npz --input KIND FILE -o OUT`` writes for a file holding ``data``."""
    path, out = tmp_path / f"in.{kind}", tmp_path / f"out.{kind}.conllu"
    path.write_bytes(data)
    assert main(["parse", "--model", str(toy.model), "--input", kind, str(path), "-o", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def result(response) -> str:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    answer = response.json()
    assert set(answer) == {"model", "acknowledgements", "result"}
    return answer["result"]


def test_models_lists_each_model_with_its_components(client):
    r = client.get("/models")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.json() == {"models": {"toy-ud-1": ["tokenizer", "tagger", "parser"],
                                   "toy-ud-2": ["tokenizer", "tagger", "parser"],
                                   "tagonly": ["tokenizer", "tagger"]},
                        "default_model": "toy-ud-1"}


@pytest.mark.parametrize("kind", ["raw", "conllu", "tokenized"])
def test_the_result_is_byte_for_byte_what_swvp_parse_writes(client, toy, tmp_path, kind):
    path = {"raw": toy.raw, "conllu": toy.conllu, "tokenized": toy.tokenized}[kind]
    data = path.read_bytes()
    variants = [data, data + b"\n", data.replace(b"\n", b"\r\n"), b"\xef\xbb\xbf" + data]  # final newline, CRLF, BOM
    stages = {"tokenizer": "", "tagger": "", "parser": ""} if kind == "raw" else \
        {"input": "conllu" if kind == "conllu" else "horizontal", "tagger": "", "parser": ""}
    for sent in variants:
        expected = swvp_parse(toy, tmp_path, sent, kind)
        assert expected.count("# sent_id = ") >= 20
        as_field = client.post("/process", data={"data": sent.decode("utf-8"), **stages})
        as_file = client.post("/process", data=stages, files={"data": ("text.txt", sent, "text/plain")})
        assert result(as_field) == expected
        assert result(as_file) == expected
    assert as_file.json()["model"] == "toy-ud-1"
    assert as_file.json()["acknowledgements"][1] == "the toy treebank"
    in_url = client.get("/process", params={"data": data.decode("utf-8"), **stages})
    assert result(in_url) == swvp_parse(toy, tmp_path, data, kind)


def test_the_stages_run_are_those_the_request_names(client, toy):
    text = toy.raw.read_text(encoding="utf-8")
    words = [line.split("\t") for line in result(client.post("/process", data={"data": text, "tokenizer": ""}))
             .splitlines() if line[:1].isdigit()]
    assert words and all(w[2:8] == ["_"] * 6 for w in words)  # UDPipe without tagger and parser: tokens only
    tagged = [line.split("\t") for line in result(client.post("/process", data={
        "data": text, "tokenizer": "", "tagger": "", "parser": "none"})).splitlines() if line[:1].isdigit()]
    assert all(w[6] == "_" for w in tagged) and sum(w[3] != "_" for w in tagged) > len(tagged) // 2
    full = result(client.post("/process", data={"data": text, "tokenizer": "", "tagger": "", "parser": ""}))
    assert full == toy.pipeline(text)  # the whole pipeline, as analyze() gives it
    # CoNLL-U in, parser only: the input's own tags are what the parser reads, and are kept
    gold = toy.conllu.read_text(encoding="utf-8")
    parsed = result(client.post("/process", data={"data": gold, "input": "conllu", "parser": ""}))
    gold_tags = [line.split("\t")[3] for line in gold.splitlines() if line[:1].isdigit()]
    assert [line.split("\t")[3] for line in parsed.splitlines() if line[:1].isdigit()] == gold_tags
    r = client.post("/process", data={"data": text, "model": "tagonly", "tokenizer": "", "parser": ""})
    assert r.status_code == 400 and one_line(r) and "does not contain a parser" in r.text


def test_model_names_and_their_hyphen_prefixes(client):
    assert client.post("/process", data={"data": "Lo bak.", "tokenizer": "", "model": "toy-ud-2"}
                       ).json()["model"] == "toy-ud-2"
    assert client.post("/process", data={"data": "Lo bak.", "tokenizer": "", "model": "tag"}).status_code == 400
    r = client.post("/process", data={"data": "Lo bak.", "tokenizer": "", "model": "toy-ud"})
    assert r.status_code == 400 and one_line(r) and "ambiguous" in r.text
    assert resolve_model("toy", ["toy-ud-1", "el"]) == "toy-ud-1"
    assert resolve_model(None, ["el", "en"]) == resolve_model("", ["el", "en"]) == "el"
    with pytest.raises(RequestError, match="does not exist"):
        resolve_model("/etc/passwd", ["el", "en"])  # a name, never a path


def test_output_formats_written_as_udpipe_writes_them(client, toy):
    text = "Lo bol baf lo begogm. Lo bak.\n\nLo pebetizs bafing."
    base = {"data": text, "tokenizer": "", "tagger": "", "parser": ""}
    conllu = result(client.post("/process", data=base))
    sentences = [[line.split("\t") for line in block.splitlines() if line[:1].isdigit()]
                 for block in conllu.split("\n\n") if block.strip()]
    words = [[w[1] for w in s if "-" not in w[0]] for s in sentences]
    assert result(client.post("/process", data={**base, "output": "horizontal"})) == \
        "".join(" ".join(s) + "\n" for s in words)
    assert result(client.post("/process", data={**base, "output": "horizontal=paragraphs"})) == \
        " ".join(words[0]) + "\n" + " ".join(words[1]) + "\n\n" + " ".join(words[2]) + "\n"
    assert result(client.post("/process", data={**base, "output": "vertical"})) == \
        "".join("".join(w + "\n" for w in s) + "\n" for s in words)
    assert result(client.post("/process", data={**base, "output": "plaintext=normalized_spaces"})) == \
        "Lo bol baf lo begogm.\nLo bak.\n\nLo pebetizs bafing.\n"
    r = client.post("/process", data={**base, "output": "plaintext"})
    assert r.status_code == 400 and one_line(r) and "normalized_spaces" in r.text


def test_vertical_and_horizontal_input_are_read_alike(client, toy):
    lines = toy.tokenized.read_text(encoding="utf-8").split("\n\n")[0].splitlines()
    horizontal = "\n".join(lines) + "\n"
    vertical = "".join("".join(f"{t}\tignored\n" for t in line.split()) + "\n" for line in lines)
    a = result(client.post("/process", data={"data": horizontal, "input": "horizontal", "tagger": "", "parser": ""}))
    b = result(client.post("/process", data={"data": vertical, "input": "vertical", "tagger": "", "parser": ""}))
    assert a == b and a.count("# sent_id = ") == len(lines)
    r = client.post("/process", data={"data": "Lo\u00a0bak .\n", "input": "horizontal", "tagger": ""})
    assert r.status_code == 400 and one_line(r) and "U+00A0" in r.text


def test_form_parsing_keeps_bytes_and_refuses_what_it_does_not_know():
    params = parse_form(b"model=el&tagger=", b"data=%CE%B1+%CE%B2&parser=", "application/x-www-form-urlencoded")
    assert params == {"model": b"el", "tagger": b"", "data": "α β".encode(), "parser": b""}
    job = make_job(params, {"el": ["tokenizer", "tagger", "parser"]}, {"el": ("swvp",)})
    assert (job.model, job.components, job.input, job.output, job.acknowledgements) == \
        ("el", ("tagger", "parser"), "conllu", "conllu", ("swvp",))
    job = make_job({"data": b"x", "input": b"tokenizer=normalized_spaces"}, {"el": ["tokenizer"]})
    assert job.components == ("tokenizer",) and job.input == "raw"
    for params, message in [({"data": b"x", "tokenizer": b"presegmented"}, "presegmented"),
                            ({"data": b"x", "tagger": b"use_lemma=0"}, "no options"),
                            ({"data": b"x", "input": b"conllu=v1"}, "v2"),
                            ({"data": b"x", "input": b"generic_tokenizer"}, "rule-based"),
                            ({"data": b"x", "output": b"epe"}, "not supported"),
                            ({"data": b"x", "output": b"vertical=columns"}, "paragraphs"),
                            ({"data": b"x", "model": b"el\xff"}, "byte offset 2")]:
        with pytest.raises(RequestError, match=message) as err:
            make_job(params, {"el": ["tokenizer", "tagger", "parser"]})
        assert err.value.status == 400
    with pytest.raises(RequestError, match="Unsupported payload") as err:
        parse_form(b"", b'{"data": "x"}', "application/json")
    assert err.value.status == 415


def test_the_json_answer_is_utf8_and_udpipes_shape(client):
    r = client.post("/process", data={"data": "Lo bak.", "tokenizer": ""})
    answer = json.loads(r.content.decode("utf-8"))
    assert answer["model"] == "toy-ud-1" and answer["acknowledgements"][0].startswith("swvp ")
    assert answer["result"].startswith("# newdoc\n# newpar\n# sent_id = 1\n# text = Lo bak.\n")
