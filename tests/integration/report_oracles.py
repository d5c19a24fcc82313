"""The consumers' own validators, applied to every report the integration
tests make gpugate write (conftest.run_gpugate calls check_reports):
- JSON: checks/report.schema.json with Debian's python3-jsonschema;
- JUnit: `xmllint --schema tests/schemas/junit-10.xsd`, the Jenkins xUnit
  plugin's schema (jenkinsci/xunit-plugin,
  src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd,
  commit 8c515de2804b3fd591a3b0f1ff8908a1b1a41887)."""
import json
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
JSON_SCHEMA = os.path.join(REPO, "checks", "report.schema.json")
JUNIT_XSD = os.path.join(REPO, "tests", "schemas", "junit-10.xsd")

_validator = None


def json_validator():
    global _validator
    if _validator is None:
        import jsonschema  # Debian python3-jsonschema (.ci/install-deps)
        with open(JSON_SCHEMA) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        _validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    return _validator


def validate_json_text(text, where):
    doc = json.loads(text)
    errors = sorted(json_validator().iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, f"{where}: not a valid gpugate/v1 report: " + "; ".join(
        f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5])
    return doc


def finding_texts(check):
    """The texts of a check's findings ({code, status, text} each), in order."""
    return [f["text"] for f in check.get("findings", [])]


def finding_codes(check):
    """The stable codes of a check's findings, in order: what tests match."""
    return [f["code"] for f in check.get("findings", [])]


def validate_junit_file(path):
    p = subprocess.run(["xmllint", "--noout", "--schema", JUNIT_XSD, path],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, f"{path}: fails junit-10.xsd: {p.stderr}"


def validate_junit_text(text, where):
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False, encoding="utf-8",
                                     errors="surrogateescape") as f:
        f.write(text)
    try:
        validate_junit_file(f.name)
    finally:
        os.unlink(f.name)


def _reports(args):
    """(format, path) of every --report, and the --format for stdout."""
    fmt, files = "text", []
    args = list(args)
    for i, a in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else None
        if a == "--format" and nxt:
            fmt = nxt
        elif a.startswith("--format="):
            fmt = a.split("=", 1)[1]
        elif a == "--report" and nxt and ":" in nxt:
            files.append(tuple(nxt.split(":", 1)))
    return fmt, files


def check_reports(args, rc, out):
    """Validates what a `gpugate check` run wrote, when it ran to a verdict."""
    if rc not in (0, 1) or (args and args[0] not in ("check",) and not str(args[0]).startswith("-")):
        return
    fmt, files = _reports(args)
    if fmt == "json" and out.strip():
        validate_json_text(out, "stdout")
    if fmt == "junit" and out.strip():
        validate_junit_text(out, "stdout")
    for f, path in files:
        if path in ("-", "/dev/stdout") or not os.path.isfile(path):
            continue
        if f == "json":
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                validate_json_text(fh.read(), path)
        elif f == "junit":
            validate_junit_file(path)
