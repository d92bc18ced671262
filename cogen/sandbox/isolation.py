"""How the sandbox's fork servers are confined: bubblewrap, or nothing when the user opts out.

Chosen once per :class:`cogen.sandbox.sandbox.Sandbox` by :func:`choose`:

* **bubblewrap** (``bwrap``, the Debian/Ubuntu/Fedora package ``bubblewrap``): each fork server runs
  in its own user, PID, network, mount, IPC, UTS and cgroup namespaces, with no capabilities,
  ``no_new_privs``, a new session and no further user namespaces; it is process 1 of its PID
  namespace (when it ends, the kernel ends everything in it) and it dies with the scorer. Its
  file system holds only the system's shared libraries (``/usr/lib*``), the Python installation and
  its ``site-packages`` (read-only; each ``site-packages`` folder bound at ``/cogen-sites/<n>``, so
  the folders above it, a home or a checkout that holds the virtual environment, leave no trace), bubblewrap's minimal ``/dev`` (read-only), and one writable
  place, the **scratch**: an empty 8 MB tmpfs that is the working folder and ``TMPDIR``, emptied after
  every program (:func:`scratch_mount` puts it at ``/tmp``, or elsewhere when a bound folder lives
  under ``/tmp``, so a virtual environment anywhere stays visible). The root itself is remounted
  read-only: no ``/proc``, no ``/etc`` (but the loader cache), no home folder, no dataset, no replies
  file, and nothing a program writes outside the scratch.
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

__all__ = ["UNSAFE_ENV", "Isolation", "IsolationUnavailable", "UnconfinedWarning", "bwrap_command", "choose",
           "scratch_mount", "unsafe_requested"]

#: Setting this environment variable to ``1`` opts out of isolation, like ``--unsafe-run-untrusted-code``.
UNSAFE_ENV = "COGEN_UNSAFE_RUN_UNTRUSTED_CODE"
#: The in-sandbox user and group ids (mapped to the scorer's own).
SANDBOX_ID = "1000"
#: Size of the scratch (a tmpfs: what a program writes there is memory, bounded by this).
SCRATCH_BYTES = 8 << 20
#: Where the ``site-packages`` folders are bound inside the sandbox (``/cogen-sites/0``, ...): at their own
#: paths, the folders above them would show (CI's virtual environment inside the checkout let a program
#: list the checkout).
SITES_INSIDE = "/cogen-sites"
#: Where the scratch is mounted: the first of these under which (and above which) no folder is bound.
SCRATCH_PLACES = ("/tmp", "/scratch", "/cogen-scratch")
_HOW = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) and "
        "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)"
        ", or pass --unsafe-run-untrusted-code (COGEN_UNSAFE_RUN_UNTRUSTED_CODE=1) to run programs unconfined, "
        "only if you trust them")


class UnconfinedWarning(UserWarning):
    """Untrusted code will run without kernel isolation (the user opted out); the CLI prints it as one line."""


class IsolationUnavailable(EvalError):
    """No kernel isolation on this machine; the message says how to enable it or opt out."""

    def __init__(self, why: str):
        super().__init__(f"cogen refuses to run untrusted programs without isolation: {why}; {_HOW}")


@dataclass(frozen=True)
class Isolation:
    """The mechanism (``bubblewrap`` or ``none``), the seccomp filters (the server's, each program's),
    and how to start a server."""

    name: str
    seccomp: tuple[bytes, bytes] = field(default=(b"", b""), repr=False)
    bwrap: str | None = None
    paths: tuple[str, ...] = field(default_factory=tuple)
    scratch: str = "/tmp"

    @property
    def confined(self) -> bool:
        """True when the kernel confines the servers (namespaces, read-only files)."""
        return self.name == "bubblewrap"

    def site_paths(self) -> list[str]:
        """Where programs import from: the ``site-packages`` folders as the server sees them."""
        return [inside for _, inside in site_mounts(self.paths)] if self.confined else list(python_paths()[2])

    def command(self, server: list[str], environment: dict[str, str]) -> list[str]:
        """The command line that starts a fork server (``server``: the interpreter and its arguments)
        with exactly ``environment`` (bubblewrap clears the scorer's)."""
        return bwrap_command(self.bwrap, server, self.paths, environment, self.scratch) if self.confined else server


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


def site_mounts(sites: tuple[str, ...]) -> list[tuple[str, str]]:
    """Each ``site-packages`` folder and where it is bound inside the sandbox."""
    return [(path, f"{SITES_INSIDE}/{n}") for n, path in enumerate(sites)]


def _bound(sites: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """bubblewrap's bind arguments, and every folder they bind (as seen inside)."""
    executable, prefix, _ = python_paths()
    binds, bound = _system_binds(), ["/usr/lib", "/usr/lib64", "/lib", "/lib64", "/lib32", "/libx32", "/usr/lib32",
                                     "/etc/ld.so.cache"]
    for path in (prefix, os.path.dirname(executable)):  # where the interpreter finds its standard library
        if not _inside(path, bound):
            binds += ["--ro-bind", path, path]
            bound.append(path)
    for path, inside in site_mounts(sites):
        binds += ["--ro-bind", path, inside]
    return binds, bound + ([SITES_INSIDE] if sites else [])


def scratch_mount(sites: tuple[str, ...] = ()) -> str:
    """Where the scratch goes: the first of :data:`SCRATCH_PLACES` with no bound folder under it (a
    Python installed under ``/tmp`` would otherwise be hidden by the scratch, E11 of the second red
    team) and none above it."""
    _, bound = _bound(sites)
    for place in SCRATCH_PLACES:
        if not any(_inside(path, [place]) or _inside(place, [path]) for path in bound):
            return place
    raise IsolationUnavailable(f"every place for the scratch ({', '.join(SCRATCH_PLACES)}) holds a bound folder")


def bwrap_command(bwrap: str, server: list[str], sites: tuple[str, ...] = (),
                  environment: dict[str, str] | None = None, scratch: str = "/tmp") -> list[str]:
    """bubblewrap's command line around ``server`` (see the module docstring for what it confines): the
    binds, ``/dev``, the scratch, then the root remounted read-only (the scratch is its own mount)."""
    binds, _ = _bound(sites)
    return [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--uid", SANDBOX_ID, "--gid", SANDBOX_ID,
            "--die-with-parent", "--as-pid-1", "--new-session", "--cap-drop", "ALL", "--clearenv",
            *[a for name, value in (environment or {}).items() for a in ("--setenv", name, value)], *binds,
            "--dev", "/dev", "--remount-ro", "/dev", "--size", str(SCRATCH_BYTES), "--tmpfs", scratch,
            "--remount-ro", "/", "--chdir", scratch, "--", *server]


def choose(unsafe: bool | None = None) -> Isolation:
    """The isolation of this run: bubblewrap with the seccomp filter, or ``none`` when the user opted
    out (with an :class:`UnconfinedWarning` that says what chose it); :class:`IsolationUnavailable`
    when neither. (Whether bubblewrap can create namespaces here is learnt when the first server
    starts: :meth:`cogen.sandbox.sandbox.Sandbox.__enter__`.)"""
    from cogen.sandbox.seccomp import SeccompUnavailable, compile_filters

    if unsafe_requested(unsafe):
        import warnings

        chose = "unsafe=True (--unsafe-run-untrusted-code)" if unsafe else f"{UNSAFE_ENV}=1 in the environment"
        warnings.warn(UnconfinedWarning(f"running untrusted code WITHOUT isolation ({chose}): "
                                        "it can read and change your files"), stacklevel=3)
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
    sites = python_paths()[2]
    return Isolation("bubblewrap", seccomp, bwrap, sites, scratch_mount(sites))


def scratch_folder() -> Path:
    """Where an unconfined server works: a fresh private folder (the caller removes it)."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix="cogen-sandbox-"))
