"""A software prefetch usable from njit kernels: ``prefetch(arr, i)`` asks the CPU to bring ``arr[i]``'s cache
line closer (LLVM's ``llvm.prefetch``: read, high locality). It changes no value; it lets the misses of many
independent rows overlap instead of being paid one after another (the transition parser's scoring reads ~140
rows, half of them 101 weights wide, at random places of a table much larger than the caches)."""

from __future__ import annotations

from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, arr, idx):
    """Prefetch the cache line of ``arr[idx]`` (a 1-d array and an integer index; no bounds check, no effect)."""
    if not isinstance(arr, types.Array) or not isinstance(idx, types.Integer):
        return None
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # (address, rw = 0 read, locality = 3 keep in all levels, cache type = 1 data)
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


if config.DISABLE_JIT:  # kernels run as plain Python (coverage runs): a prefetch is a no-op

    def prefetch(arr, idx):  # noqa: F811
        """No effect (NUMBA_DISABLE_JIT=1)."""
