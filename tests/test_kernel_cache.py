"""The kernel cache (swvp._kernel_cache): stamps that cover what a kernel's compiled code depends on, index and data
files that several processes can write at once, and a cold cache compiled by several processes at once giving the
code of a single-process run."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba.core import caching

from swvp import _kernel_cache as kc

# ----------------------------------------------------------------------------------------------- source stamps


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """A package tree standing in for swvp (the closure functions read PACKAGE_ROOT and memoise per file)."""
    root = tmp_path / "swvp"

    def write(rel: str, text: str) -> Path:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    monkeypatch.setattr(kc, "PACKAGE_ROOT", root)
    monkeypatch.setattr(kc, "_DISPATCH", str(root / "_dispatch.py"))
    for fn in (kc._package_files, kc._imports, kc._registrants, kc._file_digest, kc.source_digest):
        fn.cache_clear()
    yield write
    for fn in (kc._package_files, kc._imports, kc._registrants, kc._file_digest, kc.source_digest):
        fn.cache_clear()


def _names(paths, root) -> set[str]:
    return {os.path.relpath(p, root).replace(os.sep, "/") for p in paths}


def test_the_closure_follows_module_level_imports_only(fake_package, tmp_path):
    k = fake_package("inference/_kernels.py", """
        from swvp._config import NJIT
        from swvp.model import (
            layout,  # a submodule named inside parentheses
            weights as w,
        )
        import swvp.data.text

        def later():
            from swvp.tasks import pipeline  # never reaches compiled code
        """)
    fake_package("_config.py", "X = 1\n")
    fake_package("model/__init__.py", "")
    fake_package("model/layout.py", "from swvp.structures.tree import heads\n")
    fake_package("model/weights.py", "")
    fake_package("structures/tree.py", "")
    fake_package("data/text.py", "")
    fake_package("tasks/pipeline.py", "")
    got = _names(kc.module_closure(k), tmp_path / "swvp")
    assert got == {"inference/_kernels.py", "_config.py", "model/__init__.py", "model/layout.py", "model/weights.py",
                   "structures/tree.py", "data/text.py"}


def test_a_registry_brings_in_its_registrants_and_their_imports(fake_package, tmp_path):
    fake_package("_dispatch.py", "")
    fake_package("learn/ops.py", "from swvp._dispatch import stub\n")
    engine = fake_package("learn/engine.py", "from swvp.learn import ops\n")
    fake_package("problems/_chain_ops.py", "from swvp.learn import ops\nfrom swvp.inference import viterbi\n")
    fake_package("inference/viterbi.py", "")
    fake_package("tasks/nbest.py", "from swvp.learn import ops\n")  # above the structures: never a registrant
    alone = fake_package("model/_kernels.py", "")
    got = _names(kc.module_closure(engine), tmp_path / "swvp")
    assert got == {"learn/engine.py", "learn/ops.py", "_dispatch.py", "problems/_chain_ops.py", "inference/viterbi.py"}
    assert _names(kc.module_closure(alone), tmp_path / "swvp") == {"model/_kernels.py"}


def test_the_stamp_changes_with_any_module_in_the_closure_and_no_other(fake_package):
    k = fake_package("a.py", "from swvp.b import f\n")
    b = fake_package("b.py", "C = 1\n")
    other = fake_package("c.py", "")
    before = kc.source_digest(k)
    for fn in (kc._file_digest, kc.source_digest):
        fn.cache_clear()
    other.write_text("D = 2\n")
    assert kc.source_digest(k) == before
    for fn in (kc._file_digest, kc.source_digest):
        fn.cache_clear()
    b.write_text("C = 2\n")
    assert kc.source_digest(k) != before


def test_swvp_kernels_use_the_locator_and_others_do_not():
    from swvp.inference._kernels.viterbi import viterbi1

    impl = viterbi1._cache._impl
    assert isinstance(impl.locator, kc.KernelCacheLocator)
    assert impl.locator.get_source_stamp()[:2] == ("swvp-kernel-cache", kc.CACHE_LAYOUT)
    assert isinstance(viterbi1._cache._cache_file, kc.LockedIndexDataCacheFile)
    closure = _names(kc.module_closure(viterbi1.py_func.__code__.co_filename), kc.PACKAGE_ROOT)
    assert "_config.py" in closure and "inference/_kernels/viterbi.py" in closure
    assert kc.KernelCacheLocator.from_function(np.add, np.__file__) is None


def test_the_engine_stamp_covers_the_structures_it_compiles():
    from swvp.learn import engine

    closure = _names(kc.module_closure(engine.__file__), kc.PACKAGE_ROOT)
    assert {"problems/_chain_ops.py", "problems/_transition_ops.py", "transition/_beam_kernels.py"} <= closure
    assert not any(name.startswith(("tasks/", "cli/")) for name in closure)


# ------------------------------------------------------------------------------------ index and data files

STAMP = ("swvp-kernel-cache", kc.CACHE_LAYOUT, "0" * 64)


def _save_many(cache_path: str, worker: int, n: int, stamp) -> None:
    f = kc.LockedIndexDataCacheFile(cache_path, "mod.fn-1.py311", stamp)
    for i in range(n):
        key = (f"sig-{worker}-{i}", ("x86_64", "cpu", ""), ("h", ""))
        f.save(key, {"key": key, "payload": os.urandom(2048)})


def test_concurrent_saves_keep_every_entry_and_each_file_holds_its_own_key(tmp_path):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_save_many, args=(str(tmp_path), w, 15, STAMP)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    f = kc.LockedIndexDataCacheFile(str(tmp_path), "mod.fn-1.py311", STAMP)
    index = f._load_index()
    assert len(index) == 60  # the lock keeps every process's entries
    for key in index:
        assert f.load(key)["key"] == key  # a data file only ever holds the code of the key naming it
    assert len(list(tmp_path.glob("*.nbc"))) == 60


def test_a_renewed_index_removes_the_data_files_of_older_sources(tmp_path):
    _save_many(str(tmp_path), 0, 3, STAMP)
    (tmp_path / "mod.fn-1.py311.7.nbc").write_bytes(b"numbered by numba's own scheme")
    (tmp_path / "mod.fn-12.py311.1.nbc").write_bytes(b"another function")
    newer = ("swvp-kernel-cache", kc.CACHE_LAYOUT, "1" * 64)
    _save_many(str(tmp_path), 1, 2, newer)
    f = kc.LockedIndexDataCacheFile(str(tmp_path), "mod.fn-1.py311", newer)
    assert sorted(p.name for p in tmp_path.glob("mod.fn-1.py311.*.nbc")) == sorted(f._load_index().values())
    assert (tmp_path / "mod.fn-12.py311.1.nbc").exists()


def test_other_stamps_keep_numbas_own_scheme(tmp_path):
    f = kc.LockedIndexDataCacheFile(str(tmp_path), "mod.fn-1.py311", ("not", "ours"))
    f.save(("k",), {"x": 1})
    assert [p.name for p in tmp_path.glob("*.nbc")] == ["mod.fn-1.py311.1.nbc"]
    assert caching.IndexDataCacheFile is kc.LockedIndexDataCacheFile


# ------------------------------------------------------- a cold cache compiled by several processes at once

#: Compiles (or loads) the Viterbi kernel for six signatures, starting at a different one in each process, and
#: prints the decoded paths and the number of compilations as JSON.
_CHILD = """
import json, sys
import numpy as np
from numba.core import event
from swvp.inference._kernels.viterbi import viterbi1

compiled = []
class Count(event.Listener):
    def on_start(self, ev): compiled.append(1)
    def on_end(self, ev): pass
event.register("numba:compile", Count())

start = int(sys.argv[1])
rng = np.random.default_rng(7)
n, K = 9, 5
E0 = rng.integers(-20, 20, (n, K)); T0 = rng.integers(-20, 20, (n, K + 1, K))
kinds = [(np.float64, np.int64), (np.float32, np.int64), (np.int64, np.int64), (np.float64, np.int32),
         (np.float32, np.int32), (np.int64, np.int32)]
out = {}
for j in range(len(kinds)):
    sdt, idt = kinds[(start + j) % len(kinds)]
    path = np.zeros(n, idt)
    viterbi1(E0.astype(sdt), T0.astype(sdt), n, K, path, np.zeros((n, K), sdt), np.zeros((n, K), idt))
    out[f"{np.dtype(sdt).name}/{np.dtype(idt).name}"] = path.tolist()
print(json.dumps({"paths": out, "compiled": len(compiled)}))
"""


def _children(starts, cache_dir) -> list[dict]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(s)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for s in starts]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    return results


@pytest.mark.slow
def test_kernels_compiled_by_several_processes_at_once_run_as_a_single_process_compiled_them(tmp_path):
    (alone,) = _children([0], tmp_path / "alone")
    assert alone["compiled"] >= 6
    together = _children(range(6), tmp_path / "shared")  # six processes, cold cache, each its own order
    for r in together:
        assert r["paths"] == alone["paths"]
    for _ in range(2):  # later processes load every signature from what the six wrote, and run the right code
        (again,) = _children([3], tmp_path / "shared")
        assert again == {"paths": alone["paths"], "compiled": 0}


# ------------------------------------------------------------------------------- loading without the refresh

LOAD_CHILD = """
import json, sys
import numba, numpy as np
from numba.core import cpu

refreshes = []
numbas = cpu.CPUContext.load_additional_registries  # what numba's registry refresh runs, once per refresh
cpu.CPUContext.load_additional_registries = lambda self: refreshes.append(1) or numbas(self)
from swvp.tasks.tagger import SequenceTagger
from swvp.learn.perceptron import Perceptron

X = [["a", "b", "c"], ["b", "a", "a"], ["c", "c", "b"]]
t = SequenceTagger(features="pos", learner=Perceptron(epochs=2, random_state=0)).fit(X, [["X", "Y", "Z"]] * 3)
tags = t.predict(X)
refreshed = len(refreshes)

@numba.njit
def fresh(a):  # compiled here, after the cached loads: numba's compiler refreshes its registries itself
    return np.argsort(a)[::-1].copy(), np.cumsum(a * 2.0)

order, sums = fresh(np.array([3.0, 1.0, 2.0]))
print(json.dumps({"tags": tags, "refreshed": refreshed, "order": order.tolist(), "sums": sums.tolist(),
                  "after_compile": len(refreshes)}))
"""


def test_cached_kernels_load_without_numbas_registry_refresh():
    """A process whose kernels all come from the cache never runs numba's registry refresh (0.15-0.2 s and 9 MB
    of a parse), gets the same results, and can still compile a kernel of its own afterwards."""
    warm = json.loads(subprocess.run([sys.executable, "-c", LOAD_CHILD], capture_output=True, text=True,
                                     check=True).stdout)  # the first run may compile (cold cache): refreshed
    out = json.loads(subprocess.run([sys.executable, "-c", LOAD_CHILD], capture_output=True, text=True,
                                    check=True).stdout)
    assert out["refreshed"] == 0
    assert out["tags"] == warm["tags"] == [["X", "Y", "Z"]] * 3
    assert out["order"] == [0, 2, 1] and out["sums"] == [6.0, 8.0, 12.0]
    assert out["after_compile"] >= 1


def test_other_packages_kernels_load_through_numbas_own_path():
    assert kc._CAN_SKIP_REFRESH and caching.Cache.load_overload is kc._load_without_refresh
    calls = []

    class Impl:
        locator = object()  # not a KernelCacheLocator

    class Cache:
        _impl = Impl()

    original = kc._numba_load_overload[0]
    kc._numba_load_overload[0] = lambda self, sig, ctx: calls.append((self, sig, ctx)) or "numba's"
    try:
        cache = Cache()
        assert kc._load_without_refresh(cache, "sig", "ctx") == "numba's"
    finally:
        kc._numba_load_overload[0] = original
    assert calls == [(cache, "sig", "ctx")]


def test_a_cache_miss_runs_the_compile_hooks_and_a_load_does_not(monkeypatch):
    """Before swvp's first compile in a process (a cache miss) the hooks of swvp._compile_hooks run, so that every
    structure's overloads exist before a kernel is typed (one imported during the typing made it fail: 'Cannot unify
    Function(n_steps) and Function(n_steps)'). Loads from the cache run nothing."""
    import contextlib

    from swvp import _compile_hooks, _runtime_cache

    calls = []
    monkeypatch.setattr(_compile_hooks, "run", lambda: calls.append("hooks"))
    monkeypatch.setattr(kc, "runtime_folders", lambda: [])
    monkeypatch.setattr(_runtime_cache, "initialize", lambda ctx, folders: None)

    class Cache:
        _impl = type("Impl", (), {"locator": object.__new__(kc.KernelCacheLocator)})()

        def __init__(self, found):
            self.found = found

        def _guard_against_spurious_io_errors(self):
            return contextlib.nullcontext()

        def _load_overload(self, sig, ctx):
            return self.found

    assert kc._load_without_refresh(Cache("code"), "sig", "ctx") == "code" and calls == []
    assert kc._load_without_refresh(Cache(None), "sig", "ctx") is None and calls == ["hooks"]


def test_the_compile_hooks_import_every_registrant_once():
    """The hook swvp.tasks installs imports every module that registers implementations with a _dispatch registry
    (the structures' operations, the lazy k-best graphs); hooks run once, and one added later runs at once."""
    child = textwrap.dedent("""
        import json, os, sys
        import swvp
        from swvp import _compile_hooks, _kernel_cache as kc
        files = {f for fs in kc._registrants().values() for f in fs}
        def loaded():
            return {os.path.realpath(m.__file__) for m in list(sys.modules.values()) if getattr(m, "__file__", None)}
        before = sorted(files - loaded())
        _compile_hooks.run()
        calls = []
        _compile_hooks.run()
        _compile_hooks.before_first_compile(lambda: calls.append(1))
        print(json.dumps({"registrants": len(files), "before": len(before), "missing": sorted(files - loaded()),
                          "late_hook": calls}))
        """)
    out = json.loads(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                                    check=True).stdout)
    assert out["registrants"] >= 5 and out["before"] > 0 and out["missing"] == [] and out["late_hook"] == [1]
