"""Issue 51: ``carry = "store"``. Some agent frameworks cut tool call ids short (to 40 or 64
characters) or rewrite them, and the stateless carrier (API.md section 10) is a long id: cut,
the reasoning is lost and Anthropic refuses the next turn. In the store form a call's id is
short (``sswc1_`` + a key), and the reasoning waits in the key store (memory, or Redis for a
fleet) until the next turn names it. The openai SDK's own loop, its ids cut to 40 characters,
against a strict Messages upstream that wants its signed thinking back."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Dict, List, Optional

import pytest
from ssewire.gateway import _config as config
from support.gateway_app import Gateway
from support.sdk_loops import TOOL
from support.strict_upstream import ANSWER, KEY, SIGNATURE, StrictUpstream

CUT = 40


def gateway_config(url: str, carry: str, store: Optional[str] = None) -> config.Config:
    data: Dict[str, Any] = {
        "server": {"carry": carry},
        "upstream": [{"name": "up", "url": url, "dialect": "messages"}],
        "route": [{"model": "*", "targets": ["up"]}],
    }
    if store is not None:
        data["keys"] = {"store": store, "key": [{"name": "team-a", "key_sha256": hashlib.sha256(b"sk-a").hexdigest()}]}
    c = config.parse(data)
    return config.Config(c.server, (config.Upstream("up", url, "messages", (KEY,)),), c.routes, c.retry,
                         c.breaker, None, c.keys)  # fmt: skip


def loop_cutting_ids(first: Gateway, second: Gateway, stream: bool) -> List[str]:
    """The openai SDK's loop, two turns (the second through ``second``), each call's id cut to
    ``CUT`` characters as some frameworks keep them; the ids it saw, then the answer."""
    import openai

    def client(gw: Gateway) -> Any:
        return openai.OpenAI(api_key="sk-a", base_url=gw.url("/v1"), max_retries=0, timeout=30)

    tools = [{"type": "function", "function": TOOL}]
    messages: List[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    seen: List[str] = []
    for gw in (first, second):
        kwargs: Dict[str, Any] = {"model": "m", "messages": messages, "tools": tools, "reasoning_effort": "low"}
        if stream:
            with client(gw).chat.completions.stream(**kwargs) as s:
                message = s.get_final_completion().choices[0].message
        else:
            message = client(gw).chat.completions.create(**kwargs).choices[0].message
        if not message.tool_calls:
            return [*seen, message.content or ""]
        turn = message.model_dump(exclude_none=True)
        for call in turn["tool_calls"]:
            seen.append(call["id"])
            call["id"] = call["id"][:CUT]
        messages.append(turn)
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": "18C"} for c in turn["tool_calls"]]
    raise AssertionError("the loop did not end")


@pytest.mark.parametrize("stream", [True, False])
def test_short_ids_carry_the_reasoning_through_a_client_that_cuts_them(stream: bool) -> None:
    import openai

    # The upstream's body ends a while after its last event: the client has its whole stream
    # ([DONE]) and sends the next turn before the gateway's answer is over, so the reasoning
    # must be kept before the client's stream ends, not when the upstream's does.
    with StrictUpstream("messages", linger=0.5) as up:
        gw = Gateway(gateway_config(up.url(), "store"))
        try:
            *ids, answer = loop_cutting_ids(gw, gw, stream)
        finally:
            gw.close()
        assert answer == ANSWER and up.violations == []
        [call_id] = ids
        assert call_id.startswith("sswc1_") and len(call_id) <= CUT
        # The upstream got its signed thinking back, and its own call id.
        second = json.loads(up.requests[-1]["body"])
        turn = next(m for m in second["messages"] if m["role"] == "assistant")
        assert turn["content"][0]["type"] == "thinking" and turn["content"][0]["signature"] == SIGNATURE
        assert "sswc1_" not in json.dumps(second)

    # The stateless form, cut the same way, loses the reasoning: the upstream refuses the turn.
    with StrictUpstream("messages") as up:
        gw = Gateway(gateway_config(up.url(), "ids"))
        try:
            with pytest.raises(openai.BadRequestError):
                loop_cutting_ids(gw, gw, stream)
        finally:
            gw.close()


def test_two_gateways_share_the_carried_reasoning_through_redis() -> None:
    """The first turn through one gateway, the second through another: the reasoning waits in
    Redis under the short id, with its time to live."""
    pytest.importorskip("redis")
    from support.redis_server import RedisServer

    with RedisServer() as redis, StrictUpstream("messages", linger=0.5) as up:
        cfg = gateway_config(up.url(), "store", store=redis.url)
        one, two = Gateway(cfg), Gateway(cfg)
        try:
            *ids, answer = loop_cutting_ids(one, two, stream=True)
        finally:
            one.close()
            two.close()
        assert answer == ANSWER and up.violations == []
        import redis as redis_py

        client = redis_py.Redis(host="127.0.0.1", port=redis.port)
        try:
            [kept] = client.keys("ssewire:c:*")
            # Under the key's name: another key does not read it.
            assert kept.decode() == f"ssewire:c:{{team-a}}:{ids[0]}" and 0 < client.ttl(kept) <= 86400
        finally:
            client.close()


def test_the_carry_settings_of_the_config() -> None:
    base = {"upstream": [{"name": "up", "url": "http://127.0.0.1:9", "dialect": "chat"}],
            "route": [{"model": "*", "targets": ["up"]}]}  # fmt: skip
    c = config.parse({**base, "server": {"carry": "store", "carry_ttl": 3600}})
    assert (c.server.carry, c.server.carry_ttl) == ("store", 3600)
    assert config.parse(base).server.carry == "ids"
    for server, why in [({"carry": "both"}, '"ids" or "store"'), ({"carry_ttl": 0}, "positive"),
                        ({"carry": "store", "workers": 2}, "needs a \\[keys\\] store")]:  # fmt: skip
        with pytest.raises(config.ConfigError, match=why):
            config.parse({**base, "server": server})
