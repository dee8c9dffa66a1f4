"""Issue 26: agent frameworks run their tool loops through the gateway example in front of a
chat upstream, over real sockets on 127.0.0.1: the openai-agents runner (Responses, streamed)
and pydantic-ai agents (an Anthropic model and an OpenAI Responses model, streamed). The
upstream is scripted as in ``test_gateway_loop``: a tool call first, the answer only when the
request carries the call and its result. Each completes with the answer; bounded in count and
time; tracing off (nothing leaves loopback)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

import pytest

agents = pytest.importorskip("agents")
pydantic_ai = pytest.importorskip("pydantic_ai")

from support.agent_loop import ANSWER, _call_and_result, _streams  # noqa: E402
from support.gateway_app import TIMEOUT, Gateway  # noqa: E402
from support.loopback import LoopbackServer, Request  # noqa: E402
from support.paths import EXAMPLES  # noqa: E402

pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason="examples/ not in this tree")
UPSTREAM = "chat"
CALLS: list[str] = []


def get_weather(city: str) -> str:
    """Weather now."""
    CALLS.append(city)
    return "18C"


def _run(client: Any) -> tuple[str, list[Optional[tuple[str, str]]]]:
    call, answer = _streams(UPSTREAM)
    seen: list[Optional[tuple[str, str]]] = []

    def script(request: Request) -> Optional[bytes]:
        found = _call_and_result(UPSTREAM, json.loads(request.body))
        seen.append(found)
        return answer if found is not None else call

    CALLS.clear()
    with LoopbackServer(timeout=TIMEOUT) as upstream:
        upstream.script = script
        prefix = upstream.add(b"")
        gw = Gateway(upstream.url(), upstream_dialect=UPSTREAM)
        try:
            text = asyncio.run(asyncio.wait_for(client(gw.url(prefix)), TIMEOUT))
        finally:
            gw.close()
    return text, seen


async def _openai_agents(url: str) -> str:
    from agents import (
        Agent,
        OpenAIResponsesModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(api_key="dummy", base_url=url + "/v1", max_retries=0, timeout=TIMEOUT)
    agent = Agent(name="w", instructions="Answer briefly.", tools=[function_tool(get_weather)],
                  model=OpenAIResponsesModel(model="m", openai_client=client))  # fmt: skip
    result = Runner.run_streamed(agent, "Weather in Paris?", max_turns=4)
    async for _ in result.stream_events():
        pass
    return str(result.final_output)


async def _pydantic_ai(url: str, kind: str) -> str:
    from pydantic_ai import Agent

    if kind == "anthropic":
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        client = AsyncAnthropic(api_key="dummy", base_url=url, max_retries=0, timeout=TIMEOUT)
        model: Any = AnthropicModel("m", provider=AnthropicProvider(anthropic_client=client))
    else:
        from openai import AsyncOpenAI
        from pydantic_ai.models.openai import OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        client2 = AsyncOpenAI(api_key="dummy", base_url=url + "/v1", max_retries=0, timeout=TIMEOUT)
        model = OpenAIResponsesModel("m", provider=OpenAIProvider(openai_client=client2))
    agent = Agent(model, instructions="Answer briefly.", tools=[get_weather])
    async with agent.run_stream("Weather in Paris?") as run:
        return str(await run.get_output())


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
@pytest.mark.parametrize("framework", ["openai-agents", "pydantic-ai-anthropic", "pydantic-ai-responses"])
def test_an_agent_framework_loop_completes_through_the_gateway(framework: str) -> None:
    client = {
        "openai-agents": _openai_agents,
        "pydantic-ai-anthropic": lambda url: _pydantic_ai(url, "anthropic"),
        "pydantic-ai-responses": lambda url: _pydantic_ai(url, "responses"),
    }[framework]
    text, seen = _run(client)
    assert text == ANSWER
    assert CALLS == ["Paris"], "the framework ran the tool once"
    assert seen[0] is None and seen[-1] is not None and seen[-1][1] == "18C"
    assert len(seen) == 2


# -- issue 33: the same frameworks, reasoning on, against strict upstreams of the other dialects ---

FRAMEWORK_DIALECT = {"openai-agents": "responses", "pydantic-ai-anthropic": "messages",
                     "pydantic-ai-responses": "responses", "pydantic-ai-chat": "chat"}  # fmt: skip


async def _thinking_framework(url: str, framework: str) -> str:
    from openai import AsyncOpenAI

    if framework == "openai-agents":
        from agents import (
            Agent,
            ModelSettings,
            OpenAIResponsesModel,
            Runner,
            function_tool,
            set_tracing_disabled,
        )
        from openai.types.shared import Reasoning

        set_tracing_disabled(True)
        client = AsyncOpenAI(api_key="client-key", base_url=url + "/v1", max_retries=0, timeout=TIMEOUT)
        agent = Agent(name="w", instructions="Answer briefly.", tools=[function_tool(get_weather)],
                      model=OpenAIResponsesModel(model="m", openai_client=client),
                      model_settings=ModelSettings(reasoning=Reasoning(effort="low")))  # fmt: skip
        result = Runner.run_streamed(agent, "Weather in Paris?", max_turns=4)
        async for _ in result.stream_events():
            pass
        return str(result.final_output)
    from pydantic_ai import Agent as PAgent

    settings: Any
    if framework == "pydantic-ai-anthropic":
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel, AnthropicModelSettings
        from pydantic_ai.providers.anthropic import AnthropicProvider

        aclient = AsyncAnthropic(api_key="client-key", base_url=url, max_retries=0, timeout=TIMEOUT)
        model: Any = AnthropicModel("m", provider=AnthropicProvider(anthropic_client=aclient))
        settings = AnthropicModelSettings(anthropic_thinking={"type": "enabled", "budget_tokens": 1024}, max_tokens=2048)
    else:
        from pydantic_ai.providers.openai import OpenAIProvider

        oclient = AsyncOpenAI(api_key="client-key", base_url=url + "/v1", max_retries=0, timeout=TIMEOUT)
        if framework == "pydantic-ai-responses":
            from pydantic_ai.models.openai import (
                OpenAIResponsesModel,
                OpenAIResponsesModelSettings,
            )

            model = OpenAIResponsesModel("m", provider=OpenAIProvider(openai_client=oclient))
            settings = OpenAIResponsesModelSettings(openai_reasoning_effort="low")
        else:
            from pydantic_ai.models.openai import (
                OpenAIChatModel,
                OpenAIChatModelSettings,
            )

            model = OpenAIChatModel("m", provider=OpenAIProvider(openai_client=oclient))
            settings = OpenAIChatModelSettings(openai_reasoning_effort="low")
    agent = PAgent(model, instructions="Answer briefly.", tools=[get_weather], model_settings=settings)
    async with agent.run_stream("Weather in Paris?") as run:
        return str(await run.get_output())


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
@pytest.mark.parametrize(("framework", "upstream_dialect"),
                         [(f, u) for f in FRAMEWORK_DIALECT for u in ("chat", "messages", "responses", "gemini")
                          if u != FRAMEWORK_DIALECT[f]])  # fmt: skip
def test_a_thinking_agent_loop_completes_against_a_strict_upstream(framework: str, upstream_dialect: str) -> None:
    """Reasoning on, the upstream as strict as its provider (``tests/support/strict_upstream.py``): the
    framework's loop completes in two upstream requests, every provider rule held."""
    from support.strict_upstream import KEY, StrictUpstream

    CALLS.clear()
    with StrictUpstream(upstream_dialect) as up:
        gw = Gateway(up.url(), upstream_dialect=upstream_dialect, upstream_key=KEY)
        try:
            text = asyncio.run(asyncio.wait_for(_thinking_framework(gw.url(), framework), TIMEOUT))
        finally:
            gw.close()
    assert up.violations == [], up.violations
    assert text == ANSWER and CALLS == ["Paris"]
    assert len(up.requests) == 2
