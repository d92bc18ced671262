"""Start a test's child process with the signals a shell's foreground job has."""

from __future__ import annotations

import signal


def as_in_a_terminal() -> None:
    """``preexec_fn`` for a child that a test stops with Ctrl-C or a hang-up: whatever the test process
    inherited (SIGINT ignored by a shell's background job, SIGHUP ignored under ``nohup``, either blocked),
    the child must see them delivered, as in a terminal. (cogen itself keeps an ignored HUP, by design.)"""
    for number in (signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGHUP})
