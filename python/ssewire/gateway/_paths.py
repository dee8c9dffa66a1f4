"""The client side of a request's path: which dialect a path speaks (``route``), whether a raw
path prefix is safe to pass on (``safe_prefix``), and a relayed request's upstream path
(``upstream_path``). Every path comes from the core's dialect registry."""

from __future__ import annotations

import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple
from urllib.parse import unquote, urlencode

import ssewire
from ssewire import _core


def glob(pattern: str) -> re.Pattern[str]:
    """A model pattern (a route's, a key's ``models``): ``*`` any run of characters, ``?``
    one, the rest literal."""
    parts = [".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern]
    return re.compile("".join(parts) + r"\Z", re.DOTALL)


#: The dialect registry of the core, by name: the dialects whose clients the gateway serves.
SPECS: Dict[str, _core._DialectSpec] = {spec["name"]: spec for spec in _core.DIALECTS if spec["serves"]}
STREAMS: Dict[str, Any] = {name: getattr(ssewire, spec["stream_class"]) for name, spec in SPECS.items()}
#: The dialects an upstream may speak.
UPSTREAMS: Tuple[str, ...] = tuple(spec["name"] for spec in _core.DIALECTS if spec["upstream"])
#: The content type of a stream in each dialect's framing.
STREAM_TYPES = {spec["framing"]: spec["content_type"] for spec in _core.DIALECTS}
#: The parts of the registry's path templates, as patterns.
_TEMPLATE_PARTS = {"{model}": r"(?P<model>[^/:]+)", "{version}": r"(?P<version>v1(?:beta|alpha)?)"}
#: What a raw path prefix may hold: RFC 3986 path characters and percent escapes.
RAW_PATH = re.compile(r"^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$")
#: The query parameters each dialect defines, the only ones passed on (Gemini's ``key`` is a
#: credential: never in an upstream URL).
QUERY: Dict[str, Tuple[str, ...]] = {name: spec["query"] for name, spec in SPECS.items()}
#: The dialect whose client a Bedrock path's caller is (its credential, its errors, its
#: headers): Converse's.
BEDROCK = next(spec["name"] for spec in _core.DIALECTS if spec["framing"] == "eventstream")


def _path_pattern(template: str) -> re.Pattern[str]:
    pattern = ""
    for piece in re.split(r"(\{model\}|\{version\})", template):
        pattern += _TEMPLATE_PARTS.get(piece) or re.escape(piece)
    return re.compile(r"^(?P<prefix>.*?)" + pattern + "$")


def _templates(spec: _core._DialectSpec) -> List[Tuple[str, Optional[bool], str]]:
    """A dialect's paths: (template, whether the path asks for a stream: None when the body
    tells, the framing the client reads: Bedrock's InvokeModel paths answer a Messages request
    in the event stream framing)."""
    out = [(spec["stream_path"], None if spec["whole_path"] is None else True, spec["framing"])]
    if spec["whole_path"] is not None:
        out.append((spec["whole_path"], False, spec["framing"]))
    # Other endpoints of the dialect (Ollama's /api/generate): the body tells.
    out += [(path, None, spec["framing"]) for path in spec["other_paths"]]
    for template, streaming in zip(spec["invoke_paths"] or (), (True, False)):
        out.append((template, streaming, "eventstream"))
    return out


ROUTES: List[Tuple[re.Pattern[str], str, Optional[bool], str, str]] = [
    (_path_pattern(template), name, streaming, framing, template)
    for name, spec in SPECS.items()
    for template, streaming, framing in _templates(spec)
]


class Route(NamedTuple):
    """What a request path asks for: the client's dialect, the raw path before the dialect's
    own part, and (Gemini, Bedrock) the model, its API version and whether a stream was asked
    for."""

    dialect: str
    prefix: str
    model: Optional[str] = None
    streaming: Optional[bool] = None
    version: str = "v1beta"
    #: The framing the client reads ("eventstream": a Bedrock client).
    framing: str = "sse"
    #: The registry's path template the request matched (its answer's form: Ollama's
    #: /api/generate reads generate's lines).
    template: str = ""

    @property
    def persona(self) -> str:
        """The dialect whose client this is to its credential, errors and headers: a Bedrock
        client's (Converse's) on a Bedrock path, else the request's dialect."""
        return BEDROCK if self.framing == "eventstream" else self.dialect

    @property
    def own_framing(self) -> bool:
        """The client reads its dialect's own framing (not a Messages client on InvokeModel)."""
        return bool(self.framing == SPECS[self.dialect]["framing"])


def route(raw_path: str) -> Optional[Route]:
    """The route of a raw request path (its query removed), or None for a path that is no
    LLM endpoint."""
    for pattern, dialect, streaming, framing, template in ROUTES:
        m = pattern.match(raw_path)
        if m is None:
            continue
        found = m.groupdict()
        model = found.get("model")
        version = found.get("version") or "v1beta"
        return Route(
            dialect,
            m["prefix"],
            None if model is None else unquote(model),
            streaming,
            version,
            framing,
            template,
        )
    return None


def safe_prefix(prefix: str) -> bool:
    """A raw path prefix the upstream path may carry: RFC 3986 path characters only, and no
    dot segment (``..``, ``.``, percent-encoded too): it must not climb out of the upstream's
    base path."""
    if prefix and (not prefix.startswith("/") or prefix.startswith("//")):
        return False  # absolute form (http://host/...) or //host would name another host
    if not RAW_PATH.match(prefix) or ";" in prefix:
        return False  # ..;/ reads as ../ to some servers
    return all(seg not in (".", "..") for seg in unquote(prefix).replace("\\", "/").split("/"))


def upstream_path(match: Route, query: Dict[str, str], model: Optional[str]) -> str:
    """A relayed request's upstream path: the raw prefix, the dialect's path (the model in it,
    when the path names one, re-encoded as one segment: ``model`` when a route names another),
    the dialect's own query parameters."""
    spec = SPECS[match.dialect]
    whole = spec["whole_path"]
    template = whole if match.streaming is False and whole is not None else spec["stream_path"]
    if match.template in spec["other_paths"]:  # relayed to the endpoint the client called
        template = match.template
    path = match.prefix + template.replace("{version}", match.version)
    if "{model}" in path:
        path = path.replace("{model}", _core._model_segment(model or match.model or ""))
    allowed = [(k, v) for k, v in query.items() if k in QUERY[match.dialect]]
    return path + ("?" + urlencode(allowed) if allowed else "")
