"""Atomic writes: a reader never sees half a report, a crash never leaves one."""

from __future__ import annotations

import os
import tempfile

from ..errors import UsageError


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``."""
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise UsageError(f"{path}: the folder {d} does not exist; create it first")
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".leakcheck-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            # A lone surrogate (from a "\ud800" escape in the input) cannot be UTF-8; written as
            # the escape it came from, it stays valid JSON and readable Markdown.
            fh.write(data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
