"""The rule registry: one module per rule, each carrying its documentation and examples."""

from __future__ import annotations

from .base import DOCS_BASE_URL, PROJECT_URL, Invalid, Rule, docs_url
from .pls000_file_not_analysed import FileNotAnalysed, not_analysed
from .pls001_non_collective_operand import NonCollectiveOperand
from .pls002_mixed_collective_union import MixedCollectiveUnion
from .pls003_tmem_only_argument import TmemOnlyArgument
from .pls004_packed_with_layout import PackedWithLayout
from .pls005_tmem_dtype_needs_packing import TmemDtypeNeedsPacking
from .pls006_tmem_transforms import TmemTransforms
from .pls007_ref_union_memory_space import RefUnionMemorySpace
from .pls008_deprecated_kernel_keywords import DeprecatedKernelKeywords
from .pls009_mma_operand_memory_space import MmaOperandMemorySpace
from .pls010_mma_barrier_orders_tensor_core import MmaBarrierOrdersTensorCore
from .pls011_mma_scales import MmaScales
from .pls012_collective_axis_cluster import CollectiveAxisCluster
from .pls013_collective_tmem_cluster import CollectiveTmemCluster
from .pls014_mixed_collective_tmem import MixedCollectiveTmem
from .pls015_single_kernel_scratch import SingleKernelScratch
from .pls016_run_scoped_thread_collective import RunScopedThreadCollective
from .pls017_inconsistent_collective_op import InconsistentCollectiveOp
from .pls018_mma_shapes import MmaShapes
from .pls019_tmem_rows import TmemRows
from .pls100_unused_noqa import UnusedNoqa

RULES: tuple[Rule, ...] = (
    NonCollectiveOperand(),
    MixedCollectiveUnion(),
    TmemOnlyArgument(),
    PackedWithLayout(),
    TmemDtypeNeedsPacking(),
    TmemTransforms(),
    RefUnionMemorySpace(),
    DeprecatedKernelKeywords(),
    MmaOperandMemorySpace(),
    MmaBarrierOrdersTensorCore(),
    MmaScales(),
    CollectiveAxisCluster(),
    CollectiveTmemCluster(),
    MixedCollectiveTmem(),
    SingleKernelScratch(),
    RunScopedThreadCollective(),
    InconsistentCollectiveOp(),
    MmaShapes(),
    TmemRows(),
)
# Codes the frontends produce themselves, not a check: a file that was not analysed (from
# `Result.error`) and a noqa comment that silences nothing.
FILE_NOT_ANALYSED = FileNotAnalysed.code
UNUSED_NOQA = UnusedNoqa.code
# Every code a user can select, ignore, or look up (`pallas-lint rule`): the checks' and the
# frontends'. The engine runs `RULES` only.
REGISTRY: tuple[Rule, ...] = (FileNotAnalysed(), *RULES, UnusedNoqa())
BY_CODE: dict[str, Rule] = {rule.code: rule for rule in REGISTRY}

__all__ = ["BY_CODE", "DOCS_BASE_URL", "FILE_NOT_ANALYSED", "PROJECT_URL", "REGISTRY", "RULES",
           "UNUSED_NOQA", "Invalid", "Rule", "docs_url", "not_analysed"]
