"""What the frontends need to know of every rule without importing any check: codes, names,
summaries, severities, the words the prefilter looks for, and where each rule's page is.

The checks (`rules/`) import astroid and the tracer; settings, rule selection, the result cache
and every output format need only this table, so a `pallas-lint check` whose files are all
settled by the prefilter or the cache never imports astroid. Each rule class keeps its own
metadata beside its check and documentation; `tests/test_catalog.py` holds this table equal
to `rules.REGISTRY`, entry by entry, in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass

from .findings import Finding, Severity, Span

# The project's home, and where each rule's page (docs/rules/<CODE>.md) is published: the CLI's
# SARIF/JSON output and the language server's `codeDescription.href` link there.
PROJECT_URL = "https://github.com/pallas-lsp/pallas-lsp"
DOCS_BASE_URL = f"{PROJECT_URL}/blob/main/docs/rules/"


def docs_url(code: str) -> str:
    """The documentation page of the rule `code`."""
    return f"{DOCS_BASE_URL}{code}.md"


@dataclass(frozen=True)
class RuleInfo:
    """A rule as the frontends and the prefilter see it (the attributes of `rules.base.Rule`
    of the same names)."""

    code: str
    name: str  # a slug, e.g. "non-collective-mma-operand"
    summary: str
    severity: Severity
    triggers: tuple[bytes, ...]  # a file mentioning none of these is skipped
    identifiers: frozenset[str]  # names a file must use for the rule to apply (empty: no filter)

    def url(self) -> str:
        return docs_url(self.code)


# Every code a user can select, ignore, or look up, in `rules.REGISTRY`'s order: the frontends'
# PLS000 first, the checks, the frontends' PLS100 last.
CATALOG: tuple[RuleInfo, ...] = (
    RuleInfo("PLS000", "file-not-analysed", "The file was not analysed (syntax error, encoding, budget, configuration)",
             Severity.ERROR, (), frozenset()),
    RuleInfo("PLS001", "non-collective-mma-operand", "Collective tcgen05_mma on TMEM allocated without collective=True",
             Severity.ERROR, (b"tcgen05", b"TMEM"), frozenset({"TMEM", "tcgen05_mma"})),
    RuleInfo("PLS002", "mixed-collective-ref-union", "RefUnion aliases collective and non-collective TMEM",
             Severity.ERROR, (b"RefUnion", b"TMEM", b"tcgen05"), frozenset({"RefUnion", "TMEM", "tcgen05_mma"})),
    RuleInfo("PLS003", "tmem-only-argument", "packed=, collective= or layout= on a memory space other than TMEM",
             Severity.ERROR, (b"SMEM", b"GMEM", b"REGS"), frozenset({"GMEM", "REGS", "SMEM"})),
    RuleInfo("PLS004", "tmem-packed-with-layout", "TMEM allocation with both packed= and layout=",
             Severity.ERROR, (b"TMEM",), frozenset({"TMEM"})),
    RuleInfo("PLS005", "tmem-dtype-needs-packing", "TMEM allocation of a dtype other than 32-bit without packed= or layout=",
             Severity.ERROR, (b"TMEM",), frozenset({"TMEM"})),
    RuleInfo("PLS006", "tmem-transforms", "TMEM allocation with transforms=",
             Severity.ERROR, (b"TMEM",), frozenset({"TMEM"})),
    RuleInfo("PLS007", "ref-union-memory-space", "RefUnion of refs in different memory spaces, or of GMEM",
             Severity.ERROR, (b"RefUnion",), frozenset({"RefUnion"})),
    RuleInfo("PLS008", "deprecated-kernel-keywords", "plgpu.kernel(out_shape=..., scratch_shapes=...): deprecated, removed in jax 0.12",
             Severity.WARNING, (b"out_shape", b"scratch_shapes", b"kernel"), frozenset({"kernel"})),
    RuleInfo("PLS009", "mma-operand-memory-space", "tcgen05_mma operand in the wrong memory space",
             Severity.ERROR, (b"tcgen05",), frozenset({"tcgen05_mma"})),
    RuleInfo("PLS010", "mma-barrier-orders-tensor-core", "tcgen05 barrier without orders_tensor_core=True",
             Severity.ERROR, (b"tcgen05",), frozenset({"tcgen05_commit_arrive", "tcgen05_mma"})),
    RuleInfo("PLS011", "mma-scales", "tcgen05_mma with only one of a_scale= / b_scale=",
             Severity.ERROR, (b"_scale",), frozenset({"tcgen05_mma"})),
    RuleInfo("PLS012", "collective-axis-cluster", "collective_axis not served by the kernel's cluster",
             Severity.ERROR, (b"collective_axis", b"ClusterBarrier", b"tcgen05", b"_to_tmem"), frozenset({"ClusterBarrier", "async_copy_scales_to_tmem", "async_copy_smem_to_tmem", "async_copy_sparse_metadata_to_tmem", "collective_axis", "tcgen05_commit_arrive", "tcgen05_mma"})),
    RuleInfo("PLS013", "collective-tmem-cluster", "Collective TMEM in a kernel without an even number of blocks per cluster",
             Severity.ERROR, (b"collective",), frozenset({"TMEM"})),
    RuleInfo("PLS014", "mixed-collective-tmem", "Collective and non-collective TMEM allocated by one kernel",
             Severity.ERROR, (b"collective",), frozenset({"TMEM"})),
    RuleInfo("PLS015", "single-kernel-scratch", "A single allocation as plgpu.kernel's scratch_types, which JAX ignores",
             Severity.ERROR, (b"scratch_",), frozenset({"scratch_shapes", "scratch_types"})),
    RuleInfo("PLS016", "run-scoped-thread-collective",
             "pl.run_scoped allocating in a multithreaded kernel without collective_axes=, or naming other axes",
             Severity.ERROR, (b"run_scoped", b"with_scoped"), frozenset({"run_scoped", "with_scoped"})),
    RuleInfo("PLS017", "inconsistent-collective-op", "tcgen05 op whose collective_axis disagrees with the kernel's TMEM",
             Severity.WARNING, (b"tcgen05", b"_to_tmem"), frozenset({"async_copy_scales_to_tmem", "async_copy_smem_to_tmem", "async_copy_sparse_metadata_to_tmem", "tcgen05_commit_arrive", "tcgen05_mma"})),
    RuleInfo("PLS018", "mma-shapes", "tcgen05_mma operands whose shapes do not fit together",
             Severity.ERROR, (b"tcgen05",), frozenset({"tcgen05_mma"})),
    RuleInfo("PLS019", "tmem-rows", "TMEM allocation whose rows are neither 128 nor 64",
             Severity.ERROR, (b"TMEM",), frozenset({"TMEM"})),
    RuleInfo("PLS100", "unused-noqa", "A `# noqa` comment names pallas-lint codes that silence nothing",
             Severity.WARNING, (), frozenset()),
)
RULE_INFO: dict[str, RuleInfo] = {info.code: info for info in CATALOG}
# Codes the frontends produce themselves, not a check: a file that was not analysed (from
# `Result.error`) and a noqa comment that silences nothing.
FILE_NOT_ANALYSED = "PLS000"
UNUSED_NOQA = "PLS100"
# The checks the engine runs (`rules.RULES`), as the prefilter sees them.
CHECKS: tuple[RuleInfo, ...] = tuple(info for info in CATALOG if info.code not in (FILE_NOT_ANALYSED, UNUSED_NOQA))


def not_analysed(reason: str, path: str | None = None) -> Finding:
    """The PLS000 finding for a file that was not analysed, at line 1 column 1 (0-based 0)."""
    return Finding(FILE_NOT_ANALYSED, reason, Span(1, 0, 1, 0, path), Severity.ERROR)
