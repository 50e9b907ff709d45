"""ruff's glob semantics for `exclude`, `extend-exclude` and `per-file-ignores`.

ruff compiles these patterns with the `globset` crate's defaults, and so do we:

* `*` matches any run of characters, `/` included (`sub/*.py` matches `sub/deep/k.py`);
  `?` one character; `[abc]`, `[!abc]` and `[a-z]` classes; `{a,b}` alternatives; `\\` escapes;
* `**/` at the start matches any leading directories or none, `/**/` one or more separators
  with anything between, and `/**` at the end everything below;
* a pattern is matched against the absolute path, after joining it to the project root (the
  directory of the `pyproject.toml`, else the working directory); a pattern without a `/` is
  also matched against the file's name. So `**/gen_*.py` excludes a top-level `gen_x.py`, and
  `gen_*.py` excludes `gen_x.py` in any directory.

A per-file-ignores pattern starting with `!` applies to the files it does not match.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from dataclasses import dataclass


class GlobError(ValueError):
    """A pattern globset would refuse (an unclosed `[` or `{`, nested `{`)."""


@functools.lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The regular expression of a globset pattern (whole-string match). Raises GlobError."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_braces = False
    while i < n:
        c = pattern[i]
        if c == "*" and pattern.startswith("**", i):
            start = i == 0 or pattern[i - 1] == "/"
            end = i + 2 == n or pattern[i + 2] == "/"
            if start and end:
                if i == 0 and i + 2 == n:
                    out.append(".*")
                    i += 2
                elif i == 0:  # `**/...`
                    out.append("(?:/?|.*/)")
                    i += 3
                elif i + 2 == n:  # `.../**`
                    out[-1:] = ["/.*"] if out and out[-1] == "/" else out[-1:] + [".*"]
                    i += 2
                else:  # `.../**/...`
                    out[-1:] = ["(?:/|/.*/)"] if out and out[-1] == "/" else out[-1:] + [".*/"]
                    i += 3
                continue
            out.append(".*")
            i += 2
        elif c == "*":
            out.append(".*")
            i += 1
        elif c == "?":
            out.append(".")
            i += 1
        elif c == "[":
            close = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^", "]") else i + 1)
            if pattern[i + 1:i + 3] in ("!]", "^]"):
                close = pattern.find("]", i + 3)
            if close < 0:
                raise GlobError(f"unclosed character class in {pattern!r}")
            body = pattern[i + 1:close]
            negated = body[:1] in ("!", "^")
            if negated:
                body = body[1:]
            body = body.replace("\\", "\\\\").replace("^", "\\^").replace("[", "\\[")
            out.append(f"[{'^' if negated else ''}{body}]")
            i = close + 1
        elif c == "{":
            if in_braces:
                raise GlobError(f"nested alternatives in {pattern!r}")
            in_braces = True
            out.append("(?:")
            i += 1
        elif c == "}" and in_braces:
            in_braces = False
            out.append(")")
            i += 1
        elif c == "," and in_braces:
            out.append("|")
            i += 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append("/" if c == "/" else re.escape(c))
            i += 1
    if in_braces:
        raise GlobError(f"unclosed alternatives in {pattern!r}")
    return re.compile("(?s:" + "".join(out) + r")\Z")


def absolute(pattern: str, root: str) -> str:
    """`pattern` joined to `root` and normalised (`./`, `..`), as ruff's `normalize_path_to`."""
    joined = pattern if pattern.startswith("/") else posixpath.join(_posix(root), pattern)
    return posixpath.normpath(joined)  # a trailing `/` goes, as in ruff


def _posix(path: str) -> str:
    return path.replace(os.sep, "/") if os.sep != "/" else path


@dataclass(frozen=True)
class Matcher:
    """One user pattern, compiled: the absolute form, and the name form when it has no `/`."""

    full: re.Pattern[str]
    name: re.Pattern[str] | None

    @classmethod
    @functools.lru_cache(maxsize=1024)
    def of(cls, pattern: str, root: str) -> Matcher:
        full = compile_glob(absolute(pattern, root))
        name = compile_glob(pattern) if "/" not in pattern else None
        return cls(full, name)

    def matches(self, path: str) -> bool:
        """`path` absolute."""
        posix = _posix(path)
        if self.full.match(posix):
            return True
        return self.name is not None and bool(self.name.match(posixpath.basename(posix)))


@dataclass(frozen=True)
class AnyMatcher:
    """Several patterns as one: `matches(path)` is `any(Matcher.of(p, root).matches(path) for p
    in patterns)`, with the absolute forms and the name forms each one regular expression (a
    tree walk asks every exclude pattern about every file)."""

    full: re.Pattern[str] | None
    name: re.Pattern[str] | None

    @classmethod
    @functools.lru_cache(maxsize=256)
    def of(cls, patterns: tuple[str, ...], root: str) -> AnyMatcher:
        matchers = [Matcher.of(pattern, root) for pattern in patterns]
        return cls(_union([m.full for m in matchers]), _union([m.name for m in matchers if m.name is not None]))

    def matches(self, path: str) -> bool:
        """`path` absolute."""
        posix = _posix(path)
        if self.full is not None and self.full.match(posix):
            return True
        return self.name is not None and bool(self.name.match(posixpath.basename(posix)))


def _union(expressions: list[re.Pattern[str]]) -> re.Pattern[str] | None:
    """One expression matching where any of `expressions` matches (each a whole-string match)."""
    return re.compile("|".join(f"(?:{e.pattern})" for e in expressions)) if expressions else None


def check(pattern: str) -> None:
    """Raises GlobError when `pattern` does not compile."""
    compile_glob(pattern[1:] if pattern.startswith("!") else pattern)
