"""`trace.pick.explore` runs a rule's check once per consistent choice of the alternatives it
picks. The walks of a kernel's scratch pass over parts that hold nothing they look for however
they were chosen (`Picker.every_way`): the same outcomes, without a run per way."""

import astroid

from pallas_lsp.analysis.rules import kernels
from pallas_lsp.analysis.trace import objects as o
from pallas_lsp.analysis.trace.pick import Picker, explore
from pallas_lsp.analysis.values import Var

CALLS = astroid.extract_node("plgpu.SMEM((8,), f32)  #@\nplgpu.SMEM((16,), f32)  #@\nplgpu.TMEM((128, 128), f32)  #@")
FLAG = Var(("cond", "flag"), o.BOOL, "flag")
OTHER = Var(("cond", "other"), o.BOOL, "other")


def _alloc(node, space, **arguments):
    return o.Alloc(node, space, tuple(arguments.items()), "ref")


def _either(var, when_true, when_false):
    return o.Guarded(((frozenset({(var, True)}), when_true), (frozenset({(var, False)}), when_false)))


SMALL, LARGE = _alloc(CALLS[0], "SMEM"), _alloc(CALLS[1], "SMEM")


def _runs(check, guard=o.TRUE):
    counted = []

    def counting(pick):
        counted.append(1)
        return check(pick)

    return explore(counting, guard), len(counted)


def test_a_part_without_tmem_is_passed_over_without_choosing():
    scratch = [_either(FLAG, SMALL, LARGE), _either(OTHER, SMALL, (LARGE, None))]
    found, runs = _runs(lambda pick: kernels._collect(pick, scratch, None, [], set()))
    assert found == [(o.TRUE, True)] and runs == 1


def test_a_part_with_tmem_one_way_is_still_chosen_each_way():
    tmem = _alloc(CALLS[2], "TMEM", collective=True)
    scratch = [_either(FLAG, SMALL, LARGE), _either(OTHER, tmem, SMALL)]
    allocations = []

    def check(pick):
        del allocations[:]
        return kernels._collect(pick, scratch, None, allocations, set())

    found, runs = _runs(check)
    assert runs == 3  # (the first stops where it must choose, then one run per way)
    assert sorted((sorted(guard), outcome) for guard, outcome in found) == [
        ([(OTHER, False)], True), ([(OTHER, True)], True)]


def test_a_part_no_way_of_which_can_happen_is_chosen_and_ends_the_run():
    # (the guard so far rules out both ways: the walk picks it, and the run is dead)
    scratch = [_either(FLAG, SMALL, LARGE)]
    pick = Picker(frozenset({(FLAG, True)}), [])
    assert pick.every_way(kernels._no_tmem, scratch)
    contradicted = o.Guarded(((frozenset({(FLAG, False)}), SMALL),))
    assert not pick.every_way(kernels._no_tmem, contradicted)
    found, runs = _runs(lambda pick: kernels._collect(pick, contradicted, None, [], set()),
                        frozenset({(FLAG, True)}))
    assert found == [] and runs == 1


def test_smem_allocations_passed_over_are_still_accounted():
    accounted = set()
    explore(lambda pick: kernels._collect(pick, _either(FLAG, SMALL, LARGE), None, [], accounted), o.TRUE)
    assert accounted == {CALLS[0], CALLS[1]}
