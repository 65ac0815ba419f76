"""Dotted field paths with list indexes: ``reward_model.ground_truth``, ``messages[-1].content``.

>>> get(parse("a.b[-1].c"), {"a": {"b": [{"c": 1}, {"c": 2}]}})
2
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import RecordError, UsageError

_TOKEN = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")

Path = tuple[str | int, ...]


def parse(path: str) -> Path:
    """Parse ``a.b[0].c`` into ``("a", "b", 0, "c")``."""
    if not path or path.strip() != path:
        raise UsageError(f"field path {path!r} is empty or padded; write it like reward_model.ground_truth")
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        if path[pos] == "." and parts and pos + 1 < len(path):
            pos += 1
        m = _TOKEN.match(path, pos)
        if not m:
            raise UsageError(
                f"cannot parse field path {path!r} at character {pos}; "
                "write it like reward_model.ground_truth or messages[-1].content"
            )
        parts.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    return tuple(parts)


def fmt(path: Path) -> str:
    """Format a parsed path back to its dotted form."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + p
    return out


_MISSING = object()


def _key(obj: dict, name: str) -> Any:
    """The key of ``obj`` that is ``name`` up to case (``Question`` for ``question``), if exactly one is."""
    low = name.lower()
    found = [k for k in obj if isinstance(k, str) and k.lower() == low]
    return found[0] if len(found) == 1 else _MISSING


def _step(cur: Any, p: str | int) -> tuple[Any, Any]:
    """One step of a path: (the key or index taken, the value), or (_MISSING, _MISSING)."""
    if isinstance(cur, str) and cur[:1] in ("{", "["):
        try:
            cur = json.loads(cur)
        except (ValueError, RecursionError):
            pass
    if isinstance(p, int):
        if isinstance(cur, list) and -len(cur) <= p < len(cur):
            return p, cur[p]
    elif isinstance(cur, dict):
        k = p if p in cur else _key(cur, p)
        if k is not _MISSING:
            return k, cur[k]
    return _MISSING, _MISSING


def resolve(path: Path, record: Any) -> tuple[Path, Any] | None:
    """The path as ``record`` spells it, and the value there; ``None`` when it is not there.

    >>> resolve(parse("Reward_Model.ground_truth"), {"reward_model": {"ground_truth": None}})
    (('reward_model', 'ground_truth'), None)
    """
    cur = record
    spelled: list[str | int] = []
    for p in path:
        k, cur = _step(cur, p)
        if k is _MISSING:
            return None
        spelled.append(k)
    return tuple(spelled), cur


def get(path: Path, record: Any, default: Any = _MISSING) -> Any:
    """Follow ``path`` into ``record``; object keys match up to case when the exact key is absent.

    A string met where an object or list is expected is decoded as JSON first, because
    some public uploads store nested columns such as ``reward_model`` as JSON strings.
    """
    cur = record
    for i, p in enumerate(path):  # _step inlined: this runs for every record
        if isinstance(cur, str) and cur[:1] in ("{", "["):
            try:
                cur = json.loads(cur)
            except (ValueError, RecursionError):
                pass
        if isinstance(p, int):
            if isinstance(cur, list) and -len(cur) <= p < len(cur):
                cur = cur[p]
                continue
        elif isinstance(cur, dict):
            if p in cur:
                cur = cur[p]
                continue
            k = _key(cur, p)
            if k is not _MISSING:
                cur = cur[k]
                continue
        if default is not _MISSING:
            return default
        where = fmt(path[: i + 1])
        raise RecordError(
            "missing_field",
            f"field {where} is missing",
            "pass --prompt-field/--target-field/--id-field with the path this file uses",
        )
    return cur
