"""The root conftest skips a module whose peer cannot be imported, naming the peer."""

from __future__ import annotations

import pytest
from support import paths

pytest_plugins = ["pytester"]

ROOT_CONFTEST = paths.ROOT / "conftest.py"


@pytest.mark.skipif(not ROOT_CONFTEST.is_file(), reason="the root conftest.py is not in this tree")
def test_a_module_whose_peer_is_missing_is_skipped_and_others_still_fail(pytester: pytest.Pytester) -> None:
    # msgspec is a peer; None in sys.modules makes its import fail as a missing build would.
    pytester.makeconftest(ROOT_CONFTEST.read_text() + '\nsys.modules["msgspec"] = None\n')
    pytester.makepyfile(
        test_peer="import msgspec\n\ndef test_x():\n    assert msgspec\n",
        test_other="import no_such_module_of_the_suite\n\ndef test_y():\n    pass\n",
        test_plain="def test_z():\n    assert 1 + 1 == 2\n",
    )
    result = pytester.runpytest("-rs", "-p", "no:cacheprovider", "--continue-on-collection-errors")
    result.assert_outcomes(passed=1, skipped=1, errors=1)
    result.stdout.fnmatch_lines(["*peer 'msgspec' is not installed*"])
