"""`make lint`: the clang-format check fails on a badly formatted file and
passes on a well formatted one; cppcheck and shellcheck find nothing in the
tree (`make lint-static`, also run by `make test`)."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

needs_tools = pytest.mark.skipif(not shutil.which("clang-format"), reason="clang-format not installed")


def make(*args):
    return subprocess.run(["make", "-s", "--no-print-directory", "-C", ROOT, *args],
                          capture_output=True, text=True, timeout=120)


@needs_tools
def test_badly_formatted_file_fails(tmp_path):
    bad = tmp_path / "bad.c"
    bad.write_text("int   main( void ){return 0;}\n")
    r = make("lint-format", "LINT_C=%s" % bad)
    assert r.returncode != 0
    assert "bad.c" in r.stderr


@needs_tools
def test_well_formatted_file_passes(tmp_path):
    good = tmp_path / "good.c"
    good.write_text("int main(void)\n{\n\treturn 0;\n}\n")
    r = make("lint-format", "LINT_C=%s" % good)
    assert r.returncode == 0, r.stderr
