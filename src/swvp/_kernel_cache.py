"""numba's on-disk cache of swvp's kernels, made safe across processes and across edits of the source.

numba keeps each ``cache=True`` kernel in files beside its source: an index (``__pycache__/NAME-LINE.pyXY.nbi``:
signature → data file) and one data file of compiled code per signature. Two defects of its own scheme matter to
swvp, which starts several processes that compile at once (``train pipeline --jobs``, ``parse --jobs``,
``experiment --jobs``, Dask and server workers):

* **Data files are numbered** by their entry's position in the index: two processes that compile different
  signatures of one function both take the next free number, and the index one of them writes can then name the
  other's code — a later process runs code compiled for another signature: wrong results or a crash (numba issues
  4807 and 10128).
* **An index is valid while its own file is unchanged**, but the code it holds includes what the kernel calls from
  other files and the constants it reads from them: after an edit (or an upgrade) of a callee, callers kept running
  the old code.

:func:`install` (run by :mod:`swvp._config`, which every kernel module imports before it defines a kernel) makes
swvp's kernels use :class:`KernelCacheLocator`, whose source stamp covers the kernel's file and every swvp module
it imports, directly or through others; and :class:`LockedIndexDataCacheFile`, which names a data file after its
index key and stamp (a file only ever holds the code its name stands for), and writes data and index while holding
an exclusive lock on the function's index (no process drops another's entry; data files of an older source are
removed when the index is renewed). Other packages' kernels keep numba's own behaviour.

:func:`notify_compiling` lets a command say, once per process, that it is compiling (the first top-level
compilation after a cache miss), since that can take a while.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
import threading
from collections.abc import Callable
from functools import cache, lru_cache
from pathlib import Path

from numba.core import caching, event
from numba.core import config as numba_config

#: Bumped when the layout of the cache written here changes (it is part of every stamp).
CACHE_LAYOUT = 1
#: The root of the swvp package: kernels defined below it are cached by :class:`KernelCacheLocator`.
PACKAGE_ROOT = Path(os.path.realpath(__file__)).parent
_STAMP_TAG = "swvp-kernel-cache"

__all__ = ["CACHE_LAYOUT", "KernelCacheLocator", "LockedIndexDataCacheFile", "install", "module_closure",
           "notify_compiling", "source_digest"]

# ----------------------------------------------------------------------------------------------- source stamps

#: module-level ``from swvp.x import a, b`` (one line, or parenthesised over several) and ``import swvp.x[.y]``: a
#: kernel reads only its module's globals, so imports inside functions never reach compiled code
_FROM_IMPORT = re.compile(r"^from[ \t]+(swvp(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_COMMENT = re.compile(r"#[^\n]*")
_PLAIN_IMPORT = re.compile(r"^import[ \t]+(swvp(?:\.\w+)*)", re.M)


@lru_cache(maxsize=1)
def _package_files() -> dict[str, str]:
    """Every module of the package: path relative to :data:`PACKAGE_ROOT` (``a/b.py``) → absolute path."""
    root = str(PACKAGE_ROOT)
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(folder, root)
        for f in files:
            if f.endswith(".py"):
                out[f if rel == "." else f"{rel}/{f}".replace(os.sep, "/")] = os.path.join(folder, f)
    return out


def _module_file(name: str) -> str | None:
    """The source file of swvp module ``name`` (``swvp.a.b`` → ``a/b.py`` or ``a/b/__init__.py``), or None."""
    rel = name.replace(".", "/")[len("swvp/"):]
    files = _package_files()
    return files.get(rel + ".py") or files.get(rel + "/__init__.py")


@cache
def _imports(path: str) -> frozenset[str]:
    """The swvp modules ``path`` imports at module level."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    names: set[str] = set(_PLAIN_IMPORT.findall(text))
    for module, imported in _FROM_IMPORT.findall(text):
        names.add(module)
        for item in _COMMENT.sub("", imported).strip("()\\ \n").split(","):
            item = item.split(" as ")[0].strip(" ()\\\n")
            if item.isidentifier():
                names.add(f"{module}.{item}")  # a submodule, when there is such a file
    return frozenset(f for f in map(_module_file, names) if f is not None and f != path)


#: the module whose stubs get their compiled implementations by the type of an argument (``_dispatch.register_for``)
_DISPATCH = str(PACKAGE_ROOT / "_dispatch.py")
#: packages that never register implementations (layers above the structures: DESIGN.md)
_NOT_REGISTRANTS = ("tasks/", "cli/", "experiments/")


def _forward(start: str, seen: set[str]) -> None:
    todo = [start]
    seen.add(start)
    while todo:
        for dep in _imports(todo.pop()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)


@lru_cache(maxsize=1)
def _registrants() -> dict[str, tuple[str, ...]]:
    """registry module (one that imports :mod:`swvp._dispatch`) → the modules below ``tasks`` that import it."""
    files = [f for rel, f in _package_files().items() if not rel.startswith(_NOT_REGISTRANTS)]
    registries = [f for f in files if _DISPATCH in _imports(f)]
    return {r: tuple(f for f in files if r in _imports(f)) for r in registries}


def module_closure(path: str | os.PathLike) -> tuple[str, ...]:
    """The modules whose source can reach the compiled code of a kernel in ``path``, sorted: ``path`` and every swvp
    module it imports, directly or through others; and where that reaches a registry of implementations chosen by
    argument type (:mod:`swvp.learn.ops`, the lazy k-best core), every module that registers there, with its own
    imports (the engine compiled for a chain inlines the chain's operations, which its own imports never name)."""
    seen: set[str] = set()
    _forward(os.path.realpath(path), seen)
    if _DISPATCH in seen:
        registrants = _registrants()
        grown = True
        while grown:
            size = len(seen)
            for registry in [r for r in registrants if r in seen]:
                for f in registrants[registry]:
                    if f not in seen:
                        _forward(f, seen)
            grown = len(seen) > size
    return tuple(sorted(seen))


@cache
def _file_digest(path: str) -> bytes:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).digest()


@cache
def source_digest(path: str | os.PathLike) -> str:
    """A digest of the source of ``path`` and of every module that can reach its compiled code
    (:func:`module_closure`)."""
    root = str(PACKAGE_ROOT)
    h = hashlib.sha256()
    for f in module_closure(path):
        h.update(os.path.relpath(f, root).replace(os.sep, "/").encode())
        h.update(_file_digest(f))
    return h.hexdigest()


def _in_package(py_file: str) -> bool:
    return os.path.realpath(py_file).startswith(str(PACKAGE_ROOT) + os.sep)


# ----------------------------------------------------------------------------------------------- the locator


def _user_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "swvp" / "numba"


#: numba's in-tree locator and cache implementation (underscored names before numba 0.61)
_InTreeCacheLocator = getattr(caching, "InTreeCacheLocator", None) or caching._InTreeCacheLocator
_CacheImpl = getattr(caching, "CacheImpl", None) or caching._CacheImpl


def runtime_folders() -> list[Path]:
    """Where the runtime library's cache file (:mod:`swvp._runtime_cache`) may live, in order, as the kernels'
    caches: ``NUMBA_CACHE_DIR``, else the package's ``__pycache__`` (shipped there by an install that compiled the
    kernels), then the user's cache folder."""
    if numba_config.CACHE_DIR:
        return [Path(numba_config.CACHE_DIR) / "swvp"]
    return [PACKAGE_ROOT / "__pycache__", _user_cache_root()]


class KernelCacheLocator(_InTreeCacheLocator):
    """Where a swvp kernel's cache lives — ``NUMBA_CACHE_DIR`` when set, else the ``__pycache__`` beside its source
    (shipped there by an install that compiled them), else a user cache folder when that one cannot be written —
    and its stamp: the digest of its module and every swvp module that module imports."""

    def __init__(self, py_func, py_file, cache_path: str):
        super().__init__(py_func, py_file)
        self._cache_path = cache_path

    def get_source_stamp(self):
        return (_STAMP_TAG, CACHE_LAYOUT, source_digest(self._py_file))

    @classmethod
    def from_function(cls, py_func, py_file):
        if not _in_package(py_file):
            return None
        if numba_config.CACHE_DIR:
            paths = [os.path.join(numba_config.CACHE_DIR, cls.get_suitable_cache_subpath(py_file))]
        else:
            paths = [os.path.join(os.path.dirname(py_file), "__pycache__"),
                     str(_user_cache_root() / cls.get_suitable_cache_subpath(py_file))]
        for path in paths:
            self = cls(py_func, py_file, path)
            try:
                self.ensure_cache_path()
            except OSError:
                continue
            return self
        return None


# ------------------------------------------------------------------------------------------ index and data files


def _is_ours(stamp) -> bool:
    return isinstance(stamp, tuple) and len(stamp) == 3 and stamp[0] == _STAMP_TAG


@contextlib.contextmanager
def _exclusive(lock_path: str):
    """An exclusive advisory lock on ``lock_path`` between processes (threads of one process: a mutex too)."""
    with _THREAD_LOCK:
        try:
            import fcntl
        except ImportError:  # no POSIX locks (Windows): data files are still named by their keys
            yield
            return
        with open(lock_path, "a+b") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)


_THREAD_LOCK = threading.RLock()


class LockedIndexDataCacheFile(caching.IndexDataCacheFile):
    """numba's index and data files, for swvp's kernels (other stamps: numba's own behaviour).

    A data file is named after a hash of its index key (signature, target machine, bytecode) and the source stamp,
    so whoever writes it writes the same code; data and index are written under an exclusive lock on the index,
    data first (an index never names a file that is not whole), and a renewed index (new source) removes the data
    files no entry names any more.
    """

    def save(self, key, data):
        if not _is_ours(self._source_stamp):
            return super().save(key, data)
        name = self._keyed_name(key)
        with _exclusive(self._index_path + ".lock"):
            overloads = self._load_index()
            self._save_data(name, data)
            if overloads.get(key) != name:
                renewed = not overloads
                overloads[key] = name
                self._save_index(overloads)
                if renewed:
                    self._remove_unindexed(set(overloads.values()))

    def _keyed_name(self, key) -> str:
        digest = hashlib.sha256(repr((key, self._source_stamp)).encode()).hexdigest()[:24]
        return f"{self._index_name[:-len('.nbi')]}.{digest}.nbc"

    def _remove_unindexed(self, keep: set[str]) -> None:
        """Delete this function's data files that the index does not name (compiled from an older source)."""
        prefix = self._index_name[:-len(".nbi")] + "."
        try:
            names = os.listdir(self._cache_path)
        except OSError:
            return
        for name in names:
            if name.startswith(prefix) and name.endswith(".nbc") and name not in keep:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self._cache_path, name))


# ------------------------------------------------------------------------------------------------- installing

_installed = False


def install() -> None:
    """Make swvp's kernels (those defined from now on) use :class:`KernelCacheLocator` and
    :class:`LockedIndexDataCacheFile`, load cached ones without numba's registry refresh
    (:func:`_load_without_refresh`), and answer numba's BLAS probe without importing ``scipy.linalg``
    (:mod:`swvp._startup`); idempotent."""
    global _installed
    if _installed:
        return
    locators = _CacheImpl._locator_classes
    if KernelCacheLocator not in locators:
        locators.insert(0, KernelCacheLocator)
    caching.IndexDataCacheFile = LockedIndexDataCacheFile  # what numba's Cache instantiates, looked up per cache
    if _CAN_SKIP_REFRESH and caching.Cache.load_overload is not _load_without_refresh:
        _numba_load_overload[0] = caching.Cache.load_overload
        caching.Cache.load_overload = _load_without_refresh
    from swvp import _startup

    _startup.install()  # a kernel's environment may import numba.np.arraymath: its BLAS probe without scipy.linalg
    _installed = True


# ------------------------------------------------------------------------------- loading without the refresh

#: numba's ``Cache.load_overload`` (set by :func:`install`)
_numba_load_overload: list = [None]
#: what :func:`_load_without_refresh` relies on in numba's cache and runtime
_CAN_SKIP_REFRESH = all(hasattr(caching.Cache, name) for name in
                        ("load_overload", "_load_overload", "_guard_against_spurious_io_errors"))


def _load_without_refresh(self, sig, target_context):
    """numba's ``Cache.load_overload`` for swvp's kernels, without ``target_context.refresh()``.

    That refresh imports and installs every typing and lowering registry numba has (~250: its whole NumPy and
    Python library, and SciPy's BLAS probe) — what *compiling* needs, and numba's compiler refreshes by itself when
    it compiles (``CompilerBase``). Loading compiled code needs only the symbols that code links against: the
    C helpers and math functions (registered when numba's CPU context is made) and the reference-counting runtime,
    which numba initialises in that refresh and is initialised here. In a ``swvp parse`` process this saves
    0.15–0.2 s of CPU and 9 MB (the first kernel load took 40 MB and 0.2–0.3 s). Other packages' kernels load as
    numba loads them."""
    if not isinstance(getattr(getattr(self, "_impl", None), "locator", None), KernelCacheLocator):
        return _numba_load_overload[0](self, sig, target_context)
    from swvp import _runtime_cache

    _runtime_cache.initialize(target_context, runtime_folders())  # numba's rtsys.initialize, its library cached
    loaded = None  # stays None when the guard swallows an I/O error: compiled instead
    with self._guard_against_spurious_io_errors():
        loaded = self._load_overload(sig, target_context)
    if loaded is None:  # numba compiles it next: what must be in place before its typing starts (_compile_hooks)
        from swvp import _compile_hooks

        _compile_hooks.run()
    return loaded


# ------------------------------------------------------------------------------------------ saying we compile


class _FirstCompile(event.Listener):
    """Calls ``callback(name)`` at the first top-level compilation of the process (a cache miss)."""

    def __init__(self, callback: Callable[[str], None]):
        self.callback, self.depth, self.done = callback, 0, False

    def on_start(self, ev):
        if self.depth == 0 and not self.done:
            self.done = True
            func = ev.data["dispatcher"].py_func
            self.callback(f"{func.__module__}.{func.__qualname__}")
        self.depth += 1

    def on_end(self, ev):
        self.depth -= 1


def notify_compiling(callback: Callable[[str], None] | None = None) -> None:
    """Have ``callback(kernel_name)`` called once, when this process first compiles a kernel (default: a line on
    standard error saying so)."""
    if callback is None:
        def callback(name: str) -> None:
            print(f"swvp: compiling kernels ({name.rsplit('.', 1)[-1]} first): once after an install or an "
                  "update, cached for later runs", file=sys.stderr, flush=True)
    event.register("numba:compile", _FirstCompile(callback))
