"""What every detector looks like: build from eval records once, probe train batches."""

from __future__ import annotations

from typing import Any, Iterator, NamedTuple, Protocol, Sequence

from ..records import Record

FIELDS = ("prompt", "target")


class Match(NamedTuple):
    """Train record ``pos`` (index in the probed batch) matches eval record ``eval_idx``.

    ``eval_field``/``train_field`` are ``"prompt"`` or ``"target"``; equal fields give the
    ``prompt``/``target`` kinds, crossed fields the ``target_in_prompt``/``prompt_in_target``
    kinds. ``below``: the score is under the level's threshold but within the report's
    near-miss margin: shown to a person as a closest non-leak, never counted or gated.
    ``detail``: the scores that decided a match, for levels that weigh more than one
    (``semantic``: lexical, embedding, target agreement); copied into the finding.
    """

    pos: int
    eval_idx: int
    eval_field: str
    train_field: str
    score: float
    below: bool = False
    detail: dict[str, Any] | None = None


class Detector(Protocol):
    """A leakage level. Same shape for all, so an executor can shard the train side."""

    level: str

    def probe(self, batch: Sequence[Record]) -> Iterator[Match]:
        """Yield every match between the train records of ``batch`` and the eval index."""
        ...

    def parameters(self) -> dict[str, Any]:
        """User knobs and derived internals, for the report."""
        ...


class PrimedDetector(Detector, Protocol):
    """A detector that learns from a sample of train records before probing (optional)."""

    def prime(self, sample: Sequence[Record]) -> None:
        """See the first ``ScanConfig.sample_size`` train records; called once, before probe."""
        ...

    def notes(self) -> list[str]:
        """Lines for the report (what was suppressed, what was not checked)."""
        ...
