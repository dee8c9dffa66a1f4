"""Issue 26: the whole agent loop through the gateway example (``make_app(...,
upstream_dialect=...)``), over real sockets on 127.0.0.1. A scripted upstream of each dialect
streams a tool call; when a request carries that call and its result (in the upstream's own
form: chat `tool` messages, Messages `tool_result` blocks, Responses `function_call_output`
items), it streams the answer, else it answers 404 and the loop fails. The clients are the SDKs'
own tool loops: the openai SDK's chat and Responses, the anthropic SDK's Messages, google-genai's
Gemini (issue 27: a Gemini client served from each other upstream, and a Gemini upstream serving
the others); each completes. Bounded: two requests per loop, every wait timed."""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest
from support import registry
from support.agent_loop import ANSWER, _call_and_result, _streams
from support.gateway_app import TIMEOUT, Gateway
from support.loopback import LoopbackServer, Request
from support.paths import EXAMPLES

pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason="examples/ not in this tree")


def _loop(client: str) -> Any:
    """The SDK's own tool loop of ``client``, streamed (``test_gateway_strict``'s)."""
    from support.sdk_loops import LOOPS as STRICT_LOOPS

    return lambda url: STRICT_LOOPS[client](url, True)


LOOPS = {d: _loop(d) for d in registry.NAMES}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("upstream_dialect", "client"),
                         [(u, c) for u in LOOPS for c in LOOPS if u != c])  # fmt: skip
def test_an_sdk_tool_loop_completes_through_the_gateway(upstream_dialect: str, client: str) -> None:
    call, answer = _streams(upstream_dialect)
    seen: list[Optional[tuple[str, str]]] = []

    def script(request: Request) -> Optional[bytes]:
        body = json.loads(request.body)
        found = _call_and_result(upstream_dialect, body)
        seen.append(found)
        has_user_turn = bool(body.get("messages") or body.get("input") or body.get("contents"))
        if not has_user_turn:
            return None
        return answer if found is not None else call

    with LoopbackServer(timeout=TIMEOUT) as upstream:
        upstream.script = script
        prefix = upstream.add(b"")
        gw = Gateway(upstream.url(), upstream_dialect=upstream_dialect)
        try:
            text = LOOPS[client](gw.url(prefix))
        finally:
            gw.close()
    assert text == ANSWER
    # The upstream saw the call first without a result, then the call with its result.
    assert len(seen) == 2 and seen[0] is None
    assert seen[1] is not None and seen[1][1] == "18C"
    sent = json.loads(upstream.requests[1].body)
    if upstream_dialect == "gemini":  # streaming is in the path
        assert ":streamGenerateContent?alt=sse" in upstream.requests[1].path
    else:
        assert sent["stream"] is True
