"""The gateway as a child process (``python -m ssewire.gateway --config``): started and
waited for, its JSON log lines (stdout) and stderr collected as they come, stopped with
SIGTERM. Every wait is bounded."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Process:
    """The gateway as a child process; its log lines (stdout) collected as they come."""

    def __init__(self, config: Path) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "ssewire.gateway", "--config", str(config)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
        self.lines: List[Dict[str, Any]] = []
        self.errors: List[str] = []
        threading.Thread(target=self._read, args=(self.proc.stdout, True), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, False), daemon=True).start()
        self.wait(lambda: any("serving on" in e for e in self.errors) or self.proc.poll() is not None)
        assert self.proc.poll() is None, self.errors

    def _read(self, pipe: Any, out: bool) -> None:
        for line in pipe:
            if out:
                self.lines.append(json.loads(line))
            else:
                self.errors.append(line)

    def wait(self, done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not done():
            assert time.monotonic() < deadline, (self.lines, self.errors)
            time.sleep(0.02)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


