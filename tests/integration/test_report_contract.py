"""checks/report.schema.json is the JSON report's contract (issue 27): each
check's `details` is described per check id and unknown keys are refused, and
each finding is {code, status, text} with a code the schema lists. Every
report the integration tests make is validated against it
(report_oracles.check_reports); these tests show that the validation bites."""
import copy
import json

import pytest

from conftest import dpkg_root, finding_codes, run_gpugate, spec_file, stanza
from report_oracles import json_validator


@pytest.fixture
def report(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1")])
    spec = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\n  - libigc2\n")
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "json")
    assert r.rc == 1, r
    doc = json.loads(r.out)
    assert not list(json_validator().iter_errors(doc))
    return doc


def errors(doc):
    return [e.message for e in json_validator().iter_errors(doc)]


def packages_check(doc):
    return next(c for c in doc["checks"] if c["id"] == "packages.installed")


def test_findings_have_codes(report):
    c = packages_check(report)
    assert finding_codes(c) == ["packages.installed.unsatisfied"], c
    assert c["findings"][0]["status"] == "fail" and "libigc2" in c["findings"][0]["text"]


@pytest.mark.parametrize("change,why", [
    (lambda c: c["details"].update(relation_list=[]), "'relation_list' was unexpected"),
    (lambda c: c["details"].update(findings=["a string"]), "'findings' was unexpected"),
    (lambda c: c["details"]["relations"][0].update(held=True), "'held' was unexpected"),
    (lambda c: c["details"]["relations"][0]["installed"][0].pop("version"), "'version' is a required property"),
    (lambda c: c["findings"][0].update(code="packages.installed.gone"), "is not one of"),
    (lambda c: c["findings"][0].pop("code"), "'code' is a required property"),
    (lambda c: c.update(id="packages.new_check"), "has too many properties"),  # an unknown check carries no details
])
def test_schema_refuses(report, change, why):
    doc = copy.deepcopy(report)
    change(packages_check(doc))
    found = errors(doc)
    assert any(why in e for e in found), found
