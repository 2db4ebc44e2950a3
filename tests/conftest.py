"""Shared by ``tests/core`` and ``tests/blender``: the count of tests skipped for want of real capture.

Tests that need real motion capture skip with one reason
(:data:`real_capture.REASON`); the summary of a run says how many did and
where the capture comes from, so that a clone without the data passes and
says why so many tests did not run.
"""

import real_capture


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = terminalreporter.stats.get("skipped", [])
    without = [report for report in skipped if real_capture.PREFIX in _skip_reason(report)]
    if without:
        terminalreporter.write_sep("-", "real motion capture", yellow=True)
        terminalreporter.write_line(
            f"{len(without)} of {len(skipped)} skipped tests need the real motion capture at "
            f"{real_capture.MOCAP}: {real_capture.SOURCE}; the README's 'Data for tests and benchmarks' "
            "says where to put it")


def _skip_reason(report) -> str:
    # a skip's longrepr is (file, line, "Skipped: reason"); anything else is stringified
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)
