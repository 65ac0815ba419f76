"""The conversations of the healthbench examples: who asks about whom, and in which wording.

A question (topic, persona, one or three turns, duration, context sentences) can be worded
two ways, A and B, that share no phrasing, so a train copy can ask the same thing in other
words. Personas, phrases and templates: vocab/healthbench.toml.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from . import cap

T = TypeVar("T")
Turns = list[dict[str, str]]

ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen").split()
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def num_words(n: int) -> str:
    """0-99 in words.

    >>> num_words(7), num_words(40), num_words(88)
    ('seven', 'forty', 'eighty-eight')
    """
    t, o = divmod(n, 10)
    return ONES[n] if n < 20 else TENS[t] + ("" if o == 0 else "-" + ONES[o])


def pick(rng: random.Random, options: Sequence[T]) -> T:
    """A drawn option; a single one is used without a draw (so it costs no randomness)."""
    return options[0] if len(options) == 1 else rng.choice(options)


def user_text(prompt: Turns) -> str:
    """The user turns, one a line."""
    return "\n".join(m["content"] for m in prompt if m["role"] == "user")


def user_turn(text: str) -> dict[str, str]:
    return {"role": "user", "content": re.sub(r"\s+", " ", text).strip()}


@dataclass(frozen=True)
class Question:
    """One medical question before it is worded: topic, persona, turns, duration and context pairs."""

    topic: dict[str, Any]
    persona: dict[str, Any]
    multi: bool
    duration: list[str]
    contexts: list[list[str]]


class Questions:
    """Draws questions and words them, from ``rng`` (shared with the caller's other draws)."""

    def __init__(self, v: dict[str, Any], rng: random.Random):
        self.v, self.rng = v, rng

    def question(self, t: dict[str, Any], wording_a: bool = False, multi: bool = False) -> tuple[Question, Turns]:
        """A drawn question and its conversation (wording A unless drawn B, multi-turn if drawn)."""
        r, v = self.rng, self.v
        p = self.persona(t)
        fam = 0 if wording_a or r.random() < 0.75 else 1
        multi = multi or r.random() < 0.3
        dur = r.choice(v["durations"][t["duration"]])
        q = Question(t, p, multi, dur, r.sample(v["contexts"]["pairs"], r.randint(0, 2)))
        return q, self.prompt(q, fam)

    def persona(self, t: dict[str, Any]) -> dict[str, Any]:
        """Who asks about whom, with the phrases the templates name them by."""
        spec, rels, r = self.v["personas"][t["who"]], self.v["relations"], self.rng
        rel = r.choice(spec["relations"])
        lo, hi = t.get("ages", spec["ages"])
        lo, hi = max(lo, spec.get("min_age", {}).get(rel, lo)), min(hi, spec.get("max_age", {}).get(rel, hi))
        age = r.randint(lo, max(lo, hi))
        fixed = spec.get("sex")
        sex = "m" if rel in rels["male"] or fixed == "m" else "f" if rel in rels["female"] or fixed == "f" else r.choice("mf")
        infant, ph = t["who"] == "infant", self.v["persona_phrases"]
        if rel == "self":
            table = ph["self"] | (ph["self_sexed"] if fixed else {})
        else:
            table = ph["other"] | (ph["other_infant"] if infant else ph["other_child"] if t["who"] in ("child", "teen") else {})
        pron = "he" if sex == "m" else "she"
        words = {"rel": rel, "rel_b": rels["wording_b"].get(rel, rel), "age": age, "age_words": num_words(age),
                 "unit": "month" if infant else "year", "s": "" if age == 1 else "s", "pron": pron, "Pron": cap(pron),
                 "man": "man" if sex == "m" else "woman", "male": "male" if sex == "m" else "female",
                 "child": "boy" if sex == "m" else "girl"}
        return {"self": rel == "self", "age": age, "infant": infant} | {k: s.format(**words) for k, s in table.items()}

    def prompt(self, q: Question, fam: int) -> Turns:
        """The conversation in wording ``fam`` (0 = A, 1 = B): one user turn, or user, assistant, user."""
        t, w = q.topic, self.v["wording"]["AB"[fam]]
        f = self.fields(q, fam)
        f["close"] = self.rng.choice(w["close"][t["kind"]]).format(**f)
        if not q.multi or t["kind"] == "diagnosis":
            return [user_turn(pick(self.rng, w["single"][t["kind"]]).format(**f))]
        m = w["multi"]
        opening = pick(self.rng, m["opening"]).format(**f)
        assistant = pick(self.rng, m["assistant"]).format(**f)
        return [user_turn(opening), {"role": "assistant", "content": assistant}, user_turn(pick(self.rng, m["followup"]).format(**f))]

    @staticmethod
    def fields(q: Question, fam: int) -> dict[str, Any]:
        """What the templates of wording ``fam`` may name (see vocab/healthbench.toml [wording])."""
        p, d = q.persona, q.duration[fam]
        since = d.startswith("since")
        return p | {"sym": q.topic["symptom"][fam], "ctx": " ".join(c[fam] for c in q.contexts), "dur": d,
                    "when_for": d if since else "for " + d, "when_ago": d if since else d + " ago",
                    "age": p["age_sent"] + " " if p["age_sent"] else "",
                    "S_l": p["S"] if p["self"] else p["S"][0].lower() + p["S"][1:],
                    "age_b": num_words(p["age"]) + (" months" if p["infant"] else "")}
