"""Seeds (real Pallas kernels) and the ways we break them."""

from __future__ import annotations

import random
import re
from pathlib import Path
from collections.abc import Callable

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


# Tokens as a mutator sees them: short strings, names and numbers, single operator characters.
# A regular expression, not `tokenize`: fast on broken input, where tokenize is slow or stops.
_TOKEN = re.compile(rb"\"[^\"\n]*\"|'[^'\n]*'|\w+|[^\w\s]")


def _tokens(data: bytes) -> list[tuple[int, int]]:
    """(start, end) byte offsets of the tokens of `data`."""
    return [match.span() for match in _TOKEN.finditer(data)]


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
