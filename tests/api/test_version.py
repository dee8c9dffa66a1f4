"""One version everywhere: Cargo.toml's ``[package] version`` is the source, maturin writes it
into the wheel's metadata, ``ssewire.__version__`` is compiled in from it, and CHANGELOG.md has
a section for it.

The Cargo.toml and CHANGELOG.md checks need those files beside ``tests/`` (CI copies them with
the suite it runs against the installed wheels).
"""

from __future__ import annotations

import re
from importlib import metadata

import pytest
import ssewire
from support import paths

ROOT = paths.ROOT
CARGO_TOML = ROOT / "Cargo.toml"
CHANGELOG = ROOT / "CHANGELOG.md"

needs_source_tree = pytest.mark.skipif(
    not CARGO_TOML.exists(), reason="needs the source tree (Cargo.toml)"
)


def cargo_version() -> str:
    """``version`` of Cargo.toml's ``[package]`` table (Python 3.9 has no tomllib)."""
    package = re.search(r"^\[package\]\n(.*?)(?=^\[|\Z)", CARGO_TOML.read_text(), re.M | re.S)
    assert package is not None, "Cargo.toml has no [package] table"
    version = re.search(r'^version\s*=\s*"([^"]+)"', package.group(1), re.M)
    assert version is not None, "Cargo.toml's [package] has no version"
    return version.group(1)


def test_module_version_is_the_installed_distributions() -> None:
    """The compiled-in ``__version__`` equals the version in the installed package's metadata."""
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", ssewire.__version__)
    assert ssewire.__version__ == metadata.version("ssewire")


@needs_source_tree
def test_module_version_is_cargo_tomls() -> None:
    """The installed module was built from this tree's version (a stale build fails here)."""
    assert ssewire.__version__ == cargo_version()


@needs_source_tree
def test_changelog_has_a_section_for_this_version() -> None:
    """CHANGELOG.md records the release that Cargo.toml names."""
    headings = re.findall(r"^## (\S+)", CHANGELOG.read_text(), re.M)
    assert cargo_version() in headings
