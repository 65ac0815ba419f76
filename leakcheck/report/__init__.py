"""Renderers: each reads a :class:`~leakcheck.result.ScanResult` and writes one format."""

from ._atomic import write_atomic
from .json import SCHEMA_VERSION, to_dict, write_json
from .markdown import to_markdown, write_markdown

__all__ = ["SCHEMA_VERSION", "to_dict", "write_json", "to_markdown", "write_markdown", "write_atomic"]
