"""`decide.Verdicts.describe`: the inputs that make the difference between the runs where a
check failed and those where it held, and only those."""

from pallas_lsp.analysis.trace.decide import Verdicts
from pallas_lsp.analysis.values import Var

COLLECTIVE = Var(("truth", "config.collective"), (False, True), "config.collective")
RAISES = Var(("cond", "k % tile_k != 0"), (False, True), "k % tile_k != 0")  # `if ...: raise` before the call
AXIS = Var(("none", "collective_axes[0]"), (False, True), "collective_axes[0]")


def test_the_input_that_makes_the_difference():
    reached = {(RAISES, False)}
    bad = [(frozenset(reached | {(COLLECTIVE, True)}), ())]
    held = [(frozenset(reached | {(COLLECTIVE, False)}), ())]
    assert Verdicts(bad, held).describe() == "when config.collective is True"


def test_what_only_leads_there_is_not_named_beside_what_differs():
    # runs from another use of the code (its own guards, without the caller's path) decided
    # too: the caller's path conditions are in no guard that decided otherwise
    reached = {(RAISES, False)}
    bad = [(frozenset(reached | {(COLLECTIVE, True)}), ())]
    held = [(frozenset(reached | {(COLLECTIVE, False)}), ()), (frozenset({(AXIS, True)}), ())]
    assert Verdicts(bad, held).describe() == "when config.collective is True"


def test_conditions_are_kept_when_none_leads_to_a_run_that_held():
    bad = [(frozenset({(RAISES, False), (COLLECTIVE, True)}), ())]
    held = [(frozenset({(AXIS, True)}), ())]
    assert Verdicts(bad, held).describe() == "when config.collective is True and k % tile_k != 0 is False"
