"""Under CI=true no test skips for what the project installs (issue 21):
conftest.py fails a skip unless harness says it is legitimate. Runs pytest
on a small module of skips with this directory's conftest.py, with and
without CI=true, and reads each test's outcome from its JUnit report. No
broker."""

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

CASES = '''
import pytest
import harness

def test_bare_skip():
    pytest.skip("no reason given")

def test_importorskip():
    pytest.importorskip("skiff_no_such_module")

@pytest.mark.skipif(True, reason="a skipif")
def test_skipif():
    pass

def test_require_module():
    harness.require_module("skiff_no_such_module", "python3-skiff-nothing")

def test_require_tool():
    harness.require_tool("skiff-no-such-tool", "skiff-nothing")

def test_require_tool_present():
    assert harness.require_tool("sh", "dash")

def test_long_profile():
    harness.skip_long_profile("hours")

def test_not_here():
    harness.skip_not_here("no root")

def test_by_chance():
    harness.skip_by_chance("the inode was not reused")

@pytest.mark.xfail(reason="expected", strict=True)
def test_xfail():
    assert False
'''

MODULE_SKIPPED = '''
import pytest
pytest.importorskip("skiff_no_such_module")

def test_never_runs():
    pass
'''


def outcomes(tmp_path, ci):
    """{test name: (outcome, message)} of a run of CASES and MODULE_SKIPPED."""
    d = tmp_path / ("ci" if ci else "dev")
    d.mkdir()
    (d / "test_cases.py").write_text(CASES)
    (d / "test_module_skipped.py").write_text(MODULE_SKIPPED)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    if ci:
        env["CI"] = "true"
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    xml = d / "report.xml"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "conftest", "--rootdir", str(d), "-c", os.devnull,
                        "--continue-on-collection-errors", f"--junitxml={xml}",
                        "test_cases.py", "test_module_skipped.py"],
                       cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=120)
    assert xml.exists(), r.stdout
    res = {}
    for case in ET.parse(xml).iter("testcase"):
        name = case.get("name") or case.get("classname")
        kids = [k for k in case if k.tag in ("failure", "error", "skipped")]
        if not kids:
            res[name] = ("passed", "")
        else:
            res[name] = (kids[0].tag, (kids[0].get("message") or "") + (kids[0].text or ""))
    return res, r.stdout


def test_a_ci_run_fails_skips_for_what_the_project_installs(tmp_path):
    res, out = outcomes(tmp_path, ci=True)
    # A skip in the test's call is a failure, one in its setup (skipif) an error.
    for name in ("test_bare_skip", "test_importorskip", "test_skipif"):
        assert res[name][0] in ("failure", "error"), (name, res[name], out)
        assert "a CI run does not accept" in res[name][1], (name, res[name])
    for name, package in (("test_require_module", "python3-skiff-nothing"),
                          ("test_require_tool", "skiff-nothing")):
        assert res[name][0] == "failure", (name, res[name], out)
        assert f"scripts/install-deps.sh installs {package}" in res[name][1], res[name]
    for name in ("test_long_profile", "test_not_here", "test_by_chance", "test_xfail"):
        assert res[name][0] == "skipped", (name, res[name], out)
    assert res["test_require_tool_present"][0] == "passed", out
    # A module that skips itself whole (importorskip at import) is an error
    # (which, as an import error would, stops a run's collection).
    broken = [n for n, (o, _) in res.items() if "module_skipped" in n]
    assert broken and all(res[n][0] == "error" for n in broken), (res, out)


def test_elsewhere_the_same_skips_are_skips(tmp_path):
    res, out = outcomes(tmp_path, ci=False)
    for name in ("test_bare_skip", "test_importorskip", "test_skipif", "test_require_module",
                 "test_require_tool", "test_long_profile", "test_not_here", "test_by_chance",
                 "test_xfail"):
        assert res[name][0] == "skipped", (name, res[name], out)
    assert "scripts/install-deps.sh installs python3-skiff-nothing" in \
        res["test_require_module"][1]
    assert res["test_require_tool_present"][0] == "passed", out
    assert not [n for n in res if "module_skipped" in n and res[n][0] != "skipped"], res


@pytest.mark.parametrize("value, ci", [("true", True), ("1", True), ("TRUE", True),
                                       ("false", False), ("0", False), ("", False)])
def test_what_counts_as_ci(monkeypatch, value, ci):
    import harness
    monkeypatch.setenv("CI", value)
    assert harness.in_ci() is ci
