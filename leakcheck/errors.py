"""Typed errors. Every message names what is wrong and how to fix it, on one line.

The CLI turns any :class:`LeakcheckError` into that line and exit code 2.
"""

from __future__ import annotations


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
