"""A self-signed certificate for a loopback TLS server, and a client context that trusts it."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path

import pytest

HOST = "127.0.0.1"


def _certificate(tmp: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server, client) contexts for a self-signed certificate for 127.0.0.1 made now."""
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    openssl = shutil.which("openssl")
    if openssl is not None:
        subprocess.run(
            [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1"],
            check=True, capture_output=True, timeout=60,
        )
    else:  # pragma: no cover - machines without the openssl command line
        trustme = pytest.importorskip("trustme", reason="neither openssl nor trustme to make a test certificate")
        ca = trustme.CA()
        ca.issue_cert(HOST).private_key_and_cert_chain_pem.write_to_path(str(cert))
        key = cert
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(str(cert), str(key))
    client = ssl.create_default_context(cafile=str(cert))
    return server, client
