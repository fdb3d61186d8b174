"""Runs the jubilant suite (test_*.py beside this file) with the standard library's unittest.

pytest is not part of Debian's Python, so this small runner does what the Go side needs: one
line when a test starts and one when it ends (``=== RUN``, ``--- PASS`` / ``--- FAIL`` /
``--- ERROR`` / ``--- SKIP``, as ``go test -v`` prints them), the traceback of every failure as it
happens, a time limit per test, and a last ``JUBILANT-SUMMARY <json>`` line naming every test and
its outcome.

Usage: run.py [pattern ...]  (patterns select tests as ``python3 -m unittest -k`` does)
"""

from __future__ import annotations

import json
import logging
import os
import pathlib
import signal
import sys
import time
import traceback
import unittest

HERE = pathlib.Path(__file__).resolve().parent

# A backstop: the waits in a test fail on their own when the model stops making progress; this
# limit is there so that a hung `juju` process fails one test instead of the whole suite.
TEST_LIMIT = int(os.environ.get('JUBILANT_E2E_TEST_LIMIT', '600'))


class TestTimeLimit(Exception):
    """Raised in a test that ran longer than TEST_LIMIT."""


def _alarm(signum, frame):
    raise TestTimeLimit(f'test ran longer than {TEST_LIMIT}s')


class Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.outcomes: list[dict[str, object]] = []
        self._start = 0.0

    def startTest(self, test):
        super().startTest(test)
        print(f'=== RUN   {name(test)}', flush=True)
        self._start = time.monotonic()
        signal.alarm(TEST_LIMIT)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)

    def _end(self, test, outcome: str, detail: str = '', reason: str = '', label: str = ''):
        elapsed = time.monotonic() - self._start if self._start else 0.0
        label = label or name(test)
        print(f'--- {outcome}: {label} ({elapsed:.1f}s)', flush=True)
        if detail:
            print(indent(detail), flush=True)
        self.outcomes.append(
            {'name': label, 'outcome': outcome, 'seconds': round(elapsed, 1), 'reason': reason}
        )

    def addSuccess(self, test):
        super().addSuccess(test)
        self._end(test, 'PASS')

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._failed(test, 'FAIL', err)

    def addError(self, test, err):
        super().addError(test, err)
        self._failed(test, 'ERROR', err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._end(test, 'SKIP', reason, reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._end(test, 'PASS')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._end(test, 'FAIL', 'unexpected success', 'unexpected success')

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        # A failed subtest fails its test (which then gets no addSuccess); one that passes is
        # part of its test's PASS.
        if err is not None:
            outcome = 'FAIL' if issubclass(err[0], test.failureException) else 'ERROR'
            self._failed(test, outcome, err, f'{name(test)} {subtest._subDescription()}')

    def _failed(self, test, outcome, err, label=''):
        exc_type, exc, tb = err
        detail = ''.join(traceback.format_exception(exc_type, exc, tb))
        reason = ''.join(traceback.format_exception_only(exc_type, exc)).strip()
        self._end(test, outcome, detail, reason, label)
        # The model of a failed test, while it still exists: what its units logged last.
        on_failure = getattr(test, 'on_failure', None)
        if on_failure is not None:
            try:
                print(indent(on_failure()), flush=True)
            except Exception as e:  # the dump is a courtesy; the failure is already reported
                said = getattr(e, 'stderr', None) or str(e)
                print(indent(f'(no debug log: {said.strip()})'), flush=True)


def name(test) -> str:
    """Class.method for a test; unittest's own description for class and module fixtures."""
    if isinstance(test, unittest.TestCase) and hasattr(test, '_testMethodName'):
        return f'{type(test).__name__}.{test._testMethodName}'
    return str(test)


def tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from tests(t)
        else:
            yield t


def indent(text: str) -> str:
    return '\n'.join('    ' + line for line in text.rstrip('\n').split('\n'))


def main(patterns: list[str]) -> int:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stdout,
        format='%(asctime)s.%(msecs)03d %(name)s %(message)s',
        datefmt='%H:%M:%S',
    )
    signal.signal(signal.SIGALRM, _alarm)
    loader = unittest.TestLoader()
    if patterns:
        loader.testNamePatterns = [p if '*' in p else f'*{p}*' for p in patterns]
    suite = loader.discover(str(HERE), pattern='test_*.py', top_level_dir=str(HERE))
    # The module sets up the models of the selected groups only (setUpModule).
    os.environ['JUBILANT_E2E_CLASSES'] = ' '.join(sorted({type(t).__name__ for t in tests(suite)}))
    result = Result()
    start = time.monotonic()
    suite.run(result)
    summary = {
        'seconds': round(time.monotonic() - start, 1),
        'tests': result.outcomes,
    }
    print('JUBILANT-SUMMARY ' + json.dumps(summary), flush=True)
    failed = [o for o in result.outcomes if o['outcome'] in ('FAIL', 'ERROR')]
    return 1 if failed or not result.outcomes else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
