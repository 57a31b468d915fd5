"""Mutants of every text format through every Python reader: each reads to its source's content or is rejected
with a DataError naming the file and line (``python -m fuzz --many N`` runs thousands)."""

from __future__ import annotations

import pytest

from fuzz import harness
from fuzz.mutate import OPS, Source, generate, make, synthetic_sources

SYNTHETIC = synthetic_sources()


@pytest.mark.parametrize("src", SYNTHETIC, ids=lambda s: s.name)
def test_synthetic_mutants(src: Source, tmp_path):
    mutants = generate([src], per_op=3)
    assert len(mutants) >= 2 * len(OPS[src.fmt])
    problems = [p for m in mutants for p in harness.check_reader(m, tmp_path)]
    assert not problems, "\n".join(problems)


@pytest.mark.data
def test_real_slice_mutants(fuzz_sources, tmp_path):
    real = [s for s in fuzz_sources if not s.name.startswith("syn-")]
    if not real:
        pytest.skip("shared data not available")
    mutants = generate(real, per_op=1)
    problems = [p for m in mutants for p in harness.check_reader(m, tmp_path)]
    assert not problems, "\n".join(problems)


def test_the_empty_field_of_issue_14_is_generated_and_rejected(tmp_path):
    """The defect that started the suite: a CoNLL-U token line with two tabs in a row was accepted."""
    from fuzz.mutate import cu_empty_field

    src = next(s for s in SYNTHETIC if s.fmt == "conllu")
    for seed in range(20):
        m = make(src, cu_empty_field, seed)
        line = m.data.decode().split("\n")[m.line - 1]
        assert "\t\t" in line or line.startswith("\t") or line.endswith("\t")
        assert harness.check_reader(m, tmp_path) == []


def test_the_oracle_can_fail(tmp_path):
    """A 'reject' mutant that is in fact valid, and a 'same' mutant whose content differs, are reported."""
    src = next(s for s in SYNTHETIC if s.fmt == "conll2000")
    valid_but_reject = harness.Mutant(src, "probe", 0, src.data, frozenset({"reject"}), 1)
    assert any("accepted an invalid file" in p for p in harness.check_reader(valid_but_reject, tmp_path))
    changed = src.data.replace(b"reckons", b"reckon")
    assert any("read different content" in p
               for p in harness.check_reader(harness.Mutant(src, "probe", 1, changed, frozenset({"same"})), tmp_path))
    wrong_line = harness.Mutant(src, "probe", 2, src.data.replace(b"B-VP", b"X-VP"), frozenset({"reject"}), 1)
    assert any("line 2" in p for p in harness.check_reader(wrong_line, tmp_path))


def test_time_limit_interrupts_a_hang():
    import time

    with pytest.raises(harness.CaseTimeout):
        with harness.time_limit(0.05):
            time.sleep(2)


def test_is_prefix():
    src = [(("a", "1"), ("b", "2")), (("c", "3"), ("dd", "4"))]
    assert harness.is_prefix(src, src)
    assert harness.is_prefix(src[:1], src)
    assert harness.is_prefix([src[0], (("c", "3"), ("d", "4"))], src)
    assert not harness.is_prefix([src[0], (("c", "3"), ("x", "4"))], src)
    assert not harness.is_prefix([src[1]], src)
