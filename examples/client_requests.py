"""Read a chat completions stream with requests, printing the text as it arrives.

    python examples/client_requests.py http://127.0.0.1:8080   # any OpenAI-compatible base URL
"""

from __future__ import annotations

import sys
from typing import Any, Dict

import requests

import ssewire

REQUEST = {"model": "gpt-4o-mini", "stream": True, "stream_options": {"include_usage": True},
           "messages": [{"role": "user", "content": "Say hello."}]}  # fmt: skip


def run(base_url: str, headers: Dict[str, str] = {}) -> Dict[str, Any]:
    stream = ssewire.ChatCompletionStream()
    with requests.post(base_url + "/v1/chat/completions", json=REQUEST, headers=headers,
                       stream=True, timeout=60) as r:  # fmt: skip
        for item in stream.iter(r.iter_content(None)):  # None: each read as it arrives
            if isinstance(item, ssewire.ChatChunk) and isinstance(item.content, str):
                print(item.content, end="", flush=True)
    print()
    if stream.error is not None:
        raise stream.error
    return stream.result()


if __name__ == "__main__":
    print(run(sys.argv[1])["usage"])
