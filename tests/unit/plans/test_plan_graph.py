"""A plan checked as a graph: every problem typed, located and listed, and the layering."""

from __future__ import annotations

from typing import Any

import pytest

from backend.errors import ErrorKind, SylkError
from backend.plans import (
    DependencyCycleError,
    DuplicateNodeIdError,
    EmptyPlanError,
    ExecutionOrderError,
    MissingDependencyError,
    PlanError,
    PlanFieldError,
    PlanProblemsError,
    ProblemCode,
    SelfDependencyError,
    UnknownAgentError,
    load_plan,
)
from tests.unit.plans.plan_data import node, plan, seed_example


def _problems(error: PlanError) -> list[tuple[str, str]]:
    return [(p.code.value, p.path) for p in error.problems]


def test_the_seed_example_is_valid_and_its_layers_are_its_execution_order() -> None:
    checked = load_plan(seed_example())
    assert checked.layers == (("t1",), ("t2", "t3"), ("t4",))
    assert checked.dependants["t1"] == ("t2", "t3")
    assert checked.upstream["t4"] == ("t2", "t3", "t1")  # direct deps, then named ancestors
    assert checked.document()["execution_order"] == [["t1"], ["t2", "t3"], ["t4"]]


def test_layers_are_computed_when_absent_in_document_order_within_a_layer() -> None:
    checked = load_plan(
        plan(node("z"), node("b", "z"), node("a"), node("m", "a", "b"), node("c", "a"))
    )
    assert checked.layers == (("z", "a"), ("b", "c"), ("m",))
    assert checked.layer_of == {"z": 0, "a": 0, "b": 1, "c": 1, "m": 2}
    assert checked.ready_key["m"] == (-1, 2, 3)  # normal priority, layer 2, fourth in the plan


def test_a_long_chain_is_layered_without_recursion() -> None:
    ids = [f"n{i}" for i in range(5000)]
    nodes = [node(ids[0])] + [node(ids[i], ids[i - 1]) for i in range(1, len(ids))]
    assert len(load_plan(plan(*nodes)).layers) == 5000


def test_an_empty_plan_is_refused() -> None:
    with pytest.raises(EmptyPlanError) as caught:
        load_plan(plan())
    assert isinstance(caught.value, SylkError)
    assert caught.value.error_kind is ErrorKind.INVALID
    assert caught.value.details == {
        "problems": [{"code": "empty_plan", "path": "nodes", "message": "the plan has no nodes"}]
    }


def test_an_unknown_agent_is_named_with_the_closest_real_one() -> None:
    with pytest.raises(UnknownAgentError) as caught:
        load_plan(plan(node("a"), node("b", "a", agent="enginer")))
    (problem,) = caught.value.problems
    assert problem.path == "nodes[1].agent"
    assert problem.fields["agent"] == "enginer"
    assert "engineer" in problem.fields["known"]
    assert "did you mean 'engineer'" in str(caught.value)


def test_a_duplicate_id_names_both_places() -> None:
    with pytest.raises(DuplicateNodeIdError) as caught:
        load_plan(plan(node("a"), node("b"), node("a")))
    (problem,) = caught.value.problems
    assert (problem.path, problem.fields["first"]) == ("nodes[2].id", 0)


def test_a_missing_dependency_is_located_to_the_entry() -> None:
    with pytest.raises(MissingDependencyError) as caught:
        load_plan(plan(node("a"), node("b", "a", "ghost")))
    assert _problems(caught.value) == [("missing_dependency", "nodes[1].depends_on[1]")]
    assert caught.value.problems[0].fields == {"node_id": "b", "dependency": "ghost"}


def test_a_self_dependency_is_its_own_error() -> None:
    with pytest.raises(SelfDependencyError) as caught:
        load_plan(plan(node("a", "a")))
    assert _problems(caught.value) == [("self_dependency", "nodes[0].depends_on[0]")]


def test_a_dependency_listed_twice_is_a_field_error() -> None:
    with pytest.raises(PlanFieldError) as caught:
        load_plan(plan(node("a"), node("b", "a", "a")))
    assert _problems(caught.value) == [("bad_field", "nodes[1].depends_on[1]")]


def test_a_cycle_is_named_along_depends_on() -> None:
    with pytest.raises(DependencyCycleError) as caught:
        load_plan(plan(node("start"), node("a", "b", "start"), node("b", "c"), node("c", "a")))
    (problem,) = caught.value.problems
    assert problem.fields["cycle"] == ["a", "b", "c", "a"]
    assert "a -> b -> c -> a" in str(caught.value)
    assert problem.path == "nodes[1].depends_on"


def test_every_cycle_is_named_each_by_its_shortest_ring() -> None:
    with pytest.raises(DependencyCycleError) as caught:
        load_plan(
            plan(
                node("x", "y"),
                node("y", "x", "z"),
                node("z", "y"),
                node("p", "q"),
                node("q", "p"),
            )
        )
    assert [p.fields["cycle"] for p in caught.value.problems] == [["x", "y", "x"], ["p", "q", "p"]]


EO = "execution_order"


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ([["t1"], ["t2"], ["t3"], ["t4"]], [(EO, f"{EO}[2]"), (EO, f"{EO}[3]")]),
        ([["t1"], ["t2", "t3"]], [(EO, EO)]),
        ([["t1"], ["t2", "t3", "t9"], ["t4"]], [(EO, f"{EO}[1][2]")]),
        ([["t1", "t1"], ["t2", "t3"], ["t4"]], [(EO, f"{EO}[0][1]")]),
        (
            [["t1"], [], ["t2", "t3"], ["t4"]],
            [(EO, f"{EO}[1]")] + [(EO, f"{EO}[2]")] * 2 + [(EO, f"{EO}[3]")],
        ),
    ],
    ids=["serialised", "left-out", "unknown-id", "listed-twice", "empty-layer"],
)
def test_an_execution_order_that_disagrees_with_depends_on_is_refused(
    order: list[list[str]], expected: list[tuple[str, str]]
) -> None:
    data = seed_example() | {"execution_order": order}
    with pytest.raises(ExecutionOrderError) as caught:
        load_plan(data)
    assert _problems(caught.value) == expected


def test_an_execution_order_may_list_a_layer_in_any_order() -> None:
    data = seed_example() | {"execution_order": [["t1"], ["t3", "t2"], ["t4"]]}
    assert load_plan(data).layers == (("t1",), ("t2", "t3"), ("t4",))


def test_upstream_outputs_may_name_only_ancestors() -> None:
    nodes: list[dict[str, Any]] = [
        node("a"),
        node("b", "a"),
        node("c", "b", context={"upstream_outputs": ["a"]}),  # an ancestor: fine
        node("d", context={"upstream_outputs": ["c", "nope"]}),
    ]
    with pytest.raises(MissingDependencyError) as caught:
        load_plan(plan(*nodes))
    assert _problems(caught.value) == [
        ("missing_dependency", "nodes[3].context.upstream_outputs[0]"),
        ("missing_dependency", "nodes[3].context.upstream_outputs[1]"),
    ]
    assert "is not upstream of it" in caught.value.problems[0].message


def test_every_problem_is_reported_at_once_in_a_mixed_error() -> None:
    with pytest.raises(PlanProblemsError) as caught:
        load_plan(
            plan(node("a", agent="wizard"), node("a"), node("b", "ghost", "b"), node("c", "a"))
        )
    assert _problems(caught.value) == [
        ("unknown_agent", "nodes[0].agent"),
        ("duplicate_id", "nodes[1].id"),
        ("missing_dependency", "nodes[2].depends_on[0]"),
        ("self_dependency", "nodes[2].depends_on[1]"),
    ]
    error = caught.value
    assert error.message.startswith("the plan has 4 problems:\n")
    assert [p["code"] for p in error.details["problems"]] == [c for c, _ in _problems(error)]
    assert error.failure_word() == "invalid_plan"


def test_a_long_list_of_problems_is_shown_in_part_and_kept_whole() -> None:
    with pytest.raises(UnknownAgentError) as caught:
        load_plan(plan(*(node(f"n{i}", agent="nobody") for i in range(80))))
    assert len(caught.value.problems) == 80
    assert "... and 30 more" in caught.value.message
    assert caught.value.problems[0].code is ProblemCode.UNKNOWN_AGENT


def test_a_node_retry_wins_over_the_policy_default_which_wins_over_nothing() -> None:
    checked = load_plan(
        plan(
            node("own", metadata={"retry": {"max": 5, "backoff_ms": 10}}),
            node("partial", metadata={"retry": {}}),
            node("plain"),
            node("plain2"),
            policy={"default_retry": {"max": 0}},
        )
    )
    assert checked.retry_for("own").max == 5
    assert (checked.retry_for("partial").max, checked.retry_for("partial").backoff_ms) == (1, 1000)
    assert (checked.retry_for("plain").max, checked.retry_for("plain").backoff_ms) == (0, 2000)
    assert checked.timeout_s("plain") == 60.0
