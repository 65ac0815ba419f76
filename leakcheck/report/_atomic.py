"""Writing outputs: a reader never sees half a report, a crash or a signal never leaves one,
and nothing but the named file changes.

- ``-`` (also ``/dev/stdout``) is standard output, ``/dev/stderr`` standard error.
- A path that exists and is not a regular file (a device such as ``/dev/null``, a FIFO), and
  any path under ``/dev`` or ``/proc``, is opened and written where it is, never replaced.
- A symlink is written through: the file it points to is replaced, the link stays.
- Anything else goes to a temporary file beside it, which is then renamed over it.

An :class:`OSError` (disk full, read-only file system, permission denied) becomes one
:class:`~leakcheck.errors.OutputError` naming the path; the temporary file is removed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import tempfile
from collections.abc import Iterator, Sequence
from types import FrameType

from ..errors import OutputError, UsageError

#: Paths that name a standard stream, and its file descriptor.
_STREAMS = {"-": 1, "/dev/stdout": 1, "/dev/fd/1": 1, "/proc/self/fd/1": 1,
            "/dev/stderr": 2, "/dev/fd/2": 2, "/proc/self/fd/2": 2}


def stream_of(path: str | os.PathLike) -> int | None:
    """1 or 2 when ``path`` names standard output or standard error, else ``None``.

    >>> stream_of("-"), stream_of("/dev/stdout"), stream_of("out/-")
    (1, 1, None)
    """
    return _STREAMS.get(os.fspath(path))


def in_place(path: str | os.PathLike) -> bool:
    """Whether ``path`` is written where it is and never replaced: a stream, a device, a FIFO, /dev, /proc."""
    p = os.fspath(path)
    if stream_of(p) is not None or os.path.abspath(p).startswith(("/dev/", "/proc/")):
        return True
    return os.path.exists(p) and not os.path.isfile(p)


def resolved(path: str | os.PathLike) -> str:
    """The file a regular write replaces: the target of a symlink, else ``path`` itself.

    >>> resolved("reports/r.json")
    'reports/r.json'
    """
    p = os.fspath(path)
    return os.path.realpath(p) if os.path.islink(p) else p


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` to ``path`` (see the module docstring for streams, devices and symlinks)."""
    p = os.fspath(path)
    # A lone surrogate (from a "\ud800" escape in the input) cannot be UTF-8; written as
    # the escape it came from, it stays valid JSON and readable Markdown.
    payload = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    try:
        fd = stream_of(p)
        if fd is not None:
            _write_stream(fd, payload)
        elif in_place(p):
            with open(p, "wb") as fh:
                fh.write(payload)
        else:
            # Only here do signals wait: a stream or FIFO may block for as long as its reader likes.
            with hold_signals():
                _replace(p, payload)
    except OSError as exc:
        named = {1: f"standard output ({p})", 2: f"standard error ({p})"}.get(stream_of(p) or 0, p)
        raise OutputError(named, exc) from None


def _write_stream(fd: int, payload: bytes) -> None:
    stream = sys.stdout if fd == 1 else sys.stderr
    stream.flush()
    buf = getattr(stream, "buffer", None)
    if buf is not None:
        buf.write(payload)
        buf.flush()
    else:  # a text-only stream someone put in place of sys.stdout
        stream.write(payload.decode("utf-8"))
        stream.flush()


def _folder_of(path: str) -> str:
    """The existing folder a regular write of ``path`` lands in; a missing one is a usage error."""
    target = resolved(path)
    if os.path.islink(target):
        raise OutputError(path, OSError(errno.ELOOP, "a symlink loop"))
    d = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(d):
        raise UsageError(f"{path}: the folder {d} does not exist; create it first")
    return d


def _replace(path: str, payload: bytes) -> None:
    d = _folder_of(path)
    target = resolved(path)
    try:
        mode = os.stat(target).st_mode & 0o7777  # a private report stays private
    except FileNotFoundError:
        mode = 0o644
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".leakcheck-", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())  # some file systems report a full disk only here
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        tmp = None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def file_key(path: str | os.PathLike) -> tuple[object, ...]:
    """What two paths share when they name the same file: a stream, an inode, else the resolved path.

    Symlinks, ``./x`` against ``x`` and hard links all give the same key.
    """
    p = os.fspath(path)
    fd = stream_of(p)
    if fd is not None:
        return ("stream", fd)
    try:
        st = os.stat(p)
    except OSError:
        return ("path", os.path.realpath(p))
    return ("file", st.st_dev, st.st_ino)


def check_outputs(outputs: Sequence[tuple[str, str]], inputs: Sequence[tuple[str, str]] = (), probe: bool = True) -> None:
    """Refuse, before any work, an output that is an input or another output, or (with ``probe``) cannot be written.

    ``outputs`` and ``inputs`` are ``(label, path)`` pairs; the labels go into the message,
    e.g. ``("--json eval.jsonl", "eval.jsonl")`` and ``("the eval input", "eval.jsonl")``.
    """
    seen_in = {file_key(p): label for label, p in inputs}
    seen_out: dict[tuple[object, ...], str] = {}
    for label, p in outputs:
        if not p:
            raise UsageError(f"{label.strip()}: the path is empty; name a file, or - for standard output")
        key = file_key(p)
        if key in seen_in:
            raise UsageError(f"{label} is {seen_in[key]}; choose another path: leakcheck never writes over an input")
        if key in seen_out:
            raise UsageError(f"{seen_out[key]} and {label} are the same file; give each output its own path")
        seen_out[key] = label
    for _, p in outputs:
        if probe and not in_place(p):
            _probe(p)


def _probe(path: str) -> None:
    """Create and remove a temporary file where ``path`` will be written: a read-only folder fails now, not after the scan."""
    d = _folder_of(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".leakcheck-", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise OutputError(path, exc) from None


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP, raised wherever the program is, as Ctrl-C raises KeyboardInterrupt.

    >>> Interrupted(signal.SIGTERM).signum == signal.SIGTERM
    True
    """

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_held = 0
_pending: list[int] = []


def on_signal(signum: int, frame: FrameType | None) -> None:
    """A signal handler: raise :class:`Interrupted` now, or once the write under way is whole."""
    if _held:
        _pending.append(signum)
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def hold_signals() -> Iterator[None]:
    """Signals caught by :func:`on_signal` wait until the block is done, so a write ends whole or undone."""
    global _held
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if not _held and _pending:
            signum = _pending[0]
            _pending.clear()
            raise Interrupted(signum)


@contextlib.contextmanager
def atomic_target(path: str | os.PathLike, folder: bool = False) -> Iterator[str]:
    """A temporary file (or, with ``folder``, an empty folder) beside ``path`` to write, renamed onto ``path`` once the block ends.

    A file replaces ``path`` (a symlink is written through); a folder may only take the
    place of nothing or of an empty folder. On an error or a signal the temporary one is
    removed and ``path`` is untouched. Used by writers that stream (``leakcheck clean``).
    """
    p = os.fspath(path)
    d = _folder_of(p)
    target = resolved(p)
    if folder and os.path.lexists(target) and not (os.path.isdir(target) and not os.listdir(target)):
        raise UsageError(f"{p} already exists; name a new folder (or an empty one) for the output")
    tmp = tempfile.mkdtemp(dir=d, prefix=".leakcheck-") if folder else _temp_file(d)
    try:
        yield tmp
        with hold_signals():
            if folder:
                if os.path.isdir(target):
                    os.rmdir(target)
                os.rename(tmp, target)
            else:
                with open(tmp, "rb+") as fh:
                    os.fsync(fh.fileno())  # some file systems report a full disk only here
                os.replace(tmp, target)
        tmp = ""
    except OSError as exc:
        raise OutputError(p, exc) from None
    finally:
        if tmp and folder:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _temp_file(d: str) -> str:
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".leakcheck-", suffix=".tmp")
    os.close(fd)
    os.chmod(tmp, 0o644)
    return tmp
