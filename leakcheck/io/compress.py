"""Open data files as byte streams, decompressing gzip, bzip2, xz and zstd on the way.

The codec comes from the file's first bytes, so a compressed file read under a plain
name works too; a name that promises a codec the bytes do not have is an error.

>>> import gzip, os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "a.jsonl.gz")
>>> _ = open(p, "wb").write(gzip.compress(b'{"text": "hi"}\\n'))
>>> with open_binary(p) as fh:
...     fh.readline()
b'{"text": "hi"}\\n'
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import zlib
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from ..errors import InputError

#: Name suffix -> codec, and the tool that writes that codec (named in messages).
SUFFIXES = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd", ".zstd": "zstd"}
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
#: What a cut-off or corrupt compressed stream raises while it is read.
CORRUPT = (EOFError, zlib.error, lzma.LZMAError, OSError)


def codec_of_name(name: str) -> str | None:
    """The codec a file name promises: ``codec_of_name("a.jsonl.zst") == "zstd"``."""
    low = name.lower()
    return next((c for s, c in SUFFIXES.items() if low.endswith(s)), None)


def strip_codec(name: str) -> str:
    """``"a.jsonl.zst"`` -> ``"a.jsonl"``; other names unchanged."""
    low = name.lower()
    for s in SUFFIXES:
        if low.endswith(s):
            return name[: -len(s)]
    return name


def codec_of_bytes(head: bytes) -> str | None:
    """The codec whose magic bytes ``head`` starts with, if any."""
    return next((c for m, c in _MAGIC if head.startswith(m)), None)


class _ZstdRaw(io.RawIOBase):
    """zstd frames one after another, decompressed a few KiB of input at a time.

    The ``zstandard`` readers end quietly at a cut-off frame; this one raises
    :class:`EOFError` there, so a truncated shard is never read as a short one.
    Small input pieces bound the memory one call can take (a zstd block of zeros
    expands ~30,000-fold).
    """

    _PIECE = 1 << 12

    def __init__(self, fh: BinaryIO):
        import zstandard  # only when a zstd file is met: it costs 3 MiB

        self._error = zstandard.ZstdError
        self._fh = fh
        self._dctx = zstandard.ZstdDecompressor()
        self._obj = self._dctx.decompressobj()
        self._out = memoryview(b"")
        self._in_frame = False

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        while not self._out:
            data = self._fh.read(self._PIECE)
            if not data:
                if self._in_frame:
                    raise EOFError("the last zstd frame is cut off")
                return 0
            self._out = memoryview(self._feed(data))
        n = min(len(b), len(self._out))
        b[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def _feed(self, data: bytes) -> bytes:
        parts = []
        while data:
            self._in_frame = True
            try:
                parts.append(self._obj.decompress(data))
            except self._error as exc:
                raise OSError(str(exc)) from None
            data = b""
            if self._obj.eof:  # a frame ended; the rest of the input starts the next one
                data = self._obj.unused_data
                self._obj = self._dctx.decompressobj()
                self._in_frame = False
        return b"".join(parts)

    def close(self) -> None:
        self._fh.close()
        super().close()


def _open_raw(path: str) -> io.BufferedReader:
    try:
        return open(path, "rb")
    except PermissionError:
        raise InputError(path, None, "permission denied", "make the file readable (chmod +r)") from None
    except IsADirectoryError:
        raise InputError(path, None, "is a folder where a file was expected", "pass the folder itself or a glob") from None


@contextlib.contextmanager
def open_binary(path: str) -> Iterator[BinaryIO]:
    """The file's bytes, decompressed; the stream has ``readline(limit)`` and ``peek``."""
    raw = _open_raw(path)
    with raw:
        try:
            head = raw.peek(8)[:8]
        except PermissionError:
            raise InputError(path, None, "permission denied", "make the file readable (chmod +r)") from None
        promised, found = codec_of_name(path), codec_of_bytes(head)
        if promised and head and promised != found:
            suffix = next(s for s, c in SUFFIXES.items() if c == promised and path.lower().endswith(s))
            raise InputError(path, None, f"is not {promised}-compressed although its name ends in {suffix}",
                             f"rename it without {suffix} or compress it with {promised}")
        if found is None:
            yield raw
        else:
            with _READERS[found](raw) as stream:
                yield stream


def corrupt(path: str, where: str, exc: BaseException) -> InputError:
    """The one-line error for a compressed stream that ends early or holds bad data."""
    codec = codec_of_name(path) or "compressed"
    test = {"gzip": "gzip -t", "bzip2": "bzip2 -t", "xz": "xz -t", "zstd": "zstd -t"}.get(codec, "the codec's -t option")
    return InputError(path, where, f"compressed data is truncated or corrupt ({exc})",
                      f"re-download or re-compress the file ({test} tests it)")


@contextlib.contextmanager
def open_binary_writer(dest: str, codec: str | None, buffering: int = -1) -> Iterator[BinaryIO]:
    """``dest`` opened for writing through ``codec`` (None, gzip, bzip2, xz, zstd), as :func:`open_binary` reads it.

    The gzip header carries no file name and no time, so the same bytes in give the same file out.
    """
    with open(dest, "wb", buffering=buffering) as raw:
        if codec is None:
            yield raw
        else:
            with _WRITERS[codec](raw) as stream:
                yield stream


def _zstd_writer(raw: BinaryIO) -> Any:
    import zstandard

    return zstandard.ZstdCompressor().stream_writer(raw, closefd=False)


#: One reader and one writer per codec; the gzip writer puts no file name and no time in its header.
_READERS: dict[str, Callable[[BinaryIO], Any]] = {
    "gzip": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    "bzip2": lambda raw: bz2.BZ2File(raw, "rb"),
    "xz": lambda raw: lzma.LZMAFile(raw, "rb"),
    "zstd": lambda raw: io.BufferedReader(_ZstdRaw(raw), 1 << 16),
}
_WRITERS: dict[str, Callable[[BinaryIO], Any]] = {
    "gzip": lambda raw: gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0, compresslevel=6),
    "bzip2": lambda raw: bz2.BZ2File(raw, "wb"),
    "xz": lambda raw: lzma.LZMAFile(raw, "wb"),
    "zstd": _zstd_writer,
}
