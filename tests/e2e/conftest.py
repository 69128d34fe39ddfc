"""Fixtures for skiff's end-to-end tests (helpers live in harness.py).

kafka          session-wide broker (SKIFF_BOOTSTRAP: an external one instead)
kafka_private  a broker of the test's own, prepared but not started: for outages
kafka_late     the session broker behind a door that opens at .start(): for a
               broker that is down when skiff starts and comes up later
topic          a fresh topic name

Tests marked @pytest.mark.serial measure a skiff's CPU or the time it takes:
scripts/test.sh runs them after the others, alone (the others run in two
pytest-xdist workers, each with its own session broker).

Under CI=true (.ci/run) a skip fails the test unless harness says it is
legitimate (the long profile, what this machine cannot do, a chance the file
system did not give): a test does not skip in CI for a tool or module the
project installs (harness.require_tool, require_module).

Every test has a time limit (ini skiff_test_timeout, env SKIFF_TEST_TIMEOUT, or
@pytest.mark.skiff_timeout(seconds)); every skiff a test started is killed at
its teardown, and a failing test shows the tail of each skiff's log.
"""

import os
import signal

import pytest

import harness

# Every skiff a test runs, through harness or directly (--check, status, the
# offsets CLI), without the sanitizer runtime's bogus dynamic-TLS guess
# (harness.without_dtls_guess says why).
os.environ["ASAN_OPTIONS"] = harness.without_dtls_guess(
    os.environ.get("ASAN_OPTIONS", "abort_on_error=0:detect_leaks=1"))


def pytest_addoption(parser):
    parser.addini("skiff_test_timeout", "seconds a test may take (0: no limit)", default="300")


def pytest_configure(config):
    config.addinivalue_line("markers",
                            "skiff_timeout(seconds): time limit of this test, instead of "
                            "skiff_test_timeout")
    config.addinivalue_line("markers",
                            "serial: measures CPU or elapsed time; scripts/test.sh runs it "
                            "apart, after the tests it runs in parallel")


@pytest.fixture(scope="session")
def kafka(tmp_path_factory):
    """The session's broker: .bootstrap, .dir, .stop(), .start(), .kill(),
    .pause(), .resume(). A test that stops or pauses it must start or resume it
    again; kafka_private is the better choice for outage tests."""
    external = os.environ.get("SKIFF_BOOTSTRAP")
    if external:
        yield harness.Broker(bootstrap=external)
        return
    broker = harness.Broker(tmp_path_factory.mktemp("kafka"))
    broker.start()
    yield broker
    broker.kill()  # its data goes with the session: no clean shutdown to wait for


@pytest.fixture
def kafka_private(tmp_path):
    """A broker for this test alone, prepared (its bootstrap address is fixed)
    but not started: call .start() when the test wants it up. Killed at teardown."""
    broker = harness.Broker(tmp_path / "kafka")
    broker.prepare()
    yield broker
    broker.kill()


@pytest.fixture
def kafka_late(kafka):
    """The session broker as a broker that is down until .start() (a door in
    front of it: harness.LateBroker); .bootstrap is fixed. For tests whose
    broker only comes up late and never goes down again: no broker of their
    own to start. Closed at teardown."""
    door = harness.LateBroker(kafka)
    yield door
    door.kill()


@pytest.fixture
def topic(request):
    """A topic name of this test's own."""
    return harness.unique_topic(request.node.name[:40])


@pytest.fixture(autouse=True)
def _skiff_guard(request):
    """Time limit for the test, and no skiff left behind."""
    limit = float(os.environ.get("SKIFF_TEST_TIMEOUT") or
                  request.config.getini("skiff_test_timeout") or 0)
    mark = request.node.get_closest_marker("skiff_timeout")
    if mark and mark.args:
        limit = float(mark.args[0])

    def expired(signum, frame):
        pytest.fail(f"test exceeded its time limit of {limit:g}s", pytrace=True)

    harness._all_skiffs.clear()
    old = None
    if limit > 0:
        old = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        if limit > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        left = harness.kill_all_skiffs()
        for s in left:
            # Shown with the test's report ("Captured stdout teardown").
            print(f"--- skiff {s.args} was still running; killed. Log tail:\n{s._tail()}")


def _fail_unaccepted_skip(rep):
    """Under CI=true, a skip whose reason is not one harness.legit_skip()
    accepts becomes a failure that says so."""
    if not (rep.skipped and harness.in_ci()) or hasattr(rep, "wasxfail"):
        return
    longrepr = rep.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    reason = reason.removeprefix("Skipped: ")
    if harness.legit_skip(reason):
        return
    rep.outcome = "failed"
    rep.longrepr = (f"CI=true: skipped for a reason a CI run does not accept: {reason}\n"
                    f"(what scripts/install-deps.sh installs: harness.require_tool or "
                    f"require_module; a legitimate skip: harness.skip_long_profile, "
                    f"skip_not_here or skip_by_chance)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call" and rep.failed:
        for s in harness._all_skiffs:
            if s.proc is not None:
                rep.sections.append((f"skiff log ({s.log_file})", s._tail(60)))
    _fail_unaccepted_skip(rep)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # A module skipped as a whole (pytest.importorskip or pytest.skip at import).
    outcome = yield
    _fail_unaccepted_skip(outcome.get_result())
