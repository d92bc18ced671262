"""Untrusted Python programs run confined by the kernel: a pool of fork servers behind bubblewrap and seccomp,
each program forked from a zygote that never saw a job, on a read-only root with one bounded scratch.

* :mod:`cogen.sandbox.sandbox`    :class:`Sandbox` and :func:`run_sources`: programs run on given string
  inputs, each in a fresh child, with CPU, memory and file limits
* :mod:`cogen.sandbox.isolation`  how the servers are confined (bubblewrap namespaces, or none on request)
* :mod:`cogen.sandbox.seccomp`    the system-call filters of the children
* :mod:`cogen.sandbox.protocol`   what the scorer accepts from a server (:class:`RunResult`)
* :mod:`cogen.sandbox.entry`      which function of a source is the program
* ``_child``                      the server itself, run confined

Nothing here knows a family: the caller gives the inputs and reads the outputs.
"""

from cogen.sandbox.isolation import UnconfinedWarning
from cogen.sandbox.protocol import RunResult
from cogen.sandbox.sandbox import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT, Sandbox, isolation_problem, run_sources

__all__ = ["DEFAULT_MEMORY_MB", "DEFAULT_TIMEOUT", "RunResult", "Sandbox", "UnconfinedWarning", "isolation_problem",
           "run_sources"]
