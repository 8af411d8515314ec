"""Numba presets and the low-level intrinsics the training kernels are built from.

Nothing here is mathematics: the presets every jitted function of the package
is compiled with, small LLVM intrinsics that tell the compiler what Numba
cannot express (a cache hint, arrays without reference counts, a use that keeps
arrays alive, buffers on the stack, vectors of ``LANES`` float32 with masked
loads), and a watch on compilations (a first run compiles; later ones load the
kernels from Numba's cache). ``kernels`` holds the algorithm.
"""

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, event
from numba.extending import intrinsic, models, register_model

from w2v.jitcache import DAMAGED, njit_cached
from w2v.progress import note

FASTMATH = {"reassoc", "contract"}  # not fastmath=True: that makes isnan() always false
# Division as in numpy (no ZeroDivisionError check): the check is a branch to an
# exception around every division, which keeps the compiler from vectorising the
# loops of logistic units (their 1 / (1 + e)); no divisor in the kernels can be zero.
ERROR_MODEL = "numpy"
# Heap scratch buffers are padded by this many 4-byte elements (two cache lines) on
# both sides, so that no two threads' buffers can share a cache line.
PAD = 32
LINE_FLOATS = 16  # float32 in a 64-byte cache line
LANES = 16  # float32 in a ``Lanes`` vector: one AVX-512 register, two AVX ones


def jit_helper(function):
    """Compile a helper that the kernels call from several places, or from inner
    loops: compiled once for each set of argument types, and inlined by LLVM into
    every caller (``forceinline``: LLVM's ``alwaysinline``), so that the whole
    kernel is one function and LLVM knows its stack buffers alias nothing."""
    return njit_cached(function, forceinline=True, nogil=True, fastmath=FASTMATH, error_model=ERROR_MODEL)


def jit_inline(function):
    """Compile a helper that is called from one place, a stage of the kernel built of
    ``jit_helper`` calls: Numba inlines it (``inline="always"``), so that LLVM
    optimises its code once, in the kernel, and not again in each stage that calls
    it. Numba types an inlined function's code again at every call site, so the
    helpers called from several places are ``jit_helper``'s."""
    return njit_cached(function, inline="always", nogil=True, fastmath=FASTMATH, error_model=ERROR_MODEL)


def jit_kernel(function):
    """Compile a kernel: released GIL, ``FASTMATH``, numpy's division, cached on disk
    (keyed by all its build sources: ``w2v.jitcache``)."""
    return njit_cached(function, nogil=True, fastmath=FASTMATH, error_model=ERROR_MODEL)


@intrinsic
def prefetch(typingctx, matrix, row, col):
    """Ask the CPU to start loading the cache line of ``matrix[row, col]`` (a hint:
    no effect on results)."""

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        index = [context.cast(builder, v, t, types.intp) for v, t in zip(args[1:], signature.args[1:], strict=True)]
        shape = cgutils.unpack_tuple(builder, array.shape)
        strides = cgutils.unpack_tuple(builder, array.strides)
        layout = signature.args[0].layout
        pointer = cgutils.get_item_pointer2(
            context, builder, array.data, shape, strides, layout, index, wraparound=False
        )
        byte_pointer = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [byte_pointer] + [ir.IntType(32)] * 3)
        hint = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        read, high_locality, data_cache = (ir.Constant(ir.IntType(32), v) for v in (0, 3, 1))
        builder.call(hint, [builder.bitcast(pointer, byte_pointer), read, high_locality, data_cache])
        return context.get_dummy_value()

    return types.void(matrix, row, col), codegen


def unmanaged_array(context, builder, array_type, value):
    """Code for a copy of the array struct ``value`` with no meminfo (no reference count)."""
    source = context.make_array(array_type)(context, builder, value)
    view = context.make_array(array_type)(context, builder)
    view.meminfo = cgutils.get_null_value(view.meminfo.type)
    view.parent = cgutils.get_null_value(view.parent.type)
    for name in ("nitems", "itemsize", "data", "shape", "strides"):
        setattr(view, name, getattr(source, name))
    return view._getvalue()


@intrinsic
def unmanaged(typingctx, value):
    """The same array, or tuple (named or not) of arrays, with no reference counts
    (meminfo NULL), for arrays kept alive by someone else for as long as it is used
    (the caller's, or ``keep_alive``'s).

    Numba counts references to every array it binds to a variable, and the helpers
    inlined into a kernel bind theirs per example: an atomic increment and
    decrement of the array's count, through a call that clobbers every vector
    register, on a cache line that every thread sharing the weights writes.
    Views of an unmanaged array count nothing.
    """
    if isinstance(value, types.Array):

        def codegen(context, builder, signature, args):
            return unmanaged_array(context, builder, value, args[0])

        return value(value), codegen
    if isinstance(value, types.BaseTuple) and all(isinstance(t, types.Array) for t in value.types):

        def codegen_tuple(context, builder, signature, args):
            items = [
                unmanaged_array(context, builder, t, builder.extract_value(args[0], i)) for i, t in enumerate(value)
            ]
            return context.make_tuple(builder, value, items)

        return value(value), codegen_tuple
    return None


@intrinsic
def keep_alive(typingctx, arrays):
    """A use of ``arrays`` (a tuple) that generates nothing: they stay alive until here,
    so ``unmanaged`` views of them taken earlier stay valid."""

    def codegen(context, builder, signature, args):
        return context.get_dummy_value()

    return types.void(arrays), codegen


@intrinsic
def stack_matrix(typingctx, rows, cols):
    """A (rows, cols) float32 array on the stack of the kernel it is called from:
    allocated where the call is (call it once per kernel call, outside any loop: the
    room is given back only when the kernel returns), uninitialised, unmanaged,
    starting on a 64-byte cache line.

    For the buffers the inner loops write: the compiler knows that no other
    pointer reaches stack memory, so it keeps rows in registers across loops and
    drops the overlap checks and scalar fallbacks it adds for heap arrays.
    """
    if not isinstance(rows, types.Integer) or not isinstance(cols, types.Integer):
        return None
    array_type = types.Array(types.float32, 2, "C")

    def codegen(context, builder, signature, args):
        intp = context.get_value_type(types.intp)
        n_rows, n_cols = (context.cast(builder, v, t, types.intp) for v, t in zip(args, signature.args, strict=True))
        data = builder.alloca(ir.FloatType(), size=builder.mul(n_rows, n_cols))
        data.align = 4 * LINE_FLOATS
        array = context.make_array(array_type)(context, builder)
        context.populate_array(
            array,
            data=data,
            shape=[n_rows, n_cols],
            strides=[builder.mul(n_cols, ir.Constant(intp, 4)), ir.Constant(intp, 4)],
            itemsize=ir.Constant(intp, 4),
            meminfo=None,
        )
        return array._getvalue()

    return array_type(rows, cols), codegen


class Lanes(types.Type):
    """A vector of ``LANES`` float32 held in registers (LLVM's ``<16 x float>``), for
    loops over a row whose length is known only at run time: the compiler
    vectorises such a loop itself, but leaves a remainder of up to 63 floats to a
    narrower loop and a scalar one, whose chain of dependent additions a dot
    product then waits on. Blocks of ``Lanes``, the last one masked, have no
    remainder."""

    def __init__(self):
        super().__init__(name=f"Lanes{LANES}xf32")


LANES_TYPE = Lanes()
VECTOR = ir.VectorType(ir.FloatType(), LANES)
LANE_INDEX = ir.VectorType(ir.IntType(32), LANES)
LANE_MASK = ir.VectorType(ir.IntType(1), LANES)
I32 = ir.IntType(32)
VECTOR_MATH = ("reassoc", "contract")  # FASTMATH's flags, on the vector instructions


@register_model(Lanes)
class LanesModel(models.PrimitiveModel):
    """``Lanes`` is LLVM's vector type itself."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, VECTOR)


def lanes_from(builder, value, vector_type):
    """Code for ``value`` in every lane of a ``vector_type``."""
    one = builder.insert_element(ir.Constant(vector_type, None), value, ir.Constant(I32, 0))
    return builder.shuffle_vector(one, ir.Constant(vector_type, None), ir.Constant(LANE_INDEX, [0] * LANES))


def block_access(context, builder, signature, args):
    """Code for the pointer to ``array[start]`` and the mask of the lanes k with
    ``start + k < end``, from the arguments (array, start, end, ...)."""
    array_type, start_type, end_type = signature.args[:3]
    start = context.cast(builder, args[1], start_type, types.intp)
    end = context.cast(builder, args[2], end_type, types.intp)
    pointer = builder.gep(context.make_array(array_type)(context, builder, args[0]).data, [start])
    remaining = builder.trunc(builder.sub(end, start), I32)  # rows are far shorter than 2**31 floats
    splat = lanes_from(builder, remaining, LANE_INDEX)
    return pointer, builder.icmp_signed("<", ir.Constant(LANE_INDEX, list(range(LANES))), splat)


@intrinsic
def lanes_load(typingctx, array, start, end):
    """``array[start : start + LANES]`` (a contiguous float32 array) as ``Lanes``, the
    lanes at or past ``end`` read as 0 and not touched in memory: a block of a
    row of ``end`` floats, the last one partial or empty."""

    def codegen(context, builder, signature, args):
        pointer, mask = block_access(context, builder, signature, args)
        fnty = ir.FunctionType(VECTOR, [pointer.type, I32, LANE_MASK, VECTOR])
        load = cgutils.get_or_insert_function(builder.module, fnty, f"llvm.masked.load.v{LANES}f32.p0")
        return builder.call(load, [pointer, ir.Constant(I32, 4), mask, ir.Constant(VECTOR, [0.0] * LANES)])

    return LANES_TYPE(array, start, end), codegen


@intrinsic
def lanes_store(typingctx, array, start, end, value):
    """Write ``value`` (``Lanes``) into ``array[start : min(start + LANES, end)]``
    (a contiguous float32 array), the lanes at or past ``end`` not written."""

    def codegen(context, builder, signature, args):
        pointer, mask = block_access(context, builder, signature, args)
        fnty = ir.FunctionType(ir.VoidType(), [VECTOR, pointer.type, I32, LANE_MASK])
        store = cgutils.get_or_insert_function(builder.module, fnty, f"llvm.masked.store.v{LANES}f32.p0")
        builder.call(store, [args[3], pointer, ir.Constant(I32, 4), mask])
        return context.get_dummy_value()

    return types.void(array, start, end, value), codegen


@intrinsic
def lanes_splat(typingctx, value):
    """``Lanes`` all holding ``value`` (cast to float32)."""

    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[0], signature.args[0], types.float32)
        return lanes_from(builder, value, VECTOR)

    return LANES_TYPE(value), codegen


@intrinsic
def lanes_zero(typingctx):
    """``Lanes`` of 0.0."""

    def codegen(context, builder, signature, args):
        return ir.Constant(VECTOR, [0.0] * LANES)

    return LANES_TYPE(), codegen


@intrinsic
def lanes_fma(typingctx, a, b, c):
    """``a * b + c``, lane by lane (``Lanes``)."""

    def codegen(context, builder, signature, args):
        return builder.fadd(builder.fmul(args[0], args[1], flags=VECTOR_MATH), args[2], flags=VECTOR_MATH)

    return LANES_TYPE(a, b, c), codegen


@intrinsic
def lanes_add(typingctx, a, b):
    """``a + b``, lane by lane (``Lanes``)."""

    def codegen(context, builder, signature, args):
        return builder.fadd(args[0], args[1], flags=VECTOR_MATH)

    return LANES_TYPE(a, b), codegen


@intrinsic
def lanes_divide(typingctx, a, b):
    """``a / b``, lane by lane (``Lanes``)."""

    def codegen(context, builder, signature, args):
        return builder.fdiv(args[0], args[1], flags=VECTOR_MATH)

    return LANES_TYPE(a, b), codegen


@intrinsic
def lanes_total(typingctx, a):
    """The sum of the lanes of ``a`` (``Lanes``), float32, in any order."""

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.FloatType(), [ir.FloatType(), VECTOR])
        reduce = cgutils.get_or_insert_function(builder.module, fnty, f"llvm.vector.reduce.fadd.v{LANES}f32")
        return builder.call(reduce, [ir.Constant(ir.FloatType(), -0.0), args[0]], fastmath=VECTOR_MATH)

    return types.float32(a), codegen


def shuffled_sum(builder, a, b, first, second):
    """Code for ``shuffle(a, b, first) + shuffle(a, b, second)``: lane i gains the
    lanes ``first[i]`` and ``second[i]`` of ``a`` then ``b`` side by side."""
    pick = [builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(I32, len(m)), m)) for m in (first, second)]
    return builder.fadd(pick[0], pick[1], flags=VECTOR_MATH)


@intrinsic
def lanes_totals4(typingctx, out, at, a, b, c, d):
    """``out[at : at + 4] = (sum a, sum b, sum c, sum d)`` (four ``Lanes``; ``out`` a
    contiguous float32 array): four reductions at once, each in the order of
    ``lanes_total`` (lane k with lane k + 8, then k + 4, k + 2 and k + 1), in 8 adds
    and 16 shuffles where four reductions one by one take 16 and 16."""

    def codegen(context, builder, signature, args):
        half = [list(range(8)), list(range(8, 16))]
        a8, b8, c8, d8 = (shuffled_sum(builder, v, v, *half) for v in args[2:])
        x = shuffled_sum(builder, a8, b8, [0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15])
        y = shuffled_sum(builder, c8, d8, [0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15])
        z = shuffled_sum(builder, x, y, [0, 1, 4, 5, 8, 9, 12, 13], [2, 3, 6, 7, 10, 11, 14, 15])
        sums = shuffled_sum(builder, z, z, [0, 2, 4, 6], [1, 3, 5, 7])
        array = context.make_array(signature.args[0])(context, builder, args[0])
        start = context.cast(builder, args[1], signature.args[1], types.intp)
        pointer = builder.bitcast(builder.gep(array.data, [start]), sums.type.as_pointer())
        builder.store(sums, pointer, align=4)
        return context.get_dummy_value()

    return types.void(out, at, a, b, c, d), codegen


PLAIN_MATH = ("afn",)  # a flag that no addition or multiplication reads: see ``plain_add``


def plain_binop(opname):
    """An intrinsic ``a op b`` on two floats of one type, as IEEE arithmetic (``plain_add``)."""

    def typer(typingctx, a, b):
        if not isinstance(a, types.Float) or a != b:
            return None

        def codegen(context, builder, signature, args):
            return getattr(builder, opname)(args[0], args[1], flags=PLAIN_MATH)

        return a(a, b), codegen

    return intrinsic(typer)


plain_add = plain_binop("fadd")
plain_add.__doc__ = """``a + b`` (two float32 or two float64) rounded as IEEE arithmetic: the compiler may
neither reorder it among other additions nor fuse it with a multiplication, which
the kernels' ``FASTMATH`` lets it do. Numba gives every float operation without
flags its ``FASTMATH`` flags; ``PLAIN_MATH``'s one flag (approximate functions)
keeps them off and means nothing to an addition. For word2vec.c's float order
(``c_arithmetic``)."""
plain_mul = plain_binop("fmul")
plain_mul.__doc__ = """``a * b`` rounded as IEEE arithmetic, never fused with an addition (``plain_add``)."""


@jit_helper
def prefetch_row(matrix, row, dim):
    """Prefetch every cache line (``LINE_FLOATS`` float32) of ``matrix[row]`` ((dim,) float32)."""
    for col in range(0, dim, LINE_FLOATS):
        prefetch(matrix, row, col)


@jit_helper
def scratch(size, dtype):
    """An uninitialised (size,) buffer of a 4-byte ``dtype``, ``PAD`` elements away
    from any other allocation on both sides."""
    return np.empty(size + 2 * PAD, dtype=dtype)[PAD:-PAD]


class CompileWatch(event.Listener):
    """Numba's compilations while installed (``watch_compiles``), not its loads from
    the on-disk cache: their total ``seconds`` (a compilation inside another counted
    once), and ``announce(dispatcher)`` called as each outermost one starts."""

    def __init__(self, announce: Callable[[Any], None] | None = None):
        self.announce = announce
        self.seconds = 0.0
        self.depth = 0
        self.started = 0.0

    def on_start(self, event) -> None:
        if self.depth == 0:
            self.started = time.perf_counter()
            if self.announce is not None:
                self.announce(event.data["dispatcher"])
        self.depth += 1

    def on_end(self, event) -> None:
        self.depth -= 1
        if self.depth == 0:
            self.seconds += time.perf_counter() - self.started


@contextmanager
def watch_compiles(announce: Callable[[Any], None] | None = None) -> Iterator[CompileWatch]:
    """A ``CompileWatch`` of the compilations in the block, in any thread (Numba's
    ``numba:compile`` events, which a load from the cache does not send)."""
    watch = CompileWatch(announce)
    with event.install_listener("numba:compile", watch):
        yield watch


KERNEL_FAMILIES = {
    "w2v.corpus.chunkcounter": "counting",
    "w2v.engine.kernels": "training",
}  # by the module of the jitted function


def compile_reach(cache_path: str | None) -> str:
    """How long a compilation serves: the run's note on it, given the folder of Numba's
    cache (None: none could be written)."""
    if cache_path is None:
        return (
            "in every run, as no folder for Numba's cache can be written (the package's, "
            "NUMBA_CACHE_DIR or the user's cache folder): set NUMBA_CACHE_DIR to a writable one"
        )
    return f"once for this version of w2v and Numba on this CPU (cached in {cache_path})"


@contextmanager
def compiling_noted() -> Iterator:
    """A ``CompileWatch`` over the block (its ``seconds``: time spent compiling),
    which says on stderr that the counting or training kernels are being compiled,
    once each, as a compilation starts: a first run's silent wait, told whether
    progress is shown or not (it is about the time a run takes, not its progress);
    and at the end which damaged files of Numba's cache it found and replaced
    (``jitcache.CheckedCacheFile``)."""
    announced: set[str] = set()
    damaged_before = set(DAMAGED)

    def announce(dispatcher) -> None:
        function = dispatcher.py_func
        family = KERNEL_FAMILIES.get(function.__module__, function.__name__)
        if family not in announced:
            announced.add(family)
            note(f"compiling the {family} kernels: {compile_reach(dispatcher.stats.cache_path)}")

    try:
        with watch_compiles(announce) as watch:
            yield watch
    finally:
        if damaged := sorted(DAMAGED - damaged_before):
            folders = ", ".join(sorted({os.path.dirname(path) for path in damaged}))
            note(f"{len(damaged)} damaged file(s) of Numba's cache found and compiled again, in {folders}")
