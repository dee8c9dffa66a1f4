"""A real redis-server (Debian's ``redis-server``) on a free loopback port, for the tests of
the shared key store: no persistence, no protection off loopback, stopped with the test."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from typing import Optional

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    def __init__(self) -> None:
        binary = shutil.which("redis-server") or shutil.which("valkey-server")
        if binary is None:
            pytest.skip("redis-server is not installed (.ci/run installs it)")
        self.port = _free_port()
        self.proc: Optional[subprocess.Popen[bytes]] = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("redis-server did not listen within 30 s")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            self.proc = None

    def __enter__(self) -> "RedisServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
