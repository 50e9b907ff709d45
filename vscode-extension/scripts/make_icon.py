"""Draw the extension's icon (images/icon.png, 256x256 RGBA) with the standard library only:
a grid of Tensor Memory tiles, two of them (a collective pair) lit, over a red lint squiggle.

    python3 vscode-extension/scripts/make_icon.py
"""

from __future__ import annotations

import math
import struct
import sys
import zlib
from pathlib import Path

SIZE = 256
SAMPLES = 4  # supersampling per axis, for smooth edges
BACKGROUND = (24, 33, 74)
TILE = (46, 160, 170)
LIT = (255, 183, 77)
SQUIGGLE = (235, 64, 52)


def _rounded(x: float, y: float, x0: float, y0: float, x1: float, y1: float, radius: float) -> bool:
    cx = min(max(x, x0 + radius), x1 - radius)
    cy = min(max(y, y0 + radius), y1 - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2 and x0 <= x <= x1 and y0 <= y <= y1


def _colour(x: float, y: float) -> tuple[int, int, int, int] | None:
    if not _rounded(x, y, 8, 8, 248, 248, 44):
        return None
    # the squiggle: a sine band under the tiles
    if 190 <= y <= 232 and 40 <= x <= 216:
        wave = 211 + 10 * math.sin((x - 40) / 176 * 4 * math.pi)
        if abs(y - wave) <= 5.5:
            return (*SQUIGGLE, 255)
    # a 4 x 3 grid of tiles
    for row in range(3):
        for col in range(4):
            x0, y0 = 40 + col * 46, 40 + row * 46
            if _rounded(x, y, x0, y0, x0 + 38, y0 + 38, 7):
                lit = row == 1 and col in (1, 2)
                return (*(LIT if lit else TILE), 255)
    return (*BACKGROUND, 255)


def render() -> bytes:
    rows = []
    for py in range(SIZE):
        row = bytearray(b"\x00")  # filter: none
        for px in range(SIZE):
            totals = [0, 0, 0, 0]
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    found = _colour(px + (sx + 0.5) / SAMPLES, py + (sy + 0.5) / SAMPLES)
                    if found is not None:
                        for i in range(3):
                            totals[i] += found[i] * found[3]
                        totals[3] += found[3]
            alpha = totals[3] / SAMPLES ** 2
            colour = [round(totals[i] / totals[3]) if totals[3] else 0 for i in range(3)]
            row += bytes([*colour, round(alpha)])
        rows.append(bytes(row))
    return _png(SIZE, SIZE, b"".join(rows))


def _png(width: int, height: int, raw: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "images" / "icon.png"
    out.write_bytes(render())
    print(f"{out}: {out.stat().st_size} bytes")
