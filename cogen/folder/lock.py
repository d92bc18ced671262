"""One writer per dataset folder: the lock a build (or a merge) holds while it writes.

The lock is ``.cogen/lock`` holding the holder's pid, locked with ``flock``: the kernel releases
it when the holder ends, however it ends, so a lock left by a killed build is *stale* (the file
names a pid but nobody holds it) and the next build takes it over and says so. A second build
into a folder that is being written refuses at once with the folder and the holder's pid.
Where ``flock`` is unavailable the pid alone decides (is that process alive?).

Taking the lock first refuses a folder where a place cogen writes in is a symbolic link
(:func:`cogen.folder.ownership.check_places`), and the lock file itself is opened without
following a link: every writer of a folder takes the lock before writing anything.
"""

from __future__ import annotations

import os
from pathlib import Path

from cogen.errors import BuildError, os_error_text
from cogen.folder.layout import lock_path
from cogen.folder.ownership import check_places

__all__ = ["FolderLock"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, and belongs to someone else
        return True
    return True


def _read_pid(fd: int) -> int | None:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 64).decode("ascii", "replace").split()
    return int(text[0]) if text and text[0].isdigit() else None


class FolderLock:
    """Context manager: hold the write lock of ``folder`` (``what`` names the holder's job in messages).

    ``stale_pid`` is the pid of a holder that ended without releasing the lock (or None).
    """

    def __init__(self, folder: str | Path, what: str = "build"):
        self.folder, self.what = Path(folder), what
        self.path = lock_path(folder)
        self.stale_pid: int | None = None
        self._fd: int | None = None

    def __enter__(self) -> FolderLock:
        check_places(self.folder)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as error:
            raise BuildError(f"cannot write into {self.folder}: {os_error_text(error)}") from None
        try:
            holder = _read_pid(fd)
            if not self._acquire(fd, holder):
                raise BuildError(f"{self.folder} is being written by another cogen process (pid {holder or '?'}); "
                                 "wait for it to finish, or stop it, then run this command again")
            self.stale_pid = holder if holder not in (None, os.getpid()) else None
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"{os.getpid()} {self.what}\n".encode())
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    @staticmethod
    def holder(folder: str | Path) -> int | None:
        """The pid of a live process holding ``folder``'s lock (None when nobody does). Creates nothing,
        so it works on a read-only folder."""
        try:
            fd = os.open(lock_path(folder), os.O_RDONLY)
        except OSError:
            return None
        try:
            pid = _read_pid(fd)
            if pid is None or pid == os.getpid():
                return None
            try:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return pid
            except (ImportError, OSError):  # no flock here: trust the pid
                return pid if _alive(pid) else None
            return None
        finally:
            os.close(fd)

    @staticmethod
    def _acquire(fd: int, holder: int | None) -> bool:
        try:
            import fcntl
        except ImportError:  # no flock on this platform: trust the pid
            return holder is None or holder == os.getpid() or not _alive(holder)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except OSError:  # a file system without flock (some network mounts): trust the pid
            return holder is None or holder == os.getpid() or not _alive(holder)
        return True

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)  # an empty lock file: nobody holds it, nothing stale
            except OSError:
                pass
            os.close(self._fd)  # releases the flock
            self._fd = None
