"""Keep the finished part of a build's first pass: the key pass of an interrupted build is not lost.

A family's :meth:`~cogen.families.Builder.prepare` runs its key pass through ``executor.map``.
The driver hands it a :class:`KeyPassCache` around the real executor: every result is saved under
``.cogen/keys/<digest of the build's inputs>/`` the moment it arrives (written whole, then
renamed), and a resumed build with the same inputs loads it instead of sampling those shards
again. ``prepare`` is a pure function of the inputs, so the n-th item of its m-th ``map`` call is
the same task every time: that position names the saved result.

Results are stored as ``.npz`` files read back without pickle (arrays, bytes, ``None``, numbers,
text, and tuples, lists and string-keyed dicts of them); a result of any other type is simply
not saved. The folder is deleted when the build finishes (or the inputs change).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path

import numpy as np

from cogen.folder import STATE_DIR, atomic_write

__all__ = ["KeyPassCache", "key_pass_folder", "remove_key_passes"]

_KEYS_DIR = "keys"
_MISSING = object()


def key_pass_folder(folder: str | Path, keys: dict[str, str]) -> Path:
    """Where the key pass of a build that writes the configs of ``keys`` (config -> inputs key) is saved."""
    digest = hashlib.sha256(json.dumps(sorted(keys.items())).encode()).hexdigest()[:16]
    return Path(folder) / STATE_DIR / _KEYS_DIR / digest


def remove_key_passes(folder: str | Path, keep: Path | None = None) -> None:
    """Delete the saved key passes of ``folder`` (all but ``keep``)."""
    root = Path(folder) / STATE_DIR / _KEYS_DIR
    for path in sorted(root.iterdir()) if root.is_dir() else ():
        if keep is None or path != keep:
            shutil.rmtree(path, ignore_errors=True)
    if keep is None:
        shutil.rmtree(root, ignore_errors=True)


class KeyPassCache:
    """An executor whose ``map`` saves every result as it arrives and reuses results saved before.

    ``submit`` passes through. ``saved`` and ``loaded`` count results written and reused.
    """

    def __init__(self, executor, folder: Path):
        self.executor, self.folder = executor, folder
        self.calls = self.saved = self.loaded = 0

    def submit(self, fn: Callable, /, *args, **kwargs) -> Future:
        """The wrapped executor's ``submit``."""
        return self.executor.submit(fn, *args, **kwargs)

    def map(self, fn: Callable, *iterables: Iterable) -> Iterator:
        """``fn`` over the items, in order, like :meth:`concurrent.futures.Executor.map`.

        Results are saved in this thread (never in the executor's, which must keep reading its
        workers' results), each as soon as it is done, in whatever order they finish."""
        call, self.calls = self.calls, self.calls + 1
        futures: list[Future] = []
        pending: dict[Future, Path] = {}
        for index, args in enumerate(zip(*iterables, strict=False)):
            path = self.folder / f"{call}-{index}.npz"
            value = _load(path)
            if value is not _MISSING:
                self.loaded += 1
                futures.append(_done(value))
                continue
            future = self.executor.submit(fn, *args)
            futures.append(future)
            if future.done():  # an in-process executor: saved before the next item runs
                self._save(future, path)
            else:
                pending[future] = path
        return self._in_order(futures, pending)

    def _in_order(self, futures: list[Future], pending: dict[Future, Path]) -> Iterator:
        futures.reverse()
        while futures:
            future = futures.pop()
            while future in pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for finished in done:
                    self._save(finished, pending.pop(finished))
            yield future.result()

    def _save(self, future: Future, path: Path) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        arrays: dict[str, np.ndarray] = {}
        try:
            structure = _encode(future.result(), arrays)
        except TypeError:  # a result this cache cannot store without pickle: computed again on resume
            return
        buffer = io.BytesIO()
        np.savez(buffer, structure=np.frombuffer(json.dumps(structure).encode(), np.uint8), **arrays)
        try:
            atomic_write(path, lambda temporary: temporary.write_bytes(buffer.getvalue()))
        except Exception:  # a full disk costs the saving, never the build
            return
        self.saved += 1


def _done(value) -> Future:
    future: Future = Future()
    future.set_result(value)
    return future


def _encode(value, arrays: dict[str, np.ndarray]):
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise TypeError("object arrays are not stored")
        arrays[f"a{len(arrays)}"] = value
        return {"array": f"a{len(arrays) - 1}"}
    if isinstance(value, bytes):
        arrays[f"a{len(arrays)}"] = np.frombuffer(value, np.uint8)
        return {"bytes": f"a{len(arrays) - 1}"}
    if isinstance(value, (tuple, list)):
        return {type(value).__name__: [_encode(item, arrays) for item in value]}
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {"dict": {key: _encode(item, arrays) for key, item in value.items()}}
    raise TypeError(f"cannot store a {type(value).__name__}")


def _decode(structure, arrays):
    kind, content = next(iter(structure.items()))
    if kind == "value":
        return content
    if kind == "array":
        return arrays[content]
    if kind == "bytes":
        return arrays[content].tobytes()
    if kind in ("tuple", "list"):
        items = [_decode(item, arrays) for item in content]
        return tuple(items) if kind == "tuple" else items
    return {key: _decode(item, arrays) for key, item in content.items()}


def _load(path: Path):
    """The result saved at ``path``, or ``_MISSING`` (absent, or unreadable: computed again)."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            arrays = {name: saved[name] for name in saved.files}
        return _decode(json.loads(arrays.pop("structure").tobytes()), arrays)
    except Exception:  # a missing, cut or foreign file is only a lost saving
        return _MISSING
