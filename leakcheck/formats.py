"""Format detection and field extraction: raw rows in, :class:`Record` out.

Formats are recognised from the keys of the first record. Explicit field paths always win.
No detector knows about formats; they only see :class:`~leakcheck.records.Record`.

>>> spec = detect_format({"question": "2+2?", "answer": "4"})
>>> spec.name, spec.prompt, spec.target
('gsm8k', 'question', 'answer')
>>> spec.extract({"question": "2+2?", "answer": "4"}, 0)
Record(id='0', row=0, prompt='2+2?', target='4', group=None, subset=None)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from . import fieldpath
from .canon import canonical_text, is_chat
from .errors import RecordError
from .records import Record

#: Id fields tried in order when ``--id-field`` is not given.
ID_CANDIDATES = ("id", "prompt_id", "task_id", "uid", "question_id", "extra_info.index", "index", "idx")
#: Group fields (conversation ids) tried in order.
GROUP_CANDIDATES = ("conv_id", "conversation_id", "extra_info.conv_id")
#: Subset fields, for leakage by data source.
SUBSET_CANDIDATES = ("data_source", "subset", "source")


@dataclass(frozen=True)
class FormatSpec:
    """How to read one file: format name and the field paths used.

    ``prompt``/``target`` are dotted paths, or a ``+``-joined list of paths whose texts are
    concatenated (Alpaca's instruction + input). ``target`` may be ``None``.
    """

    name: str
    prompt: str
    target: str | None
    id: str | None = None
    group: str | None = None
    subset: str | None = None
    _paths: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for key in ("prompt", "target", "id", "group", "subset"):
            value = getattr(self, key)
            if value is None:
                continue
            self._paths[key] = tuple(fieldpath.parse(p) for p in value.split("+"))

    def fields(self) -> dict[str, str | None]:
        """The field paths used, for the report."""
        return {"prompt": self.prompt, "target": self.target, "id": self.id, "group": self.group}

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

    def _scalar(self, key: str, row: dict) -> str | None:
        paths = self._paths.get(key)
        if not paths:
            return None
        v = fieldpath.get(paths[0], row, None)
        if v is None or isinstance(v, (dict, list)):
            return None
        return str(v)

    def extract(self, row: Any, rownum: int) -> Record:
        """Turn one raw row into a :class:`Record`; raises :class:`RecordError` when it cannot."""
        if type(row) is not dict:
            raise RecordError(
                "not_object",
                f"record is {'a list' if isinstance(row, list) else type(row).__name__}, not an object",
                "each record must be a JSON object (one per line in JSONL)",
            )
        prompt = self._text("prompt", row)
        target = self._text("target", row) if self.target is not None else None
        rid = self._scalar("id", row) if self.id is not None else None
        return Record(
            rid if rid is not None else str(rownum),
            rownum,
            prompt,
            target,
            self._scalar("group", row) if self.group is not None else None,
            self._scalar("subset", row) if self.subset is not None else None,
        )


def _has(row: dict, path: str) -> bool:
    return fieldpath.get(fieldpath.parse(path), row, None) is not None


def _first(row: dict, candidates: tuple[str, ...]) -> str | None:
    for c in candidates:
        v = fieldpath.get(fieldpath.parse(c), row, None)
        if v is not None and not isinstance(v, (dict, list)):
            return c
    return None


# (name, test, prompt path, target path). First match wins, so specific formats come first.
_Rule = tuple[str, Callable[[dict], bool], str, str | None]
_RULES: list[_Rule] = [
    ("verl-rubric", lambda r: _has(r, "reward_model.rubrics") and "prompt" in r, "prompt", "reward_model.rubrics"),
    ("verl", lambda r: _has(r, "reward_model.ground_truth") and "prompt" in r, "prompt", "reward_model.ground_truth"),
    ("healthbench", lambda r: "rubrics" in r and "prompt" in r, "prompt", "rubrics"),
    (
        "collabllm-multiturn",
        lambda r: "conv_id" in r and "prompt" in r and "single_turn_completion" in r,
        "prompt",
        "single_turn_completion",
    ),
    (
        "collabllm",
        lambda r: "single_turn_prompt" in r and "single_turn_completion" in r,
        "single_turn_prompt",
        "single_turn_completion",
    ),
    ("trl-preference", lambda r: "prompt" in r and "chosen" in r and "rejected" in r, "prompt", "chosen"),
    ("trl-preference-implicit", lambda r: "chosen" in r and "rejected" in r and is_chat(r["chosen"]), "chosen", "chosen"),
    ("trl-prompt-completion", lambda r: "prompt" in r and "completion" in r, "prompt", "completion"),
    ("openai-messages", lambda r: is_chat(r.get("messages")), "messages", "messages"),
    ("sharegpt", lambda r: is_chat(r.get("conversations")), "conversations", "conversations"),
    ("alpaca", lambda r: "instruction" in r and "output" in r, "instruction+input", "output"),
    ("humaneval", lambda r: "prompt" in r and "canonical_solution" in r, "prompt", "canonical_solution"),
    ("mbpp", lambda r: "text" in r and "code" in r, "text", "code"),
    ("gsm8k", lambda r: "question" in r and "answer" in r, "question", "answer"),
    ("math", lambda r: "problem" in r and "solution" in r, "problem", "solution"),
    # TRL/GRPO-style reward data: a prompt plus a reference the reward function compares with
    *[(f"prompt-{t}", (lambda t: lambda r: "prompt" in r and t in r)(t), "prompt", t)
      for t in ("ground_truth", "answer", "solution", "reference", "target", "response", "output")],
    ("prompt-only", lambda r: "prompt" in r, "prompt", None),
    ("question-only", lambda r: "question" in r, "question", None),
    ("text", lambda r: "text" in r, "text", None),
]

FORMAT_NAMES = tuple(r[0] for r in _RULES)


def detect_format(
    row: Any,
    prompt_field: str | None = None,
    target_field: str | None = None,
    id_field: str | None = None,
    group_field: str | None = None,
) -> FormatSpec:
    """Pick a :class:`FormatSpec` from the first record; explicit fields override detection.

    Raises :class:`RecordError` (reason ``unknown_format``) when nothing fits.
    """
    if not isinstance(row, dict):
        raise RecordError("not_object", "first record is not an object", "each record must be a JSON object")
    name, prompt, target = "custom", prompt_field, target_field
    for rname, test, rprompt, rtarget in _RULES:
        try:
            ok = test(row)
        except Exception:  # a rule test must never decide the format by crashing
            ok = False
        if ok:
            name = rname if not (prompt_field or target_field) else f"{rname}+custom"
            prompt = prompt_field or rprompt
            target = target_field if target_field is not None else rtarget
            break
    if prompt is None:
        keys = ", ".join(sorted(map(str, row))[:12])
        raise RecordError(
            "unknown_format",
            f"cannot tell the format from the record's keys ({keys})",
            "pass --prompt-field (and --target-field) with dotted paths, e.g. --prompt-field messages[0].content",
        )
    if target == "none":
        target = None
    return FormatSpec(
        name=name,
        prompt=prompt,
        target=target,
        id=id_field or _first(row, ID_CANDIDATES),
        group=group_field or _first(row, GROUP_CANDIDATES),
        subset=_first(row, SUBSET_CANDIDATES),
    )
