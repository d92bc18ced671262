"""The seccomp filter of a sandboxed program, compiled by libseccomp (Linux only).

A program may compute, allocate and read the files it can see; the kernel refuses the system calls it
never needs and that reach outside its own process (each returns ``EPERM``, so Python raises
``PermissionError``):

* new tasks of any kind: ``fork``, ``vfork``, ``clone`` (threads too: a program is one task, so no
  program can fill the machine's process table, R02/R07 of the second red team; ``clone3`` returns
  ``ENOSYS``), and new programs (``execve``);
* signals to any process, itself included (``kill``, ``tgkill``, ``pidfd_send_signal``, ..., and the
  ``fcntl`` commands that make the kernel send them: ``F_SETOWN``, ``F_SETOWN_EX``, ``F_SETSIG``,
  ``F_NOTIFY``, ``F_SETLEASE``);
* other processes' memory, limits and scheduling (``ptrace``, ``process_vm_*``, ``prlimit64`` on
  another process, ``setpriority``, ...);
* sockets and System V / POSIX IPC; device and FIFO nodes (``mknod``);
* namespaces, mounts, keyrings, BPF, perf events, ``userfaultfd``, ``io_uring``, modules, reboot.

The filter is compiled here, in the scorer, with `libseccomp <https://github.com/seccomp/libseccomp>`_
(``libseccomp.so.2``, present on every systemd distribution; Debian/Ubuntu ``libseccomp2``) called
through :mod:`ctypes`: libseccomp is the maintained library that every container runtime uses, and it
handles the per-architecture syscall numbers and the x32 ABI. (Its own Python bindings are built for
the system Python only, and PyPI's ``pyseccomp`` is an unmaintained ``ctypes`` wrapper of the same
library.) The fork server installs the first filter on itself once (its programs inherit it) and the
second, small one (:data:`CHILD_DENIED`, and the signalling ``fcntl`` commands) in each program's
process, so a fork costs the kernel one small filter; both are binary trees of syscall numbers.

Why threads are refused rather than counted (issue 34, measured on a root container with cgroup v1):
``RLIMIT_NPROC`` does not bind a sandbox whose user maps to root (200 of 200 threads started under a
limit of 16), and starting bubblewrap as an unprivileged user instead fails wherever the interpreter
lives in root's home (``/root/.pyenv``: ``execvp ... Permission denied``); a pids cgroup bounds them
(13 threads under ``pids.max`` 16) but only where the machine lets the scorer write one (root, or a
delegated cgroup v2 subtree). The seccomp rule works on every machine the sandbox runs on, costs
nothing, and keeps scores independent of the machine and of who runs the scorer; no program of the
task needs a thread (none of the scorer's program styles, numpy included, starts one).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno

__all__ = ["CHILD_DENIED", "DENIED", "SIGNALLING_FCNTL", "SeccompUnavailable", "compile_filters"]

#: System calls refused to the fork server and, through it, to every program (names unknown on this
#: architecture are skipped).
DENIED = (
    "execve", "execveat",
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "get_robust_list",
    "setpriority", "ioprio_set", "sched_setscheduler", "sched_setparam", "sched_setattr", "sched_setaffinity",
    "migrate_pages", "move_pages", "setpgid",
    "socket", "socketpair", "shmget", "msgget", "semget", "mq_open",
    "mknod", "mknodat",
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "mount_setattr", "open_tree", "move_mount",
    "fsopen", "fsmount", "fsconfig", "fspick", "name_to_handle_at", "open_by_handle_at",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "fanotify_init",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff",
    "acct", "quotactl", "syslog", "lookup_dcookie", "uselib", "vhangup", "iopl", "ioperm", "modify_ldt",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
)
#: System calls the fork server needs (to fork and end its programs) and each program is refused.
CHILD_DENIED = ("fork", "vfork", "clone", "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
                "pidfd_open", "pidfd_send_signal", "pidfd_getfd")
#: ``fcntl`` commands that make the kernel signal a process (F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE,
#: F_NOTIFY): refused to each program, so it cannot signal the server (E08) or itself (E09).
SIGNALLING_FCNTL = (8, 10, 15, 1024, 1026)
#: System calls that must exist on every architecture the filters are built for.
REQUIRED = ("execve", "kill", "tgkill", "ptrace", "socket", "clone", "prlimit64")

_ALLOW = 0x7FFF0000
_ATTR_OPTIMIZE = 8
_CMP_NE, _CMP_EQ = 1, 4


class SeccompUnavailable(RuntimeError):
    """libseccomp is missing or refused the filter (the message says which)."""


class _Comparison(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def _errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


def _library():
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:
        raise SeccompUnavailable("libseccomp is not installed (Debian/Ubuntu: apt-get install libseccomp2)") from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_Comparison)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    missing = [name for name in REQUIRED if lib.seccomp_syscall_resolve_name(name.encode()) < 0]
    if missing:
        raise SeccompUnavailable(f"libseccomp does not know {', '.join(missing)} on this architecture")
    return lib


def _rules(child: bool) -> list[tuple[str, int, tuple[tuple[int, int, int], ...]]]:
    """``(name, action, comparisons)``: each comparison ``(argument, operator, value)``."""
    if child:
        return [*[(name, _errno(errno.EPERM), ()) for name in CHILD_DENIED],
                *[(name, _errno(errno.EPERM), ((1, _CMP_EQ, command),))
                  for name in ("fcntl", "fcntl64") for command in SIGNALLING_FCNTL]]
    return [*[(name, _errno(errno.EPERM), ()) for name in DENIED],
            ("clone3", _errno(errno.ENOSYS), ()),  # the C library then starts threads with clone
            ("prlimit64", _errno(errno.EPERM), ((0, _CMP_NE, 0),))]  # another process's limits


def _compile(lib, child: bool) -> bytes:
    context = lib.seccomp_init(_ALLOW)
    if not context:
        raise SeccompUnavailable("seccomp_init failed")
    try:
        lib.seccomp_attr_set(context, _ATTR_OPTIMIZE, 2)  # a binary tree (libseccomp >= 2.5; else linear)
        for name, action, comparisons in _rules(child):
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number < 0:
                continue
            array = (_Comparison * max(1, len(comparisons)))(*[_Comparison(a, op, value, 0)
                                                                for a, op, value in comparisons])
            if lib.seccomp_rule_add_array(context, action, number, len(comparisons), array) != 0:
                raise SeccompUnavailable(f"libseccomp refused the rule for {name}")
        return _export(lib, context)
    finally:
        lib.seccomp_release(context)


def compile_filters() -> tuple[bytes, bytes]:
    """The server's filter and each program's own, as classic BPF instructions (``struct sock_filter[]``)
    ready for ``PR_SET_SECCOMP``; a program runs under both (filters stack)."""
    lib = _library()
    return _compile(lib, child=False), _compile(lib, child=True)


def _export(lib, context) -> bytes:
    import tempfile

    with tempfile.TemporaryFile() as handle:
        status = lib.seccomp_export_bpf(context, handle.fileno())
        handle.seek(0)
        data = handle.read()
    if status != 0 or not data or len(data) % 8:
        raise SeccompUnavailable("libseccomp could not export the filter")
    return data
