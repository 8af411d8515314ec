"""Holding Ctrl-C (SIGINT) and SIGTERM over a block, to deliver them once it ends.

Python runs a signal's handler in the main thread between two bytecodes, and
where that is inside a ctypes callback or a ``__del__``, the exception the
handler raises (KeyboardInterrupt, the CLI's ``Terminated``) is printed as
"Exception ignored" and dropped: the run would go on as if no signal came.
While Numba loads or compiles code, LLVM calls back into Python that way
(llvmlite's callbacks, its objects' finalizers), so that work is done under
``signals_held``; so is starting worker threads (``workers.EpochRunner``).
"""

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then deliver the first that came.

    Python runs handlers in the main thread whichever thread the OS picked (a
    progress-bar monitor, say), so the main thread's handlers are swapped for
    one that notes the signal; the calling thread's mask (POSIX) also blocks
    them, and threads started in the block inherit it, so workers never take
    them. Off the main thread, where handlers cannot be set, only the mask."""
    noted: list[int] = []
    swap = threading.current_thread() is threading.main_thread()
    handlers = {number: signal.signal(number, lambda n, _: noted.append(n)) for number in HELD_SIGNALS if swap}
    masked = hasattr(signal, "pthread_sigmask")
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS) if masked else set()
    try:
        yield
    finally:
        if masked:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a held signal's handler (noting it) runs here
        for number, handler in handlers.items():
            signal.signal(number, handler)
        if noted:
            signal.raise_signal(noted[0])
