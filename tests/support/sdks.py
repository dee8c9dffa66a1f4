"""Each target's official SDK reading a stream from a loopback URL, the way its users read
one: the final object it assembles (openai's stream states, anthropic's final message,
google-genai's chunks joined as a client joins them)."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

TIMEOUT = 10.0
MESSAGES = [{"role": "user", "content": "hi"}]


def sdk_messages(url: str) -> dict:
    client = anthropic.Anthropic(
        api_key="dummy", base_url=url, max_retries=0, timeout=TIMEOUT
    )
    with client.messages.stream(model="m", max_tokens=100, messages=MESSAGES) as stream:  # type: ignore[arg-type]
        return stream.get_final_message().model_dump()


def sdk_chat(url: str) -> dict:
    """openai ``Stream`` + ``ChatCompletionStreamState`` (its snapshot: the ``.stream()``
    helper's final completion, without the helper's refusal to finish a ``length`` stop)."""
    import openai
    from openai.lib.streaming.chat import ChatCompletionStreamState

    client = openai.OpenAI(api_key="dummy", base_url=url + "/v1", max_retries=0, timeout=TIMEOUT)
    state: Any = ChatCompletionStreamState()
    chunks = client.chat.completions.create(model="m", messages=MESSAGES, stream=True,  # type: ignore[call-overload]
                                            stream_options={"include_usage": True})
    for chunk in chunks:
        state.handle_chunk(chunk)
    return state.current_completion_snapshot.model_dump()  # type: ignore[no-any-return]


def sdk_responses(url: str) -> dict:
    """openai ``Stream`` + ``ResponseStreamState`` (which checks every event against its
    snapshot); the final object is the terminal event's ``response`` (the ``.stream()``
    helper gives one only for ``response.completed``, not ``response.incomplete``)."""
    import openai
    from openai import omit
    from openai.lib.streaming.responses._responses import ResponseStreamState

    client = openai.OpenAI(api_key="dummy", base_url=url + "/v1", max_retries=0, timeout=TIMEOUT)
    state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
    final = None
    for event in client.responses.create(model="m", input="hi", stream=True):
        state.handle_event(event)
        if event.type in ("response.completed", "response.incomplete", "response.failed"):
            final = event.response.model_dump()
    assert final is not None, "no terminal event"
    return final


def sdk_gemini(url: str) -> dict:
    """google-genai ``models.generate_content_stream`` (its models refuse unknown fields), the
    chunks joined as a Gemini client joins them: candidate 0's text and thought text in
    order, its function calls, the last finish reason and usage."""
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    client = genai.Client(
        api_key="dummy", http_options=types.HttpOptions(base_url=url, timeout=int(TIMEOUT * 1000))
    )
    parts: list = []
    final: dict = {}
    for chunk in client.models.generate_content_stream(model="m", contents="hi"):
        for candidate in chunk.candidates or []:
            if (candidate.index or 0) != 0:
                continue
            for part in (candidate.content.parts if candidate.content else None) or []:
                if part.function_call is not None:
                    call = part.function_call
                    parts.append({"functionCall": {"id": call.id, "name": call.name, "args": call.args}})
                elif part.text is not None:
                    parts.append({"text": part.text, "thought": bool(part.thought)})
            if candidate.finish_reason is not None:
                final["finishReason"] = candidate.finish_reason.value
        if chunk.usage_metadata is not None:
            final["usageMetadata"] = chunk.usage_metadata.model_dump(by_alias=True, exclude_none=True)
    return {"candidates": [{"content": {"parts": parts}, "index": 0, **{k: v for k, v in final.items()
                                                                      if k == "finishReason"}}],
            "usageMetadata": final.get("usageMetadata")}  # fmt: skip


SDKS = {"chat": sdk_chat, "messages": sdk_messages, "responses": sdk_responses, "gemini": sdk_gemini}
