"""``swvp compile`` (what an install from source runs) and the line a command prints while it compiles."""

from __future__ import annotations

import subprocess
import sys

from cli.conftest import swvp

#: compiles the Viterbi kernel for a signature nothing else uses, with the command line's announcement on
_COMPILE_ONE = """
import numpy as np
from swvp._config import announce_compiling
announce_compiling()
from swvp.inference._kernels.viterbi import viterbi1
n, K = 3, 2
viterbi1(np.zeros((n, K), np.float32), np.zeros((n, K + 1, K), np.float32), n, K, np.zeros(n, np.int16),
         np.zeros((n, K), np.float32), np.zeros((n, K), np.int16))
"""


def test_a_process_that_compiles_says_so_once_and_a_warm_one_says_nothing(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    cold = subprocess.run([sys.executable, "-c", _COMPILE_ONE], capture_output=True, text=True, env=env, timeout=300)
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count("swvp: compiling kernels") == 1
    warm = subprocess.run([sys.executable, "-c", _COMPILE_ONE], capture_output=True, text=True, env=env, timeout=300)
    assert warm.returncode == 0 and "compiling" not in warm.stderr


def test_compile_trains_and_parses_a_random_treebank():
    r = swvp("compile", "--jobs", "2", timeout=1800)
    assert r.rc == 0, r.err
    assert "compiled and cached" in r.err


def test_the_parse_is_compiled_for_every_type_of_compact_values(tmp_path):
    """A quantised file's stage holds int16 or int32 values (the narrower that fits its range), a lossless one
    float64, and the gaps between entries are read in the narrowest unsigned type: ``decode_value_types`` decodes
    with each, so an installed swvp has them all compiled."""
    from swvp import Beam, Lemmatizer, MorphologicalTagger, Perceptron, Pipeline, Tokenizer, TransitionDependencyParser
    from swvp.data.conllu import read_conllu
    from swvp.data.text import raw_text_of_conllu
    from swvp.data.toy_treebank import toy_treebank
    from swvp.learn.engine import decode_corpus
    from swvp.model._compact_kernels import blocks_from_gaps
    from swvp.model.compact import GAP_TYPES, VALUE_TYPES
    from swvp.tasks.warm_up import decode_value_types

    train, raw, model = tmp_path / "train.conllu", tmp_path / "raw.txt", tmp_path / "toy.npz"
    train.write_text(toy_treebank(40, seed=3), encoding="utf-8")
    raw.write_text(raw_text_of_conllu(read_conllu(train))[:400], encoding="utf-8")
    one = {"learner": Perceptron(epochs=1)}
    Pipeline(tokenizer=Tokenizer(**one), tagger=MorphologicalTagger(**one), lemmatizer=Lemmatizer(**one),
             parser=TransitionDependencyParser(hash_bits=12, move_hash_bits=12, learner=Perceptron(search=Beam(2),
                                                                                                   epochs=1)),
             jackknife=0).fit(str(train)).save(model)
    decode_value_types(Pipeline.load(model), raw.read_text(encoding="utf-8"))
    # the compact weights' signatures (a tuple; a test run earlier in this process may have decoded dense weights)
    beam_values = {str(sig[2].types[1].dtype) for sig in decode_corpus.signatures
                   if "BeamSearch" in str(sig[1]) and hasattr(sig[2], "types")}
    assert beam_values >= set(VALUE_TYPES)
    assert {str(sig[0].dtype) for sig in blocks_from_gaps.signatures} >= set(GAP_TYPES)
