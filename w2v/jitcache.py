"""Numba's on-disk cache, keyed by every source file a jitted function is built from.

Numba stamps a cached function with its own source file alone, and loads the
cached machine code for as long as that file is unchanged. A kernel is built from
more than its file: the helpers it inlines and the constants it reads come from
the modules it imports (``kernels`` from ``jit``, ``config``, ``corpus.vocab``).
Changed there, Numba would go on loading the old kernel, and an editable checkout
would test and time code that is no longer there.

``SourceKeyedCache`` stamps a function with Numba's own stamp and a digest of its
build sources: its file and, transitively, every module of the same top-level
package that the file imports (read from the ``import`` statements, so that the
digest is known when the decorator runs, before the module has finished
loading). Any change to one of them makes the cached index stale, and the next
call compiles; the index is then written with the new stamp. Its files carry
their SHA-256 (``CheckedCacheFile``): a damaged one is compiled again, not loaded.
Where no folder for the cache can be written, the functions compile in every
process (``njit_cached``).
"""

import ast
import contextlib
import functools
import hashlib
import pickle
from pathlib import Path

from numba import njit
from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile, _cache_log


def package_root(path: Path) -> Path:
    """The folder that holds ``path``'s top-level package (the first folder up
    from ``path`` without an ``__init__.py``): ``path``'s own folder outside any package."""
    folder = path.parent
    while (folder / "__init__.py").is_file():
        folder = folder.parent
    return folder


def module_file(root: Path, dotted: str) -> Path | None:
    """The source file of the module ``dotted`` under ``root``, or None."""
    base = root.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def imported_names(path: Path) -> tuple[str, ...]:
    """The absolute dotted names of the modules ``path`` imports (``import a.b``;
    ``from a.b import c``: both ``a.b`` and ``a.b.c``, which may be a module),
    relative imports resolved against ``path``'s package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = path.parent.relative_to(package_root(path)).parts
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parent = here[: len(here) - node.level + 1] if node.level else ()
            base = ".".join([*parent, *(node.module.split(".") if node.module else [])])
            names += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return tuple(names)


@functools.cache
def build_sources(path: Path) -> tuple[Path, ...]:
    """``path`` and every source file of its top-level package that it imports,
    directly or through another of them, sorted."""
    root, found, pending = package_root(path), {path}, [path]
    while pending:
        for name in imported_names(pending.pop()):
            source = module_file(root, name)
            if source is not None and source not in found:
                found.add(source)
                pending.append(source)
    return tuple(sorted(found))


@functools.cache
def sources_digest(path: Path) -> str:
    """The SHA-256 of ``build_sources(path)``: each file's path within the package
    root and its bytes."""
    digest, root = hashlib.sha256(), package_root(path)
    for source in build_sources(path):
        digest.update(str(source.relative_to(root)).encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()


def keyed(locator_class: type) -> type[object]:
    """A subclass of a Numba cache locator whose source stamp also holds the
    digest of the function's build sources (``sources_digest``), where it has a
    source file."""

    def get_source_stamp(self):
        source = Path(getattr(self, "_py_file", "")).resolve()  # none for a notebook's cell
        return locator_class.get_source_stamp(self), sources_digest(source) if source.is_file() else None

    return type(f"SourceKeyed{locator_class.__name__}", (locator_class,), {"get_source_stamp": get_source_stamp})


class SourceKeyedCacheImpl(CompileResultCacheImpl):
    """Numba's cache of compile results, with every locator ``keyed``."""

    _locator_classes = [keyed(locator) for locator in CompileResultCacheImpl._locator_classes]  # noqa: RUF012


DAMAGED: set[str] = set()  # cache files this process found damaged and compiled again


class CheckedCacheFile(IndexDataCacheFile):
    """Numba's index file and data files of one function, each stored with the
    SHA-256 of its pickled contents, so that a file cut short, overwritten or with a
    bit flipped reads as a miss (named in ``DAMAGED``) and the function compiles
    again, where Numba would raise on unpickling it, or crash in LLVM on loading
    the machine code it holds."""

    def __init__(self, cache_path, filename_base, source_stamp) -> None:
        super().__init__(cache_path, filename_base, source_stamp)
        self._version = f"{self._version}+sha256"  # Numba's own index files: another version, a plain miss

    def _save_index(self, overloads) -> None:
        payload = self._dump((self._source_stamp, overloads))
        with self._open_for_write(self._index_path) as file:
            pickle.dump(self._version, file, protocol=-1)
            file.write(hashlib.sha256(payload).digest() + payload)
        _cache_log("[cache] index saved to %r", self._index_path)  # NUMBA_DEBUG_CACHE's lines, as Numba's

    def _load_index(self) -> dict:
        try:
            with open(self._index_path, "rb") as file:
                version, stored = pickle.load(file), file.read()
            if version != self._version:
                return {}  # another Numba's or w2v's cache
            stamp, overloads = pickle.loads(checked(stored))
        except FileNotFoundError:
            return {}
        except Exception:  # any damage: unpickling raises anything
            DAMAGED.add(self._index_path)
            return {}
        _cache_log("[cache] index loaded from %r", self._index_path)
        return overloads if stamp == self._source_stamp else {}

    def _save_data(self, name: str, data) -> None:
        payload = self._dump(data)
        with self._open_for_write(self._data_path(name)) as file:
            file.write(hashlib.sha256(payload).digest() + payload)
        _cache_log("[cache] data saved to %r", self._data_path(name))

    def load(self, key):
        overloads = self._load_index()
        if key not in overloads:
            return None
        path = self._data_path(overloads[key])
        try:
            with open(path, "rb") as file:
                data = pickle.loads(checked(file.read()))
        except FileNotFoundError:
            return None  # removed since the index was written
        except Exception:
            DAMAGED.add(path)
            return None
        _cache_log("[cache] data loaded from %r", path)
        return data


def checked(stored: bytes) -> bytes:
    """The payload of ``stored`` (its SHA-256, then the payload); ValueError where
    they disagree."""
    digest, payload = stored[:32], stored[32:]
    if hashlib.sha256(payload).digest() != digest:
        raise ValueError("damaged cache file")
    return payload


class SourceKeyedCache(FunctionCache):
    """Numba's cache of a function's compile results, stale when any of its build
    sources changes, its files checked (``CheckedCacheFile``)."""

    _impl_class = SourceKeyedCacheImpl

    def __init__(self, py_func) -> None:
        super().__init__(py_func)
        numbas = self._cache_file  # built by Numba's __init__ with the stamp: take its place and stamp
        self._cache_file = CheckedCacheFile(self._cache_path, self._impl.filename_base, numbas._source_stamp)


def njit_cached(function, **options):
    """``numba.njit(function, **options)``, its machine code saved and loaded through
    a ``SourceKeyedCache``; where no folder for the cache can be written (the
    package's, ``NUMBA_CACHE_DIR``, the user's cache folder: Numba's "no locator
    available"), compiled in every process instead, ``dispatcher.stats.cache_path``
    then None."""
    dispatcher = njit(function, **options)
    with contextlib.suppress(RuntimeError):  # else Numba's NullCache, which the dispatcher starts with, stays
        dispatcher._cache = SourceKeyedCache(dispatcher.py_func)
    return dispatcher
