"""gpugate hf fetch against a hub that lies (issue 26, item 3), on the
stand-in of provision_hub.py (127.0.0.1, closed after each test): a tree
listing whose next page is itself, the same cursor again, or endless; a
Retry-After on the API and on the CDN, beyond the time left; a refused
connection and a failed name lookup; file names made to forge lines."""
import re
import socket
import subprocess
import time

import pytest

from provision_hub import Repo
from test_provision_hf import COMMIT, env, fetch_cmd, model, run  # noqa: F401 (env is a fixture)


def tree_requests(hub):
    return [x for x in hub.log if x[0] == "GET" and "/tree/" in x[2]]


@pytest.mark.parametrize("loop", ["self", "cursor"])
def test_a_page_chain_that_loops_ends_the_listing(hub, env, tmp_path, loop):
    model(hub)
    hub.tree_loop = loop
    t0 = time.monotonic()
    r = run(["org/tiny", "--timeout", "30"], env, timeout=60)
    seconds = time.monotonic() - t0
    assert r.returncode == 0, r.stderr  # the files are fetched; only the listing is refused
    assert "the hub's pages loop" in r.stderr, r.stderr
    # the first page has no cursor: the stand-in's second page names cursor 0, its third again
    want = "page 2 repeats page 1" if loop == "self" else "page 3 repeats the cursor of page 2 (0)"
    assert want in r.stderr, r.stderr
    assert len(tree_requests(hub)) == (1 if loop == "self" else 2), tree_requests(hub)
    assert not (tmp_path / "home/hub/models--org--tiny/trees").exists()
    assert seconds < 15, seconds


def test_an_endless_page_chain_stops_at_the_page_cap(hub, env, tmp_path):
    model(hub)
    hub.tree_endless = 1
    r = run(["org/tiny", "--timeout", "120"], env, timeout=180)
    assert r.returncode == 0, r.stderr
    assert "more than 2000 pages (the most this reader takes)" in r.stderr, r.stderr[-2000:]
    assert len(tree_requests(hub)) == 2000
    assert not (tmp_path / "home/hub/models--org--tiny/trees").exists()


def test_an_endless_listing_stops_at_the_entry_cap(hub, env, tmp_path):
    model(hub)
    hub.tree_endless = 50_000
    r = run(["org/tiny", "--timeout", "300"], env, timeout=400)
    assert r.returncode == 0, r.stderr
    assert "more than 1000000 entries in 21 pages" in r.stderr, r.stderr[-2000:]
    assert len(tree_requests(hub)) == 21


def test_retry_after_on_the_api_is_honoured(hub, env, tmp_path):
    model(hub)
    hub.api_retry_after = [(429, "2")]
    t0 = time.monotonic()
    r = run(["org/tiny"], env)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t0 >= 2, r.stderr
    assert "HTTP 429 (rate limited) (Retry-After: 2 s); retrying in 2.0 s" in r.stderr, r.stderr


@pytest.mark.parametrize("where", ["api", "cdn"])
def test_retry_after_beyond_the_time_left_says_what_the_server_asked(hub, env, tmp_path, where):
    repo = model(hub)
    if where == "api":
        hub.api_retry_after = [(503, "99999")]
    else:
        hub.faults[repo.etag("weights/model.safetensors")] = {"retry_after": "99999"}
    t0 = time.monotonic()
    r = run(["org/tiny", "--timeout", "20"], env)
    assert r.returncode == 1, r.stderr
    assert time.monotonic() - t0 < 10, r.stderr
    assert "the server asked to retry after 99999 s (Retry-After), more than the" in r.stderr, r.stderr
    assert "left of the overall timeout (--timeout)" in r.stderr, r.stderr


def test_a_long_retry_after_is_capped_and_said(hub, env, tmp_path):
    """Retry-After as an HTTP-date an hour ahead, with 6 h left: waited at most 300 s (the cap),
    and said; the test only reads the message, then ends the fetch by its --timeout."""
    model(hub)
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 3600))
    hub.api_retry_after = [(503, when)]
    # the capped wait itself (300 s) is too long for a test: the message is read off a fetch that
    # is stopped (by its pid) right after it prints it
    p = subprocess.Popen(fetch_cmd() + ["org/tiny"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
    finally:
        p.kill()
        p.wait()
    # the date has whole seconds and the fetch starts a moment later: 3600 s less that moment
    asked = re.search(r"the server asked for (\d+) s", line)
    assert asked and 3540 <= int(asked.group(1)) <= 3600 and "waiting at most 300 s" in line, line
    assert "retrying in 300.0 s" in line, line


def test_connection_refused_fails_fast_with_the_reason(env):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))  # bound, never listening: connect is refused
    port = s.getsockname()[1]
    try:
        env["HF_ENDPOINT"] = "http://127.0.0.1:%d" % port
        t0 = time.monotonic()
        r = run(["org/tiny"], env)
        seconds = time.monotonic() - t0
    finally:
        s.close()
    assert r.returncode == 1, r.stderr
    assert r.stderr.count("retrying") <= 1, r.stderr
    assert "onnect" in r.stderr, r.stderr  # curl: "Couldn't connect to server" / "Connection refused"
    assert seconds < 5, (seconds, r.stderr)


def test_failed_name_lookup_fails_fast_with_the_reason(env):
    env["HF_ENDPOINT"] = "http://gpugate-test-host.invalid"  # RFC 6761: never resolves
    r = run(["org/tiny"], env, timeout=120)
    assert r.returncode == 1, r.stderr
    assert r.stderr.count("retrying") <= 1, r.stderr
    assert "resolve" in r.stderr.lower(), r.stderr


def test_hub_file_names_cannot_forge_lines_on_stderr(hub, env, tmp_path):
    evil = "a\x1b[2J\x07b\nFAIL forged\u202e.txt"
    hub.add(Repo("org/evil", COMMIT, {"ok.txt": b"ok", evil: b"x"}))
    r = run(["org/evil"], env)
    assert r.returncode == 1, r.stderr
    for c in ("\x1b", "\x07", "\u202e"):
        assert c not in r.stderr, repr(r.stderr)
    assert not any(line.startswith("FAIL forged") for line in r.stderr.splitlines()), r.stderr
    assert "\\n" in r.stderr and "\\x1b" in r.stderr, r.stderr
