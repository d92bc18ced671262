"""How the sandbox's fork servers are confined: bubblewrap, or nothing when the user opts out.

Chosen once per :class:`cogen.sandbox.sandbox.Sandbox` by :func:`choose`:

* **bubblewrap** (``bwrap``, the Debian/Ubuntu/Fedora package ``bubblewrap``): each fork server runs
  in its own user, PID, network, mount, IPC, UTS and cgroup namespaces, with no capabilities,
  ``no_new_privs``, a new session and no further user namespaces; it is process 1 of its PID
  namespace (when it ends, the kernel ends everything in it) and it dies with the scorer. Its
  file system holds only the system's shared libraries (``/usr/lib*``), the Python installation and
  its ``site-packages`` (read-only), a ``/dev`` of null, zero, random and urandom (read-only), and an
  empty 8 MB ``/tmp`` that is the working folder and is emptied after every program: no ``/proc``,
  no ``/etc`` (but the loader cache), no home folder, no dataset, no replies file.
* **none** (``--unsafe-run-untrusted-code``, or ``COGEN_UNSAFE_RUN_UNTRUSTED_CODE=1``): the same fork
  server without namespaces (resource limits and the seccomp filter still apply when the kernel has
  them). A program can then read and change what the user can; only for programs one trusts.

When bubblewrap is missing or cannot create namespaces (unprivileged user namespaces disabled), the
sandbox refuses with one line that says how to enable it, or how to opt out: never a silent fallback.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

from cogen.errors import EvalError

__all__ = ["UNSAFE_ENV", "Isolation", "IsolationUnavailable", "bwrap_command", "choose", "unsafe_requested"]

#: Setting this environment variable to ``1`` opts out of isolation, like ``--unsafe-run-untrusted-code``.
UNSAFE_ENV = "COGEN_UNSAFE_RUN_UNTRUSTED_CODE"
#: The in-sandbox user and group ids (mapped to the scorer's own).
SANDBOX_ID = "1000"
#: Size of the scratch ``/tmp``.
SCRATCH_BYTES = 8 << 20
_HOW = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) and "
        "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)"
        ", or pass --unsafe-run-untrusted-code (COGEN_UNSAFE_RUN_UNTRUSTED_CODE=1) to run programs unconfined, "
        "only if you trust them")


class IsolationUnavailable(EvalError):
    """No kernel isolation on this machine; the message says how to enable it or opt out."""

    def __init__(self, why: str):
        super().__init__(f"cogen refuses to run untrusted programs without isolation: {why}; {_HOW}")


@dataclass(frozen=True)
class Isolation:
    """The mechanism (``bubblewrap`` or ``none``), the seccomp filters (the server's, each program's),
    and how to start a server."""

    name: str
    seccomp: tuple[bytes, bytes] = (b"", b"")
    bwrap: str | None = None
    paths: tuple[str, ...] = field(default_factory=tuple)

    @property
    def confined(self) -> bool:
        """True when the kernel confines the servers (namespaces, read-only files)."""
        return self.name == "bubblewrap"

    def command(self, server: list[str], environment: dict[str, str]) -> list[str]:
        """The command line that starts a fork server (``server``: the interpreter and its arguments)
        with exactly ``environment`` (bubblewrap clears the scorer's)."""
        return bwrap_command(self.bwrap, server, self.paths, environment) if self.confined else server


def unsafe_requested(unsafe: bool | None) -> bool:
    """``unsafe`` when given, else whether :data:`UNSAFE_ENV` is ``1``."""
    return bool(unsafe) if unsafe is not None else os.environ.get(UNSAFE_ENV, "") == "1"


def python_paths() -> tuple[str, str, tuple[str, ...]]:
    """The real interpreter, its installation prefix, and the ``site-packages`` folders programs may
    import from (``numpy``, if installed)."""
    executable = os.path.realpath(sys.executable)
    prefix = os.path.realpath(sys.base_prefix)
    paths = sysconfig.get_paths()
    sites = tuple(dict.fromkeys(os.path.realpath(paths[k]) for k in ("purelib", "platlib") if os.path.isdir(paths[k])))
    return executable, prefix, sites


def _system_binds() -> list[str]:
    args: list[str] = []
    for path in ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args + ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]


def _inside(path: str, parents: list[str]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in parents)


def bwrap_command(bwrap: str, server: list[str], sites: tuple[str, ...] = (),
                  environment: dict[str, str] | None = None) -> list[str]:
    """bubblewrap's command line around ``server`` (see the module docstring for what it confines)."""
    executable, prefix, _ = python_paths()
    binds, bound = _system_binds(), ["/usr/lib", "/usr/lib64"]
    for path in (prefix, os.path.dirname(executable), *sites):
        if not _inside(path, bound):
            binds += ["--ro-bind", path, path]
            bound.append(path)
    return [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--uid", SANDBOX_ID, "--gid", SANDBOX_ID,
            "--die-with-parent", "--as-pid-1", "--new-session", "--cap-drop", "ALL", "--clearenv",
            *[a for name, value in (environment or {}).items() for a in ("--setenv", name, value)], *binds,
            "--dev", "/dev", "--remount-ro", "/dev", "--size", str(SCRATCH_BYTES), "--tmpfs", "/tmp",
            "--chdir", "/tmp", "--", *server]


def choose(unsafe: bool | None = None) -> Isolation:
    """The isolation of this run: bubblewrap with the seccomp filter, or ``none`` when the user opted
    out; :class:`IsolationUnavailable` when neither. (Whether bubblewrap can create namespaces here is
    learnt when the first server starts: :meth:`cogen.sandbox.sandbox.Sandbox.__enter__`.)"""
    from cogen.sandbox.seccomp import SeccompUnavailable, compile_filters

    if unsafe_requested(unsafe):
        try:
            return Isolation("none", compile_filters())
        except (SeccompUnavailable, OSError):
            return Isolation("none")
    if not sys.platform.startswith("linux"):
        raise IsolationUnavailable(f"kernel isolation needs Linux (this is {sys.platform})")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise IsolationUnavailable("bubblewrap (bwrap) is not installed or not on PATH")
    try:
        seccomp = compile_filters()
    except SeccompUnavailable as error:
        raise IsolationUnavailable(f"no seccomp filter: {error}") from None
    return Isolation("bubblewrap", seccomp, bwrap, python_paths()[2])


def scratch_folder() -> Path:
    """Where an unconfined server works: a fresh private folder (the caller removes it)."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix="cogen-sandbox-"))
