"""The status bar: models, tokens and cost (session and all), route counts and health,
after real turns; and the "configure a model" advice given once per session."""

from __future__ import annotations

from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.llm.offline import MODEL_REMINDER
from sylk_tui.app import SylkApp
from tests.stubs.llm_script import Reply, StubUsage
from tests.support.engine_env import engine_env
from tests.tui.support import main_screen, send_line, settle, transcript_texts, wait_for
from widgets.status_bar import StatusBar

SIZE = (120, 40)


def _bar(app: SylkApp) -> StatusBar:
    return main_screen(app).status_bar


async def test_offline_the_bar_says_so_and_counts_routes(engine: Engine) -> None:
    await engine.create_session("here")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: _bar(app).facts is not None, "the first facts")
        assert _bar(app).plain.startswith("offline (no model: /status says how)")
        assert "session 0 tok $0 · all 0 tok $0" in _bar(app).plain
        await send_line(pilot, "/session list")
        await wait_for(pilot, lambda: "routes dsl 1" in _bar(app).plain, "the route counted")
        assert "watcher " in _bar(app).plain


async def test_the_advice_is_given_once_per_session_then_one_line(engine: Engine) -> None:
    await engine.create_session("here")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send_line(pilot, "add a retry to the fetcher")
        await send_line(pilot, "and a timeout")
        answers = transcript_texts(app)[1::2]
        assert "ANTHROPIC_API_KEY" in answers[0]
        assert answers[1].endswith(MODEL_REMINDER) and "ANTHROPIC_API_KEY" not in answers[1]
        await send_line(pilot, "/status")  # /status always says how
        assert "ANTHROPIC_API_KEY" in transcript_texts(app)[-1]


async def test_after_a_model_turn_the_bar_shows_the_model_tokens_and_cost(
    engine_config: EngineConfig,
) -> None:
    from tests.stubs.llm_stub import LLMStub

    with LLMStub() as stub:
        usage = StubUsage(input_tokens=1200, output_tokens=300)
        stub.push(Reply(text=["The flaky test races the watcher."], usage=usage))
        env = {"ANTHROPIC_API_KEY": "sk-tui-0123456789abcdef", "ANTHROPIC_BASE_URL": stub.base_url}
        engine = Engine(engine_config, load_config(None, env=engine_env(env)))
        other = await engine.create_session("other")
        here = await engine.create_session("here")
        app = SylkApp(engine)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await wait_for(pilot, lambda: _bar(app).facts is not None, "the first facts")
            assert "anthropic/" in _bar(app).plain and "offline" not in _bar(app).plain
            await send_line(pilot, "@architect why is test_sync flaky?")
            await wait_for(pilot, lambda: "1.5k tok $" in _bar(app).plain, "the turn counted")
            facts = _bar(app).facts
            assert facts is not None and facts.session_usage.cost_usd > 0
            assert f"session 1.5k tok {_cost(facts.session_usage.cost_usd)}" in _bar(app).plain
            assert f"all 1.5k tok {_cost(facts.all_usage.cost_usd)}" in _bar(app).plain
            listed = main_screen(app).session_list
            usage_shown = listed.usage(here.id)
            assert usage_shown is not None and usage_shown.tokens == 1500
            assert listed.usage(other.id) is None
            row = [s.id for s in listed.shown].index(here.id)
            assert "1.5k tok $" in listed.render_line(row * 2 + 1).text
        await engine.aclose()
        assert stub.count("/v1/messages") == 1


def _cost(usd: float) -> str:
    from widgets.session_list.rows import compact_cost

    return compact_cost(usd)


def test_the_line_names_what_is_unwell_and_each_role_when_they_differ() -> None:
    from backend.engine.status_facts import RoleModel, StatusFacts
    from backend.llm.accounting import UsageSummary
    from widgets.status_bar import status_text

    empty = UsageSummary(session_id=None)
    facts = StatusFacts(
        session_id="s",
        models=(RoleModel("guide", "ollama/qwen3:4b"), RoleModel("engineer", "anthropic/opus")),
        session_usage=empty,
        all_usage=empty,
        routes=(("dsl", 3), ("pattern", 12), ("model", 2)),
        watcher="down",
        mcp_up=1,
        mcp_total=2,
        mcp_down=("github",),
        by_session={},
    )
    assert status_text(facts).plain == (
        "guide ollama/qwen3:4b · engineer anthropic/opus │ session 0 tok $0 · all 0 tok $0"
        " │ routes dsl 3 pattern 12 model 2 │ watcher down · mcp 1/2 up (github down)"
    )
