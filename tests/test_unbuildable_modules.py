"""A project module astroid cannot build (newer syntax than this Python, a file being edited)
is not parsed again by every analysis that imports it, while its source is unchanged; once it
changes, it is read again."""

from __future__ import annotations

import os
from pathlib import Path

from astroid.builder import AstroidBuilder

from pallas_lsp.analysis import analyze_source

KERNEL = """\
import helper
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(acc_tmem):
    plgpu.tcgen05_mma(acc_tmem, helper.A, helper.B, collective_axis="x")
"""


def test_an_unbuildable_module_is_not_parsed_again_until_it_changes(tmp_path: Path, monkeypatch) -> None:
    helper = tmp_path / "helper.py"
    helper.write_text("def broken(:\n    pass\n")
    kernel = tmp_path / "kernel.py"
    kernel.write_text(KERNEL)
    built: list[str] = []
    original = AstroidBuilder._data_build

    def counting(self, data, modname, path):  # type: ignore[no-untyped-def]
        if path and path.endswith("helper.py"):
            built.append(data)
        return original(self, data, modname, path)

    monkeypatch.setattr(AstroidBuilder, "_data_build", counting)
    first = analyze_source(KERNEL, str(kernel))
    assert analyze_source(KERNEL, str(kernel)) == first
    assert len(built) == 1
    helper.write_text("A = 1\nB = 2\n")
    stat = helper.stat()
    os.utime(helper, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    analyze_source(KERNEL, str(kernel))
    assert len(built) == 2
