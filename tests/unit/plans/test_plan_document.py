"""Plan documents: JSON and YAML read without trusting them, field errors with their paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from backend.errors import ErrorKind
from backend.plans import (
    PlanDocumentError,
    PlanError,
    PlanFieldError,
    PlanFileNotFoundError,
    UnknownAgentError,
    load_plan,
    load_plan_document,
    validate_file,
)
from backend.plans.document import MAX_DOCUMENT_BYTES
from tests.unit.plans.plan_data import node, plan, seed_example


def _paths(error: PlanError) -> dict[str, str]:
    return {p.path: p.code.value for p in error.problems}


def test_json_and_yaml_of_one_plan_give_one_validated_plan() -> None:
    data = seed_example()
    from_json = load_plan_document(json.dumps(data))
    from_yaml = load_plan_document(yaml.safe_dump(data))
    assert from_json.document() == from_yaml.document() == load_plan(data).document()


def test_bad_fields_are_all_reported_with_their_paths() -> None:
    data = plan(
        node("a", metadata={"timeout_ms": 0, "retry": {"max": 11, "backoff_ms": -1}}),
        node("b", 7, "a", metadata={"priority": "urgent", "file_operations": ["rm"]}),
        {"id": "c d", "agent": "engineer", "prompt": "", "depends_ons": ["a"]},
        policy={"max_concurrency": 0, "fail_fast": "yes"},
    )
    with pytest.raises(PlanFieldError) as caught:
        load_plan(data)
    assert _paths(caught.value) == {
        "nodes[0].metadata.timeout_ms": "bad_number",
        "nodes[0].metadata.retry.max": "bad_number",
        "nodes[0].metadata.retry.backoff_ms": "bad_number",
        "nodes[1].depends_on[0]": "bad_field",
        "nodes[1].metadata.priority": "bad_field",
        "nodes[1].metadata.file_operations[0]": "bad_field",
        "nodes[2].id": "bad_field",
        "nodes[2].prompt": "bad_field",
        "nodes[2].depends_ons": "bad_field",
        "policy.max_concurrency": "bad_number",
        "policy.fail_fast": "bad_field",
    }
    assert caught.value.error_kind is ErrorKind.INVALID
    assert "nodes[0].metadata.timeout_ms: Input should be greater than or equal to 1" in str(
        caught.value
    )


@pytest.mark.parametrize("value", [True, "60000", 60000.5, None])
def test_numbers_are_strict_integers(value: object) -> None:
    with pytest.raises(PlanFieldError) as caught:
        load_plan(plan(node("a", metadata={"timeout_ms": value})))
    (problem,) = caught.value.problems
    assert problem.path == "nodes[0].metadata.timeout_ms"
    assert problem.fields["input"] == value


def test_ids_cannot_carry_arrows_spaces_or_control_characters() -> None:
    for bad in ["a -> b", "a\nb", "", "-lead", "x" * 129]:
        with pytest.raises(PlanFieldError):
            load_plan(plan(node(bad)))


def test_a_document_that_is_no_mapping_says_so() -> None:
    with pytest.raises(PlanFieldError) as caught:
        load_plan_document("[1, 2]")
    assert "a plan document is a JSON object" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "fmt", "words"),
    [
        ('{"id": "a", "nodes": [', "json", "not valid JSON"),
        ('{"id": "a", "id": "b", "nodes": []}', "json", "the key 'id' appears twice"),
        ("id: [a\n", "yaml", "not valid YAML"),
        ("base: &b {agent: engineer}\nother: *b\n", "yaml", "YAML aliases"),
        ("[" * 100_000 + "]" * 100_000, "json", "nests too deeply"),
        (b"\xff\xfe{}", None, "not UTF-8"),
    ],
    ids=["json-syntax", "json-duplicate-key", "yaml-syntax", "yaml-alias", "deep", "not-utf8"],
)
def test_an_unreadable_document_is_a_typed_error(
    text: str | bytes, fmt: str | None, words: str
) -> None:
    with pytest.raises(PlanDocumentError) as caught:
        load_plan_document(text, fmt)  # type: ignore[arg-type]
    assert words in str(caught.value)
    assert caught.value.problems[0].code.value == "bad_document"


def test_a_yaml_alias_bomb_is_refused_before_it_expands() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
    )
    with pytest.raises(PlanDocumentError):
        load_plan_document(bomb, "yaml")


def test_an_oversized_document_is_refused_unread() -> None:
    with pytest.raises(PlanDocumentError) as caught:
        load_plan_document(" " * (MAX_DOCUMENT_BYTES + 1))
    assert "larger than" in str(caught.value)


def test_validate_file_reports_nodes_layers_and_concurrency(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(seed_example()))
    report = validate_file(path)
    summary = report.as_dict()
    assert summary["nodes"] == 4
    assert summary["layers"] == [["t1"], ["t2", "t3"], ["t4"]]
    assert (summary["max_concurrency"], summary["fail_fast"]) == (4, True)
    assert summary["agents"] == {"librarian": 1, "engineer": 2, "tester": 1}
    text = report.render()
    assert "plan 'workflow-uuid' is valid" in text
    assert "4 nodes (2 engineer, 1 librarian, 1 tester) in 3 layers" in text
    assert "at most 4 at once" in text
    assert "layer 1: t2, t3" in text


def test_validate_file_guesses_the_format_of_an_unknown_suffix(tmp_path: Path) -> None:
    as_json = tmp_path / "plan.txt"
    as_json.write_text(json.dumps(seed_example()))
    as_yaml = tmp_path / "plan"
    as_yaml.write_text(yaml.safe_dump(seed_example()))
    from_json, from_yaml = validate_file(as_json).as_dict(), validate_file(as_yaml).as_dict()
    assert from_json["path"] == str(as_json)
    assert from_json | {"path": ""} == from_yaml | {"path": ""}


def test_validate_file_lists_every_problem_of_a_bad_plan(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan(node("a", agent="wizard"), node("b", agent="poet"))))
    with pytest.raises(UnknownAgentError) as caught:
        validate_file(path)
    assert len(caught.value.problems) == 2
    assert "nodes[0].agent" in str(caught.value) and "nodes[1].agent" in str(caught.value)


def test_validate_file_refuses_what_is_no_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # opening it to read would block a naive reader forever
    for path in (tmp_path / "missing.json", tmp_path, fifo):
        with pytest.raises(PlanFileNotFoundError) as caught:
            validate_file(path)
        assert caught.value.error_kind is ErrorKind.NOT_FOUND
        assert str(path) in str(caught.value)
