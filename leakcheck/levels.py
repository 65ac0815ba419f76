"""The level registry: one entry per level, and everything else reads it.

A level is three things: its knobs in :class:`~leakcheck.config.ScanConfig`, ``build(evals,
config)`` that indexes eval records into a :class:`LevelIndex` (plain data: arrays of
hashes and signatures, never eval text), and the index's stateless ``probe(batch)``. Adding
a level means adding one :class:`LevelSpec` here.

>>> [spec.name for spec in REGISTRY.values()]
['exact', 'normalized', 'near', 'contained', 'semantic']
>>> REGISTRY["near"].fuzzy, REGISTRY["exact"].rank
(True, 0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # numpy is imported when an index is saved or loaded, not to start a scan
    import numpy as np

from .config import LEVELS, ScanConfig
from .detect.base import Match
from .records import Record


class LevelIndex(Protocol):
    """What one level built from the eval side; immutable once built.

    An index may also have ``line_filter() -> LineFilter | None``
    (:class:`~leakcheck.io.chat_lines.LineFilter`): which train texts it could match, as the C
    chat reader tests them, so that lines it cannot match are not probed there (the exact and
    normalized levels have one).
    """

    level: str

    def probe(self, batch: Sequence[Record], stats: dict[str, int] | None = None) -> Iterator[Match]:
        """Every match between the train records of ``batch`` and this index; counts into ``stats``."""
        ...

    def with_learned(self, learned: Any) -> "LevelIndex":
        """This index, also knowing what its :attr:`LevelSpec.learn` learned from the first train records; a new value."""
        ...

    def parameters(self) -> dict[str, Any]:
        """User knobs and derived internals, for the report."""
        ...

    def notes(self) -> list[str]:
        """Lines for the report (what was suppressed, what was not checked)."""
        ...

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """JSON-ready settings and numpy arrays that :attr:`LevelSpec.load` turns back into the index."""
        ...

    @classmethod
    def concat(cls, parts: Sequence[Any], sizes: Sequence[int]) -> Any:
        """One index over several eval sets' indexes (``sizes``: records of each), in order."""
        ...


@dataclass(frozen=True)
class LevelSpec:
    """One level: how to build its index from eval records and how to load a saved one."""

    name: str
    fuzzy: bool
    build: Callable[[Sequence[Record], ScanConfig], LevelIndex]
    load: Callable[[ScanConfig, dict[str, Any], dict[str, np.ndarray]], LevelIndex]
    #: The :class:`ScanConfig` attribute holding the level's knobs, if it has any.
    config_attr: str | None = None
    #: What the level learns from the first train records without the eval side (plain,
    #: picklable data, so another process learns it while the index is built); applied with
    #: :meth:`LevelIndex.with_learned`. ``None``: the level learns nothing from train.
    learn: Callable[[Sequence[Record], ScanConfig], Any] | None = None
    #: Work on a train batch that needs neither the index nor what was learned (tokenizing),
    #: done ahead while the scan waits for :attr:`learn`; levels sharing it name one function.
    prepare: Callable[[Sequence[Record]], None] | None = None

    @property
    def rank(self) -> int:
        """0 is the strongest evidence."""
        return LEVELS.index(self.name)

    def knobs(self, config: ScanConfig) -> dict[str, Any]:
        """The level's knobs as plain data (an index must be probed with the knobs it was built with)."""
        if self.config_attr is None:
            return {"short_target_chars": config.short_target_chars}
        from dataclasses import asdict

        return asdict(getattr(config, self.config_attr))


def _text_build(level: str) -> Callable[[Sequence[Record], ScanConfig], LevelIndex]:
    def build(evals: Sequence[Record], config: ScanConfig) -> LevelIndex:
        from .detect.hashing import TextMatchDetector

        return TextMatchDetector(level, evals, config.short_target_chars)

    return build


def _text_load(level: str) -> Callable[[ScanConfig, dict[str, Any], dict[str, np.ndarray]], LevelIndex]:
    def load(config: ScanConfig, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> LevelIndex:
        from .detect.hashing import TextMatchDetector

        return TextMatchDetector.from_state(level, meta, arrays)

    return load


def _fuzzy_build(level: str) -> Callable[[Sequence[Record], ScanConfig], LevelIndex]:
    def build(evals: Sequence[Record], config: ScanConfig) -> LevelIndex:
        from .detect import fuzzy  # numpy/datasketch only when asked for

        return fuzzy.build(level, evals, config)

    return build


def _fuzzy_load(level: str) -> Callable[[ScanConfig, dict[str, Any], dict[str, np.ndarray]], LevelIndex]:
    def load(config: ScanConfig, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> LevelIndex:
        from .detect import fuzzy

        return fuzzy.from_state(level, config, meta, arrays)

    return load


def _fuzzy_learn(level: str) -> Callable[[Sequence[Record], ScanConfig], Any]:
    def learn(sample: Sequence[Record], config: ScanConfig) -> Any:
        from .detect import fuzzy

        return fuzzy.learn(level, sample, fuzzy.knobs_of(level, config))

    return learn


def _fuzzy_prepare(batch: Sequence[Record]) -> None:
    from .detect import fuzzy

    fuzzy.prepare(batch)


def _semantic_learn(sample: Sequence[Record], config: ScanConfig) -> Any:
    from .detect import semantic

    return semantic.learn(sample)


def _semantic_build(evals: Sequence[Record], config: ScanConfig) -> LevelIndex:
    from .detect import semantic  # scikit-learn only when asked for

    return semantic.build(evals, config)


def _semantic_load(config: ScanConfig, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> LevelIndex:
    from .detect import semantic

    return semantic.from_state(config, meta, arrays)


REGISTRY: dict[str, LevelSpec] = {
    s.name: s
    for s in (
        LevelSpec("exact", False, _text_build("exact"), _text_load("exact")),
        LevelSpec("normalized", False, _text_build("normalized"), _text_load("normalized")),
        LevelSpec("near", True, _fuzzy_build("near"), _fuzzy_load("near"), "near", _fuzzy_learn("near"), _fuzzy_prepare),
        LevelSpec("contained", True, _fuzzy_build("contained"), _fuzzy_load("contained"), "contained", _fuzzy_learn("contained"),
                  _fuzzy_prepare),
        LevelSpec("semantic", True, _semantic_build, _semantic_load, "semantic", _semantic_learn),
    )
}
assert tuple(REGISTRY) == LEVELS, "the registry lists every level, strongest first"
