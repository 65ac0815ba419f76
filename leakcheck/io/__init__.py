"""Readers: files, folders, globs and Hugging Face datasets on disk, streamed as raw rows."""

from .readers import BadRow, RawRow, iter_rows
from .sources import Source, open_source

__all__ = ["BadRow", "RawRow", "Source", "iter_rows", "open_source"]
