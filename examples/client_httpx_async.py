"""Read an Anthropic Messages stream with httpx (async), printing the text as it arrives.

    python examples/client_httpx_async.py http://127.0.0.1:8080   # any Anthropic-compatible base URL
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Dict

import httpx

import ssewire

REQUEST = {"model": "claude-sonnet-4-5", "max_tokens": 256, "stream": True,
           "messages": [{"role": "user", "content": "Say hello."}]}  # fmt: skip


async def run(base_url: str, headers: Dict[str, str] = {}) -> Dict[str, Any]:
    stream = ssewire.MessagesStream()
    async with httpx.AsyncClient(timeout=60) as client:
        async with client.stream("POST", base_url + "/v1/messages", json=REQUEST,
                                 headers=headers) as r:  # fmt: skip
            async for item in stream.aiter(r.aiter_bytes()):
                if getattr(item, "delta_type", None) == "text_delta":
                    print(item.text, end="", flush=True)
    print()
    if stream.error is not None:
        raise stream.error
    return stream.result()


if __name__ == "__main__":
    print(asyncio.run(run(sys.argv[1]))["usage"])
