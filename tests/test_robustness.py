"""Bad input gets silence or a one-line reason, never an exception."""

import pytest

from pallas_lsp.analysis import analyze_bytes, analyze_source

HEADER = "from jax.experimental.pallas import mosaic_gpu as plgpu\n"


@pytest.mark.parametrize(
    "data",
    [
        b"plgpu.TMEM((128, 128)\n",  # syntax error
        b"x = '\xff\xfe' # TMEM\n",  # not UTF-8
        b"\x00\x00TMEM\x00",  # NUL bytes
        b"# -*- coding: latin-1 -*-\nx = '\xe9'  # TMEM\n",  # encoding cookie
        b"\xef\xbb\xbf" + HEADER.encode() + b"acc = plgpu.TMEM((128, 128), None)\n",  # BOM
        HEADER.encode() + b"x = " + b"(" * 5000 + b"1" + b")" * 5000 + b"  # TMEM\n",  # deep nesting
        HEADER.encode() + b"x = [" + b"1, " * 200_000 + b"]  # TMEM\n",  # huge literal
        HEADER.encode() + b"a = b\nb = a\nplgpu.tcgen05_mma(a, b, b, collective_axis=a)\n",  # cycles
        HEADER.encode() + b"def f(x):\n    return f(x)\nplgpu.tcgen05_mma(f(1), f(2), f(3), collective_axis=f(4))\n",
    ],
)
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
