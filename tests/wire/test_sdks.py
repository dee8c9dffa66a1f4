"""ssewire over a real socket gives the same final object as the official SDKs reading the same
server: openai's ``chat.completions.stream(...).get_final_completion()`` and
``responses.stream(...).get_final_response()``, anthropic's
``messages.stream(...).get_final_message()``, each pointed at ``support/loopback.py`` on 127.0.0.1
(``base_url``, a dummy API key, ``max_retries=0``, a 10 s timeout).

ssewire reads the same route with httpx through ``iter`` and its ``result()`` is compared.

The projection (what both objects carry; the SDKs add their own fields, such as ``parsed``,
``annotations`` or ``citations`` set to null, and ssewire keeps vendor fields the SDK models
may drop or rename):

- chat: ``id``, ``model``, ``created``, ``system_fingerprint``; per choice ``index``,
  ``finish_reason``, ``message.role`` / ``content`` / ``refusal`` and each tool call's
  ``id``, ``type``, ``function.name``, ``function.arguments``; ``usage``'s three token counts.
- Messages: ``id``, ``type``, ``role``, ``model``, ``stop_reason``, ``stop_sequence``; per
  content block its ``type`` and ``text`` / ``thinking`` / ``signature`` / ``data``
  (redacted thinking) / ``id`` / ``name`` / ``input``; ``usage.input_tokens`` /
  ``output_tokens``.
- Responses: ``id``, ``status``, ``model``; per output item ``type``, ``id``, ``role``,
  ``status``, the text of each content part, ``call_id``, ``name``, ``arguments``, the
  summary texts; ``usage``'s three token counts.

Bodies: generated streams (several seeds and options) and every capture of ``tests/data``
whose stream completes without an error (an error stream makes an SDK raise instead of giving
a final object, so there is nothing to compare).
"""

from __future__ import annotations

import json
from typing import Any, Callable

import httpx
import openai
import pytest
import ssewire
from support import paths
from support import streams as _streams
from support.loopback import LoopbackServer

DATA = paths.DATA
from support.sdks import MESSAGES, TIMEOUT, sdk_messages


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if obj is None:
            return None
        obj = obj.get(key)
    return obj


def chat_projection(c: dict) -> Any:
    choices = []
    for ch in c["choices"]:
        m = ch["message"]
        calls = [
            (
                t.get("id"),
                t.get("type"),
                _get(t, "function", "name"),
                _get(t, "function", "arguments"),
            )
            for t in m.get("tool_calls") or []
        ]
        choices.append(
            (
                ch["index"],
                ch["finish_reason"],
                m.get("role"),
                m.get("content"),
                m.get("refusal"),
                calls,
            )
        )
    usage = c.get("usage") or {}
    return (
        c["id"],
        c["model"],
        c["created"],
        c.get("system_fingerprint"),
        sorted(choices),
        [usage.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")],
    )


_BLOCK_KEYS = ("type", "text", "thinking", "signature", "data", "id", "name", "input")


def messages_projection(m: dict) -> Any:
    blocks = [[b.get(k) for k in _BLOCK_KEYS] for b in m["content"]]
    usage = m.get("usage") or {}
    return (
        [
            m.get(k)
            for k in ("id", "type", "role", "model", "stop_reason", "stop_sequence")
        ],
        blocks,
        [usage.get("input_tokens"), usage.get("output_tokens")],
    )


def responses_projection(r: dict) -> Any:
    items = []
    for it in r.get("output") or []:
        items.append(
            (
                [
                    it.get(k)
                    for k in (
                        "type",
                        "id",
                        "role",
                        "status",
                        "call_id",
                        "name",
                        "arguments",
                    )
                ],
                [p.get("text") for p in it.get("content") or []],
                [s.get("text") for s in it.get("summary") or []],
            )
        )
    usage = r.get("usage") or {}
    return (
        [r.get(k) for k in ("id", "status", "model")],
        items,
        [usage.get(k) for k in ("input_tokens", "output_tokens", "total_tokens")],
    )


def sdk_chat(url: str) -> dict:
    client = openai.OpenAI(
        api_key="dummy", base_url=url + "/v1", max_retries=0, timeout=TIMEOUT
    )
    with client.chat.completions.stream(model="m", messages=MESSAGES) as stream:  # type: ignore[arg-type]
        return stream.get_final_completion().model_dump()


def sdk_responses(url: str) -> dict:
    client = openai.OpenAI(
        api_key="dummy", base_url=url + "/v1", max_retries=0, timeout=TIMEOUT
    )
    with client.responses.stream(model="m", input="hi") as stream:
        return stream.get_final_response().model_dump()


DIALECTS: dict[str, tuple[Any, Callable[[str], dict], Callable[[dict], Any], str]] = {
    "chat": (
        ssewire.ChatCompletionStream,
        sdk_chat,
        chat_projection,
        "/v1/chat/completions",
    ),
    "messages": (
        ssewire.MessagesStream,
        sdk_messages,
        messages_projection,
        "/v1/messages",
    ),
    "responses": (
        ssewire.ResponsesStream,
        sdk_responses,
        responses_projection,
        "/v1/responses",
    ),
}


def bodies(dialect: str) -> list[tuple[str, bytes]]:
    if dialect == "chat":
        gen = [
            _streams.chat_stream(120, seed=s, tool_calls=t, usage=u)
            for s, t, u in ((11, True, True), (12, False, "inline"), (13, True, False))
        ]
    elif dialect == "messages":
        gen = [
            _streams.messages_stream(120, seed=s, tool_use=t, thinking=k)
            for s, t, k in ((21, True, True), (22, False, False), (23, True, False))
        ]
    else:
        gen = [
            _streams.responses_stream(120, seed=s, tool_calls=t)
            for s, t in ((31, True), (32, False))
        ]
    out = [(f"generated #{i}", body) for i, body in enumerate(gen)]
    for path in sorted((DATA / dialect).glob("*.sse")):
        spec = json.loads(path.with_suffix(".json").read_text("utf-8"))
        if spec["done"] and spec["error"] is None:
            out.append((path.stem, path.read_bytes()))
    return out


@pytest.fixture(scope="module")
def server() -> Any:
    with LoopbackServer(timeout=TIMEOUT) as srv:
        yield srv


# Captures where the SDK gives no final object (it raises) or a different one, for a reason of
# its own (openai 2.x / 3.x and anthropic 0.x stream helpers, as installed). The test checks
# that each entry still differs, so the list cannot go stale silently.
_RAISES_ON_UNINDEXED = "the SDK raises on a list delta without `index`"
_DECODER = "the SDK's SSE / JSON handling fails on this router's printed form"
_BY_DESIGN = "the stream helper raises on this finish_reason by design"
_BAD_FRAME = "the SDK raises on the malformed frame (ssewire reports it and goes on)"
_LOSES = "the SDK's final object loses content or finish_reason that the stream carries"
_CONCAT = "the SDK concatenates a repeated role / id / name"
SDK_DIFFERS: dict[str, str] = {
    "chat/delta_extra_annotations": _RAISES_ON_UNINDEXED,
    "chat/reasoning_details_openrouter": _RAISES_ON_UNINDEXED,
    "chat/docs_nanogpt_reasoning": _DECODER,
    "chat/docs_routerhub_as_printed": _DECODER,
    "chat/docs_xerotier_annotated_as_printed": _DECODER,
    "chat/finish_content_filter": _BY_DESIGN,
    "chat/finish_length": _BY_DESIGN,
    "chat/n2_choices_interleaved": _BY_DESIGN,
    "chat/malformed_frame": _BAD_FRAME,
    "chat/docs_sansa_stream": _LOSES,
    "chat/mistral_content_parts": _LOSES,
    "chat/done_not_exact": _LOSES,
    "chat/later_chunks_omit_fields": _LOSES,
    "chat/null_optional_fields": _LOSES,
    "chat/openrouter_full": _CONCAT,
    "chat/openrouter_reasoning_details_only": _CONCAT,
    "chat/tool_calls_repeated_id_name": _CONCAT,
    "chat/tool_call_type_missing": "the SDK leaves a tool call's missing type null",
    "chat/tool_calls_multi_fragment_one_chunk": "the SDK mixes up two tool calls in one chunk",
    "messages/docs_nanogpt_message_stop": _DECODER,
    "messages/docs_routerhub_as_printed": _DECODER,
    "messages/malformed_middle": _BAD_FRAME,
    "messages/data_only_proxy": "the SDK needs `event:` lines; this proxy sends data-only frames",
    "messages/tool_input_invalid": "the SDK raises on tool input that is not valid JSON",
    "messages/fallback_stop_details": (
        "the non-beta messages.stream() keeps message_start's model; the beta accumulator "
        "(and the non-streaming message) relabel it to the fallback block's `to.model`"
    ),
    "responses/docs_nanogpt_as_printed": _DECODER,
    "responses/malformed_middle": _BAD_FRAME,
    "responses/completed_without_output": "the SDK raises on an output item left in_progress",
    "responses/incomplete": "the SDK wants response.completed; response.incomplete is terminal",
}


def _sdk_final(
    sdk: Callable[[str], dict], project: Callable[[dict], Any], base: str
) -> Any:
    """The SDK's projected final object, or None when the SDK raised."""
    try:
        return project(sdk(base))
    except Exception:  # the SDK's own failure, see SDK_DIFFERS
        return None


#: The SDK major versions SDK_DIFFERS was written against. Python 3.9 gets older SDKs from pip,
#: which fail (raise) on more captures; there, a capture the SDK fails on is not compared, and
#: the list is not required to stay exact.
SDK_DIFFERS_WRITTEN_FOR = {"openai": 3, "anthropic": 2}


def _older_sdk(dialect: str) -> bool:
    module = __import__("anthropic" if dialect == "messages" else "openai")
    major = int(module.__version__.split(".")[0])
    return major < SDK_DIFFERS_WRITTEN_FOR[module.__name__]


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic, on unknown block types
@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_same_final_object_as_the_official_sdk(
    dialect: str, server: LoopbackServer
) -> None:
    cls, sdk, project, path = DIALECTS[dialect]
    same = 0
    with httpx.Client(timeout=TIMEOUT) as client:
        for i, (name, body) in enumerate(bodies(dialect)):
            base = server.url(server.add(body, seed=i, delay=0.0001))
            expected = _sdk_final(sdk, project, base)
            stream = cls()
            with client.stream("POST", base + path, json={"stream": True}) as r:
                for _ in stream.iter(r.iter_bytes()):
                    pass
            got = project(stream.result())
            if _older_sdk(dialect) and (expected is None or f"{dialect}/{name}" in SDK_DIFFERS):
                continue
            if f"{dialect}/{name}" in SDK_DIFFERS:
                assert got != expected, (
                    f"{name}: the SDK agrees now, drop it from SDK_DIFFERS"
                )
                continue
            assert stream.done and stream.error is None, name
            assert got == expected, name
            same += 1
    assert same >= 5
