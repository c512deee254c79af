"""Ranking choices of skill search that a user notices: long descriptions, gated feedback.

Each test states the behaviour with the default configuration and, where the choice is a
parameter, shows that the behaviour goes away without it (so the test proves the change).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from backend.skills.models import Skill, SkillContext, SkillResult, SkillTier
from backend.skills.registry import Registry, Resource
from backend.skills.search.bm25 import BM25Config, BM25Index
from backend.skills.search.fields import LEAD_WORDS, resource_fields, skill_fields, split_lead
from backend.skills.search.skill_index import SkillIndex


class Path_(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = ""


async def _noop(ctx: SkillContext, params: Any) -> SkillResult:
    return SkillResult(result=None)


def _skill(op: str, description: str) -> Skill:
    return Skill(
        op=op,
        agent="tester",
        description=description,
        params=Path_,
        handler=_noop,
        tier=SkillTier.SPECIALISED,
    )


# A real-world shape: a terminal tool whose description opens with what it does, then runs
# on with environment notes that mention processes, variables and JSON in passing.
LONG_TERMINAL = (
    "Start a terminal program on the device and watch its state: it tells when a shell, "
    "a REPL or a script waits for input, has finished or timed out. Suitable for shell "
    "commands, interactive sessions, data scripts and other long work in a terminal. "
    "Notes for Docker: the running process sees the environment variables of the container, "
    "not those of the host. Output is returned as text; JSON output is printed as is. "
    "Paths must be absolute; a relative path is resolved against the home folder. Package "
    "managers vary by distribution (apt, yum, dnf). Python may be python3. Long-running "
    "sessions keep their output until it is read. Binary files can be processed with "
    "command-line tools."
)
SHORT_ENV = "Show the environment variables of the server."
CATALOG = {
    "shell.start_process": LONG_TERMINAL,
    "debug.get_env": SHORT_ENV,
    "fs.read_file": "Read a file from disk as text.",
    "fs.write_file": "Write text to a file.",
    "git.status": "Show the working tree status.",
    "web.fetch": "Fetch a web page and return its text.",
    "db.query": "Run a SQL query and return rows as JSON.",
    "proc.list": "List running processes.",
    "proc.kill": "Stop a process by its id.",
}
ENV_QUERY = "environment variables of the process"


def _ops(config: BM25Config | None = None) -> SkillIndex:
    registry = Registry()
    for op, description in CATALOG.items():
        registry.register(_skill(op, description))
    return SkillIndex(registry, config)


def _first(index: SkillIndex, query: str) -> str:
    return index.search(query)[0][0]


def test_a_long_descriptions_tail_no_longer_beats_a_short_exact_description() -> None:
    assert _first(_ops(), ENV_QUERY) == "debug.get_env"
    # With the whole description weighed alike, the tail's passing mentions win.
    assert _first(_ops(BM25Config(lead_words=0)), ENV_QUERY) == "shell.start_process"
    # What the long tool does, said in its lead, still finds it first.
    assert _first(_ops(), "start a terminal program") == "shell.start_process"


def test_a_description_splits_into_lead_and_details_at_lead_words() -> None:
    words = [f"w{i}" for i in range(LEAD_WORDS + 5)]
    lead, details = split_lead(" ".join(words))
    assert lead.split() == words[:LEAD_WORDS] and details.split() == words[LEAD_WORDS:]
    assert split_lead("Read a file.") == ("Read a file.", "")
    assert split_lead(" ".join(words), 0) == (" ".join(words), "")
    fields = skill_fields(_skill("shell.start_process", LONG_TERMINAL))
    assert fields["description"][0].startswith("Start a terminal program")
    assert "environment" in fields["details"][0] and fields["params"] == ["path"]


def test_a_resources_long_description_is_split_the_same_way() -> None:
    def index(config: BM25Config | None = None) -> SkillIndex:
        registry = Registry()
        registry.register(_skill("docs.read", "Read a document."))
        # Neutral names and URIs (a name is weighed far above a description).
        for n, description in enumerate(CATALOG.values()):
            registry.add_resource(
                Resource(
                    uri=f"docs.read/n{n}", op="docs.read", name=f"n{n}", description=description
                )
            )
        return SkillIndex(registry, config)

    assert list(CATALOG)[:2] == ["shell.start_process", "debug.get_env"]
    assert _first(index(), ENV_QUERY) == "docs.read/n1"
    fields = resource_fields(Resource(uri="d.r/x", op="d.r", name="x", description=LONG_TERMINAL))
    assert "environment" in fields["details"][0]
    assert "environment" not in fields["description"][0]


def test_an_op_registered_later_is_indexed_split_too() -> None:
    registry = Registry()
    index = SkillIndex(registry)
    for op, description in CATALOG.items():
        registry.register(_skill(op, description))
    assert _first(index, "terminal program") == "shell.start_process"
    assert _first(index, ENV_QUERY) == "debug.get_env"


def _ambiguous(config: BM25Config | None = None) -> BM25Index:
    index = BM25Index(config)
    for doc_id, description in (
        ("weather.daily", "Daily forecast"),
        ("news.daily", "Daily news headlines"),
        ("weather.hourly", "Hourly weather forecast"),
        ("weather.alerts", "Storm warnings from the weather forecast"),
        ("astro.sign", "Zodiac signs"),
        ("astro.horoscope", "Horoscope readings by zodiac sign"),
        ("mail.send", "Send an email"),
    ):
        index.add(doc_id, {"name": [doc_id], "description": [description]})
    return index


def test_feedback_waits_for_a_confident_first_hit() -> None:
    # "daily" fits a weather tool and a news tool about equally. Feedback from whichever
    # edges ahead would widen that coin toss into a clear lead and add its neighbours
    # (more weather tools) to the results; gated, the two stay side by side, alone.
    gated = _ambiguous().search("daily")
    assert [d for d, _ in gated] == ["weather.daily", "news.daily"]
    assert gated[1][1] > 0.95 * gated[0][1]
    always = _ambiguous(BM25Config(feedback_confidence=0.0)).search("daily")
    assert "weather.hourly" in [d for d, _ in always]
    assert always[1][1] < 0.85 * always[0][1]
    # A clear best hit still lends its terms: the zodiac tool follows the horoscope one.
    confident = [d for d, _ in _ambiguous().search("my horoscope")]
    assert confident == ["astro.horoscope", "astro.sign"]


def test_feedback_does_not_append_every_op_sharing_a_generic_word() -> None:
    # Every op is a "<thing>_tool": feedback from the one match must not lend "tool" and
    # so list the unrelated ones after it.
    def search(config: BM25Config | None = None) -> list[str]:
        registry = Registry()
        for op, description in (
            ("tools.finance_tool", "Stock prices, market data and cryptocurrencies."),
            ("tools.weather_tool", "Forecasts and current conditions for a city."),
            ("tools.pdf_tool", "Read, split and merge PDF documents."),
            ("other.note_tool", "Write and keep notes."),
        ):
            registry.register(_skill(op, description))
        return [d for d, _ in SkillIndex(registry, config).search("stock market")]

    assert search() == ["tools.finance_tool"]
    assert len(search(BM25Config(feedback_floor=0.0))) == 4
