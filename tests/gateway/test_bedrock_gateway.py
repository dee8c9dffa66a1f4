"""Bedrock Converse clients served by the gateway (issue 37): boto3's own ``converse_stream``
and ``converse``, pointed at ``ssewire.gateway`` with ``endpoint_url``, complete a tool loop
against a scripted upstream of every other dialect over real sockets on 127.0.0.1 (the
upstream's streams written from the chat captures, as ``test_gateway_loop``'s are). The
gateway maps the Converse request (``translate_request``) and writes the upstream's stream as
Bedrock's event stream (``Translator(upstream, "converse")``), which botocore's own parser
reads. An upstream's refusal reaches boto3 as an error of the same status, and a gateway with
no upstream of another dialect refuses a Converse client (a Bedrock upstream is not served
yet). Bounded: two requests per loop, every wait timed; no address but loopback."""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
from aiohttp import web

boto3 = pytest.importorskip("boto3")
import ssewire  # noqa: E402
import support.agent_loop as loop  # noqa: E402
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402
from support import registry  # noqa: E402
from support.gateway_app import TIMEOUT, Gateway  # noqa: E402
from support.loopback import LoopbackServer, Request  # noqa: E402
from support.sdk_loops import TOOL  # noqa: E402

#: A Bedrock model id as boto3 names it (its ``:`` is percent-encoded in the path).
MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
TOOLS = {"tools": [{"toolSpec": {"name": "get_weather", "description": "Weather now",
                                 "inputSchema": {"json": TOOL["parameters"]}}}]}  # fmt: skip
QUESTION = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]


def _client(url: str) -> Any:
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=url,
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-secret",
        config=Config(retries={"max_attempts": 0}, read_timeout=TIMEOUT, connect_timeout=TIMEOUT),
    )


def _read_stream(events: Any) -> Tuple[List[Dict[str, Any]], str, str]:
    """The message a ``converse_stream`` answer holds, read from botocore's events: its content
    blocks (text and toolUse with the input joined and parsed), and its stop reason."""
    blocks: Dict[int, Dict[str, Any]] = {}
    stop = ""
    kinds: List[str] = []
    for event in events:
        ((kind, value),) = event.items()
        kinds.append(kind)
        if kind == "contentBlockStart":
            tool = value["start"]["toolUse"]
            blocks[value["contentBlockIndex"]] = {"toolUse": {**tool, "input": ""}}
        elif kind == "contentBlockDelta":
            delta = value["delta"]
            block = blocks.setdefault(value["contentBlockIndex"], {"text": ""})
            if "text" in delta:
                block["text"] = block.get("text", "") + delta["text"]
            elif "toolUse" in delta:
                block["toolUse"]["input"] += delta["toolUse"]["input"]
        elif kind == "messageStop":
            stop = value["stopReason"]
    for block in blocks.values():
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"] or "{}")
    assert kinds[0] == "messageStart" and kinds[-1] == "metadata", kinds
    return [blocks[i] for i in sorted(blocks)], stop, ",".join(kinds)


def _script(upstream_dialect: str, seen: List[Optional[Tuple[str, str]]]) -> Any:
    call, answer = loop._streams(upstream_dialect)

    def script(request: Request) -> Optional[bytes]:
        found = loop._call_and_result(upstream_dialect, json.loads(request.body))
        seen.append(found)
        return answer if found is not None else call

    return script


@pytest.mark.parametrize("upstream_dialect", [d for d in registry.NAMES])
@pytest.mark.parametrize("streamed", [True, False], ids=["converse_stream", "converse"])
def test_a_boto3_converse_tool_loop_completes_through_the_gateway(
    upstream_dialect: str, streamed: bool
) -> None:
    seen: List[Optional[Tuple[str, str]]] = []
    with LoopbackServer(timeout=TIMEOUT) as upstream:
        upstream.script = _script(upstream_dialect, seen)
        prefix = upstream.add(b"")
        gw = Gateway(upstream.url(), upstream_dialect=upstream_dialect)
        try:
            client = _client(gw.url(prefix))
            messages: List[Dict[str, Any]] = list(QUESTION)
            for turn in range(2):  # the call, then the answer
                if streamed:
                    answer = client.converse_stream(modelId=MODEL, messages=messages, toolConfig=TOOLS)
                    content, stop, _ = _read_stream(answer["stream"])
                else:
                    whole = client.converse(modelId=MODEL, messages=messages, toolConfig=TOOLS)
                    content, stop = whole["output"]["message"]["content"], whole["stopReason"]
                    assert whole["ResponseMetadata"]["HTTPStatusCode"] == 200
                if turn == 0:
                    calls = [b["toolUse"] for b in content if "toolUse" in b]
                    assert stop == "tool_use" and [c["name"] for c in calls] == ["get_weather"], content
                    assert calls[0]["input"] == {"city": "Paris"}
                    messages += [
                        {"role": "assistant", "content": content},
                        {"role": "user", "content": [{"toolResult": {"toolUseId": calls[0]["toolUseId"],
                                                                     "content": [{"text": "18C"}]}}]},
                    ]  # fmt: skip
                else:
                    assert stop == "end_turn"
                    assert "".join(b.get("text", "") for b in content) == loop.ANSWER
            records = gw.records
        finally:
            gw.close()
    # The upstream saw the call first without a result, then the call with its result.
    assert len(seen) == 2 and seen[0] is None and seen[1] is not None and seen[1][1] == "18C"
    assert upstream.requests[0].path.startswith(prefix)
    assert all(r["client_dialect"] == "converse" and r["status"] == 200 for r in records)
    assert records[0]["request_model"] == MODEL


def test_an_upstream_refusal_reaches_boto3() -> None:
    with LoopbackServer(timeout=TIMEOUT) as upstream:
        prefix = upstream.add(b'{"error": {"message": "slow down", "type": "rate_limit_error"}}', status=429)
        gw = Gateway(upstream.url(), upstream_dialect="chat")
        try:
            with pytest.raises(ClientError) as raised:
                _client(gw.url(prefix)).converse_stream(modelId=MODEL, messages=QUESTION)
        finally:
            gw.close()
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429
    assert "slow down" in str(raised.value)


class _TlsGateway(Gateway):
    """The test gateway served over TLS (boto3 sends a bearer token only over HTTPS)."""

    def __init__(self, upstream: str, server_context: ssl.SSLContext, **options: Any) -> None:
        self.server_context = server_context
        super().__init__(upstream, **options)

    async def _start(self) -> int:
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0, ssl_context=self.server_context)
        await site.start()
        return int(self.runner.addresses[0][1])

    def url(self, path: str = "") -> str:
        return f"https://127.0.0.1:{self.port}{path}"


def test_a_bedrock_api_key_is_the_client_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With client keys, a Converse client is let in by a Bedrock API key (boto3 sends
    ``AWS_BEARER_TOKEN_BEDROCK`` as a bearer token, over HTTPS); a SigV4 signature is not a
    key."""
    from support.tls import _certificate

    server_context, _ = _certificate(tmp_path)
    seen: List[Optional[Tuple[str, str]]] = []
    with LoopbackServer(timeout=TIMEOUT) as upstream:
        upstream.script = _script("messages", seen)
        prefix = upstream.add(b"")
        gw = _TlsGateway(upstream.url(), server_context, upstream_dialect="messages", client_keys=["k-123"])
        try:
            url, verify = gw.url(prefix), str(tmp_path / "cert.pem")
            signed = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url, verify=verify,
                                  aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="not-a-secret",
                                  config=Config(retries={"max_attempts": 0}, read_timeout=TIMEOUT))  # fmt: skip
            with pytest.raises(ClientError) as raised:
                signed.converse_stream(modelId=MODEL, messages=QUESTION, toolConfig=TOOLS)
            assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 401
            monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "k-123")
            client = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url, verify=verify,
                                  config=Config(retries={"max_attempts": 0}, read_timeout=TIMEOUT))  # fmt: skip
            answer = client.converse_stream(modelId=MODEL, messages=QUESTION, toolConfig=TOOLS)
            content, stop, _ = _read_stream(answer["stream"])
        finally:
            gw.close()
    assert stop == "tool_use" and content[0]["toolUse"]["name"] == "get_weather"
    assert len(seen) == 1


# -- Claude on Bedrock: InvokeModel clients ----------------------------------------------------

INVOKE_TOOLS = [
    {"name": "get_weather", "description": "Weather now", "input_schema": TOOL["parameters"]}
]


def _invoke_events(answer: Any) -> List[Dict[str, Any]]:
    """The Messages events of an ``invoke_model_with_response_stream`` answer: each ``chunk``'s
    bytes as botocore gives them, read as JSON."""
    events = []
    for event in answer["body"]:
        assert list(event) == ["chunk"], event
        events.append(json.loads(event["chunk"]["bytes"]))
    return events


@pytest.mark.parametrize("upstream_dialect", [d for d in registry.NAMES])
@pytest.mark.parametrize("streamed", [True, False], ids=["invoke_model_with_response_stream", "invoke_model"])
def test_a_boto3_invokemodel_tool_loop_completes_through_the_gateway(
    upstream_dialect: str, streamed: bool
) -> None:
    """boto3's InvokeModel clients with a Messages body in Bedrock's form (``anthropic_version``,
    no model): the stream comes back as ``chunk`` events of Messages events (or the whole
    Message), from every upstream, the Messages one included (mapped, not relayed: its client
    reads another framing)."""
    seen: List[Optional[Tuple[str, str]]] = []
    with LoopbackServer(timeout=TIMEOUT) as upstream:
        upstream.script = _script(upstream_dialect, seen)
        prefix = upstream.add(b"")
        gw = Gateway(upstream.url(), upstream_dialect=upstream_dialect)
        try:
            client = _client(gw.url(prefix))
            messages: List[Dict[str, Any]] = [{"role": "user", "content": "Weather in Paris?"}]
            for turn in range(2):
                body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 1024,
                        "messages": messages, "tools": INVOKE_TOOLS}  # fmt: skip
                if streamed:
                    answer = client.invoke_model_with_response_stream(modelId=MODEL, body=json.dumps(body))
                    assert answer["contentType"] == "application/json"
                    message = ssewire.accumulate(
                        b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in _invoke_events(answer)),
                        "messages",
                    )
                else:
                    whole = client.invoke_model(modelId=MODEL, body=json.dumps(body))
                    message = json.loads(whole["body"].read())
                if turn == 0:
                    calls = [b for b in message["content"] if b["type"] == "tool_use"]
                    assert message["stop_reason"] == "tool_use" and calls[0]["input"] == {"city": "Paris"}
                    messages += [
                        {"role": "assistant", "content": message["content"]},
                        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": calls[0]["id"],
                                                      "content": "18C"}]},
                    ]  # fmt: skip
                else:
                    assert message["stop_reason"] == "end_turn"
                    assert "".join(b.get("text", "") for b in message["content"]) == loop.ANSWER
            records = gw.records
        finally:
            gw.close()
    assert len(seen) == 2 and seen[0] is None and seen[1] is not None and seen[1][1] == "18C"
    assert all(r["client_dialect"] == "messages" and r["status"] == 200 for r in records)
    sent = json.loads(upstream.requests[1].body)
    if upstream_dialect == "messages":  # the InvokeModel form mapped to the Messages API's
        assert sent["model"] == MODEL and sent["stream"] is True and "anthropic_version" not in sent


def test_a_bedrock_client_gets_bedrock_errors_and_keeps_its_credential() -> None:
    """An InvokeModel client's errors are Bedrock's (``{"message"}``, the upstream's status), and
    with --pass-through-auth its credential does not reach a Messages upstream (another
    provider's)."""
    with LoopbackServer(timeout=TIMEOUT) as upstream:
        prefix = upstream.add(b'{"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}',
                              status=529, content_type="application/json")  # fmt: skip
        gw = Gateway(upstream.url(), upstream_dialect="messages", pass_through_auth=True)
        try:
            body = {
                "anthropic_version": "bedrock-2023-05-31",
                "max_tokens": 10,
                "messages": [{"role": "user", "content": "hi"}],
            }
            with pytest.raises(ClientError) as raised:
                _client(gw.url(prefix)).invoke_model_with_response_stream(
                    modelId=MODEL, body=json.dumps(body)
                )
        finally:
            gw.close()
        sent = upstream.requests[0]
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert raised.value.response["Error"]["Message"] == "busy"
    assert "authorization" not in sent.headers and "x-api-key" not in sent.headers


# -- a Bedrock upstream: Converse, signed with SigV4 ---------------------------------------------

AWS_KEY_ID, AWS_SECRET = "AKIDSSEWIRETEST", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def _converse_call_and_result(body: Dict[str, Any]) -> Optional[Tuple[str, str]]:
    """The id of the upstream's tool call and the result under it, if the Converse request has
    both."""
    calls = set()
    for m in body.get("messages", []):
        for block in m["content"]:
            if "toolUse" in block:
                calls.add(block["toolUse"]["toolUseId"])
            result = block.get("toolResult")
            if result and result["toolUseId"] in calls:
                return result["toolUseId"], "".join(c.get("text", "") for c in result["content"])
    return None


def _check_signature(request: Request, region: str = "us-east-1") -> None:
    """The request is signed with SigV4 by the test's credentials for Bedrock in ``region``:
    the signature is computed again over what arrived (botocore's signer) and must match."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    auth = request.headers["authorization"]
    assert auth.startswith(f"AWS4-HMAC-SHA256 Credential={AWS_KEY_ID}/"), auth
    assert f"/{region}/bedrock/aws4_request" in auth
    names = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
    assert {"host", "x-amz-date"} <= set(names)
    again = AWSRequest(method=request.method, url=f"http://{request.headers['host']}{request.path}",
                       data=request.body, headers={n: request.headers[n] for n in names})  # fmt: skip
    again.context["timestamp"] = request.headers["x-amz-date"]
    signer = SigV4Auth(Credentials(AWS_KEY_ID, AWS_SECRET), "bedrock", region)
    string_to_sign = signer.string_to_sign(again, signer.canonical_request(again))
    assert auth.endswith("Signature=" + signer.signature(string_to_sign, again))


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Credentials for the AWS chain from the environment only: no shared files, no instance
    metadata (nothing but loopback is contacted)."""
    for name, value in {"AWS_ACCESS_KEY_ID": AWS_KEY_ID, "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
                        "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
                        "AWS_CONFIG_FILE": str(tmp_path / "none"),
                        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("client", [d for d in registry.NAMES])
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_an_sdk_tool_loop_completes_against_a_bedrock_upstream(
    aws_env: None, client: str, stream: bool
) -> None:
    """Every SDK's own tool loop (openai chat and Responses, anthropic, google-genai) through the
    gateway to a loopback Bedrock Converse upstream: each request mapped to Converse, signed
    with SigV4 from the AWS chain (checked again by the upstream), answered in the event stream
    framing and translated back."""
    from support.sdk_loops import LOOPS as SDK_LOOPS

    call = ssewire.translate(loop._streams("chat")[0], "chat", "converse")
    answer = ssewire.translate(loop._streams("chat")[1], "chat", "converse")
    seen: List[Optional[Tuple[str, str]]] = []

    def script(request: Request) -> Optional[bytes]:
        found = _converse_call_and_result(json.loads(request.body))
        seen.append(found)
        return answer if found is not None else call

    with LoopbackServer(timeout=TIMEOUT) as upstream:
        upstream.script = script
        prefix = upstream.add(b"", content_type="application/vnd.amazon.eventstream")
        gw = Gateway(upstream.url() + prefix, upstream_dialect="converse")
        try:
            text = SDK_LOOPS[client](gw.url(), stream)
        finally:
            gw.close()
    assert text == loop.ANSWER
    assert len(seen) == 2 and seen[0] is None and seen[1] is not None and seen[1][1] == "18C"
    for request in upstream.requests:
        assert request.path == f"{prefix}/model/m/converse-stream"
        _check_signature(request)
        assert "x-api-key" not in request.headers


def test_a_bedrock_upstream_takes_an_api_key_and_its_errors_reach_the_client(aws_env: None) -> None:
    """``upstream_key`` for a Bedrock upstream is a Bedrock API key (a bearer token, no
    signature); Bedrock's error answer reaches a chat client as OpenAI's error of its status."""
    with LoopbackServer(timeout=TIMEOUT) as upstream:
        prefix = upstream.add(b'{"message": "Too many requests, please wait before trying again."}', status=429,
                              content_type="application/json")  # fmt: skip
        gw = Gateway(upstream.url() + prefix, upstream_dialect="converse", upstream_key="bedrock-api-key-1")
        try:
            from support.sdk_loops import _first_turn, _post

            status, body, _ = _post(gw, "chat", _first_turn("chat"))
        finally:
            gw.close()
    assert status == 429
    assert json.loads(body)["error"]["message"].startswith("Too many requests")
    (sent,) = upstream.requests
    assert sent.headers["authorization"] == "Bearer bedrock-api-key-1" and "x-amz-date" not in sent.headers


def test_a_converse_client_is_relayed_to_a_bedrock_upstream_signed(aws_env: None) -> None:
    """Without ``upstream_dialect`` a Converse client's request goes to the Bedrock upstream as
    it came, signed by the gateway's own credentials (the client's signature is for the gateway,
    never passed on), and the event stream comes back byte for byte, metered."""
    body = ssewire.translate(loop._streams("chat")[0], "chat", "converse")
    with LoopbackServer(timeout=TIMEOUT) as upstream:
        prefix = upstream.add(body, content_type="application/vnd.amazon.eventstream")
        gw = Gateway(upstream.url() + prefix)
        try:
            client = _client(gw.url())
            answer = client.converse_stream(modelId=MODEL, messages=QUESTION, toolConfig=TOOLS)
            content, stop, _ = _read_stream(answer["stream"])
            records = gw.records
        finally:
            gw.close()
    assert stop == "tool_use" and content[-1]["toolUse"]["input"] == {"city": "Paris"}
    (sent,) = upstream.requests
    _check_signature(sent)
    assert "AKIDEXAMPLE" not in sent.headers["authorization"]  # not the client's
    assert json.loads(sent.body)["toolConfig"] == TOOLS
    assert records[0]["dialect"] == "converse" and records[0]["status"] == 200 and records[0]["done"]
    # A Converse result names no model: the log line names the one asked for (it said None).
    assert records[0]["model"] == MODEL
