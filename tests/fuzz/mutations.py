"""Seeds (real Pallas kernels) and the ways we break them."""

from __future__ import annotations

import io
import random
import tokenize
from pathlib import Path
from typing import Callable

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent


def seeds() -> list[bytes]:
    """The fixtures, the examples and, where jax is installed, JAX's own Pallas GPU kernels."""
    paths = sorted((TESTS / "fixtures").glob("*.py")) + sorted((ROOT / "examples").glob("*.py"))
    try:
        import importlib.util

        spec = importlib.util.find_spec("jax")
        if spec and spec.submodule_search_locations:
            ops = Path(list(spec.submodule_search_locations)[0]) / "experimental" / "pallas" / "ops" / "gpu"
            paths += sorted(ops.glob("*.py"))
    except (ImportError, ValueError):
        pass
    return [path.read_bytes() for path in paths]


def _tokens(data: bytes) -> list[tuple[int, int]]:
    """(start, end) byte offsets of the tokens of `data` (as far as it tokenizes)."""
    text = data.decode("utf-8", errors="replace")
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line.encode("utf-8", errors="replace")))
    lines = text.splitlines(keepends=True)
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            (srow, scol), (erow, ecol) = token.start, token.end
            if srow > len(lines) or erow > len(lines) or token.type in (tokenize.ENDMARKER,):
                continue
            start = starts[srow - 1] + len(lines[srow - 1][:scol].encode("utf-8", errors="replace"))
            end = starts[erow - 1] + len(lines[erow - 1][:ecol].encode("utf-8", errors="replace"))
            if end > start:
                found.append((start, end))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return found


def delete_token(data: bytes, rng: random.Random) -> bytes:
    tokens = _tokens(data)
    if not tokens:
        return data[:-1]
    start, end = rng.choice(tokens)
    return data[:start] + data[end:]


def duplicate_token(data: bytes, rng: random.Random) -> bytes:
    tokens = _tokens(data)
    if not tokens:
        return data + data[-1:]
    start, end = rng.choice(tokens)
    return data[:end] + data[start:end] + data[end:]


def random_bytes(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def shuffle_lines(data: bytes, rng: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    if len(lines) < 2:
        return data
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines)


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "delete-token": delete_token,
    "duplicate-token": duplicate_token,
    "random-bytes": random_bytes,
    "truncate": truncate,
    "shuffle-lines": shuffle_lines,
}


def mutants(rng: random.Random, count: int, pool: list[bytes] | None = None):
    """`count` inputs: a seed with one to three mutations each; yields (name, bytes)."""
    pool = pool or seeds()
    names = list(MUTATIONS)
    for _ in range(count):
        data = rng.choice(pool)
        applied = []
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(names)
            data = MUTATIONS[name](data, rng)
            applied.append(name)
        yield "+".join(applied), data
