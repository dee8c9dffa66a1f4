"""Issue 46: the gateway's configuration file (API.md section 14): read whole and checked before
the gateway listens; every error names the file, the line, the key and the value; unknown keys
are errors; ``--check`` prints what would be served."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ssewire.gateway import ConfigError, load

FULL = """\
[server]
host = "127.0.0.1"
port = 0
workers = 2
drain_timeout = 5

[[upstream]]
name = "anthropic"
url = "https://api.anthropic.com"
dialect = "messages"
keys_env = ["SSW_TEST_KEY_A", "SSW_TEST_KEY_B"]
first_byte_timeout = 30

[[upstream]]
name = "openai"
url = "https://api.openai.com/v1"
dialect = "chat"
keys_env = "SSW_TEST_KEY_A"

[[upstream]]
name = "bedrock"
url = "https://bedrock-runtime.us-east-1.amazonaws.com"
dialect = "converse"
region = "us-east-1"

[[route]]
model = "claude-*"
targets = ["anthropic", "bedrock"]

[[route]]
model = "fast"
targets = [{ upstream = "openai", model = "gpt-5-mini" },
           { upstream = "anthropic", model = "claude-haiku-4-5" }]

[retry]
attempts = 3
backoff = 0.5
on = [429, 529, "connect", "cut"]

[breaker]
failures = 4
cooldown = 10
"""


@pytest.fixture(autouse=True)
def keys(monkeypatch: Any) -> None:
    monkeypatch.setenv("SSW_TEST_KEY_A", "sk-a")
    monkeypatch.setenv("SSW_TEST_KEY_B", "sk-b")


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "gateway.toml"
    path.write_text(text)
    return str(path)


def test_the_documented_config_reads_whole(tmp_path: Path) -> None:
    cfg = load(write(tmp_path, FULL))
    assert [u.name for u in cfg.upstreams] == ["anthropic", "openai", "bedrock"]
    assert cfg.upstream("anthropic").keys == ("sk-a", "sk-b")
    assert cfg.upstream("anthropic").first_byte_timeout == 30.0
    assert cfg.upstream("openai").keys == ("sk-a",) and cfg.upstream("openai").url == "https://api.openai.com/v1"
    assert cfg.upstream("bedrock").region == "us-east-1" and cfg.upstream("bedrock").keys == ()
    fast = cfg.routes[1]
    assert [(t.upstream, t.model) for t in fast.targets] == [("openai", "gpt-5-mini"), ("anthropic", "claude-haiku-4-5")]
    assert cfg.retry.attempts == 3 and cfg.retry.on == frozenset({429, 529, "connect", "cut"})
    assert cfg.breaker.failures == 4 and cfg.server.workers == 2


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    ("change", "needle", "message"),
    [
        (('dialect = "chat"', 'dialect = "chat"\nretries = 3'), "retries = 3", "upstream.retries: unknown key"),
        (('targets = ["anthropic", "bedrock"]', 'targets = ["anthropic", "azure"]'), '"azure"', "names no upstream ('azure')"),
        (('keys_env = "SSW_TEST_KEY_A"', 'keys_env = "SSW_TEST_UNSET"'), "SSW_TEST_UNSET", "environment variable is not set"),
        (('url = "https://api.openai.com/v1"', 'url = "ftp://x"'), "ftp://x", "upstream.url: the upstream must be"),
        (('model = "claude-*"', 'model = ""'), 'model = ""', "route.model: must not be empty"),
        (("attempts = 3", "attempts = 0"), "attempts = 0", "retry.attempts: must be 1 to 100 (0)"),
        (('on = [429, 529, "connect", "cut"]', 'on = [429, "flaky"]'), "flaky", "retry.on: each entry"),
        (("[breaker]", "[breakers]"), "[breakers]", "breakers: unknown table"),
        (('dialect = "converse"', 'dialect = "bedrock"'), 'dialect = "bedrock"', "upstream.dialect: must be one of"),
        (('name = "openai"', 'name = "anthropic"'), 'name = "anthropic"\nurl = "https://api.openai', "names another upstream"),
        (("port = 0", "port = 70000"), "port = 70000", "server.port: must be a port"),
        (("port = 0", 'port = "80"'), 'port = "80"', "server.port: must be an integer"),
    ],
)
def test_an_error_names_file_line_key_and_value(tmp_path: Path, change: Any, needle: str, message: str) -> None:
    text = FULL.replace(*change)
    assert text != FULL
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load(path)
    line = line_of(text, needle.split("\n")[0])
    if needle == 'name = "anthropic"\nurl = "https://api.openai':  # the second upstream's name
        line = [n for n, s in enumerate(text.splitlines(), 1) if s == 'name = "anthropic"'][1]
    assert str(e.value).startswith(f"{path}:{line}: "), str(e.value)
    assert message in str(e.value)


def test_toml_that_does_not_parse_names_its_line(tmp_path: Path) -> None:
    text = FULL.replace("attempts = 3", "attempts = = 3")
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load(path)
    assert str(e.value).startswith(f"{path}:{line_of(text, 'attempts = =')}: not TOML")


def run(*argv: str) -> "subprocess.CompletedProcess[str]":
    env = {"PATH": "/usr/bin:/bin", "SSW_TEST_KEY_A": "sk-a", "SSW_TEST_KEY_B": "sk-b"}
    return subprocess.run([sys.executable, "-m", "ssewire.gateway", *argv], capture_output=True, text=True,
                          timeout=120, env=env)  # fmt: skip


def test_check_prints_what_would_be_served_and_exits_0(tmp_path: Path) -> None:
    out = run("--config", write(tmp_path, FULL), "--check")
    assert out.returncode == 0, out.stderr
    assert "route fast -> openai as gpt-5-mini, anthropic as claude-haiku-4-5" in out.stdout
    assert "upstream anthropic: messages at https://api.anthropic.com, 2 key(s)" in out.stdout
    assert "sk-a" not in out.stdout  # the keys themselves are never printed


def test_a_config_error_exits_2_before_listening(tmp_path: Path) -> None:
    text = FULL.replace("port = 0", "port = 0\nlisten = 1")
    out = run("--config", write(tmp_path, text), "--check")
    assert out.returncode == 2 and f":{line_of(text, 'listen = 1')}: server.listen: unknown key" in out.stderr
    out = run("--config", write(tmp_path, text))  # serving: refused before a socket is opened
    assert out.returncode == 2 and "serving on" not in out.stderr


def test_config_and_upstream_exclude_each_other(tmp_path: Path) -> None:
    out = run("--config", write(tmp_path, FULL), "--upstream", "http://127.0.0.1:9")
    assert out.returncode == 2 and "either --config FILE or --upstream URL" in out.stderr
