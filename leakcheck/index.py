"""The eval index: every level's view of one or more eval sets, built once, then only read.

An :class:`EvalIndex` is a value: :meth:`EvalIndex.build` makes it from eval records,
:meth:`EvalIndex.save` writes it as one ``.lcx`` file (a NumPy ``.npz`` archive: a JSON header
and arrays, loaded without pickle), :meth:`EvalIndex.load` reads it back, and scan workers
share it. It holds hashes, MinHash signatures, n-gram hashes, template statistics, ids,
content fingerprints and every parameter, but **no eval text**.

>>> import leakcheck, os, tempfile
>>> from leakcheck.scan import load_records
>>> p = os.path.join(os.path.dirname(leakcheck.__file__), "data", "chat_small", "eval_questions.jsonl")
>>> recs, info = load_records(p)
>>> idx = EvalIndex.build([("questions", recs, info)], leakcheck.ScanConfig(levels=("exact", "normalized")))
>>> out = os.path.join(tempfile.mkdtemp(), "evals.lcx")
>>> idx.save(out)
>>> EvalIndex.load(out).sets[0].name, len(EvalIndex.load(out).meta.ids) == info.records
('questions', True)
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import os
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import __version__
from .canon import normalize
from .config import LEVELS, ScanConfig
from .errors import InputError, UsageError
from .fingerprint import record_fingerprint, text_key
from .io.chat_lines import Filtering
from .levels import REGISTRY, LevelIndex
from .records import Record
from .result import EvalDuplicate, InputInfo, SkippedRow, UnreadFile

if TYPE_CHECKING:  # imported where an index is saved or loaded: a scan starts without it
    import numpy as np

INDEX_FORMAT = "leakcheck-eval-index"
INDEX_VERSION = 2
_HEADER = "header.json"


@dataclass(frozen=True)
class EvalSet:
    """One named eval set inside an index: its records are ``meta[start:stop]``."""

    name: str
    info: InputInfo
    start: int
    stop: int
    duplicates: tuple[EvalDuplicate, ...] = ()

    def __len__(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class EvalMeta:
    """Per eval record, over all sets of an index (parallel tuples).

    ``target_keys``/``target_lens``: hash and length of the normalized target, enough to find
    the whole target inside a train text without the text. ``prompts``/``targets`` are kept
    in memory for report snippets when the index was built in this process; a saved index has
    none.
    """

    ids: tuple[str, ...]
    rows: tuple[int, ...]
    groups: tuple[str | None, ...]
    subsets: tuple[str | None, ...]
    has_target: tuple[bool, ...]
    fingerprints: tuple[str, ...]
    target_keys: tuple[int | None, ...]
    target_lens: tuple[int, ...]
    prompts: tuple[str, ...] | None = None
    targets: tuple[str | None, ...] | None = None
    #: What the other-field rules need from each target (:mod:`leakcheck.detect.agree`), as
    #: keys without text, so a saved index tells siblings apart too; empty without fuzzy levels.
    target_views: tuple[Any, ...] = ()

    @classmethod
    def of(cls, records: Sequence[Record], views: bool = False) -> "EvalMeta":
        norm = [normalize(r.target) if r.target is not None else None for r in records]
        tv: tuple[Any, ...] = ()
        if views:
            from .detect.agree import view

            tv = tuple(view(r.target).without_text() if r.target is not None else None for r in records)
        return cls(
            target_views=tv,
            ids=tuple(r.id for r in records),
            rows=tuple(r.row for r in records),
            groups=tuple(r.group for r in records),
            subsets=tuple(r.subset for r in records),
            has_target=tuple(r.target is not None for r in records),
            fingerprints=tuple(record_fingerprint(r.prompt, r.target) for r in records),
            target_keys=tuple(text_key(t) if t is not None else None for t in norm),
            target_lens=tuple(len(t) if t is not None else 0 for t in norm),
            prompts=tuple(r.prompt for r in records),
            targets=tuple(r.target for r in records),
        )

    def without_text(self) -> "EvalMeta":
        return dataclasses.replace(self, prompts=None, targets=None)


@dataclass(frozen=True)
class TrainLearned:
    """What the fuzzy levels learn from the first train records (their templates), per level.

    >>> from leakcheck.records import Record
    >>> cfg = ScanConfig(levels=("exact", "near"))
    >>> learned = TrainLearned.of([Record("t0", 0, "a train prompt of some words")], cfg)
    >>> learned.records, sorted(learned.by_level)
    (1, ['near'])
    """

    records: int
    by_level: dict[str, Any]

    @classmethod
    def of(cls, sample: Sequence[Record], config: ScanConfig) -> "TrainLearned":
        """What ``sample`` teaches the levels of ``config`` (those with a :attr:`~leakcheck.levels.LevelSpec.learn`)."""
        learners = {lv: REGISTRY[lv].learn for lv in config.levels}
        return cls(len(sample), {lv: f(sample, config) for lv, f in learners.items() if f is not None})


@dataclass(frozen=True)
class EvalIndex:
    """Every level's index over the eval sets, plus what the collector needs per record."""

    sets: tuple[EvalSet, ...]
    meta: EvalMeta
    parts: Mapping[str, LevelIndex]
    #: The knobs each level was built with; a scan must use the same.
    knobs: Mapping[str, dict[str, Any]]
    train_sample: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def levels(self) -> tuple[str, ...]:
        return tuple(lv for lv in LEVELS if lv in self.parts)

    @functools.cached_property
    def filtering(self) -> Filtering | None:
        """The levels that can say which train texts they could match (``LevelIndex.line_filter``),
        and how: the C chat reader drops or marks the other lines (:mod:`leakcheck.io.chat_lines`)."""
        filters = {lv: f for lv, p in self.parts.items() if hasattr(p, "line_filter") and (f := p.line_filter()) is not None}
        return Filtering.of(filters, list(self.parts))

    @classmethod
    def build(cls, named: Sequence[tuple[str, Sequence[Record], InputInfo]], config: ScanConfig) -> "EvalIndex":
        """Index the eval sets ``(name, records, info)`` at every level of ``config``."""
        from .scan import eval_duplicates

        names = [n for n, _, _ in named]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise UsageError(f"two eval sets are named {dup[0]!r}; name them apart with --name NAME=PATH")
        records: list[Record] = []
        sets = []
        for name, recs, info in named:
            sets.append(EvalSet(name, info, len(records), len(records) + len(recs), tuple(eval_duplicates(list(recs), config.short_target_chars))))
            records.extend(recs)
        parts = {lv: REGISTRY[lv].build(records, config) for lv in config.levels}
        knobs = {lv: REGISTRY[lv].knobs(config) for lv in config.levels}
        fuzzy = any(REGISTRY[lv].fuzzy for lv in config.levels)
        return cls(tuple(sets), EvalMeta.of(records, views=fuzzy), parts, knobs)

    def with_train_sample(self, sample: Sequence[Record]) -> "EvalIndex":
        """A new index whose levels also know what ``sample`` (the first train records) teaches them:
        :meth:`with_learned` of :meth:`TrainLearned.of`, with the knobs this index was built with."""
        return self.with_learned(TrainLearned.of(sample, _config_from_knobs(self.knobs, self.levels, None)))

    def with_learned(self, learned: "TrainLearned") -> "EvalIndex":
        """A new index with what :meth:`TrainLearned.of` learned (maybe in another process) applied.

        Every level that learns from train must have learned (``learned`` is of this index's levels).
        """
        missing = [lv for lv in self.parts if REGISTRY[lv].learn is not None and lv not in learned.by_level]
        if missing:
            raise ValueError(f"with_learned: nothing learned for {', '.join(missing)}")
        parts = {lv: p.with_learned(learned.by_level[lv]) if lv in learned.by_level else p for lv, p in self.parts.items()}
        return dataclasses.replace(self, parts=parts, train_sample=learned.records)

    def check(self, config: ScanConfig, path: str = "the index") -> None:
        """Refuse a scan whose levels or knobs differ from what this index was built with."""
        missing = [lv for lv in config.levels if lv not in self.parts]
        if missing:
            raise UsageError(f"{path} has no {', '.join(missing)} level (built with --levels {','.join(self.levels)}); "
                             f"rebuild it with those levels or scan with --levels {','.join(self.levels)}")
        for lv in config.levels:
            want = REGISTRY[lv].knobs(config)
            have = self.knobs.get(lv, {})
            diff = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
            if diff:
                k = diff[0]
                raise UsageError(f"{path} was built with {lv} {k}={have.get(k)!r}, this scan asks for {want.get(k)!r}; "
                                 "rebuild the index with the scan's options, or drop the option")

    @classmethod
    def concat(cls, indexes: Sequence["EvalIndex"]) -> "EvalIndex":
        """One index over the eval sets of several (built with the same levels and knobs).

        >>> from leakcheck.records import Record
        >>> from leakcheck.result import InputInfo
        >>> cfg = ScanConfig(levels=("exact",))
        >>> info = InputInfo("x", (), "text", {}, 1, 1)
        >>> a = EvalIndex.build([("a", [Record("0", 0, "q one")], info)], cfg)
        >>> b = EvalIndex.build([("b", [Record("0", 0, "q two")], info)], cfg)
        >>> [(s.name, s.start, s.stop) for s in EvalIndex.concat([a, b]).sets]
        [('a', 0, 1), ('b', 1, 2)]
        """
        if len(indexes) == 1:
            return indexes[0]
        first = indexes[0]
        for other in indexes[1:]:
            if other.levels != first.levels or dict(other.knobs) != dict(first.knobs):
                raise UsageError(f"eval indexes built with other levels or options cannot be scanned together "
                                 f"({', '.join(first.levels)} vs {', '.join(other.levels)}); rebuild them with the same options")
        names = [s.name for ix in indexes for s in ix.sets]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise UsageError(f"two eval sets are named {dup[0]!r}; name them apart with --name NAME=PATH")
        sizes = [len(ix.meta.ids) for ix in indexes]
        sets, offset = [], 0
        for ix, n in zip(indexes, sizes):
            sets += [dataclasses.replace(s, start=s.start + offset, stop=s.stop + offset) for s in ix.sets]
            offset += n
        metas = [ix.meta for ix in indexes]
        texts = all(m.prompts is not None for m in metas)
        meta = EvalMeta(**{f.name: tuple(x for m in metas for x in getattr(m, f.name)) for f in dataclasses.fields(EvalMeta)
                           if f.name not in ("prompts", "targets")},
                        prompts=tuple(x for m in metas for x in m.prompts or ()) if texts else None,
                        targets=tuple(x for m in metas for x in m.targets or ()) if texts else None)
        parts = {lv: type(first.parts[lv]).concat([ix.parts[lv] for ix in indexes], sizes) for lv in first.levels}
        return cls(tuple(sets), meta, parts, first.knobs)

    def only(self, levels: Sequence[str]) -> "EvalIndex":
        """The same index restricted to ``levels``."""
        return dataclasses.replace(self, parts={lv: p for lv, p in self.parts.items() if lv in levels},
                                   knobs={lv: k for lv, k in self.knobs.items() if lv in levels})

    # -- saving and loading -------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Write the index as one ``.lcx`` file, atomically. No eval text is written."""
        from .report._atomic import write_atomic

        write_atomic(path, self.to_bytes())

    def to_bytes(self, with_text: bool = False, compress: bool = True) -> bytes:
        """The index as ``.lcx`` bytes. ``with_text``: also the eval texts this process holds, for
        this run's own workers (target agreement and snippets need them); never written to a file.
        """
        header, arrays = self._header(), self._arrays()
        if with_text and self.meta.prompts is not None:
            header["texts"] = {"prompts": list(self.meta.prompts), "targets": list(self.meta.targets or ())}
        buf = io.BytesIO()
        import numpy as np

        payload: dict[str, Any] = {_HEADER: np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays}
        (np.savez_compressed if compress else np.savez)(buf, **payload)
        return buf.getvalue()

    def _header(self) -> dict[str, Any]:
        m = self.meta
        return {
            "format": INDEX_FORMAT,
            "version": INDEX_VERSION,
            "leakcheck_version": __version__,
            "levels": list(self.levels),
            "knobs": dict(self.knobs),
            "train_sample": self.train_sample,
            "sets": [_set_dict(s) for s in self.sets],
            "meta": {"ids": list(m.ids), "rows": list(m.rows), "groups": list(m.groups), "subsets": list(m.subsets),
                     "has_target": list(m.has_target), "fingerprints": list(m.fingerprints), "target_lens": list(m.target_lens),
                     "target_views": [v.to_json() if v is not None else None for v in m.target_views]},
            "parts": {lv: p.state()[0] for lv, p in self.parts.items()},
        }

    def _arrays(self) -> dict[str, np.ndarray]:
        import numpy as np

        keys = [k if k is not None else 0 for k in self.meta.target_keys]
        out = {"meta.target_keys": np.array([[k >> 64, k & 0xFFFFFFFFFFFFFFFF] for k in keys], dtype=np.uint64).reshape(-1, 2)}
        for lv, p in self.parts.items():
            for name, a in p.state()[1].items():
                out[f"{lv}/{name}"] = np.asarray(a)
        return out

    @classmethod
    def load(cls, path: str | os.PathLike, config: ScanConfig | None = None) -> "EvalIndex":
        """Read an index written by :meth:`save`; one-line errors for other files and versions."""
        p = os.fspath(path)
        return cls._read(p, p, config)

    @classmethod
    def from_bytes(cls, data: bytes, config: ScanConfig | None = None) -> "EvalIndex":
        """An index from :meth:`to_bytes` (how workers receive it)."""
        return cls._read(io.BytesIO(data), "<index bytes>", config)

    @classmethod
    def _read(cls, src: Any, p: str, config: ScanConfig | None) -> "EvalIndex":
        try:
            import numpy as np

            with np.load(src, allow_pickle=False) as z:
                if _HEADER not in z.files:
                    raise InputError(p, None, "not a leakcheck eval index", "build one with leakcheck index EVAL -o FILE.lcx")
                header = json.loads(bytes(z[_HEADER]).decode())
                arrays = {k: z[k] for k in z.files if k != _HEADER}
        except FileNotFoundError:
            raise InputError(p, None, "no such file", "build it with leakcheck index EVAL -o FILE.lcx") from None
        except (zipfile.BadZipFile, ValueError, OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(p, None, f"not a leakcheck eval index ({str(exc)[:80]})", "build one with leakcheck index EVAL -o FILE.lcx") from None
        return cls._from(p, header, arrays, config)

    @classmethod
    def _from(cls, p: str, h: dict[str, Any], arrays: dict[str, np.ndarray], config: ScanConfig | None) -> "EvalIndex":
        if h.get("format") != INDEX_FORMAT:
            raise InputError(p, None, "not a leakcheck eval index", "build one with leakcheck index EVAL -o FILE.lcx")
        if h.get("version") != INDEX_VERSION:
            raise InputError(p, None, f"index format version {h.get('version')!r} is not {INDEX_VERSION} "
                             f"(written by leakcheck {h.get('leakcheck_version')})", "rebuild it with this leakcheck: leakcheck index ...")
        cfg = _config_from_knobs(h["knobs"], tuple(h["levels"]), config)
        m = h["meta"]
        keys = [(int(hi) << 64) | int(lo) for hi, lo in arrays["meta.target_keys"].tolist()]
        meta = EvalMeta(
            ids=tuple(m["ids"]), rows=tuple(m["rows"]), groups=tuple(m["groups"]), subsets=tuple(m["subsets"]),
            has_target=tuple(m["has_target"]), fingerprints=tuple(m["fingerprints"]),
            target_keys=tuple(k if has else None for k, has in zip(keys, m["has_target"])), target_lens=tuple(m["target_lens"]),
            target_views=_views_from(m.get("target_views", [])),
            prompts=tuple(h["texts"]["prompts"]) if "texts" in h else None,
            targets=tuple(h["texts"]["targets"]) if "texts" in h else None,
        )
        parts = {}
        for lv in h["levels"]:
            prefix = f"{lv}/"
            part_arrays = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
            try:
                parts[lv] = REGISTRY[lv].load(cfg, h["parts"][lv], part_arrays)
            except KeyError as exc:  # a part saved by a leakcheck that stored less (same format version)
                raise InputError(p, None, f"its {lv} part lacks {exc} (written by leakcheck {h.get('leakcheck_version')})",
                                 "rebuild it with this leakcheck: leakcheck index ...") from None
        sets = tuple(_set_from(d) for d in h["sets"])
        return cls(sets, meta, parts, h["knobs"], int(h.get("train_sample", 0)))


def _views_from(items: list) -> tuple[Any, ...]:
    if not items:
        return ()
    from .detect.agree import TargetView

    return tuple(TargetView.from_json(v) if v is not None else None for v in items)


def _config_from_knobs(knobs: Mapping[str, dict[str, Any]], levels: tuple[str, ...], base: ScanConfig | None) -> ScanConfig:
    """A config carrying the knobs an index was built with, so its levels probe as they were built."""
    from .config import ContainedConfig, NearConfig, SemanticConfig

    cfg = base or ScanConfig(levels=levels)
    changes: dict[str, Any] = {}
    if "near" in knobs:
        changes["near"] = NearConfig(**knobs["near"])
    if "contained" in knobs:
        changes["contained"] = ContainedConfig(**knobs["contained"])
    if "semantic" in knobs:
        changes["semantic"] = SemanticConfig(**knobs["semantic"])
    return dataclasses.replace(cfg, **changes) if changes else cfg


def _set_dict(s: EvalSet) -> dict[str, Any]:
    info = dataclasses.replace(s.info, skipped_rows=())  # messages may quote eval rows
    return {"name": s.name, "start": s.start, "stop": s.stop, "info": _info_dict(info),
            "duplicates": [{**d.to_dict(), "snippet": ""} for d in s.duplicates]}


def _info_dict(info: InputInfo) -> dict[str, Any]:
    d = {f.name: getattr(info, f.name) for f in dataclasses.fields(info) if f.name != "skipped_rows"}
    d["unread"] = [dataclasses.asdict(u) for u in info.unread]
    return d


def _set_from(d: dict[str, Any]) -> EvalSet:
    i = d["info"]
    info = InputInfo(**{**i, "files": tuple(i["files"]), "skipped_rows": tuple[SkippedRow, ...](),
                        "unread": tuple(UnreadFile(**u) for u in i.get("unread", []))})
    dups = tuple(EvalDuplicate(x["kind"], x["level"], tuple(x["ids"]), tuple(x["indexes"]), x["snippet"]) for x in d["duplicates"])
    return EvalSet(d["name"], info, int(d["start"]), int(d["stop"]), dups)
