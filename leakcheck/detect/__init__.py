"""Detectors, one per level. Each is built from the eval records and probes train batches."""

from .base import Detector, Match
from .hashing import TextMatchDetector

__all__ = ["Detector", "Match", "TextMatchDetector"]
