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
    renames = [f for line, f in findings.items() if line != 47]
    assert all(f.severity is Severity.WARNING and "jax 0.12" in f.message for f in renames)
    assert all(f.fixes[0].applicability is Applicability.SAFE and f.fixes[0].preferred for f in renames)
    both = findings[47]
    assert both.severity is Severity.ERROR and both.fixes[0].applicability is Applicability.UNSAFE


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
