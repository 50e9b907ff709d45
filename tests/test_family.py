"""What the fixtures' markers do not say about PLS003 onwards: severities where JAX's verdict
depends on the version, fix applicability, and messages that name what to change."""

from conftest import ROOT
from pallas_lsp.analysis import Applicability, Severity, analyze_file

FIXTURES = ROOT / "tests" / "fixtures"


def _findings(name: str, code: str) -> dict:
    return {f.line: f for f in analyze_file(str(FIXTURES / name)).findings if f.code == code}


def test_version_dependent_findings_are_warnings_that_say_so():
    square = _findings("collective_axis.py", "PLS012")[74]
    assert square.severity is Severity.WARNING and "jax 0.10.2" in square.message
    others = [f for line, f in _findings("collective_axis.py", "PLS012").items() if line != 74]
    assert others and all(f.severity is Severity.ERROR for f in others)
    consistency = _findings("collective_consistency.py", "PLS017").values()
    assert consistency and all(f.severity is Severity.WARNING and "jax 0.11" in f.message for f in consistency)


def test_deprecated_kernel_keywords_rename_safely_and_both_names_is_an_error():
    findings = _findings("kernel_keywords.py", "PLS008")
    both_lines = (47, 58, 63, 67)  # (old and new name; the old one given None too, or positionally)
    renames = [f for line, f in findings.items() if line not in both_lines]
    assert all(f.severity is Severity.WARNING and "jax 0.12" in f.message for f in renames)
    assert all(f.fixes[0].applicability is Applicability.SAFE and f.fixes[0].preferred for f in renames)
    both = [findings[line] for line in both_lines]
    assert all(f.severity is Severity.ERROR and "Cannot specify both" in f.message for f in both)
    # (a keyword written in the call can be removed; one in a mapping, or a positional, cannot)
    assert [[fix.applicability for fix in f.fixes] for f in both] == [[Applicability.UNSAFE]] * 2 + [[]] * 2


def test_single_scratch_fix_is_safe_when_one_parameter_is_missing():
    [finding] = _findings("kernel_tmem.py", "PLS015").values()
    assert "'staging'" in finding.message
    assert [(fix.title, fix.applicability) for fix in finding.fixes] == [
        ("Put the allocation in a list", Applicability.SAFE)]


def test_constructor_fixes_are_unsafe():
    findings = analyze_file(str(FIXTURES / "constructor_misuse.py")).findings
    fixes = [fix for f in findings for fix in f.fixes]
    assert fixes and all(fix.applicability is Applicability.UNSAFE for fix in fixes)


def test_messages_name_the_kernel_and_the_allocations():
    [mixed] = _findings("kernel_tmem.py", "PLS014").values()
    assert "'acc_tmem' (line 62)" in mixed.message and "'staging_tmem' (line 63)" in mixed.message
    unknown = _findings("collective_axis.py", "PLS012")[34]
    assert "available axes: ['x']" in unknown.message and "plgpu.kernel at line 36" in unknown.message


_ROWS_96 = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

def build():
  def kernel(a_gmem, out_gmem, a_smem, b_smem, acc, barrier):
    plgpu.tcgen05_mma(acc, a_smem, b_smem, barrier, accumulate=False)
  return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((128, 64), jnp.float16), scratch_types=[
      plgpu.SMEM((128, 64), jnp.float16), plgpu.SMEM((64, 64), jnp.float16),
      plgpu.TMEM((96, 64), jnp.float32), plgpu.Barrier(orders_tensor_core=True)])
'''


def test_an_allocation_jax_refuses_to_build_is_no_mma_operand(tmp_path):
    # JAX raises in the TMEM constructor (PLS019) and never reaches the MMA: no PLS018 there
    path = tmp_path / "rows.py"
    path.write_text(_ROWS_96, encoding="utf-8")
    assert [f.code for f in analyze_file(str(path)).findings] == ["PLS019"]


_LAMBDA_CALLER = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128, 64), jnp.float16)

def build(x, collective):
  def kernel(x_gmem, out_gmem, acc):
    del x_gmem, out_gmem, acc
  return plgpu.kernel(kernel, out_type=X, cluster=(3,), cluster_names=("x",),
                      scratch_types=[plgpu.TMEM((128, 64), jnp.float32, collective=collective)])(x)

def case_single():
  return (lambda x: build(x, False)), (X,)
'''


def test_a_function_called_only_from_a_returned_lambda_is_judged_by_that_call(tmp_path):
    # `build`'s only caller passes collective=False: no "when collective is True" finding
    path = tmp_path / "lambda_caller.py"
    path.write_text(_LAMBDA_CALLER, encoding="utf-8")
    assert analyze_file(str(path)).findings == []
    path.write_text(_LAMBDA_CALLER.replace("build(x, False)", "build(x, True)"), encoding="utf-8")
    assert [f.code for f in analyze_file(str(path)).findings] == ["PLS013"]


_SINGLE_LATER = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128, 64), jnp.float16)

def decorated(x):
  @plgpu.kernel(out_type=X, scratch_types=plgpu.SMEM((128, 64), jnp.float16))
  def kernel(x_gmem, out_gmem, staging):
    del x_gmem, out_gmem, staging
  return kernel(x)

class Body:
  def __call__(self, x_gmem, out_gmem, staging):
    del x_gmem, out_gmem, staging

def jitted(x):
  kern = plgpu.kernel(Body(), out_type=X, scratch_types=plgpu.SMEM((128, 64), jnp.float16))
  return jax.jit(kern)(x)

def never_applied():
  return plgpu.kernel(Body(), out_type=X, scratch_types=plgpu.SMEM((128, 64), jnp.float16))
'''


def test_single_scratch_counts_the_operands_where_the_kernel_is_applied(tmp_path):
    # a decorator's kernel called later, a callable object as the body through jax.jit: at
    # the application, the line of JAX's traceback (tests/fixtures/scratch_applied.py); a
    # kernel never applied here has no operands to count (silent)
    path = tmp_path / "single_later.py"
    path.write_text(_SINGLE_LATER, encoding="utf-8")
    assert [(f.line, f.code) for f in analyze_file(str(path)).findings] == [(12, "PLS015"), (20, "PLS015")]


_STAR_GMEM = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

A = jax.ShapeDtypeStruct((128, 64), jnp.float16)
B = jax.ShapeDtypeStruct((64, 64), jnp.float16)

def build(a, b):
  def kernel(a_gmem, b_gmem, out_gmem, *refs):
    a_smem, b_smem, acc, barrier = refs
    plgpu.tcgen05_mma(acc, a_smem, b_gmem, barrier, accumulate=False)
  return plgpu.kernel(kernel, out_type=A, scratch_types=[
      plgpu.SMEM((128, 64), jnp.float16), plgpu.SMEM((64, 64), jnp.float16),
      plgpu.TMEM((128, 64), jnp.float32), plgpu.Barrier(orders_tensor_core=True)])(a, b)

def unapplied():
  def kernel(a_gmem, b_gmem, out_gmem, *refs):
    a_smem, b_smem, acc, barrier = refs
    plgpu.tcgen05_mma(acc, a_smem, b_gmem, barrier, accumulate=False)
  return plgpu.kernel(kernel, out_type=A, scratch_types=[
      plgpu.SMEM((128, 64), jnp.float16), plgpu.SMEM((64, 64), jnp.float16),
      plgpu.TMEM((128, 64), jnp.float32), plgpu.Barrier(orders_tensor_core=True)])
'''


def test_operands_before_star_refs_are_gmem_when_the_application_fills_them(tmp_path):
    # applied to (a, b) with one output: a_gmem, b_gmem, out_gmem are the operands and output;
    # not applied here, b_gmem could be a scratch ref: silent
    path = tmp_path / "star_gmem.py"
    path.write_text(_STAR_GMEM, encoding="utf-8")
    assert [(f.line, f.code) for f in analyze_file(str(path)).findings] == [(12, "PLS009")]


def test_mixed_tmem_of_a_helper_modules_run_scoped_goes_on_the_kernels_file(tmp_path):
    # PLS014's docs: the call of the kernel's own file that leads to the helper making it
    (tmp_path / "scoping.py").write_text(
        "import jax.numpy as jnp\nfrom jax.experimental import pallas as pl\n"
        "from jax.experimental.pallas import mosaic_gpu as plgpu\n\n\n"
        "def with_staging(body):\n"
        "  pl.run_scoped(body, plgpu.TMEM((128, 128), jnp.float32))\n", encoding="utf-8")
    path = tmp_path / "kernel.py"
    path.write_text(
        "import jax\nimport jax.numpy as jnp\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n"
        "from scoping import with_staging\n\n\n"
        "def build():\n"
        "  def kernel(x_gmem, out_gmem, acc):\n"
        "    with_staging(lambda staging: None)\n"
        "  return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),\n"
        "                      cluster=(2,), cluster_names=('x',),\n"
        "                      scratch_types=[plgpu.TMEM((128, 128), jnp.float32, collective=True)])\n",
        encoding="utf-8")
    [finding] = [f for f in analyze_file(str(path)).findings if f.code == "PLS014"]
    assert (finding.span.path, finding.line) == (None, 9)
