"""absl's parameterized test methods: each case is a configuration the test runs, so what the
decorator gives a parameter is known (per case). JAX is the judge: the test module is run with
unittest, and every case that raises the PLS005 constructor error names the line we must
report; a method none of whose cases raise gets no finding."""

from __future__ import annotations

import importlib.util
import re
import unittest

import pytest

from pallas_lsp.analysis import analyze_file, analyze_source

pytest.importorskip("jax")
pytest.importorskip("absl.testing.parameterized")

SOURCE = '''\
from absl.testing import parameterized
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


class Cases(parameterized.TestCase):

  @parameterized.product(dtype=[jnp.float32, jnp.bfloat16], rows=[64, 128])
  def test_product_narrow(self, dtype, rows):
    plgpu.TMEM((rows, 128), dtype)

  @parameterized.product(dtype=[jnp.float32, jnp.int32], rows=[64, 128])
  def test_product_wide(self, dtype, rows):
    plgpu.TMEM((rows, 128), dtype)

  @parameterized.product(dtype=[jnp.float32, jnp.bfloat16])
  def test_product_packed(self, dtype):
    plgpu.TMEM((128, 128), dtype, packed=dtype != jnp.float32 or None)

  @parameterized.parameters((jnp.float32,), (jnp.int8,))
  def test_parameters_narrow(self, dtype):
    plgpu.TMEM((128, 128), dtype)

  @parameterized.parameters(dict(dtype=jnp.float32), dict(dtype=jnp.uint32))
  def test_parameters_wide(self, dtype):
    plgpu.TMEM((128, 128), dtype)

  @parameterized.named_parameters(("f32", jnp.float32), ("f16", jnp.float16))
  def test_named_narrow(self, dtype):
    plgpu.TMEM((128, 128), dtype)

  @parameterized.named_parameters(dict(testcase_name="a", dtype=jnp.float32))
  def test_named_wide(self, dtype):
    plgpu.TMEM((128, 128), dtype)

  @parameterized.product(ab_type=[jnp.float32, (jnp.float32, jnp.bfloat16)])
  def test_pairs(self, ab_type):
    a_type, b_type = ab_type if isinstance(ab_type, tuple) else (ab_type, ab_type)
    plgpu.TMEM((128, 128), a_type)
    plgpu.TMEM((128, 128), b_type)
'''


def _jax_lines(path) -> set[int]:
    """The lines where the cases JAX rejects raise (unittest runs every case)."""
    spec = importlib.util.spec_from_file_location("parameterized_cases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(module.Cases).run(result)
    assert result.testsRun >= 15 and not result.failures
    lines = set()
    for _, text in result.errors:
        assert "dtypes narrower than 32-bit require" in text, text
        frames = re.findall(r'File "([^"]+)", line (\d+)', text)
        lines.add([int(line) for file, line in frames if file == str(path)][-1])
    return lines


def test_each_case_is_a_configuration(tmp_path):
    path = tmp_path / "parameterized_cases.py"
    path.write_text(SOURCE)
    jax_lines = _jax_lines(path)
    assert jax_lines  # the narrow cases raise
    findings = analyze_file(str(path)).findings
    assert {f.line for f in findings if f.code == "PLS005"} == jax_lines
    assert {f.code for f in findings} == {"PLS005"}


ODD = [
    "@parameterized.product(dtype=5)",
    "@parameterized.product([1, 2])",
    "@parameterized.product(dtype=[])",
    "@parameterized.product(**OPTS)",
    "@parameterized.parameters()",
    "@parameterized.parameters(*CASES)",
    "@parameterized.parameters(CASES)",
    "@parameterized.parameters((1, 2, 3, 4))",
    "@parameterized.parameters(dict(nope=1))",
    "@parameterized.named_parameters(())",
    "@parameterized.named_parameters('name')",
    "@parameterized.named_parameters(dict(testcase_name='a'))",
    "@parameterized.parameters\n  @parameterized.product(dtype=[jnp.int8])",
    "@parameterized.product(dtype=[jnp.int8])\n  @parameterized.product(dtype=[jnp.int8])",
    "@parameterized.product(dtype=list(range(40)))",
]


@pytest.mark.parametrize("decorator", ODD)
def test_odd_decorators_are_silent_or_right(decorator):
    source = (
        "from absl.testing import parameterized\nimport jax.numpy as jnp\n"
        "from jax.experimental.pallas import mosaic_gpu as plgpu\n"
        "OPTS = dict(dtype=[jnp.int8])\nCASES = [(jnp.int8,), (jnp.float32,)]\n\n"
        f"class Cases(parameterized.TestCase):\n\n  {decorator}\n"
        "  def test_it(self, dtype=jnp.float32, *, other=None):\n"
        "    plgpu.TMEM((128, 128), dtype)\n"
    )
    result = analyze_source(source, "odd.py")
    assert result.error is None
    assert all(f.code == "PLS005" and "int8" in f.message for f in result.findings)
