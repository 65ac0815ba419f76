"""Resolve what the user named (file, folder, glob, ``FOLDER::CONFIG/SPLIT``) into data files.

Nothing is dropped quietly: every file found beside the data that is not read is listed
with the reason (:class:`~leakcheck.result.UnreadFile`), and a file or folder that cannot
be read, a dangling symlink or a symlink loop is an :class:`~leakcheck.errors.InputError`.
Hidden files and folders (``.git/``, ``.cache/``) are listed, not read: ``datasets`` does
not load them either.

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> for name in ("train.jsonl.zst", "README.md", ".gitattributes"):
...     _ = open(os.path.join(d, name), "w")
>>> src = open_source(d)
>>> [os.path.basename(f) for f in src.files], [(os.path.basename(u.path), u.reason) for u in src.unread]
(['train.jsonl.zst'], [('.gitattributes', 'hidden'), ('README.md', 'not a data file')])
"""

from __future__ import annotations

import errno
import glob
import os
import re
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..result import UnreadFile
from .compress import SUFFIXES, strip_codec

#: Data files: these suffixes, optionally followed by a compression suffix (``.jsonl.zst``).
TEXT_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".tsv")
DATA_SUFFIXES = (*TEXT_SUFFIXES, ".parquet")
#: The one-line description of data files that messages give.
DATA_FILES_HINT = "data files end in .jsonl, .ndjson, .json, .csv, .tsv or .parquet (text ones also .gz, .bz2, .xz or .zst)"
_ARCHIVES = (".zip", ".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst", ".7z", ".rar")
_SPLIT_WORD = re.compile(
    r"(?:^|[-_./])(train|training|test|testing|validation|valid|val|dev|eval|evaluation)(?:[-_./]|$)"
)


@dataclass(frozen=True)
class Source:
    """A resolved input: what the user named, the data files (or HF dataset) behind it, what was left."""

    path: str
    files: tuple[str, ...]
    kind: str  # "files" or "hf"
    unread: tuple[UnreadFile, ...] = ()
    #: For a Hub dataset: repo_id, revision (the commit sha read), config and split.
    hub: dict[str, str] | None = None

    @property
    def display(self) -> str:
        return self.path


def is_data_file(name: str) -> bool:
    """``train.jsonl.zst`` and ``x.parquet`` are; ``README.md`` and ``x.parquet.gz`` are not."""
    low = name.lower()
    return low.endswith(".parquet") or strip_codec(low).endswith(TEXT_SUFFIXES)


def _why_not_read(name: str) -> str:
    low = name.lower()
    if low.endswith(_ARCHIVES):
        return "archive: unpack it to scan its files"
    stem, ext = os.path.splitext(low)
    if stem.endswith(DATA_SUFFIXES) and ext not in SUFFIXES:
        return f"unsupported compression ({ext}): recompress it with gzip, bzip2, xz or zstd"
    return "not a data file"


def split_of(relpath: str) -> str | None:
    """The split word a path names: ``split_of("data/test-00000-of-00001.parquet") == "test"``."""
    m = _SPLIT_WORD.search(relpath.lower())
    return m.group(1) if m else None


def _is_hf_saved(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "state.json")) or os.path.isfile(os.path.join(path, "dataset_dict.json"))


def check_link(path: str) -> None:
    """Raise the one-line error for a dangling symlink or a symlink loop at ``path``."""
    if not os.path.islink(path):
        return
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(path, None, "is a symlink loop", "point the link at a real file or folder, or remove it") from None
        raise InputError(path, None, f"is a dangling symlink (to {os.readlink(path)}, which does not exist)",
                         "fix the link or remove it") from None


def _check_readable(path: str) -> None:
    if not os.access(path, os.R_OK):
        raise InputError(path, None, "permission denied", "make the file readable (chmod +r) or run as a user who may read it")


def open_source(path: str | os.PathLike) -> Source:
    """Resolve a file, folder, glob or ``save_to_disk`` folder; raise :class:`InputError` if empty.

    ``FOLDER::SPLIT`` picks one split of a local dataset repo (files whose path names the
    split, e.g. ``data/test-00000-of-00001.parquet``) or of a saved ``DatasetDict``;
    ``FOLDER::CONFIG/SPLIT`` one split of one config when the repo has several.
    """
    path = os.fspath(path)
    hub = _hub_source(path)
    if hub is not None:
        return hub
    if "::" in path and not os.path.lexists(path):
        folder, selector = path.rsplit("::", 1)
        from .configs import open_selection

        return open_selection(folder, selector)
    if any(c in path for c in "*?[") and not os.path.lexists(path):
        return _open_glob(path)
    check_link(path)
    if not os.path.exists(path):
        raise InputError(path, None, "no such file or folder", "check the path")
    if os.path.isdir(path):
        return _open_folder(path)
    _check_readable(path)
    if path.lower().endswith(_ARCHIVES):
        raise InputError(path, None, "is an archive; leakcheck reads data files, not archives", "unpack it and pass the folder")
    return Source(path, (path,), "files")


def _hub_source(path: str) -> Source | None:
    """A Hub dataset name (``ORG/NAME::CONFIG/SPLIT``, ``hf://datasets/...``), read from the local Hugging Face cache."""
    from .hub import parse_hub_spec

    spec = parse_hub_spec(path)
    if spec is None:
        return None
    from .hub import resolve

    hub = resolve(spec)
    unread = tuple(UnreadFile(f, "a file of the split leakcheck cannot read") for f in hub.ignored)
    return Source(path, hub.files, "files", unread,
                  {"repo_id": hub.repo_id, "revision": hub.revision, "config": hub.config, "split": hub.split})


def gather(matches: list[str]) -> tuple[list[str], list[UnreadFile]]:
    """The data files among glob ``matches`` (folders walked) and the files left unread, in order."""
    files: list[str] = []
    unread: list[UnreadFile] = []
    for m in matches:
        check_link(m)
        if os.path.isdir(m):
            found, left = walk(m)
            files += found
            unread += left
        elif is_data_file(m):
            _check_readable(m)
            files.append(m)
        else:
            unread.append(UnreadFile(m, _why_not_read(os.path.basename(m))))
    return files, unread


def _open_glob(pattern: str) -> Source:
    files, unread = gather(sorted(glob.glob(pattern, recursive=True)))
    files = list(dict.fromkeys(files))  # "d/**" matches a folder and the files in it
    if not files:
        raise InputError(pattern, None, "the glob matches no data files", "check the pattern; " + DATA_FILES_HINT)
    return Source(pattern, tuple(files), "files", tuple(dict.fromkeys(unread)))


def _open_folder(path: str) -> Source:
    if _is_hf_saved(path):
        if os.path.isfile(os.path.join(path, "dataset_dict.json")):
            names = sorted(d for d in os.listdir(path) if os.path.isdir(os.path.join(path, d)))
            raise InputError(
                path, None, f"is a DatasetDict with splits {', '.join(names)}",
                f"pick one, e.g. {path}::{names[0] if names else 'train'}",
            )
        return Source(path, (path,), "hf")
    files, unread = walk(path)
    if not files:
        raise InputError(path, None, "the folder holds no data files", DATA_FILES_HINT)
    from .configs import check_one_config

    check_one_config(path, files)
    splits = {sp for f in files if (sp := split_of(os.path.relpath(f, path)))}
    if len(splits) > 1:
        raise InputError(
            path, None, f"the folder mixes several splits ({', '.join(sorted(splits))})",
            f"pick one, e.g. {path}::{sorted(splits)[-1]}",
        )
    return Source(path, tuple(files), "files", tuple(unread))


def walk(folder: str) -> tuple[list[str], list[UnreadFile]]:
    """Data files below ``folder`` in a stable order (a folder's files, then its subfolders), and the rest.

    Symlinked folders are followed; one leading back to a folder being walked is a loop.
    """
    files: list[str] = []
    unread: list[UnreadFile] = []
    _walk_into(folder, (os.path.realpath(folder),), files, unread)
    return files, unread


def _entries(folder: str) -> list[Any]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except PermissionError:
        raise InputError(folder, None, "permission denied: the folder cannot be listed",
                         "make it readable (chmod +rx) or move it out of the input") from None
    except OSError as exc:
        raise InputError(folder, None, f"the folder cannot be listed ({exc.strerror})", "check the folder") from None


def _walk_into(folder: str, ancestors: tuple[str, ...], files: list[str], unread: list[UnreadFile]) -> None:
    subdirs = []
    for e in _entries(folder):
        if e.name.startswith("."):  # listed, never followed: a hidden link may dangle harmlessly
            unread.append(UnreadFile(e.path + ("/" if e.is_dir() else ""), "hidden"))
            continue
        if e.is_symlink():
            check_link(e.path)
        if e.is_dir():
            subdirs.append(e)
        elif not e.is_file():
            unread.append(UnreadFile(e.path, "not a regular file (pipe, socket or device)"))
        elif is_data_file(e.name):
            _check_readable(e.path)
            files.append(e.path)
        else:
            unread.append(UnreadFile(e.path, _why_not_read(e.name)))
    for e in subdirs:
        real = os.path.realpath(e.path)
        if real in ancestors:
            raise InputError(e.path, None, f"is a symlink loop (it leads back to {real})", "remove the link or point it outside the folder")
        _walk_into(e.path, (*ancestors, real), files, unread)
