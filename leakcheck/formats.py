"""Format detection and field extraction: raw rows in, :class:`Record` out.

Formats are recognised from a sample of records (the first :data:`DETECT_SAMPLE`), so a
``null`` or missing value in one row is that row's problem, not the file's. Column names
match up to case (``Question``/``Answer``). Explicit field paths always win. No detector
knows about formats; they only see :class:`~leakcheck.records.Record`.

>>> spec = detect_format([{"question": "2+2?", "answer": None}, {"question": "3+3?", "answer": "6"}])
>>> spec.name, spec.prompt, spec.target
('gsm8k', 'question', 'answer')
>>> spec.extract({"question": "2+2?", "answer": None}, 0)
Record(id='0', row=0, prompt='2+2?', target=None, group=None, subset=None)
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import fieldpath
from .canon import ASSISTANT_ROLES, USER_ROLES, canonical_text, is_blank, is_chat
from .errors import RecordError
from .records import Record

#: Records a format is detected from: the first ones of the input, across its files.
DETECT_SAMPLE = 1000
#: Id fields tried when ``--id-field`` is not given; the one most sampled records carry wins.
ID_CANDIDATES = ("id", "prompt_id", "task_id", "uid", "question_id", "extra_info.index", "index", "idx")
#: Group fields (conversation ids), chosen the same way.
GROUP_CANDIDATES = ("conv_id", "conversation_id", "extra_info.conv_id")
#: Subset fields, for leakage by data source.
SUBSET_CANDIDATES = ("data_source", "subset", "source")
#: A reward target that is missing, null or empty: the record has no target (counted, reported).
_NO_TARGET = frozenset({"empty_text", "no_assistant_turn"})


@dataclass(frozen=True)
class FormatSpec:
    """How to read one input: format name and the field paths used.

    ``prompt``/``target`` are dotted paths, or a ``+``-joined list of paths whose texts are
    concatenated (Alpaca's instruction + input). ``target`` may be ``None``. ``history`` is
    LLaMA-Factory's ``[[prompt, response], ...]`` earlier turns, whose prompts come first.
    """

    name: str
    prompt: str
    target: str | None
    id: str | None = None
    group: str | None = None
    subset: str | None = None
    history: str | None = None
    #: ``--id-field`` was given: a row without that id is an error, not a row number.
    id_required: bool = False
    _paths: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: the top-level key holding both prompt and target (a chat, as in OpenAI messages): read in one pass
    _chat_key: str | None = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        for key in ("prompt", "target", "id", "group", "subset", "history"):
            value = getattr(self, key)
            if value is None:
                continue
            self._paths[key] = tuple(fieldpath.parse(p) for p in value.split("+"))
        prompt, target = self._paths["prompt"], self._paths.get("target")
        if self.history is None and prompt == target and len(prompt) == 1 and len(prompt[0]) == 1 and isinstance(prompt[0][0], str):
            object.__setattr__(self, "_chat_key", prompt[0][0])

    def fields(self) -> dict[str, str | None]:
        """The field paths used, for the report."""
        prompt = self.prompt if self.history is None else f"{self.history}+{self.prompt}"
        return {"prompt": prompt, "target": self.target, "id": self.id, "group": self.group}

    def _text(self, key: str, row: dict) -> str:
        paths = self._paths[key]
        if len(paths) == 1:
            path = paths[0]
            # the common case, a top-level key, without the general path walk
            if len(path) == 1 and path[0] in row:
                return canonical_text(row[path[0]], key)
            return canonical_text(fieldpath.get(path, row), key)
        parts = [canonical_text(fieldpath.get(paths[0], row), key)]
        for p in paths[1:]:
            v = fieldpath.get(p, row, None)
            if isinstance(v, str) and v.strip():
                parts.append(v)
        return "\n".join(parts)

    def _target(self, row: dict) -> str | None:
        """The target text, or ``None`` when the row has none (missing, null or empty)."""
        paths = self._paths["target"]
        path = paths[0]
        value = row[path[0]] if len(path) == 1 and path[0] in row else fieldpath.get(path, row, None)
        if value is None:
            return None
        try:
            return self._text("target", row) if len(paths) > 1 else canonical_text(value, "target")
        except RecordError as exc:
            if exc.reason in _NO_TARGET:
                return None
            raise

    def _scalar(self, key: str, row: dict) -> str | None:
        paths = self._paths.get(key)
        if not paths:
            return None
        path = paths[0]
        v = row[path[0]] if len(path) == 1 and path[0] in row else fieldpath.get(path, row, None)
        if v is None or isinstance(v, (dict, list)):
            if key == "id" and self.id_required:
                what = "missing or null" if v is None else f"{'an object' if isinstance(v, dict) else 'a list'}"
                raise RecordError("bad_id", f"id {self.id} is {what}, not a value", "give every row an id, or pass another --id-field")
            return None
        return str(v)

    def extract(self, row: Any, rownum: int) -> Record:
        """Turn one raw row into a :class:`Record`; raises :class:`RecordError` when it cannot."""
        if self._chat_key is not None and type(row) is dict:
            texts = _chat_texts(row.get(self._chat_key))
            if texts is not None:
                rid = self._scalar("id", row) if self.id is not None else None
                return Record(rid if rid is not None else str(rownum), rownum, texts[0], texts[1],
                              self._scalar("group", row) if self.group is not None else None,
                              self._scalar("subset", row) if self.subset is not None else None)
        return self._extract(row, rownum)

    def _extract(self, row: Any, rownum: int) -> Record:
        if type(row) is not dict:
            raise RecordError(
                "not_object",
                f"record is {'a list' if isinstance(row, list) else type(row).__name__}, not an object",
                "each record must be a JSON object (one per line in JSONL)",
            )
        prompt = self._text("prompt", row)
        if self.history is not None:
            turns = history_prompts(fieldpath.get(self._paths["history"][0], row, None))
            if turns:
                prompt = "\n".join([*turns, prompt])
        target = self._target(row) if self.target is not None else None
        rid = self._scalar("id", row) if self.id is not None else None
        return Record(
            rid if rid is not None else str(rownum),
            rownum,
            prompt,
            target,
            self._scalar("group", row) if self.group is not None else None,
            self._scalar("subset", row) if self.subset is not None else None,
        )


def _chat_texts(messages: Any) -> tuple[str, str | None] | None:
    """(user turns, last assistant turn) of a plain chat in one pass, as :meth:`FormatSpec._extract`
    makes them; ``None`` for anything else (no user turn, a blank text, not a chat), which the
    general path then reads, errors included.

    >>> _chat_texts([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}])
    ('2+2?', '4')
    """
    if type(messages) is not list or not messages or type(messages[0]) is not dict:
        return None
    first = messages[0]
    if "role" not in first and "from" not in first:
        return None
    parts: list[str] = []
    answer: Any = None
    for m in messages:
        if type(m) is not dict:
            continue
        role = m.get("role") or m.get("from")
        if type(role) is not str:
            continue
        if role not in USER_ROLES and role not in ASSISTANT_ROLES:
            role = role.lower()
        if role in USER_ROLES:
            c = m["content"] if "content" in m else m.get("value")
            if type(c) is not str:
                return None
            parts.append(c)
        elif role in ASSISTANT_ROLES:
            answer = m
    if not parts:
        return None
    prompt = "\n".join(parts)
    if not prompt or prompt.isspace() or (not prompt.isascii() and is_blank(prompt)):
        return None
    if answer is None:
        return prompt, None
    c = answer["content"] if "content" in answer else answer.get("value")
    if type(c) is not str:
        return None
    return prompt, None if not c or c.isspace() or (not c.isascii() and is_blank(c)) else c


def history_prompts(value: Any) -> list[str]:
    """The prompts of LLaMA-Factory's ``history``: ``[[prompt, response], ...]`` (or its JSON text).

    >>> history_prompts([["Hi", "Hello!"], ["2+2?", "4"]])
    ['Hi', '2+2?']
    """
    if isinstance(value, str) and value.startswith("["):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if value is None or value == []:
        return []
    if not isinstance(value, list) or not all(isinstance(t, (list, tuple)) and len(t) == 2 for t in value):
        raise RecordError("not_text", "history is not a list of [prompt, response] pairs",
                          "fix the row, or pass --prompt-field to compare the instruction only")
    return [canonical_text(q, "prompt") for q, _ in value if q is not None and (not isinstance(q, str) or q.strip())]


@dataclass(frozen=True)
class _Rule:
    """A known format: its prompt and target paths, other keys it has, whether the prompt is a chat."""

    name: str
    prompt: str
    target: str | None
    needs: tuple[str, ...] = ()
    chat: bool = False


# Ties go to the earlier rule, so specific formats come first.
_RULES: tuple[_Rule, ...] = (
    _Rule("verl-rubric", "prompt", "reward_model.rubrics"),
    _Rule("verl", "prompt", "reward_model.ground_truth"),
    _Rule("healthbench", "prompt", "rubrics"),
    _Rule("collabllm-multiturn", "prompt", "single_turn_completion", ("conv_id",)),
    _Rule("collabllm", "single_turn_prompt", "single_turn_completion"),
    _Rule("trl-preference", "prompt", "chosen", ("rejected",)),
    _Rule("trl-preference-implicit", "chosen", "chosen", ("rejected",), chat=True),
    _Rule("trl-prompt-completion", "prompt", "completion"),
    _Rule("openai-messages", "messages", "messages", chat=True),
    _Rule("sharegpt", "conversations", "conversations", chat=True),
    _Rule("alpaca", "instruction+input", "output"),
    _Rule("humaneval", "prompt", "canonical_solution"),
    _Rule("mbpp", "text", "code"),
    _Rule("gsm8k", "question", "answer"),
    _Rule("math", "problem", "solution"),
    # TRL/GRPO-style reward data: a prompt plus a reference the reward function compares with
    *(_Rule(f"prompt-{t}", "prompt", t) for t in ("ground_truth", "answer", "solution", "reference", "target", "response", "output")),
    _Rule("prompt-only", "prompt", None),
    _Rule("question-only", "question", None),
    _Rule("text", "text", None),
)

FORMAT_NAMES = tuple(r.name for r in _RULES)


class _Sample:
    """The sampled records, with each path looked up once: how often it is there, and non-null."""

    def __init__(self, rows: Sequence[Any]):
        self.rows = [r for r in rows if isinstance(r, dict)]
        self._seen: dict[str, list[tuple[tuple, Any]]] = {}
        # per record, lower-cased key -> key (None when two keys differ only in case)
        self._lower: list[dict[str, Any]] = []
        for r in self.rows:
            low: dict[str, Any] = {}
            for k in r:
                if isinstance(k, str):
                    low[k.lower()] = None if k.lower() in low else k
            self._lower.append(low)

    def found(self, path: str) -> list[tuple[tuple, Any]]:
        """(spelling, value) for every sampled record that has ``path``."""
        if path not in self._seen:
            parsed = fieldpath.parse(path)
            hits: list[tuple[tuple, Any]] = []
            if len(parsed) == 1 and isinstance(parsed[0], str):  # a top-level key: no general path walk
                key, low = parsed[0], parsed[0].lower()
                for r, lower in zip(self.rows, self._lower):
                    k = key if key in r else lower.get(low)
                    if k is not None:
                        hits.append(((k,), r[k]))
            else:
                hits = [hit for r in self.rows if (hit := fieldpath.resolve(parsed, r)) is not None]
            self._seen[path] = hits
        return self._seen[path]

    def present(self, path: str) -> int:
        return len(self.found(path))

    def filled(self, path: str) -> int:
        return sum(v is not None for _, v in self.found(path))

    def spelled(self, path: str) -> str:
        """``path`` as most sampled records spell it (``Question`` for ``question``)."""
        hits = Counter(fieldpath.fmt(p) for p, _ in self.found(path))
        return max(hits, key=lambda k: (hits[k], k == path)) if hits else path

    def keys(self) -> list[str]:
        """Field paths of the sample, one level into objects, for messages."""
        out: set[str] = set()
        for r in self.rows:
            for k, v in r.items():
                out.add(str(k))
                if isinstance(v, dict):
                    out.update(f"{k}.{k2}" for k2 in v)
        return sorted(out)


def _score(rule: _Rule, s: _Sample) -> tuple[int, int, int]:
    """(records with the prompt, with a non-null target, with the target field) for ``rule``."""
    first = rule.prompt.split("+")[0]
    if any(s.present(n) == 0 for n in rule.needs):
        return (0, 0, 0)
    if rule.chat:
        prompts = sum(is_chat(v) for _, v in s.found(first))
    else:
        prompts = s.filled(first)
    if rule.target is None or prompts == 0:
        return (prompts, 0, 0)
    present = s.present(rule.target)
    # a target field no sampled record has does not make the format: "text" is not mbpp without "code"
    return (prompts, s.filled(rule.target), present) if present else (0, 0, 0)


def _best(s: _Sample) -> _Rule | None:
    """The rule most sampled records fit: most prompts, then most targets; ties to the earlier rule."""
    best, best_score = None, (0, 0, 0)
    for rule in _RULES:
        score = _score(rule, s)
        if score > best_score:
            best, best_score = rule, score
    return best


def _candidate(s: _Sample, candidates: tuple[str, ...]) -> str | None:
    """The candidate field most sampled records hold a plain value in."""
    counts = [(sum(v is not None and not isinstance(v, (dict, list)) for _, v in s.found(c)), c) for c in candidates]
    n, c = max(counts, key=lambda t: t[0]) if counts else (0, "")
    return s.spelled(c) if n else None


def _check_given(s: _Sample, key: str, path: str | None) -> None:
    """A field path given on the command line must be in at least one sampled record."""
    if path is None or (key == "target" and path == "none"):
        return
    first = path.split("+")[0]
    if s.present(first):
        return
    keys = s.keys()
    close = difflib.get_close_matches(first, keys, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise RecordError(
        "unknown_field",
        f"the {key} field {first} is in none of the {len(s.rows)} sampled record{'s' if len(s.rows) > 1 else ''} "
        f"(their fields: {', '.join(keys[:16])}){hint}",
        f"pass --{key}-field with one of those paths",
    )


def detect_format(
    rows: Any,
    prompt_field: str | None = None,
    target_field: str | None = None,
    id_field: str | None = None,
    group_field: str | None = None,
) -> FormatSpec:
    """Pick a :class:`FormatSpec` from sampled records (or one record); explicit fields override detection.

    Raises :class:`RecordError`: reason ``unknown_format`` when nothing fits, ``unknown_field``
    when an explicit field is in none of the records, ``not_object`` when none is an object.
    """
    s = _Sample([rows] if isinstance(rows, dict) else rows)
    if not s.rows:
        raise RecordError("not_object", "no sampled record is an object", "each record must be a JSON object")
    for key, path in (("prompt", prompt_field), ("target", target_field), ("id", id_field), ("group", group_field)):
        _check_given(s, key, path)
    rule = _best(s)
    custom = bool(prompt_field or target_field)
    if rule is None and not prompt_field:
        keys = ", ".join(s.keys()[:12])
        raise RecordError(
            "unknown_format",
            f"cannot tell the format from the records' fields ({keys})",
            "pass --prompt-field (and --target-field) with dotted paths, e.g. --prompt-field messages[0].content",
        )
    name = "custom" if rule is None else rule.name + ("+custom" if custom else "")
    prompt = prompt_field or "+".join(s.spelled(p) for p in rule.prompt.split("+"))  # type: ignore[union-attr]
    target = target_field if target_field is not None else (s.spelled(rule.target) if rule and rule.target else None)
    history = s.spelled("history") if rule and rule.name == "alpaca" and not prompt_field and s.filled("history") else None
    return FormatSpec(
        name=name,
        prompt=prompt,
        target=None if target == "none" else target,
        id=id_field or _candidate(s, ID_CANDIDATES),
        group=group_field or _candidate(s, GROUP_CANDIDATES),
        subset=_candidate(s, SUBSET_CANDIDATES),
        history=history,
        id_required=id_field is not None,
    )
