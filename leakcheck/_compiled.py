"""The optional compiled modules: ``leakcheck._kernels`` (the fuzzy levels' tokenizer, n-grams,
hash set lookups, distinct counts) and ``leakcheck._chatlines`` (the JSONL reader).

Each is built at install where a C compiler is, and each has a Python twin that gives the same
results; ``LEAKCHECK_NO_KERNEL=1`` picks the twins. The variable is read at every call, so a
test or a user can switch it within a process.

>>> compiled("_no_such_module") is None
True
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType


def compiled(name: str) -> ModuleType | None:
    """``leakcheck.<name>`` if it was built and ``LEAKCHECK_NO_KERNEL`` is not set, else ``None``."""
    if os.environ.get("LEAKCHECK_NO_KERNEL"):
        return None
    return _imported(name)


@functools.cache
def _imported(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"leakcheck.{name}")
    except ImportError:
        return None
