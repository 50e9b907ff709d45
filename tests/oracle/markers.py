"""Read the expected findings written beside the lines of a fixture.

A marker is a whole trailing comment made of finding codes, optionally followed by
``[lowering]`` (JAX reports it when lowering, in every version) or ``[lowering jax>=0.11]``
(only in those versions)::

    plgpu.tcgen05_mma(  # PLS001
    plgpu.tcgen05_mma(  # PLS001, PLS001
    plgpu.tcgen05_mma(  # PLS001 [lowering jax>=0.11]
    plgpu.tcgen05_mma(  # PLS012 [lowering]
    u = plgpu.RefUnion(  # PLS002
    issue_mma(acc, ...)  # PLS001 [in helpers/mma.py:11]

``[in FILE:LINE]`` says the finding itself is at that line of a helper module (where JAX's
traceback points, innermost); the marker sits where this file leads there (JAX's innermost
frame in this file), and the finding is anchored at it.

Comments with any other text (``# see PLS001``) are not markers.  The first line of a
fixture may also carry an oracle restriction such as ``# oracle: jax<0.12``.

This module uses only the standard library; the linter tests import it too.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from typing import NamedTuple

__all__ = ["Marker", "parse_markers", "parse_markers_source", "oracle_restriction",
           "version_allowed"]

_CODE = r"PLS\d{3}"
_VERSION = r"jax\s*(?:<=|>=|<|>|==)\s*[0-9][0-9.]*"
_MARKER_RE = re.compile(
    rf"^#\s*(?P<codes>{_CODE}(?:\s*,\s*{_CODE})*)\s*"
    rf"(?P<lowering>\[lowering(?:\s+(?P<only>{_VERSION}))?\])?\s*"
    r"(?:\[in\s+(?P<in_file>[^\]:\s]+):(?P<in_line>\d+)\])?\s*$"
)
_ORACLE_RE = re.compile(r"^#\s*oracle:\s*jax\s*(?P<op><=|>=|<|>|==)\s*(?P<ver>[0-9][0-9.]*)\s*$")
_CONDITION_RE = re.compile(r"^jax\s*(?P<op><=|>=|<|>|==)\s*(?P<ver>[0-9][0-9.]*)$")


class Marker(NamedTuple):
    line: int  # 1-based line number
    code: str  # e.g. "PLS001"
    kind: str  # "trace" or "lowering"
    only: str = ""  # e.g. "jax>=0.11": the JAX versions where it fires ("" = every version)
    where: tuple[str, int] | None = None  # (helper file, line) of the finding, when elsewhere

    def applies(self, jax_version: str) -> bool:
        return not self.only or _satisfies(jax_version, self.only)


def parse_markers_source(source: str) -> list[Marker]:
    """Markers of a fixture given as text, in line order (a line may repeat)."""
    markers: list[Marker] = []
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        match = _MARKER_RE.match(tok.string.strip())
        if match is None:
            continue
        kind = "lowering" if match.group("lowering") else "trace"
        only = re.sub(r"\s+", "", match.group("only") or "")
        where = (match.group("in_file"), int(match.group("in_line"))) if match.group("in_file") else None
        for code in re.findall(_CODE, match.group("codes")):
            markers.append(Marker(tok.start[0], code, kind, only, where))
    return markers


def parse_markers(path: str | Path) -> list[Marker]:
    """Markers of the fixture file at ``path``: a list of ``(line, code, kind)``."""
    return parse_markers_source(Path(path).read_text(encoding="utf-8"))


def oracle_restriction(path: str | Path) -> tuple[str, tuple[int, ...]] | None:
    """The ``# oracle: jax<X.Y`` restriction of the file's first line, if any.

    Returns ``(operator, version_tuple)``, e.g. ``("<", (0, 12))``.
    """
    with open(path, encoding="utf-8") as f:
        first = f.readline().strip()
    match = _ORACLE_RE.match(first)
    if match is None:
        return None
    return match.group("op"), _version_tuple(match.group("ver"))


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        parts.append(int(digits.group()))
    return tuple(parts)


def version_allowed(path: str | Path, jax_version: str) -> bool:
    """Whether the oracle should run the fixture under this JAX version."""
    restriction = oracle_restriction(path)
    if restriction is None:
        return True
    return _compare(jax_version, *restriction)


def _satisfies(jax_version: str, condition: str) -> bool:
    """`condition` is e.g. ``jax>=0.11``."""
    match = _CONDITION_RE.match(condition)
    return _compare(jax_version, match.group("op"), _version_tuple(match.group("ver")))


def _compare(jax_version: str, op: str, bound: tuple[int, ...]) -> bool:
    have = _version_tuple(jax_version)
    n = max(len(have), len(bound))
    have = have + (0,) * (n - len(have))
    bound = bound + (0,) * (n - len(bound))
    return {
        "<": have < bound,
        "<=": have <= bound,
        ">": have > bound,
        ">=": have >= bound,
        "==": have == bound,
    }[op]
