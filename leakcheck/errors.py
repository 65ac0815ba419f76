"""Typed errors. Every message names what is wrong and how to fix it, on one line.

The CLI turns any :class:`LeakcheckError` into that line and exit code 2.
"""

from __future__ import annotations

import errno


class LeakcheckError(Exception):
    """Base class for every error leakcheck raises on purpose."""


class UsageError(LeakcheckError):
    """Options that do not fit together or name something that does not exist."""


class InputError(LeakcheckError):
    """A problem with an input file, located as precisely as possible.

    >>> str(InputError("train.jsonl", "line 3", "invalid JSON", "fix or remove the line"))
    'train.jsonl: line 3: invalid JSON; fix or remove the line'
    """

    def __init__(self, path: str, where: str | None, what: str, fix: str | None = None):
        self.path = str(path)
        self.where = where
        self.what = what
        self.fix = fix
        parts = [self.path]
        if where:
            parts.append(where)
        msg = ": ".join(parts) + ": " + what
        if fix:
            msg += "; " + fix
        super().__init__(msg)

    def __reduce__(self) -> tuple:  # workers send it to the driver: rebuild from the parts, not the message
        return (type(self), (self.path, self.where, self.what, self.fix))


class RecordError(LeakcheckError):
    """A single record cannot be turned into prompt/target text.

    Raised by field extraction without location; the reader adds file and row.
    ``reason`` is a short stable key used to count skipped rows.
    """

    def __init__(self, reason: str, what: str, fix: str | None = None):
        self.reason = reason
        self.what = what
        self.fix = fix
        super().__init__(what + (f"; {fix}" if fix else ""))

    def __reduce__(self) -> tuple:
        return (type(self), (self.reason, self.what, self.fix))


class OutputError(LeakcheckError):
    """A report or card could not be written; names the output path, never the temporary file.

    >>> import errno
    >>> str(OutputError("out/r.json", OSError(errno.ENOSPC, "No space left on device")))
    'out/r.json: cannot write: no space left on device; free some space or write it elsewhere'
    """

    _WHY = {errno.EROFS: "the file system is read-only"}
    _FIX = {errno.ENOSPC: "free some space or write it elsewhere", errno.EDQUOT: "free some space or write it elsewhere",
            errno.EACCES: "make the folder writable or write it elsewhere", errno.EPERM: "make the folder writable or write it elsewhere"}

    def __init__(self, path: str, exc: OSError):
        self.path = str(path)
        code = exc.errno or 0
        why = self._WHY.get(code) or (exc.strerror or str(exc)).lower()
        super().__init__(f"{self.path}: cannot write: {why}; {self._FIX.get(code, 'write it elsewhere')}")
