"""Credentials and headers: the key a client sent (``client_credential``), the key an
upstream takes (``credential_headers``, Bedrock's SigV4 ``bedrock_signer``), the headers an
upstream request carries beside them (``upstream_headers``), and the upstream's response
headers a client sees (``passed_headers``). No header reaches an upstream unless it is named
here, and one of each name."""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

from ssewire.gateway._paths import SPECS

#: A header value that may be passed on: visible ASCII, spaces and tabs.
HEADER_VALUE = re.compile(r"^[\x20-\x7e\t]*$")
#: A Bedrock Runtime host and the region it names.
BEDROCK_HOST = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
#: Each dialect's name for the upstream's request id.
REQUEST_ID = {name: spec["request_id"] for name, spec in SPECS.items()}
RATE_OPENAI = re.compile(r"^x-ratelimit-(limit|remaining|reset)-(requests|tokens)$")
RATE_ANTHROPIC = re.compile(r"^anthropic-ratelimit-(requests|tokens)-(limit|remaining|reset)$")


class Refused(Exception):
    """A request the gateway answers itself with an error: ``status``, ``message``."""

    def __init__(self, status: int, message: str, headers: Optional[List[Tuple[str, str]]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or []


def client_credential(dialect: str, headers: Any, query: Dict[str, str]) -> Optional[str]:
    """The credential a client of ``dialect`` sent, in its dialect's own places (the
    registry's ``client_key_headers``, then its ``client_key_query``)."""
    spec = SPECS[dialect]
    for name in spec["client_key_headers"]:
        value = headers.get(name)
        if not value:
            continue
        if name != "authorization":
            return str(value)
        if value[:7].lower() == "bearer ":
            return str(value[7:].strip())
    if spec["client_key_query"] is not None:
        return query.get(spec["client_key_query"])
    return None


def credential_headers(dialect: str, key: str) -> List[Tuple[str, str]]:
    """``key`` as an upstream of ``dialect`` takes it."""
    name, prefix = SPECS[dialect]["key_header"]
    return [(name, prefix + key)]


Signer = Callable[[str, bytes], List[Tuple[str, str]]]


def bedrock_signer(url: str, region: Optional[str] = None) -> Signer:
    """What signs requests to the Bedrock upstream at ``url`` with SigV4, by botocore: the
    credentials from the standard AWS chain (environment, shared files, SSO, container and
    instance roles; refreshed by botocore when they expire), ``region``, else the region the
    host names, else the chain's, else ``us-east-1``. ``ValueError`` without botocore or
    credentials."""
    try:
        import botocore.session  # type: ignore[import-untyped]
        from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
        from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
    except ImportError:
        raise ValueError("a Bedrock upstream signs its requests with botocore: pip install boto3") from None
    target = urlsplit(url)
    session = botocore.session.get_session()
    credentials = session.get_credentials()
    if credentials is None:
        raise ValueError("the AWS credential chain found no credentials for the Bedrock upstream")
    named = BEDROCK_HOST.match(target.hostname or "")
    region = region or (named[1] if named else None) or session.get_config_variable("region") or "us-east-1"
    base = target.path.rstrip("/")

    def sign(path: str, body: bytes) -> List[Tuple[str, str]]:
        """The headers that sign ``POST path`` with ``body`` (the host and content type the
        gateway sends are signed with them)."""
        request = AWSRequest(
            method="POST",
            url=f"{target.scheme}://{target.netloc}{base}{path}",
            data=body,
            headers={"content-type": "application/json"},
        )
        SigV4Auth(credentials.get_frozen_credentials(), "bedrock", region).add_auth(request)
        wanted = ("authorization", "x-amz-date", "x-amz-security-token")
        return [(k.lower(), str(v)) for k, v in request.headers.items() if k.lower() in wanted]

    return sign


def upstream_headers(
    headers: Any, query: Dict[str, str], client: str, up: str, key: Optional[str], pass_through: bool
) -> List[Tuple[str, str]]:
    """The headers an upstream of dialect ``up`` gets beside the fixed ones, for a client of
    dialect ``client`` that sent ``headers``: its credential (``key``, the gateway's own; or,
    with ``pass_through`` and no key, the client's, only to an upstream of the client's
    dialect) and its API version, from the allow-list, one of each name. ``Refused`` (400) for
    a value no header can carry."""
    out: List[Tuple[str, str]] = []
    if key is not None:
        out += credential_headers(up, key)
    elif pass_through and client == up:
        own = client_credential(client, headers, query)
        if own is not None:
            if not HEADER_VALUE.match(own):
                raise Refused(400, "the credential has characters no header can carry")
            out += credential_headers(up, own)
    family, client_family = SPECS[up]["family"], SPECS[client]["family"]
    versioned = SPECS[up]["version_header"]
    if versioned is not None:  # the registry's: the client's own value within one family
        name, default = versioned
        version = headers.get(name) if family == client_family else None
        out.append((name, version or default))
    if family == client_family == "anthropic":
        beta = headers.get("anthropic-beta")
        if beta:
            out.append(("anthropic-beta", beta))
    if family == client_family == "openai" and pass_through and client == up:
        for name in ("openai-organization", "openai-project"):
            value = headers.get(name)
            if value:
                out.append((name, value))
    for name, value in out:
        if not HEADER_VALUE.match(value):
            raise Refused(400, f"the {name} header has characters no header can carry")
    return out


def passed_headers(upstream: str, client: str, headers: List[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """The upstream's response headers a client should see, in the client dialect's names:
    ``retry-after`` (and ``retry-after-ms``), the rate limits (OpenAI's ``x-ratelimit-*`` and
    Anthropic's ``anthropic-ratelimit-*`` both ways; their reset times are in different forms
    and cross only within a family) and the request id."""
    out: List[Tuple[str, str]] = []
    family, client_family = SPECS[upstream]["family"], SPECS[client]["family"]
    for name, value in headers:
        k = name.lower()
        if not HEADER_VALUE.match(value):
            continue
        if k in ("retry-after", "retry-after-ms"):
            out.append((k, value))
        elif k in ("x-request-id", "request-id", "x-goog-request-id", "x-amzn-requestid"):
            out.append((REQUEST_ID[client], value))
        elif RATE_OPENAI.match(k) or RATE_ANTHROPIC.match(k):
            if family == client_family and family != "google":
                out.append((k, value))
                continue
            m = RATE_OPENAI.match(k)
            if m and client_family == "anthropic" and m[1] != "reset":
                out.append((f"anthropic-ratelimit-{m[2]}-{m[1]}", value))
            m = RATE_ANTHROPIC.match(k)
            if m and client_family == "openai" and m[2] != "reset":
                out.append((f"x-ratelimit-{m[2]}-{m[1]}", value))
    seen = set()
    unique = []
    for k, v in out:
        if k not in seen:
            seen.add(k)
            unique.append((k, v))
    return unique


def retry_after(headers: List[Tuple[str, str]]) -> Optional[float]:
    """An upstream's ``retry-after`` (seconds, or ``retry-after-ms``), or None: an HTTP date or
    a value that is no number is none."""
    for name, value in headers:
        k = name.lower()
        if k not in ("retry-after", "retry-after-ms"):
            continue
        try:
            seconds = float(value) / (1000.0 if k == "retry-after-ms" else 1.0)
        except ValueError:
            continue
        if math.isfinite(seconds):
            return min(max(0.0, seconds), 86400.0)
    return None
