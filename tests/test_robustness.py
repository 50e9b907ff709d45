"""Bad input gets silence or a one-line reason, never an exception."""

import importlib.machinery
import socket
import sys
import time

import pytest

from conftest import ROOT
from pallas_lsp.analysis import analyze_bytes, analyze_file, analyze_source

HEADER = "from jax.experimental.pallas import mosaic_gpu as plgpu\n"


BAD_INPUTS = [
        b"plgpu.TMEM((128, 128)\n",  # syntax error
        b"x = '\xff\xfe' # TMEM\n",  # not UTF-8
        b"\x00\x00TMEM\x00",  # NUL bytes
        b"# -*- coding: latin-1 -*-\nx = '\xe9'  # TMEM\n",  # encoding cookie
        b"\xef\xbb\xbf" + HEADER.encode() + b"acc = plgpu.TMEM((128, 128), None)\n",  # BOM
        HEADER.encode() + b"x = " + b"(" * 5000 + b"1" + b")" * 5000 + b"  # TMEM\n",  # deep nesting
        HEADER.encode() + b"x = [" + b"1, " * 200_000 + b"]  # TMEM\n",  # huge literal
        HEADER.encode() + b"a = b\nb = a\nplgpu.tcgen05_mma(a, b, b, collective_axis=a)\n",  # cycles
        HEADER.encode() + b"def f(x):\n    return f(x)\nplgpu.tcgen05_mma(f(1), f(2), f(3), collective_axis=f(4))\n",
]


@pytest.mark.parametrize("data", BAD_INPUTS)
def test_bad_input(data):
    result = analyze_bytes(data, "bad.py")
    assert result.findings == []


def test_reason_is_given_for_syntax_errors():
    result = analyze_source(HEADER + "plgpu.TMEM((128, 128)\n", "bad.py")
    assert result.findings == [] and result.error.startswith("syntax error")


def test_budget():
    source = (HEADER + "def f():\n    acc = plgpu.TMEM((128, 256), None)\n"
              "    plgpu.tcgen05_mma(acc, acc, acc, collective_axis='x')\n")
    result = analyze_source(source, "x.py", budget=0.0)
    assert result.findings == [] and "budget" in result.error


def test_unresolvable_values_stay_silent():
    source = HEADER + (
        "import config\n"
        "def body(acc_tmem, a, b):\n"
        "    plgpu.tcgen05_mma(acc_tmem, a, b, collective_axis=config.AXIS)\n"
        "def kernel(acc):\n"
        "    plgpu.tcgen05_mma(acc, acc, acc, collective_axis='x')\n"
        "make_kernel(kernel, scratch_types=[plgpu.TMEM((128, 256), None)])\n"
    )
    assert analyze_source(source, "x.py").findings == []


def test_a_lambda_whose_body_always_raises_ends_the_path():
    # (tokamax's `benchmarking.py` hands such a lambda to `defvjp`: it was an internal error)
    source = "import jax\n" + HEADER + (
        "def fails(x):\n    raise ValueError(x)\n"
        "def f():\n    raises = lambda x: fails(x)\n    raises(1)\n"
        "    acc = plgpu.TMEM((128, 256), None)\n"
        "    plgpu.tcgen05_mma(acc, acc, acc, collective_axis='x')\n"
        "HANDED_ON = jax.custom_vjp(lambda x: fails(x))\n"
    )
    result = analyze_source(source, "x.py")
    assert result.error is None and result.findings == []  # (the MMA after the call never runs)


BUGGY = (ROOT / "examples" / "collective_matmul.py").read_text()


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_line_endings_keep_positions(newline):
    lf = analyze_source(BUGGY, "k.py").findings
    other = analyze_source(BUGGY.replace("\n", newline), "k.py").findings
    assert [(f.code, f.line, f.col) for f in other] == [(f.code, f.line, f.col) for f in lf]


def test_tabs_and_non_ascii_columns():
    def tabs(line: str) -> str:
        stripped = line.lstrip(" ")
        return "\t" * ((len(line) - len(stripped)) // 4) + stripped

    source = BUGGY.replace("plgpu.tcgen05_mma(acc_slice", 'x = "é𝄞"; plgpu.tcgen05_mma(acc_slice')
    source = "".join(tabs(line) for line in source.splitlines(keepends=True))
    finding = next(f for f in analyze_source(source, "k.py").findings if f.code == "PLS001")
    line = source.splitlines()[finding.line - 1]
    assert line[finding.col:].startswith("plgpu.tcgen05_mma")  # columns count code points


def test_huge_file_is_bounded_by_the_budget():
    body = "".join(f"x{i} = plgpu.TMEM((128, {i}), None)\n" for i in range(100_000))
    started = time.monotonic()
    result = analyze_source(HEADER + body, "big.py", budget=1.0)
    assert result.findings == [] and "budget" in result.error
    assert time.monotonic() - started < 60  # a hang guard, not a speed target


def test_import_cycles_between_user_modules(tmp_path):
    (tmp_path / "a.py").write_text(HEADER + "from b import make\nacc = make()\n"
                                   "plgpu.tcgen05_mma(acc, acc, acc, collective_axis='x')\n")
    (tmp_path / "b.py").write_text(HEADER + "from a import acc\n"
                                   "def make():\n    return acc\n")
    (tmp_path / "c.py").write_text(HEADER + "import c\nfrom c import x\nx = c.x\n"
                                   "plgpu.tcgen05_mma(x, x, x, collective_axis='x')\n")
    for name in ("a.py", "b.py", "c.py"):
        result = analyze_file(str(tmp_path / name))
        assert result.findings == []


def test_analysed_code_is_never_executed(tmp_path):
    marker = tmp_path / "executed"
    evil = f"open({str(marker)!r}, 'w').write('ran')\n"
    (tmp_path / "evil.py").write_text(evil)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(evil)
    (tmp_path / "kernel.py").write_text(
        HEADER + "import evil\nfrom pkg import thing\n" + evil
        + "acc = evil.make()\nplgpu.tcgen05_mma(thing, acc, acc, collective_axis='x')\n")
    modules_before = set(sys.modules)
    analyze_file(str(tmp_path / "kernel.py"))
    assert not marker.exists()
    assert not {"evil", "pkg", "kernel"} & (set(sys.modules) - modules_before)


def test_extension_modules_in_the_tree_are_not_loaded(tmp_path):
    from astroid.manager import AstroidManager

    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (tmp_path / f"native{suffix}").write_bytes(b"\x7fELF not really")
    (tmp_path / "kernel.py").write_text(HEADER + "import native\nacc = native.make()\n"
                                        "plgpu.tcgen05_mma(acc, acc, acc, collective_axis='x')\n")
    result = analyze_file(str(tmp_path / "kernel.py"))
    assert result.findings == [] and "native" not in sys.modules
    assert AstroidManager().always_load_extensions is False


def test_no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the analysis opened a socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert [f.code for f in analyze_source(BUGGY, "k.py").findings] == ["PLS001", "PLS002"]


@pytest.mark.parametrize("target", ["flake8", "cli"])
def test_bad_input_through_the_frontends(target, tmp_path):
    from fuzz import targets

    runner = {"flake8": targets.flake8_plugin, "cli": targets.cli}[target]
    for data in BAD_INPUTS:
        runner(data, str(tmp_path))  # raising is the failure


def test_bad_input_through_the_server():
    from fuzz import targets

    server = targets.Server()
    try:
        for data in BAD_INPUTS:
            server(data, "")  # it answers a hover after each one
    finally:
        server.close()
