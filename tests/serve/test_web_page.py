"""The web page of ``swvp serve`` (issue 34 item 3), in a real browser: Debian's ``chromium`` driven headless by
Playwright (the system browser through ``executable_path``; Playwright downloads nothing), against the real server
started as a user starts it, ``swvp serve --model toy=PATH --port N``, with a tiny pipeline trained on the toy
treebank.

The page is checked against the answers it got: one SVG tree per sentence of the CoNLL-U, one arc (and one label)
per word, the table's rows equal to the words, the download equal to the result, the server's one-line message in
the error box. Where no browser is found these tests skip, unless ``SWVP_REQUIRE_BROWSER=1`` (``.ci/run`` sets it):
then they fail, so that CI cannot pass without having looked at the page. A screenshot of a parsed paragraph is saved
under ``$SWVP_ARTIFACTS`` (else the test's temporary folder) and its path printed.

One test needs no browser: the page and its assets name nothing outside the server (users run it offline).
"""

from __future__ import annotations

import html.parser
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import swvp

STATIC = Path(swvp.__file__).resolve().parent / "serve" / "static"
REQUIRE_BROWSER = "SWVP_REQUIRE_BROWSER"
TIMEOUT_MS = 60_000  # a parse on a busy 2-core machine; the page answers in well under a second when idle


# ------------------------------------------------------------------------------------------------------------------
# no browser: the page is self-contained
# ------------------------------------------------------------------------------------------------------------------

# XML namespace names are identifiers that no browser fetches
_NAMESPACES = ("http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink", "http://www.w3.org/1999/xhtml")
_EXTERNAL = re.compile(r"https?://|(?<![:\w])//[\w.-]+\.[a-z]{2,}/|\bcdn\b|@import\s+url|\burl\(\s*['\"]?(?!data:)",
                       re.IGNORECASE)


class _Refs(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs: list[str] = []
        self.ids: set[str] = set()
        self.label_for: set[str] = set()
        self.controls: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in ("src", "href", "action", "poster", "data"):
            if a.get(name):
                self.refs.append(a[name])
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "label" and a.get("for"):
            self.label_for.add(a["for"])
        if tag in ("input", "select", "textarea"):
            self.controls.append(a.get("id", f"<{tag} without id>"))


def test_the_page_and_its_assets_name_nothing_outside_the_server():
    files = sorted(p for p in STATIC.rglob("*") if p.is_file())
    assert {p.name for p in files} >= {"index.html", "app.js", "style.css"}
    for path in files:
        text = path.read_text(encoding="utf-8")
        for ns in _NAMESPACES:
            text = text.replace(ns, "")
        hits = [m.group(0) for m in _EXTERNAL.finditer(text)]
        assert not hits, f"{path.name} refers outside the server: {hits}"
    page = _Refs()
    page.feed((STATIC / "index.html").read_text(encoding="utf-8"))
    for ref in page.refs:  # every asset the page loads is one of the static files, addressed relatively
        if ref.startswith("data:"):
            continue
        assert not ref.startswith("/") or ref.startswith("/static/"), ref
        name = ref.split("?")[0].split("#")[0].removeprefix("/").removeprefix("static/")
        assert (STATIC / name).is_file(), f"index.html loads {ref}, which is not among the static files"
    # every form control has a label
    assert page.controls and set(page.controls) <= page.label_for, (page.controls, page.label_for)


# ------------------------------------------------------------------------------------------------------------------
# the real server and a real browser
# ------------------------------------------------------------------------------------------------------------------

def _browser_required() -> bool:
    return os.environ.get(REQUIRE_BROWSER, "").strip() not in ("", "0")


def _no_browser(reason: str):
    """Skip, or fail where CI requires the browser (the reason must not speak of the corpora: see conftest.py)."""
    if _browser_required():
        pytest.fail(f"{REQUIRE_BROWSER} is set and {reason}", pytrace=False)
    pytest.skip(f"{reason} (set {REQUIRE_BROWSER}=1 to make this a failure)")


@pytest.fixture(scope="module")
def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        _no_browser("no `chromium` on PATH (Debian: apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _no_browser("the Python package playwright is not installed (pip install -e '.[test]')")
    return path


@pytest.fixture(scope="module")
def web_model(tmp_path_factory):
    """A tiny pipeline (tokenizer, tagger, lemmatizer, parser) trained on the toy treebank, saved, and sentences of
    its language that it did not see."""
    from swvp.data.toy_treebank import toy_treebank
    from swvp.learn.perceptron import Perceptron
    from swvp.learn.search import Beam
    from swvp.tasks.lemmatizer import Lemmatizer
    from swvp.tasks.morphology import MorphologicalTagger
    from swvp.tasks.pipeline import Pipeline
    from swvp.tasks.tokenizer import Tokenizer
    from swvp.tasks.transition_parser import TransitionDependencyParser

    folder = tmp_path_factory.mktemp("web")
    train = folder / "train.conllu"
    train.write_text(toy_treebank(60, seed=1), encoding="utf-8")
    Pipeline(tokenizer=Tokenizer(learner=Perceptron(epochs=2)),
             tagger=MorphologicalTagger(learner=Perceptron(epochs=2)),
             lemmatizer=Lemmatizer(learner=Perceptron(epochs=2)),
             parser=TransitionDependencyParser(hash_bits=12, move_hash_bits=12,
                                               learner=Perceptron(search=Beam(2), epochs=2)),
             jackknife=0).fit(str(train)).save(folder / "toy.npz")
    texts = re.findall(r"^# text = (.*)$", toy_treebank(12, seed=7), flags=re.MULTILINE)
    return folder / "toy.npz", texts


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def web_server(web_model, tmp_path_factory):
    """``swvp serve`` in a process of its own; its base URL once ``GET /models`` answers."""
    model, _ = web_model
    port = _free_port()
    log = tmp_path_factory.mktemp("serve") / "server.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "swvp.cli.main", "serve", "--model", f"toy={model}",
                                 "--port", str(port)], stdout=err, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"swvp serve exited {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(url + "models", timeout=5) as resp:
                    if resp.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"swvp serve did not answer in 120 s: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, web_server):
    context = browser.new_context(accept_downloads=True, viewport={"width": 1100, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(web_server)
    pg.wait_for_selector("body[data-models=ready]")
    yield pg
    context.close()
    assert not errors, f"the page raised: {errors}"


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    folder = Path(os.environ["SWVP_ARTIFACTS"]) if os.environ.get("SWVP_ARTIFACTS") else \
        tmp_path_factory.mktemp("artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _sentences(conllu: str) -> list[dict]:
    """The CoNLL-U's sentences: words (ID, FORM, HEAD, DEPREL) and multiword ranges; empty nodes left out."""
    out = []
    for block in re.split(r"\n\s*\n", conllu.strip()):
        words, ranges = [], []
        for line in block.splitlines():
            cols = line.split("\t")
            if line.startswith("#") or len(cols) != 10:
                continue
            if cols[0].isdigit():
                words.append({"id": cols[0], "form": cols[1], "head": cols[6], "deprel": cols[7]})
            elif re.fullmatch(r"\d+-\d+", cols[0]):
                ranges.append((cols[0], cols[1]))
        if words:
            out.append({"words": words, "ranges": ranges})
    return out


def _submit(page, keyboard: bool = True):
    """Submit the form (Ctrl+Enter in the text box, else the button) and return the answer to POST /process."""
    with page.expect_response(lambda r: r.url.endswith("/process") and r.request.method == "POST") as answer:
        if keyboard:
            page.locator("#data").press("Control+Enter")
        else:
            page.get_by_role("button", name="Parse").click()
    page.wait_for_selector("body[data-state=done], body[data-state=error]")
    return answer.value


def _check_rendering(page, result: str) -> list[dict]:
    sents = _sentences(result)
    assert sents, result
    assert page.locator("svg.tree").count() == len(sents)
    assert page.locator("article.sentence").count() == len(sents)
    for n, sent in enumerate(sents, start=1):
        words = sent["words"]
        svg = page.locator(f'svg.tree[data-sentence="{n}"]')
        assert svg.count() == 1
        assert svg.locator("path.arc").count() == len(words)  # one arc per word: into it from its head, or the root's
        assert svg.locator("path.arc.root").count() == sum(w["head"] == "0" for w in words)
        labels = svg.locator("text.arc-label").all_text_contents()
        assert sorted(labels) == sorted(w["deprel"] for w in words)
        assert svg.locator("g.word text.form").all_text_contents() == [w["form"] for w in words]
        table = page.locator(f'table.words[data-sentence="{n}"]')
        rows = table.locator("tr.word")
        assert rows.count() == len(words)
        for col in ("id", "form", "head", "deprel"):
            assert rows.locator(f"td.{col}").all_inner_texts() == [w[col] for w in words], col
        assert table.locator("tr.mwt td.id").all_inner_texts() == [r[0] for r in sent["ranges"]]
        assert table.locator("tr.mwt td.form").all_inner_texts() == [r[1] for r in sent["ranges"]]
    return sents


def test_the_model_selector_lists_the_served_model(page):
    options = page.locator("#model option")
    assert options.evaluate_all("os => os.map(o => o.value)") == ["toy"]
    assert page.locator("#model").input_value() == "toy"
    assert "tokenizer" in options.first.inner_text()


def test_a_typed_paragraph_is_drawn_tabulated_and_downloaded(page, web_model, artifacts, record_property):
    _, texts = web_model
    typed = [next(t for t in texts if " nilo " in t), texts[0]]  # one with a multiword token ("nilo" = ni + lo)
    page.locator("#data").press_sequentially(" ".join(typed))  # typed as a user types
    answer = _submit(page)
    assert answer.status == 200, answer.text()
    body = answer.json()
    assert body["model"] == "toy"
    result = body["result"]
    sents = _check_rendering(page, result)
    assert len(sents) == 2
    assert page.locator("#error").is_hidden()
    assert page.locator("p.sentence-text").all_inner_texts() == typed

    shot = artifacts / "swvp-web-page.png"
    page.screenshot(path=str(shot), full_page=True)
    record_property("screenshot", str(shot))
    print(f"screenshot of the page: {shot}")

    with page.expect_download() as info:
        page.get_by_role("button", name="Download CoNLL-U").click()
    download = info.value
    assert download.suggested_filename == "toy.conllu"
    assert Path(download.path()).read_text(encoding="utf-8") == result


def test_an_uploaded_file_is_sent_as_the_text(page, web_model):
    _, texts = web_model
    page.locator("#file").set_input_files({"name": "paragraph.txt", "mimeType": "text/plain",
                                           "buffer": " ".join(texts[2:5]).encode("utf-8")})
    assert page.locator("#data").is_disabled()
    answer = _submit(page, keyboard=False)
    assert answer.status == 200, answer.text()
    assert len(_check_rendering(page, answer.json()["result"])) == 3


def test_tokenized_input_is_sent_as_horizontal(page, web_model):
    _, texts = web_model
    words = re.findall(r"\w+|[^\w\s]", texts[5])
    page.locator("#input").select_option("horizontal")
    page.locator("#data").fill(" ".join(words))
    with page.expect_request(lambda r: r.url.endswith("/process")) as sent:
        answer = _submit(page)
    form = sent.value.post_data or ""
    assert 'name="input"' in form and "horizontal" in form and 'name="tokenizer"' not in form
    assert answer.status == 200, answer.text()
    (sent_,) = _check_rendering(page, answer.json()["result"])
    assert [w["form"] for w in sent_["words"]] == words


def test_an_error_shows_the_servers_one_line_message(page, web_model):
    """A file that is not UTF-8 (a Latin-1 "café"): the server refuses it with one line, which the page shows as it
    came; the last result stays hidden, and the next good request clears the message."""
    page.locator("#file").set_input_files({"name": "latin1.txt", "mimeType": "text/plain",
                                           "buffer": "Lo café barked.".encode("latin-1")})
    answer = _submit(page, keyboard=False)
    assert 400 <= answer.status < 500
    message = answer.text().strip()
    assert message and "\n" not in message
    assert page.locator("#error").is_visible()
    assert page.locator("#error").inner_text() == message
    assert page.locator("#results").is_hidden()
    assert page.locator("body").get_attribute("data-state") == "error"

    page.get_by_role("button", name="Remove file").click()
    page.locator("#data").fill(web_model[1][0])
    assert _submit(page).status == 200
    assert page.locator("#error").is_hidden()
    assert page.locator("svg.tree").count() == 1


def test_empty_text_is_an_empty_answer(page):
    """UDPipe answers an empty text with an empty result, and so does swvp: the page says there is nothing to show."""
    page.locator("#data").fill("")
    answer = _submit(page, keyboard=False)
    assert answer.status == 200, answer.text()
    assert answer.json()["result"].strip() == ""
    assert page.locator("svg.tree").count() == 0
    assert page.locator("#summary").inner_text() == "The answer has no sentences."
    assert page.locator("#error").is_hidden()


CROSSING = """# sent_id = np-1
# text = A hearing is scheduled on the issue today.
1\tA\ta\tDET\tDT\t_\t2\tdet\t_\t_
2\thearing\thearing\tNOUN\tNN\tNumber=Sing\t4\tnsubj:pass\t_\t_
3\tis\tbe\tAUX\tVBZ\t_\t4\taux:pass\t_\t_
4\tscheduled\tschedule\tVERB\tVBN\t_\t0\troot\t_\t_
5\ton\ton\tADP\tIN\t_\t7\tcase\t_\t_
6\tthe\tthe\tDET\tDT\t_\t7\tdet\t_\t_
7\tissue\tissue\tNOUN\tNN\t_\t2\tnmod\t_\t_
8\ttoday\ttoday\tNOUN\tNN\t_\t4\tobl:tmod\t_\tSpaceAfter=No
8.1\tx\tx\tVERB\t_\t_\t_\t_\t4:conj\t_
9\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

1-2\tvámonos\t_\t_\t_\t_\t_\t_\t_\t_
1\tvamos\tir\tVERB\t_\t_\t0\troot\t_\t_
2\tnos\tnosotros\tPRON\t_\t_\t1\tobj\t_\t_
3\t!\t!\tPUNCT\t_\t_\t1\tpunct\t_\t_
"""


def test_the_tree_nests_arcs_and_keeps_crossing_ones_apart(page):
    """The drawing of a non-projective tree, an empty node and a multiword token, through the page's own parser:
    every arc ends at its dependent's word; arcs at one height never share a stretch; an arc is above those it spans."""
    geometry = page.evaluate("""conllu => {
        const sents = window.swvp.parseConllu(conllu);
        const out = [];
        sents.forEach((s, i) => {
            const svg = window.swvp.renderTree(s, i + 1);
            document.body.appendChild(svg);
            const x = {};
            for (const g of svg.querySelectorAll("g.word")) {
                x[g.dataset.word] = Number(g.querySelector("text.form").getAttribute("x"));
            }
            // "M head base V . A r r 0 0 s x top H . A r r 0 0 s dependent . V ."
            const arcs = [...svg.querySelectorAll("path.arc:not(.root)")].map(p => {
                const n = p.getAttribute("d").match(/-?[0-9.]+(e-?[0-9]+)?/g).map(Number);
                return {word: p.dataset.word, start: n[0], top: n[9], end: n[n.length - 3]};
            });
            out.push({x, arcs, words: s.words.length, rows: s.rows.map(r => r.kind), text: window.swvp.sentenceText(s),
                      roots: svg.querySelectorAll("path.arc.root").length, mwt: svg.querySelectorAll("g.mwt").length});
        });
        return out;
    }""", CROSSING)
    first, second = geometry
    assert first["words"] == 9 and first["rows"].count("empty") == 1 and "8.1" not in first["x"]
    assert second["rows"][0] == "mwt" and second["mwt"] == 1 and second["text"] == "vámonos !"
    for sent in geometry:
        assert len(sent["arcs"]) + sent["roots"] == sent["words"] and sent["roots"] == 1
        spans = []
        for arc in sent["arcs"]:
            assert arc["end"] == pytest.approx(sent["x"][arc["word"]]), arc  # the arrow lands on the dependent
            spans.append((min(arc["start"], arc["end"]), max(arc["start"], arc["end"]), arc["top"]))
        for i, (lo, hi, top) in enumerate(spans):
            for lo2, hi2, top2 in spans[i + 1:]:
                if top == top2:
                    assert max(lo, lo2) >= min(hi, hi2), ("two arcs share a stretch at one height", spans)
                if lo < lo2 and hi2 < hi:  # the second lies inside the first: the first is higher (smaller y)
                    assert top < top2, spans
    # nmod (hearing → issue) crosses the arcs of "scheduled": it rises above all of them
    nmod = next(a for a in first["arcs"] if a["word"] == "7")
    assert nmod["top"] < min(a["top"] for a in first["arcs"] if a["word"] in ("3", "8"))


def test_at_a_phone_s_width_only_the_tree_scrolls(browser, web_server, web_model):
    _, texts = web_model
    context = browser.new_context(viewport={"width": 360, "height": 740})
    try:
        pg = context.new_page()
        pg.set_default_timeout(TIMEOUT_MS)
        pg.goto(web_server)
        pg.wait_for_selector("body[data-models=ready]")
        longest = max(texts, key=len)
        pg.locator("#data").fill(longest)
        answer = _submit(pg)
        assert answer.status == 200, answer.text()
        widths = pg.evaluate("""() => ({page: document.documentElement.scrollWidth,
            view: document.documentElement.clientWidth,
            tree: document.querySelector('.tree-scroll').scrollWidth,
            box: document.querySelector('.tree-scroll').clientWidth})""")
        assert widths["page"] <= widths["view"], widths  # the page itself never scrolls sideways
        assert widths["tree"] > widths["box"], widths  # the tree does, inside its box
    finally:
        context.close()
