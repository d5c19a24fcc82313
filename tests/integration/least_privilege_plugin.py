"""pytest plugin for test_least_privilege.py's inner runs: opens each test's
tmp_path (and its parents below the base temp folder) to other users, so
that gpugate running as uid 65534 can read the fixtures the test writes."""
import os

import pytest


@pytest.fixture(autouse=True)
def _open_tmp_path(request, tmp_path_factory):
    if "tmp_path" not in request.fixturenames:
        yield
        return
    tmp = request.getfixturevalue("tmp_path")
    base = tmp_path_factory.getbasetemp()
    p = tmp
    while True:
        os.chmod(p, 0o755)
        if p == base or p.parent == p:
            break
        p = p.parent
    yield
