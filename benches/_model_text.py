"""Text that looks like model output, cut as the providers' tokenizers cut it, and the JSON
and SSE spelling the stream builders share (see ``_providers``)."""

from __future__ import annotations

import json
import random
import string
from typing import List

_WORDS = (
    "the model stream parser token event reads bytes each frame data field line server client "
    "response request message content delta choice usage gateway proxy latency buffer socket "
    "a an of to in and or for with on by from at as is are was be can will this that these it "
    "we you they function value result error retry timeout header body json python rust fast "
    "first next then when while because however therefore example output input item index"
).split()
_NON_ASCII = ["café", "naïve", "→", "—", "“quoted”", "€", "日本語", "😀", "é"]


def model_text(rng: random.Random, paragraphs: int = 40) -> str:
    """A markdown document as models write them."""
    out: List[str] = []

    def sentence() -> str:
        words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 18))]
        roll = rng.random()
        if roll < 0.18:
            i = rng.randrange(len(words))
            words[i] = f"`{words[i]}()`"
        elif roll < 0.30:
            i = rng.randrange(len(words))
            words[i] = f'"{words[i]}"'
        elif roll < 0.36:
            words[rng.randrange(len(words))] = rng.choice(_NON_ASCII)
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice([".", ".", ".", ":", "?", "!"])

    for _ in range(paragraphs):
        kind = rng.random()
        if kind < 0.15:
            out.append("## " + " ".join(rng.choice(_WORDS) for _ in range(3)).title())
        elif kind < 0.35:
            bullet = rng.choice(["- ", "* ", "1. "])
            out.append("\n".join(bullet + sentence() for _ in range(rng.randint(2, 5))))
        elif kind < 0.47:
            lines = []
            for _ in range(rng.randint(2, 7)):
                name = rng.choice(_WORDS)
                lines.append(
                    rng.choice(
                        [
                            f'    {name} = parse("{rng.choice(_WORDS)}\\n")',
                            f'    if {name} is None:\n        return {{"{name}": {rng.randint(0, 99)}}}',
                            f"    print(f'{{{name}!r}}')  # {rng.choice(_WORDS)}",
                        ]
                    )
                )
            out.append("```python\ndef " + rng.choice(_WORDS) + "(data):\n" + "\n".join(lines) + "\n```")
        else:
            out.append(" ".join(sentence() for _ in range(rng.randint(2, 5))))
    return "\n\n".join(out)


def deltas(text: str, rng: random.Random) -> List[str]:
    """``text`` cut into pieces of 1-4 tokens (a token: a word with its leading space, a run of
    punctuation, a newline, a short run of spaces)."""
    tokens: List[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        j = i + 1
        if c == " " and j < len(text) and text[j].isalnum():
            while j < len(text) and text[j].isalnum():
                j += 1
        elif c.isalnum():
            while j < len(text) and text[j].isalnum() and j - i < 8:
                j += 1
        elif c == " ":
            while j < len(text) and text[j] == " " and j - i < 4:
                j += 1
        tokens.append(text[i:j])
        i = j
    out: List[str] = []
    i = 0
    while i < len(tokens):
        n = rng.choice([1, 1, 1, 2, 2, 3, 4])
        out.append("".join(tokens[i : i + n]))
        i += n
    return out


def escape_rate(pieces: List[str]) -> float:
    """The share of pieces whose JSON string holds an escape."""
    return sum("\\" in json.dumps(p) for p in pieces) / max(1, len(pieces))


def _id(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def _dump(obj: object, ascii_only: bool) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=ascii_only)


def _sse(data: str, event: str = "") -> str:
    return (f"event: {event}\n" if event else "") + f"data: {data}\n\n"


# -- chat completions ------------------------------------------------------------------------
