"""Each SDK's agent loop against the gateway (its first turn, its tool result turn), a strict
upstream's checks, and a gateway request as a client sends it."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import quote

import aiohttp
import pytest
import yarl

from support.gateway_app import TIMEOUT, Gateway

TOOL = {"name": "get_weather", "description": "Weather now",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}  # fmt: skip


CLIENT_KEY = "client-own-provider-key"


def _loop_chat(url: str, stream: bool) -> str:
    import openai

    client = openai.OpenAI(api_key=CLIENT_KEY, base_url=url + "/v1", max_retries=0, timeout=TIMEOUT)
    tools = [{"type": "function", "function": TOOL}]
    messages: List[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    for _ in range(2):
        kwargs: Dict[str, Any] = {
            "model": "m",
            "messages": messages,
            "tools": tools,
            "reasoning_effort": "low",
        }
        if stream:
            with client.chat.completions.stream(**kwargs) as s:
                message = s.get_final_completion().choices[0].message
        else:
            message = client.chat.completions.create(**kwargs).choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "18C"})
    raise AssertionError("the loop did not end")


def _loop_messages(url: str, stream: bool) -> str:
    import anthropic

    client = anthropic.Anthropic(api_key=CLIENT_KEY, base_url=url, max_retries=0, timeout=TIMEOUT)
    tools = [{"name": TOOL["name"], "description": TOOL["description"], "input_schema": TOOL["parameters"]}]
    messages: List[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    for _ in range(2):
        kwargs: Dict[str, Any] = {"model": "m", "max_tokens": 2048, "messages": messages, "tools": tools,
                                  "thinking": {"type": "enabled", "budget_tokens": 1024}}  # fmt: skip
        if stream:
            with client.messages.stream(**kwargs) as s:
                final = s.get_final_message()
        else:
            final = client.messages.create(**kwargs)
        uses = [b for b in final.content if b.type == "tool_use"]
        if not uses:
            return "".join(b.text for b in final.content if b.type == "text")
        messages.append(
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in final.content]}
        )
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u.id, "content": "18C"} for u in uses]})  # fmt: skip
    raise AssertionError("the loop did not end")


def _loop_responses(url: str, stream: bool) -> str:
    """As an agent framework runs it, stateless: every output item echoed back as input."""
    import openai

    client = openai.OpenAI(api_key=CLIENT_KEY, base_url=url + "/v1", max_retries=0, timeout=TIMEOUT)
    tools = [{"type": "function", "strict": False, **TOOL}]
    items: List[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    for _ in range(2):
        kwargs: Dict[str, Any] = {"model": "m", "input": items, "tools": tools, "reasoning": {"effort": "low"},
                                  "store": False, "include": ["reasoning.encrypted_content"]}  # fmt: skip
        if stream:
            with client.responses.stream(**kwargs) as s:
                response = s.get_final_response()
        else:
            response = client.responses.create(**kwargs)
        calls = [o for o in response.output if o.type == "function_call"]
        if not calls:
            return response.output_text
        items += [o.model_dump(exclude_none=True) for o in response.output]
        for call in calls:
            items.append({"type": "function_call_output", "call_id": call.call_id, "output": "18C"})
    raise AssertionError("the loop did not end")


def _loop_gemini(url: str, stream: bool) -> str:
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    client = genai.Client(
        api_key=CLIENT_KEY, http_options=types.HttpOptions(base_url=url, timeout=int(TIMEOUT * 1000))
    )
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
            name=TOOL["name"], description=TOOL["description"], parameters_json_schema=TOOL["parameters"])])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=1024),
    )  # fmt: skip
    contents: List[Any] = [types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])]
    for _ in range(2):
        parts: List[Any] = []
        if stream:
            for chunk in client.models.generate_content_stream(model="m", contents=contents, config=config):
                for candidate in chunk.candidates or []:
                    parts += (candidate.content.parts if candidate.content else None) or []
        else:
            got = client.models.generate_content(model="m", contents=contents, config=config)
            for candidate in got.candidates or []:
                parts += (candidate.content.parts if candidate.content else None) or []
        calls = [p.function_call for p in parts if p.function_call is not None]
        if not calls:
            return "".join(p.text or "" for p in parts if not p.thought)
        contents.append(types.Content(role="model", parts=parts))
        contents.append(types.Content(role="user", parts=[
            types.Part(function_response=types.FunctionResponse(id=c.id, name=c.name, response={"result": "18C"}))
            for c in calls]))  # fmt: skip
    raise AssertionError("the loop did not end")


def _loop_ollama(url: str, stream: bool) -> str:
    """ollama-python's loop (its tool calls carry no id; results name their tool), thinking
    off: an Ollama client cannot hand back a signed thinking block."""
    ollama = pytest.importorskip("ollama")

    client = ollama.Client(host=url, timeout=TIMEOUT)
    tools = [{"type": "function", "function": TOOL}]
    messages: List[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    for _ in range(2):
        content, calls = "", []
        if stream:
            for part in client.chat(model="m", messages=messages, tools=tools, stream=True):
                content += part.message.content or ""
                calls += part.message.tool_calls or []
        else:
            whole = client.chat(model="m", messages=messages, tools=tools, stream=False)
            content, calls = whole.message.content or "", list(whole.message.tool_calls or [])
        if not calls:
            return content
        messages.append({"role": "assistant", "content": content, "tool_calls": [c.model_dump() for c in calls]})
        messages += [{"role": "tool", "content": "18C", "tool_name": c.function.name} for c in calls]
    raise AssertionError("the loop did not end")


def _loop_cohere(url: str, stream: bool) -> str:
    """The cohere SDK's loop: the plan and the calls handed back, each call answered by id."""
    cohere = pytest.importorskip("cohere")

    client = cohere.ClientV2(api_key=CLIENT_KEY, base_url=url, timeout=TIMEOUT)
    tools = [{"type": "function", "function": TOOL}]
    messages: List[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    for _ in range(2):
        kwargs: Dict[str, Any] = {"model": "m", "messages": messages, "tools": tools,
                                  "thinking": {"type": "enabled", "token_budget": 1024}}  # fmt: skip
        text, plan, thinking = "", "", ""
        calls: Dict[int, Dict[str, Any]] = {}
        if stream:
            for e in client.chat_stream(**kwargs):
                m = getattr(getattr(e, "delta", None), "message", None)
                if e.type == "content-delta" and m is not None:
                    text += m.content.text or ""
                    thinking += m.content.thinking or ""
                elif e.type == "tool-plan-delta" and m is not None:
                    plan += m.tool_plan or ""
                elif e.type == "tool-call-start" and m is not None:
                    tc = m.tool_calls
                    calls[e.index] = {"id": tc.id, "type": "function",
                                      "function": {"name": tc.function.name, "arguments": tc.function.arguments or ""}}  # fmt: skip
                elif e.type == "tool-call-delta" and m is not None:
                    calls[e.index]["function"]["arguments"] += m.tool_calls.function.arguments or ""
        else:
            whole = client.chat(**kwargs)
            for c in whole.message.content or []:
                text += getattr(c, "text", None) or ""
                thinking += getattr(c, "thinking", None) or ""
            plan = whole.message.tool_plan or ""
            calls = {i: c.model_dump(exclude_none=True) for i, c in enumerate(whole.message.tool_calls or [])}
        if not calls:
            return text
        turn: Dict[str, Any] = {"role": "assistant", "tool_plan": plan, "tool_calls": list(calls.values())}
        if thinking:
            turn["content"] = [{"type": "thinking", "thinking": thinking}]
        messages.append(turn)
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": "18C"} for c in calls.values()]
    raise AssertionError("the loop did not end")


LOOPS: Dict[str, Callable[[str, bool], str]] = {
    "chat": _loop_chat, "messages": _loop_messages, "responses": _loop_responses, "gemini": _loop_gemini,
    "ollama": _loop_ollama, "cohere": _loop_cohere}  # fmt: skip


def _path(client: str, model: str = "m", stream: bool = True) -> str:
    if client == "gemini":
        return f"/v1beta/models/{quote(model, safe='')}:{'streamGenerateContent?alt=sse' if stream else 'generateContent'}"
    return {"chat": "/v1/chat/completions", "messages": "/v1/messages", "responses": "/v1/responses"}[client]


def _first_turn(client: str, model: str = "m") -> Dict[str, Any]:
    tools_chat = [{"type": "function", "function": TOOL}]
    if client == "chat":
        return {"model": model, "stream": True, "reasoning_effort": "low", "tools": tools_chat,
                "messages": [{"role": "user", "content": "Weather in Paris?"}]}  # fmt: skip
    if client == "messages":
        return {"model": model, "stream": True, "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024},
                "messages": [{"role": "user", "content": "Weather in Paris?"}]}  # fmt: skip
    if client == "responses":
        return {"model": model, "stream": True, "reasoning": {"effort": "low"},
                "input": [{"role": "user", "content": "Weather in Paris?"}]}  # fmt: skip
    return {"contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
            "generationConfig": {"thinkingConfig": {"thinkingBudget": 1024}}}  # fmt: skip


def _post(gw: Gateway, client: str, body: Any, path: Optional[str] = None,
          headers: Optional[Dict[str, str]] = None) -> Tuple[int, bytes, Dict[str, str]]:  # fmt: skip
    async def one() -> Tuple[int, bytes, Dict[str, str]]:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as s:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            url = yarl.URL(gw.url(path or _path(client)), encoded=True)  # sent as written
            async with s.post(url, data=data,
                              headers={"content-type": "application/json", **(headers or {})}) as r:  # fmt: skip
                return r.status, await r.read(), {k.lower(): v for k, v in r.headers.items()}

    return asyncio.run(one())
