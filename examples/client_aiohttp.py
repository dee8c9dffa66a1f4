"""Read an OpenAI Responses stream with aiohttp, printing the text as it arrives.

    python examples/client_aiohttp.py http://127.0.0.1:8080   # any Responses-compatible base URL
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Dict

import aiohttp

import ssewire

REQUEST = {"model": "gpt-4.1-mini", "stream": True, "input": "Say hello."}


async def run(base_url: str, headers: Dict[str, str] = {}) -> Dict[str, Any]:
    stream = ssewire.ResponsesStream()
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        async with session.post(base_url + "/v1/responses", json=REQUEST, headers=headers) as r:
            async for item in stream.aiter(r.content.iter_any()):
                if getattr(item, "type", None) == "response.output_text.delta":
                    print(item.delta, end="", flush=True)
    print()
    if stream.error is not None:
        raise stream.error
    return stream.result()


if __name__ == "__main__":
    print(asyncio.run(run(sys.argv[1]))["usage"])
