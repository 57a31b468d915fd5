"""numba's reference-counting runtime (NRT) set up from a cached object file instead of compiled in every process.

Compiled numba code calls a few runtime functions (atomic increments and decrements, ``NRT_incref`` /
``NRT_decref``, the data pointer of a meminfo) that numba builds from LLVM IR and compiles when a process first needs
the runtime (``numba.core.runtime.nrtdynmod.compile_nrt_functions``), even when every kernel it runs comes from the
on-disk cache. That one compile runs LLVM's optimiser and x86 back end: about 0.1 s of CPU and 18–27 MB of the
LLVM library's code pages in every ``swvp parse`` process (`RssFile`, counted in its peak RSS), which loading cached
kernels alone never touches.

:func:`initialize` does what numba's ``rtsys.initialize`` does — registers the runtime's C helpers, then makes the
library of those functions — but loads the library from a cache file when there is one, as numba loads a cached
kernel (its object code, and the bitcode that code compiled later links against), and writes the file after
compiling it. The file's name is a digest of everything its code depends on: numba's and llvmlite's versions, the
target machine (triple, CPU name and features: numba's ``magic_tuple``) and the IR text itself; its content carries
its own digest, so a damaged or foreign file is compiled over, never run. Files are written atomically (temp file
+ rename); processes that write at once write the same bytes. The folders are the kernel cache's
(:func:`swvp._kernel_cache.runtime_folders`), which calls :func:`initialize` when it loads a kernel.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

from numba.core import config as numba_config
from numba.core.compiler_lock import global_compiler_lock
from numba.core.runtime import _nrt_python, nrtdynmod, rtsys

__all__ = ["CACHE_NAME", "cache_file", "initialize"]

#: the file name's stem; the digest of its key follows
CACHE_NAME = "nrt-library"
_MAGIC = b"swvp-nrt-library 1\n"
#: what :func:`initialize` relies on in numba's runtime (else numba's own ``rtsys.initialize`` runs)
_CAN_CACHE = (hasattr(nrtdynmod, "create_nrt_module") and hasattr(type(rtsys), "library") and hasattr(rtsys, "_init")
              and hasattr(_nrt_python, "c_helpers"))


def _key(target_context, ir_text: str) -> str:
    import llvmlite
    import numba

    codegen = target_context.codegen()
    parts = (numba.__version__, llvmlite.__version__, repr(codegen.magic_tuple()), ir_text)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def cache_file(target_context, folder: Path, ir_text: str) -> Path:
    """The runtime library's cache file in ``folder`` for this machine, numba and IR."""
    return folder / f"{CACHE_NAME}.{_key(target_context, ir_text)}.bin"


def _pack(object_code: bytes, bitcode: bytes) -> bytes:
    body = len(object_code).to_bytes(8, "little") + object_code + bitcode
    return _MAGIC + hashlib.sha256(body).digest() + body


def _unpack(data: bytes) -> tuple[bytes, bytes] | None:
    """(object code, bitcode) of a cache file's bytes; None unless they are whole and this module's format."""
    head = len(_MAGIC) + 32
    if len(data) < head + 8 or not data.startswith(_MAGIC):
        return None
    digest, body = data[len(_MAGIC):head], data[head:]
    if hashlib.sha256(body).digest() != digest:
        return None
    n = int.from_bytes(body[:8], "little")
    if not 0 < n < len(body) - 8:
        return None
    return body[8:8 + n], body[8 + n:]


def _register_helpers() -> None:
    """The runtime's C functions as symbols compiled code links against (as numba's ``rtsys.initialize``)."""
    import llvmlite.binding as ll

    if numba_config.NRT_STATS:
        _nrt_python.memsys_enable_stats()
    for py_name, address in _nrt_python.c_helpers.items():
        ll.add_symbol(py_name if py_name.startswith("_") else "NRT_" + py_name, address)


def _load(target_context, path: Path):
    """The runtime library from ``path`` (None: no such file, or not a whole one)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    parts = _unpack(data)
    if parts is None:
        return None
    try:
        return target_context.codegen().unserialize_library((CACHE_NAME, "object", parts))
    except Exception:  # noqa: BLE001 - bitcode LLVM refuses: compiled over
        return None


def _compile(target_context):
    """The runtime library compiled as numba compiles it, keeping its object code; (library, file bytes)."""
    ir_module, library = nrtdynmod.create_nrt_module(target_context)
    library.enable_object_caching()
    library.add_ir_module(ir_module)
    library.finalize()
    _, _, (object_code, bitcode) = library.serialize_using_object_code()
    return library, _pack(object_code, bitcode)


def _save(folders: list[Path], name: str, data: bytes) -> None:
    from swvp.data.textio import atomic_write_bytes

    for folder in folders:
        with contextlib.suppress(OSError):
            atomic_write_bytes(folder / name, data)
            return


def initialize(target_context, folders: list[Path]) -> None:
    """Set up numba's runtime for ``target_context`` (a no-op once it is): the cached library from the first of
    ``folders`` that holds it, else compiled and written to the first that can be written. Where numba's runtime is
    not as this module expects, numba's own set-up."""
    if rtsys._init:
        return
    if not _CAN_CACHE:
        rtsys.initialize(target_context)
        return
    with global_compiler_lock:
        if rtsys._init:
            return
        ir_text = str(nrtdynmod.create_nrt_module(target_context)[0])
        name = cache_file(target_context, Path(), ir_text).name
        _register_helpers()
        library = None
        for folder in folders:
            library = _load(target_context, folder / name)
            if library is not None:
                break
        if library is None:
            library, data = _compile(target_context)
            _save(folders, name, data)
        rtsys._library = library
        rtsys._init = True
