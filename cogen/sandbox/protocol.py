"""What the scorer sends a fork server, and how it checks what comes back (which it never trusts).

A job carries a fresh random ``nonce``; the answer must echo it, be one JSON object of at most
:data:`MAX_ANSWER` bytes with exactly the expected keys, an output per input that is ``None`` or 16
``.``/``*`` cells, a bounded reason wherever there is no output, and numbers where numbers belong.
Anything else is a broken worker (:func:`check_answer` returns ``None``): the sandbox ends it, marks
that one job ``sandbox failure`` and starts a fresh worker, so no answer can land on another job.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from cogen.safe_text import clean

__all__ = ["MAX_ANSWER", "RunResult", "check_answer", "check_hello", "job"]

#: Longest answer line accepted from a server (bytes).
MAX_ANSWER = 1 << 16
_KEYS = {"nonce", "outputs", "reasons", "fate", "cpu", "seconds"}
_FATE = re.compile(r"^(ok|cpu|wall|exit \d{1,3}|signal \d{1,2})( \(scratch not emptied\))?$")
_CELLS = re.compile(r"^[.*]{16}$")


@dataclass(frozen=True)
class RunResult:
    """A program's outputs on the inputs: 16 cells (row-major ``.``/``*``) or None with a reason;
    ``function`` is the function called (None for a script or a program that did not run); ``cpu``
    the CPU seconds the program used."""

    outputs: tuple[str | None, ...]
    reasons: tuple[str | None, ...]
    fate: str
    seconds: float
    function: str | None = None
    cpu: float = 0.0

    def errors(self, targets: Sequence[str]) -> int:
        """E: the inputs whose output is not the target's 16 cells."""
        return sum(output != target for output, target in zip(self.outputs, targets, strict=True))

    @classmethod
    def failed(cls, reason: str, count: int) -> RunResult:
        """A program that never ran (no code, a syntax error, a broken worker), for its ``count`` inputs."""
        return cls((None,) * count, (reason,) * count, "not run", 0.0)


def job(source: str, inputs: Sequence[str], entry: str | None, mode: str, cpu: float, wall: float,
        memory: int) -> dict:
    """A job for a fork server, with a fresh nonce."""
    return {"nonce": secrets.token_hex(16), "source": source, "inputs": list(inputs), "entry": entry, "mode": mode,
            "cpu": float(cpu), "wall": float(wall), "memory": int(memory)}


def _number(value) -> bool:
    return type(value) in (int, float) and 0 <= value < 1e6


def _output(value) -> bool:
    return value is None or (type(value) is str and _CELLS.match(value) is not None)


def _reason(value) -> bool:
    return value is None or (type(value) is str and len(value) <= 400)


def check_answer(line: bytes, sent: dict, entry: str | None) -> RunResult | None:
    """The :class:`RunResult` of a server's answer line to ``sent``, or None when the line is not a
    well-formed answer to exactly that job."""
    if len(line) > MAX_ANSWER or not line.endswith(b"\n"):
        return None
    try:
        answer = json.loads(line)
    except (ValueError, RecursionError):
        return None
    count = len(sent["inputs"])
    if type(answer) is not dict or set(answer) != _KEYS or answer["nonce"] != sent["nonce"]:
        return None
    outputs, reasons = answer["outputs"], answer["reasons"]
    if type(outputs) is not list or type(reasons) is not list or len(outputs) != count or len(reasons) != count:
        return None
    if not all(_output(o) and _reason(r) and (o is None) != (r is None) for o, r in zip(outputs, reasons, strict=True)):
        return None
    if type(answer["fate"]) is not str or not _FATE.match(answer["fate"]):
        return None
    if not (_number(answer["cpu"]) and _number(answer["seconds"])):
        return None
    return RunResult(tuple(outputs), tuple(None if r is None else clean(r) for r in reasons), answer["fate"],
                     float(answer["seconds"]), entry, float(answer["cpu"]))


def check_hello(line: bytes, nonce: str) -> dict | None:
    """A server's first line, ``{"hello": nonce, "dumpable": bool, "seccomp": bool}``, or None."""
    try:
        hello = json.loads(line) if len(line) <= MAX_ANSWER else None
    except (ValueError, RecursionError):
        return None
    if type(hello) is not dict or set(hello) != {"hello", "dumpable", "seccomp"} or hello["hello"] != nonce:
        return None
    return hello if all(type(hello[k]) is bool for k in ("dumpable", "seccomp")) else None
