"""UDPipe's REST API (``/models``, ``/process``) read onto swvp: a request's parameters become a :class:`Job`, or a
:class:`RequestError` with UDPipe's kind of one-line message.

UDPipe's ``/process`` takes ``data`` (the text), ``model`` (a name, or any hyphen-separated prefix of one), and
``tokenizer``, ``tagger``, ``parser``: the presence of each runs that stage (``tagger=none`` / ``parser=none``
leave it out, as UDPipe 1 reads them); their values are ``;``-separated options. Without ``tokenizer`` the text is
read as ``input`` (``conllu`` by default); ``output`` says what is written (``conllu`` by default). Formats take
options after ``=`` (``output=horizontal=paragraphs``). What maps onto swvp:

================  =========================================================================================
parameter         swvp
================  =========================================================================================
tokenizer         the pipeline's tokenizer (``swvp parse --input raw``); option ``normalized_spaces`` accepted
                  (swvp always writes only ``SpaceAfter=No`` and ``# newpar``); ``presegmented``, ``ranges``,
                  ``joint_with_parsing`` and the rest refused (swvp's tokenizer finds sentences itself and keeps
                  no character offsets)
tagger            the tagger and the lemmatizer (UDPipe's tagger lemmatizes too); no options
parser            the parser; no options
input             ``conllu`` (``--input conllu``), ``horizontal`` (``--input tokenized``: a sentence per line,
                  tokens split at whitespace; a no-break space, UDPipe's space inside a token, is refused),
                  ``vertical`` (a token per line, an empty line after each sentence: read as the horizontal text
                  it lists); ``tokenizer[=options]`` as the parameter; ``generic_tokenizer`` refused
output            ``conllu``; ``horizontal`` and ``vertical`` (option ``paragraphs``); ``plaintext=normalized_spaces``
                  (plain ``plaintext`` rebuilds the original spacing, which swvp does not record: refused);
                  ``matxin`` and ``epe`` refused
================  =========================================================================================

The CoNLL-U result is ``swvp parse``'s output for a file holding ``data``'s bytes, byte for byte (UDPipe 2 turns
the text to NFC and adds ``# generator`` comments; swvp does neither). The other outputs are written from the same
analysis as UDPipe's writers write them.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["COMPONENTS", "PARAMETERS", "Job", "RequestError", "format_sentences", "make_job", "parse_form",
           "resolve_model", "runs_with", "vertical_to_horizontal"]

#: the parameters of ``/process``; any other is refused
PARAMETERS = ("data", "model", "tokenizer", "tagger", "parser", "input", "output")
#: UDPipe's components and the annotations of the stages each runs (a stage runs with a component when it provides
#: one of them: :mod:`swvp.tasks.stages`)
COMPONENTS = {"tokenizer": ("tokens",), "tagger": ("upos", "xpos", "feats", "lemma"), "parser": ("head", "deprel")}


def runs_with(stage, component: str) -> bool:
    """Whether a pipeline stage runs with UDPipe's ``component``."""
    return bool(set(stage.provides) & set(COMPONENTS[component]))
#: at most this many fields in a form (every parameter once, and room for a client's repeated ones)
MAX_FIELDS = 32

_TOKENIZER_REFUSED = {
    "presegmented": "swvp's tokenizer finds the sentence boundaries itself (send tokenized text as input=horizontal, "
                    "or separate the parts by empty lines: each paragraph is tokenized on its own)",
    "ranges": "swvp keeps no character offsets of tokens",
    "joint_with_parsing": "swvp's tokenizer splits sentences on its own",
}


class RequestError(Exception):
    """A request answered with HTTP ``status`` and a one-line plain-text ``message``."""

    def __init__(self, status: int, message: str):
        message = " ".join(str(message).split("\n")).strip()  # one line, whatever it quotes
        super().__init__(message)
        self.status, self.message = int(status), message

    def __reduce__(self):  # across the worker processes
        return (RequestError, (self.status, self.message))


def _quote(value: str, limit: int = 60) -> str:
    """A client's value quoted in a message: shortened, without control characters."""
    value = re.sub(r"[\x00-\x1f\x7f]", "?", value)
    return repr(value if len(value) <= limit else value[:limit] + "...")


# ------------------------------------------------------------------------------------------------ form parsing


def _field_text(name: str, value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RequestError(400, f"The parameter '{name}' is not valid UTF-8 (byte 0x{value[err.start]:02x} at byte "
                                f"offset {err.start}).") from None


def parse_urlencoded(data: bytes, where: str) -> list[tuple[str, bytes]]:
    """The ``name=value`` pairs of an URL's query or an ``application/x-www-form-urlencoded`` body, values as bytes
    (percent-escapes and ``+`` undone; nothing decoded, so that bad UTF-8 is found where it is)."""
    out = []
    for part in data.split(b"&"):
        if not part:
            continue
        name, _, value = part.partition(b"=")
        name_bytes = urllib.parse.unquote_to_bytes(name.replace(b"+", b" "))
        out.append((_field_text(f"name in the {where}", name_bytes),
                    urllib.parse.unquote_to_bytes(value.replace(b"+", b" "))))
    return out


def parse_multipart(body: bytes, content_type: str) -> list[tuple[str, bytes]]:
    """The named parts of a ``multipart/form-data`` body (fields and uploaded files alike, as UDPipe reads them),
    values as bytes."""
    from python_multipart.exceptions import MultipartParseError
    from python_multipart.multipart import MultipartParser, parse_options_header

    _, options = parse_options_header(content_type)
    boundary = options.get(b"boundary")
    if not boundary:
        raise RequestError(400, "The multipart/form-data payload has no boundary.")
    parts: list[tuple[str, bytes]] = []
    state = {"field": b"", "value": b"", "headers": {}, "data": [], "ended": False}

    def on_part_begin() -> None:
        state["headers"], state["data"] = {}, []

    def on_header_field(data: bytes, start: int, end: int) -> None:
        state["field"] += data[start:end]

    def on_header_value(data: bytes, start: int, end: int) -> None:
        state["value"] += data[start:end]

    def on_header_end() -> None:
        state["headers"][state["field"].lower()] = state["value"]
        state["field"], state["value"] = b"", b""

    def on_part_data(data: bytes, start: int, end: int) -> None:
        state["data"].append(data[start:end])

    def on_part_end() -> None:
        _, disposition = parse_options_header(state["headers"].get(b"content-disposition", b""))
        name = disposition.get(b"name")
        if name is not None:
            if len(parts) >= MAX_FIELDS:
                raise RequestError(400, f"The form has more than {MAX_FIELDS} fields.")
            parts.append((_field_text("name of a form field", name), b"".join(state["data"])))

    def on_end() -> None:
        state["ended"] = True

    parser = MultipartParser(boundary, {"on_part_begin": on_part_begin, "on_header_field": on_header_field,
                                        "on_header_value": on_header_value, "on_header_end": on_header_end,
                                        "on_part_data": on_part_data, "on_part_end": on_part_end,
                                        "on_end": on_end})
    try:
        parser.write(body)
        parser.finalize()
    except MultipartParseError as err:
        raise RequestError(400, f"Cannot parse the multipart/form-data payload: {err}.") from None
    if not state["ended"]:
        raise RequestError(400, "Cannot parse the multipart/form-data payload: it ends before its closing boundary.")
    return parts


def parse_form(query: bytes, body: bytes, content_type: str | None) -> dict[str, bytes]:
    """A request's parameters: the URL's query, then the body's form fields (a later value of a name replaces an
    earlier one, as in UDPipe). An unknown parameter is refused."""
    pairs = parse_urlencoded(query, "URL")
    media = (content_type or "").split(";")[0].strip().lower()
    if body or media:
        if media == "application/x-www-form-urlencoded":
            pairs += parse_urlencoded(body, "form")
        elif media == "multipart/form-data":
            pairs += parse_multipart(body, content_type or "")
        else:
            raise RequestError(415, f"Unsupported payload Content-Type {_quote(content_type or '<none>')}: send "
                                    "application/x-www-form-urlencoded or multipart/form-data.")
    if len(pairs) > MAX_FIELDS:
        raise RequestError(400, f"The request has more than {MAX_FIELDS} parameters.")
    params: dict[str, bytes] = {}
    for name, value in pairs:
        if name not in PARAMETERS:
            raise RequestError(400, f"Unknown parameter {_quote(name)}; /process takes {', '.join(PARAMETERS)}.")
        params[name] = value
    return params


# ----------------------------------------------------------------------------------------------------- the job


@dataclass(frozen=True, slots=True)
class Job:
    """One ``/process`` request, ready to run (:func:`swvp.serve.decoding.run_job`): the model's name, the
    components to run (of :data:`COMPONENTS`), the input kind (``raw``, ``conllu``, ``tokenized`` as ``swvp parse
    --input`` reads them, or ``vertical``), the output (``conllu``, ``horizontal``, ``vertical``, ``plaintext``),
    its ``paragraphs`` option, the acknowledgements of the answer and the text's bytes."""

    model: str
    components: tuple[str, ...]
    input: str
    output: str
    paragraphs: bool
    acknowledgements: tuple[str, ...]
    data: bytes


def resolve_model(requested: str | None, names: Iterable[str]) -> str:
    """The configured model a request names: ``requested`` itself, or the one model it is a hyphen-separated prefix
    of (UDPipe's model ids: ``english`` for ``english-ewt-ud-2.12``); None or empty: the first (default) model."""
    names = list(names)
    if not requested:
        return names[0]
    if requested in names:
        return requested
    found = [n for n in names if n.startswith(requested + "-")]
    if len(found) == 1:
        return found[0]
    if found:
        raise RequestError(400, f"The requested model {_quote(requested)} is ambiguous: it names "
                                f"{', '.join(found)}.")
    raise RequestError(400, f"The requested model {_quote(requested)} does not exist (models: {', '.join(names)}).")


def _options(text: str) -> dict[str, str | None]:
    """UDPipe's ``name[=value];name...`` options."""
    out: dict[str, str | None] = {}
    for item in text.split(";"):
        item = item.strip()
        if item:
            name, eq, value = item.partition("=")
            out[name] = value if eq else None
    return out


def _tokenizer_options(text: str) -> None:
    for name in _options(text):
        if name == "normalized_spaces":
            continue  # what swvp always writes: SpaceAfter=No and # newpar only
        why = _TOKENIZER_REFUSED.get(name)
        if why:
            raise RequestError(400, f"The tokenizer option '{name}' is not supported: {why}.")
        raise RequestError(400, f"Unknown tokenizer option {_quote(name)} (swvp's tokenizer takes "
                                "normalized_spaces only).")


def _format(value: str) -> tuple[str, str]:
    name, _, options = value.partition("=")
    return name.strip(), options


def make_job(params: Mapping[str, bytes], components: Mapping[str, Iterable[str]],
             acknowledgements: Mapping[str, Iterable[str]] | None = None) -> Job:
    """The :class:`Job` of a request's parameters (:func:`parse_form`), given each configured model's components
    (name → e.g. ``["tokenizer", "tagger", "parser"]``, the default model first) and the acknowledgements of its
    answers."""
    if "data" not in params:
        raise RequestError(400, "Required argument 'data' is missing.")
    text = {name: _field_text(name, value) for name, value in params.items() if name != "data"}
    model = resolve_model(text.get("model"), components)
    has = set(components[model])
    run = []
    kind = None
    tokenizer = text.get("tokenizer")
    if tokenizer is None:
        input_name, input_options = _format(text.get("input", "conllu"))
        if input_name == "tokenizer":  # UDPipe: the model's tokenizer chosen through the input format
            tokenizer = input_options
        elif input_name == "conllu":
            if _options(input_options).keys() - {"v2"}:
                raise RequestError(400, f"The input format option(s) {_quote(input_options)} of conllu are not "
                                        "supported (swvp reads CoNLL-U v2).")
            kind = "conllu"
        elif input_name in ("horizontal", "vertical"):
            if input_options.strip():
                raise RequestError(400, f"The input format '{input_name}' takes no options, got "
                                        f"{_quote(input_options)}.")
            kind = "tokenized" if input_name == "horizontal" else "vertical"
        elif input_name == "generic_tokenizer":
            raise RequestError(400, "The input format 'generic_tokenizer' is not supported: swvp has no rule-based "
                                    "tokenizer (use tokenizer= for the model's own).")
        else:
            raise RequestError(400, f"Unknown input format {_quote(input_name)} (conllu, horizontal, vertical).")
    if tokenizer is not None:
        _tokenizer_options(tokenizer)
        run.append("tokenizer")
        kind = "raw"
    for stage in ("tagger", "parser"):
        value = text.get(stage)
        if value is None or value.strip() == "none":
            continue
        if value.strip():
            raise RequestError(400, f"The {stage} takes no options in swvp, got {_quote(value)}.")
        run.append(stage)
    for stage in run:
        if stage not in has:
            raise RequestError(400, f"The required model does not contain a {stage}!")
    output, paragraphs = _output(text.get("output", "conllu"))
    return Job(model, tuple(run), kind, output, paragraphs, tuple((acknowledgements or {}).get(model, ())),
               params["data"])


def _output(value: str) -> tuple[str, bool]:
    name, options = _format(value)
    opts = _options(options)
    if name == "conllu":
        if opts.keys() - {"v2"}:
            raise RequestError(400, f"The output format option(s) {_quote(options)} of conllu are not supported "
                                    "(swvp writes CoNLL-U v2).")
        return name, False
    if name in ("horizontal", "vertical"):
        if opts.keys() - {"paragraphs"}:
            raise RequestError(400, f"Unknown option(s) {_quote(options)} of the output format '{name}' "
                                    "(paragraphs).")
        return name, "paragraphs" in opts
    if name == "plaintext":
        if "normalized_spaces" not in opts:
            raise RequestError(400, "The output format 'plaintext' rebuilds the original spacing, which swvp does "
                                    "not record: use output=plaintext=normalized_spaces.")
        if opts.keys() - {"normalized_spaces"}:
            raise RequestError(400, f"Unknown option(s) {_quote(options)} of the output format 'plaintext'.")
        return name, False
    if name in ("matxin", "epe"):
        raise RequestError(400, f"The output format '{name}' is not supported by swvp (conllu, horizontal, "
                                "vertical, plaintext=normalized_spaces).")
    raise RequestError(400, f"Unknown output format {_quote(name)} (conllu, horizontal, vertical, "
                            "plaintext=normalized_spaces).")


# ------------------------------------------------------------------------------------------------ the formats


def vertical_to_horizontal(text: str) -> str:
    """UDPipe's vertical input (a token per line — its first tab-separated field —, an empty line after each
    sentence) as the horizontal text it stands for: a sentence per line, tokens separated by a space. A token with
    a space in it cannot be written so (swvp's tokens hold none): refused."""
    out, sentence = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        token = line.split("\t", 1)[0]
        if not token.strip():
            if line.strip():
                raise RequestError(400, f"data:{number}: vertical input: an empty token.")
            if sentence:
                out.append(" ".join(sentence))
                sentence = []
            continue
        if any(c.isspace() for c in token):
            raise RequestError(400, f"data:{number}: vertical input: the token {_quote(token)} holds a space "
                                    "(swvp's tokens hold none).")
        sentence.append(token)
    if sentence:
        out.append(" ".join(sentence))
    return "".join(s + "\n" for s in out)


def format_sentences(sentences, output: str, paragraphs: bool, first: bool) -> str:
    """``sentences`` (:class:`swvp.data.text.Sentence`) in UDPipe's ``horizontal``, ``vertical`` or
    ``plaintext=normalized_spaces`` output; ``first``: they start the answer (no paragraph break before the
    first)."""
    out = []
    for sent in sentences:
        if (paragraphs or output == "plaintext") and not first and (sent.newdoc or sent.newpar):
            out.append("\n")
        first = False
        if output == "horizontal":
            out.append(" ".join(w.form.replace(" ", "\u00a0") for w in sent.words) + "\n")
        elif output == "vertical":
            out.append("".join(w.form + "\n" for w in sent.words) + "\n")
        else:
            last = len(sent.tokens) - 1
            out.append("".join(t.form + (" " if t.space_after and i < last else "")
                               for i, t in enumerate(sent.tokens)) + "\n")
    return "".join(out)
