"""Content fingerprints: hashes of canonical text that name a record without its row number.

A fingerprint survives reordering, resharding and appending; baselines, ``clean`` manifests
and published eval indexes refer to records by it. 128-bit xxh3: two different texts share a
fingerprint with probability about 2**-128, so a hit is taken as equality.

>>> fingerprint("What is 2+2?") == fingerprint("What is 2+2?"), len(fingerprint("x"))
(True, 32)
>>> record_fingerprint("q", None) != record_fingerprint("q", "")
True
"""

from __future__ import annotations

import xxhash

_SEP = "\x1f"  # unit separator: cannot be confused with text, it is not in canonical output


def text_key(text: str) -> int:
    """The 128-bit hash of ``text`` as an int (dict keys of the exact/normalized levels)."""
    return xxhash.xxh3_128_intdigest(text.encode("utf-8", "surrogatepass"))


def fingerprint(text: str | None) -> str:
    """Hex fingerprint of one canonical text (empty for ``None``)."""
    if text is None:
        return ""
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8", "surrogatepass"))


def record_fingerprint(prompt: str, target: str | None) -> str:
    """Fingerprint of a record's canonical prompt and target together."""
    tail = "\x00" if target is None else _SEP + target
    return xxhash.xxh3_128_hexdigest((prompt + tail).encode("utf-8", "surrogatepass"))
