"""``ssewire gateway``: an LLM gateway in front of one upstream or a fleet of them (API.md
sections 13 and 14).

Clients of every dialect are served on their own paths (``/v1/chat/completions``,
``/v1/messages``, ``/v1/responses``, ``/v1beta/models/{model}:streamGenerateContent`` and
``:generateContent``, Bedrock's ``/model/{modelId}/...``), streamed or not. A request is routed
by its model to the first matching route's targets, tried in turn: a try of the client's
dialect is relayed byte for byte (metered by ``stream.consume()``), a try of another is served
by translation (``ssewire.translate_request`` and ``ssewire.Translator``, the whole agent loop).
Failures (statuses and failures in ``retry.on``) are retried with backoff and fail over to the
next target while the client has received nothing.

    pip install 'ssewire[gateway]'
    ssewire gateway --config gateway.toml
    ssewire gateway --upstream https://api.anthropic.com --upstream-dialect messages \\
        --upstream-key-env ANTHROPIC_API_KEY

What reaches an upstream is built by the gateway, never copied from the client:

- the request line: the upstream's base path, the client's path prefix as the client sent it
  (raw, never decoded; dot segments refused), the dialect's own path with the model as one
  percent-encoded segment, and only the query parameters the dialect defines;
- one header of each name, from a fixed list: the credential (the gateway's own key for that
  upstream, written in its dialect's form; or, with ``--pass-through-auth``, the client's, and
  only to an upstream of the client's dialect), ``anthropic-version`` / ``anthropic-beta`` for
  a Messages upstream, the body's type and length; header values with anything but visible
  ASCII are refused;
- the body: as the client sent it (relay; its ``model`` replaced when a route names another),
  or the translated request.

The package, one module per job: ``_config`` (the file), ``_paths`` (a client's path),
``_auth`` (credentials and headers), ``_failover`` (routes, retries, keys and breakers, no
I/O), ``_upstream`` (the pooled upstream client), ``_exchange`` (one try), ``_record`` (the log
line), ``_server`` (the aiohttp app), ``_runner`` and ``_process`` (serving, workers and
signals).
"""

from __future__ import annotations

from ssewire.gateway._auth import (
    Refused,
    bedrock_signer,
    client_credential,
    credential_headers,
    passed_headers,
)
from ssewire.gateway._config import MAX_BODY, Config, ConfigError, load
from ssewire.gateway._exchange import MAX_ERROR_BODY, MAX_WHOLE_BODY, error_response
from ssewire.gateway._paths import SPECS, STREAM_TYPES, STREAMS, UPSTREAMS, Route, route, safe_prefix
from ssewire.gateway._process import main, make_parser
from ssewire.gateway._record import final_text, record
from ssewire.gateway._runner import LINGER, new_loop, runner, serve
from ssewire.gateway._server import HEAD_TIMEOUT, make_app, reload

__all__ = [
    "HEAD_TIMEOUT",
    "LINGER",
    "MAX_BODY",
    "MAX_ERROR_BODY",
    "MAX_WHOLE_BODY",
    "SPECS",
    "STREAMS",
    "STREAM_TYPES",
    "UPSTREAMS",
    "Config",
    "ConfigError",
    "Refused",
    "Route",
    "bedrock_signer",
    "client_credential",
    "credential_headers",
    "error_response",
    "final_text",
    "load",
    "main",
    "make_app",
    "make_parser",
    "new_loop",
    "passed_headers",
    "record",
    "reload",
    "route",
    "runner",
    "safe_prefix",
    "serve",
]
