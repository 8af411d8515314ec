"""The head of a child process's script that lists Numba's compilations: after it,
``compiled`` holds the qualified name of each function compiled (outermost and
nested; a load from the on-disk cache sends no event)."""

COUNT_COMPILES = """
import json, sys
from numba.core import event

compiled = []


class Count(event.Listener):
    def on_start(self, e):
        compiled.append(e.data["dispatcher"].py_func.__qualname__)

    def on_end(self, e):
        pass


event.register("numba:compile", Count())
"""
