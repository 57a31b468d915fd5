"""The stage contract (issue 35 item 1): a user's stage written from the README alone — its 'Writing a stage'
example, run as printed — replaces the lemmatizer, or is added as a stage of its own; it trains, saves inside the
pipeline's file, loads and parses; what breaks the contract is refused once, naming the stage."""

import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from morph_language import split_treebank, treebank_files
from swvp.data.conllu import parse_conllu
from swvp.data.text import Document, raw_text_of_conllu
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.tasks.lemmatizer import Lemmatizer
from swvp.tasks.morphology import MorphologicalTagger
from swvp.tasks.pipeline import Pipeline
from swvp.tasks.stages import check_stage, register_stage
from swvp.tasks.tokenizer import Tokenizer
from swvp.tasks.transition_parser import TransitionDependencyParser

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_stage_code() -> str:
    """The README's dictionary lemmatizer: its 'Writing a stage' Python block up to the lines that use it."""
    section = README.read_text(encoding="utf-8").split("### Writing a stage", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    return block.split("\npipe = ", 1)[0]


@pytest.fixture(scope="module")
def readme_stage():
    """The README's class, in a module of its own (as a user's script or package holds it: worker processes send
    fitted stages back by pickling, which finds a class by its module)."""
    module = types.ModuleType("readme_stage")
    sys.modules[module.__name__] = module
    exec(compile(readme_stage_code(), "README.md (Writing a stage)", "exec"), module.__dict__)
    yield module.DictionaryLemmatizer
    del sys.modules[module.__name__]


@pytest.fixture(scope="module")
def treebank(tmp_path_factory):
    return treebank_files(tmp_path_factory.mktemp("stage-treebank"))


def stages(**kwargs) -> dict:
    out = dict(tokenizer=Tokenizer(learner=Perceptron(epochs=3)),
               tagger=MorphologicalTagger(learner=Perceptron(epochs=3)),
               parser=TransitionDependencyParser(hash_bits=14, move_hash_bits=14,
                                                 learner=Perceptron(search=Beam(4), epochs=3)))
    out.update(kwargs)
    return out


def test_the_readme_stage_replaces_the_lemmatizer_and_survives_a_file(readme_stage, treebank, tmp_path):
    pipe = Pipeline(**stages(lemmatizer=readme_stage()), jackknife=2).fit(treebank["train"])
    assert type(pipe.stages_["lemmatizer"]) is readme_stage
    path = tmp_path / "dictionary.npz"
    pipe.save(path)
    loaded = Pipeline.load(path)
    assert list(loaded.stages_) == ["tokenizer", "tagger", "lemmatizer", "parser"]
    assert type(loaded.stages_["lemmatizer"]) is readme_stage
    assert loaded.stages_["lemmatizer"].table_ == pipe.stages_["lemmatizer"].table_
    text = raw_text_of_conllu(parse_conllu(treebank["test"].read_text(encoding="utf-8")))
    out = loaded.analyze(text)
    assert out.to_conllu() == pipe.analyze(text).to_conllu()
    table = pipe.stages_["lemmatizer"].table_
    words = out.words
    assert words and all(w.lemma == table.get((w.form, w.upos), w.form) for w in words)
    assert sum((w.form, w.upos) in table for w in words) > len(words) // 2  # the dictionary did the work
    assert all(w.head >= 0 for w in words)  # the stages after it still ran


def test_an_added_stage_runs_in_its_place_in_the_order(readme_stage, treebank, tmp_path):
    """A stage added as a (name, stage) pair, after the built-in lemmatizer: it overwrites the lemmas."""
    pipe = Pipeline(**stages(lemmatizer=Lemmatizer(learner=Perceptron(epochs=2))), jackknife=0,
                    stages=("tokenizer", "tagger", "lemmatizer", ("dictionary", readme_stage()), "parser"))
    pipe.fit(treebank["train"])
    assert list(pipe.stages_) == ["tokenizer", "tagger", "lemmatizer", "dictionary", "parser"]
    pipe.save(tmp_path / "added.npz")
    loaded = Pipeline.load(tmp_path / "added.npz")
    assert list(loaded.stages_) == list(pipe.stages_)
    doc = loaded.analyze("Some text here.")
    table = loaded.stages_["dictionary"].table_
    assert all(w.lemma == table.get((w.form, w.upos), w.form) for w in doc.words)


def test_a_stage_in_a_worker_process_and_from_a_fresh_process(readme_stage, treebank, tmp_path):
    """``jobs=2`` trains the user's stage in a worker process; a new Python process that defines the class (the
    README's code) loads the file and gives the same analysis."""
    pipe = Pipeline(**stages(lemmatizer=readme_stage()), jackknife=2, jobs=2).fit(treebank["train"])
    path = tmp_path / "jobs.npz"
    pipe.save(path)
    script = readme_stage_code() + textwrap.dedent(f"""
        print(Pipeline.load({str(path)!r})("Some text here. And more."), end="")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == pipe("Some text here. And more.")


class _Bare:
    provides = ("lemma",)
    requires = ("tokens",)

    def fit(self, doc, *, dev=None, on_progress=None):
        return self

    def annotate(self, doc):
        return doc

    def file_contents(self):
        return {}, {}

    @classmethod
    def from_file_contents(cls, header, arrays, where):
        return cls()


def test_a_file_whose_stage_class_is_not_imported_names_the_kind(tmp_path):
    """A pipeline file holding a kind no imported class registered: ModelFormatError naming it and the fix."""
    from swvp.exceptions import ModelFormatError
    from swvp.tasks.stages import _USER_KINDS

    @register_stage("probe-upper-lemmas")
    class Upper(_Bare):
        def annotate(self, doc):
            for w in doc.words:
                w.lemma = w.form.upper()
            return doc

    train, _ = split_treebank(1)
    path = tmp_path / "train.conllu"
    path.write_text(train.to_conllu(), encoding="utf-8")
    pipe = Pipeline(stages=(("upper", Upper()),), jackknife=0).fit(path)
    pipe.save(tmp_path / "upper.npz")
    doc = Pipeline.load(tmp_path / "upper.npz").annotate(Document.from_conllu(train.to_conllu()))
    assert all(w.lemma == w.form.upper() for w in doc.words)
    del _USER_KINDS["probe-upper-lemmas"]
    with pytest.raises(ModelFormatError, match="unknown stage kind 'probe-upper-lemmas'.*register_stage"):
        Pipeline.load(tmp_path / "upper.npz")


@pytest.mark.parametrize("stage_list, message", [
    ((("lemmatizer", object()),), "does not meet the stage contract: provides must be"),
    ((("x", _Bare()),), "_Bare is not registered"),
    (("tokenizer", "parser"), "stage parser requires upos, feats|stage parser requires upos"),
    (("tagger", "tokenizer"), "tokenizer makes the tokens: it must come first"),
    (("tokenizer", "tagger", "tagger"), "two stages are named 'tagger'"),
    (("tokenizer", "lexer"), "unknown stage 'lexer'"),
    (("tokenizer", ("tagger", Tokenizer())), "the tagger stage is one of morphological-tagger models"),
])
def test_a_broken_stage_list_is_refused_once_naming_the_stage(stage_list, message):
    with pytest.raises(ValueError, match=message):
        Pipeline(stages=stage_list, jackknife=0)._validate()


def test_register_stage_checks_the_class_and_refuses_a_taken_kind():
    with pytest.raises(ValueError, match="taken"):
        register_stage("lemmatizer")(_Bare)
    with pytest.raises(TypeError, match="no annotate"):
        register_stage("no-annotate")(type("NoAnnotate", (), {"fit": lambda self, d: self}))
    assert check_stage(Lemmatizer()) == [] and check_stage(Tokenizer()) == []
    assert check_stage(TransitionDependencyParser()) == [] and check_stage(MorphologicalTagger()) == []


def test_the_service_runs_a_users_stage_with_the_component_of_what_it_provides(readme_stage, treebank):
    """UDPipe's ``tagger`` component runs every stage that provides tags or lemmas — a user's lemmatizer too — and
    ``tokenizer`` alone runs none of them (``swvp serve``'s ``tagger=`` / ``parser=`` parameters)."""
    pytest.importorskip("starlette")
    from swvp.serve.app import components_of
    from swvp.serve.decoding import stage_view

    pipe = Pipeline(**stages(lemmatizer=readme_stage()), jackknife=0,
                    stages=("tokenizer", "tagger", "lemmatizer")).fit(treebank["train"])
    assert components_of(pipe) == ["tokenizer", "tagger"]
    assert list(stage_view(pipe, ("tokenizer",)).stages_) == ["tokenizer"]
    assert stage_view(pipe, ("tokenizer", "tagger")) is pipe
