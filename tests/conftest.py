"""The suite's policy for the shared corpora (``swvp.data.paths``: ``$SWVP_DATA``, else ``shared/data`` found above
the checkout or the working directory).

A test that needs them carries ``@pytest.mark.data`` and skips when they are absent; its skip then says where the
data was looked for and how to point at it, and the run ends with one line saying how many tests that skipped.
With ``SWVP_REQUIRE_DATA=1`` (``.ci/run`` sets it) such a skip is a failure instead: a CI run that expects the data
must not pass without it. A skip counts as one for want of data when the test is marked ``data`` or its reason
speaks of the shared data.
"""

from __future__ import annotations

import os
import re
import signal

import pytest

from swvp.data.paths import data_root

# A suite started in the background by a shell without job control inherits SIGINT ignored, and so would every
# process it starts: the Ctrl-C tests (a SIGINT to this process or to a child) then test nothing a user at a terminal
# meets. Give this process Python's own handler, as a terminal would; its children then start with SIGINT's default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

#: the variable that turns a missing-data skip into a failure
REQUIRE_DATA = "SWVP_REQUIRE_DATA"
_DATA_REASON = re.compile(r"\bdata\b", re.IGNORECASE)
_data_skips: list[str] = []


def data_required() -> bool:
    return os.environ.get(REQUIRE_DATA, "").strip() not in ("", "0")


def _where() -> str:
    root = data_root()
    state = "not found" if not root.is_dir() else "incomplete"
    return f"shared data {state} at {root.resolve()} (set SWVP_DATA=/path/to/shared/data)"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or not isinstance(report.longrepr, tuple):
        return
    file, line, reason = report.longrepr
    if item.get_closest_marker("data") is None and not _DATA_REASON.search(reason):
        return
    _data_skips.append(item.nodeid)
    if data_required():
        report.outcome = "failed"
        report.longrepr = f"{REQUIRE_DATA} is set and this test's data is missing: {reason}; {_where()}"
    else:
        report.longrepr = (file, line, f"{reason}: {_where()}")


def pytest_terminal_summary(terminalreporter):
    if _data_skips and not data_required():
        terminalreporter.write_line(
            f"{len(_data_skips)} tests skipped for want of the shared data: {_where()}; "
            f"{REQUIRE_DATA}=1 makes that a failure (as .ci/run does)", yellow=True, bold=True)
