"""A stand-in for the Hugging Face hub and its CDN, for gpugate's provisioning
tests. The hub answers on 127.0.0.1:PORT and redirects LFS files to a "CDN"
at localhost:PORT: another host name, so the Authorization header must not
follow. Faults (503, slow, corrupt, dropped, a drip feed, a forged ETag) are
set per file. The tree listing (/api/{type}s/{repo}/tree/{rev}) is paged
with Link: rel="next" as the hub pages it, tree_page entries a page.
A lying hub (issue 26): tree_loop makes the next page the same page
("self") or the same cursor under another URL ("cursor"); tree_endless
sends that many new entries a page, with a new cursor, forever;
api_retry_after answers the API's revision call with (status, Retry-After)
while the list lasts; a file's fault "retry_after" answers its CDN GET
with 503 and that Retry-After."""
import hashlib
import http.server
import json
import threading
import time

TOKEN = "hf_standin_secret_token_1234"


def git_blob_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Repo:
    def __init__(self, repo_id, commit, files, lfs=(), gated=False, kind="model"):
        self.repo_id, self.commit, self.files = repo_id, commit, dict(files)
        self.lfs, self.gated, self.kind = set(lfs), gated, kind

    def etag(self, path):
        data = self.files[path]
        return hashlib.sha256(data).hexdigest() if path in self.lfs else git_blob_sha1(data)

    def pointer(self, path):
        """The Git LFS pointer file the repo's git tree holds for an LFS file."""
        data = self.files[path]
        return b"version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n" % (
            hashlib.sha256(data).hexdigest().encode(), len(data))

    def blob_id(self, path):
        """The git blob id of the file in the repo's tree: of its pointer for LFS."""
        return git_blob_sha1(self.pointer(path) if path in self.lfs else self.files[path])

    def tree(self):
        """The recursive tree listing as the hub's /tree answers it (folders too)."""
        out, folders = [], set()
        for p in sorted(self.files):
            parts = p.split("/")
            for i in range(1, len(parts)):
                folders.add("/".join(parts[:i]))
        for d in sorted(folders):
            out.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": d})
        for p in sorted(self.files):
            e = {"type": "file", "oid": self.blob_id(p), "size": len(self.files[p]), "path": p}
            if p in self.lfs:
                e["lfs"] = {"oid": self.etag(p), "size": len(self.files[p]),
                            "pointerSize": len(self.pointer(p))}
            out.append(e)
        return out


class Hub:
    def __init__(self):
        self.repos = {}          # (kind, repo_id) -> Repo
        self.renamed = {}        # old id -> new id
        self.faults = {}         # sha256 or path -> {"503": n, "slow": s, "corrupt": True, "drop": n}
        self.static = {}         # URL path -> bytes (for .deb files)
        self.log = []            # (method, host, path, authorization)
        self.tree_page = 2       # entries per page of the tree listing
        self.tree_edit = None    # a function that may change the tree listing
        self.tree_next_base = None  # where rel="next" points (None: this hub)
        self.tree_loop = None    # "self" or "cursor": the next page is this one again
        self.tree_endless = 0    # entries a page of an endless listing (0: the real one)
        self.api_retry_after = []  # [(status, Retry-After value)], one per revision call
        self.head_delay = 0      # seconds each HEAD .../resolve/ takes
        self.heads_at_once = 0   # the most HEADs answered at the same time
        self.heads_now = 0
        self.lock = threading.Lock()
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go in two writes: no 40 ms delayed-ACK stall

            def log_message(self, *a):
                pass

            def do_HEAD(self):
                hub.handle(self, head=True)

            def do_GET(self):
                hub.handle(self, head=False)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.cdn = "http://localhost:%d" % self.port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def add(self, repo):
        self.repos[(repo.kind, repo.repo_id)] = repo
        return repo

    # -- answers --------------------------------------------------------
    def reply(self, h, code, headers=(), body=b"", head=False):
        h.send_response(code)
        for k, v in headers:
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if not head:
            h.wfile.write(body)

    def error(self, h, code, error_code, head, commit=None):
        headers = [("X-Error-Code", error_code), ("X-Error-Message", error_code + " (stand-in)")]
        if commit:
            headers.append(("X-Repo-Commit", commit))
        self.reply(h, code, headers, b'{"error": "%s"}' % error_code.encode(), head)

    def fault(self, key, name):
        with self.lock:
            f = self.faults.get(key, {})
            if f.get(name, 0) > 0:
                if isinstance(f[name], int) and not isinstance(f[name], bool):
                    f[name] -= 1
                return True
        return False

    def repo_at(self, h, kind, repo_id, rev, head):
        """The repo when it exists, the caller may read it and rev names its
        commit; else None, with the hub's error already answered."""
        repo = self.repos.get((kind, repo_id))
        if not repo:
            self.error(h, 404, "RepositoryNotFound", head)
        elif repo.gated and h.headers.get("Authorization") != "Bearer " + TOKEN:
            self.error(h, 401, "GatedRepo", head)
        elif rev not in ("main", repo.commit):
            self.error(h, 404, "RevisionNotFound", head)
        else:
            return repo
        return None

    def handle(self, h, head):
        path = h.path.split("?")[0]
        from urllib.parse import unquote
        with self.lock:
            self.log.append((h.command, h.headers.get("Host", ""), path, h.headers.get("Authorization")))
        if path in self.static:
            return self.serve_bytes(h, self.static[path], path, head)
        if path.startswith("/cdn/"):
            sha = path[5:]
            for repo in self.repos.values():
                for p, data in repo.files.items():
                    if p in repo.lfs and hashlib.sha256(data).hexdigest() == sha:
                        return self.serve_bytes(h, data, sha, head)
            return self.reply(h, 404, head=head)
        parts = path.lstrip("/").split("/")
        if path.startswith("/api/") and "tree" in parts:
            return self.tree_answer(h, parts, head)
        if path.startswith("/api/"):
            # /api/{kind}s/{ns}/{name}/revision/{rev}
            kind = parts[1][:-1]
            idx = parts.index("revision")
            repo_id, rev = "/".join(parts[2:idx]), unquote(parts[idx + 1])
            repo = self.repo_at(h, kind, repo_id, rev, head)
            if not repo:
                return
            with self.lock:
                busy = self.api_retry_after.pop(0) if self.api_retry_after else None
            if busy:
                return self.reply(h, busy[0], [("Retry-After", busy[1])], b"busy", head)
            body = json.dumps({"id": repo_id, "sha": repo.commit,
                               "siblings": [{"rfilename": p} for p in repo.files]}).encode()
            return self.reply(h, 200, [("Content-Type", "application/json")], body, head)
        kind = "model"
        if parts[0] in ("datasets", "spaces"):
            kind, parts = parts[0][:-1], parts[1:]
        if "resolve" not in parts:
            return self.reply(h, 404, head=head)
        idx = parts.index("resolve")
        repo_id = "/".join(parts[:idx])
        rev, fpath = unquote(parts[idx + 1]), unquote("/".join(parts[idx + 2:]))
        if repo_id in self.renamed:
            new = "/" + self.renamed[repo_id] + "/" + "/".join(parts[idx:])
            return self.reply(h, 307, [("Location", new)], head=head)
        repo = self.repo_at(h, kind, repo_id, rev, head)
        if not repo:
            return
        if fpath not in repo.files:
            return self.error(h, 404, "EntryNotFound", head, commit=repo.commit)
        if self.fault(fpath, "head503") and head:
            return self.reply(h, 503, head=head)
        if head and self.head_delay:
            with self.lock:
                self.heads_now += 1
                self.heads_at_once = max(self.heads_at_once, self.heads_now)
            time.sleep(self.head_delay)
            with self.lock:
                self.heads_now -= 1
        data = repo.files[fpath]
        etag = self.faults.get(fpath, {}).get("etag", repo.etag(fpath))
        if fpath in repo.lfs:
            headers = [("X-Repo-Commit", repo.commit), ("X-Linked-Etag", '"%s"' % etag),
                       ("X-Linked-Size", str(len(data) + self.faults.get(fpath, {}).get("size_delta", 0))),
                       ("ETag", 'W/"not-the-blob-id"'),
                       ("Location", "%s/cdn/%s?sig=abc" % (self.cdn, etag))]
            return self.reply(h, 302, headers, b"redirecting", head)
        headers = [("X-Repo-Commit", repo.commit), ("ETag", '"%s"' % etag)]
        return self.serve_bytes(h, data, fpath, head, headers)

    def tree_answer(self, h, parts, head):
        """/api/{kind}s/{ns}/{name}/tree/{rev}?recursive=true&expand=false[&cursor=N]"""
        from urllib.parse import parse_qs, unquote, urlsplit
        kind = parts[1][:-1]
        idx = parts.index("tree")
        repo_id, rev = "/".join(parts[2:idx]), unquote(parts[idx + 1])
        repo = self.repo_at(h, kind, repo_id, rev, head)
        if not repo:
            return
        query = parse_qs(urlsplit(h.path).query)
        if query.get("recursive") != ["true"]:
            return self.reply(h, 400, head=head)
        start = int(query.get("cursor", ["0"])[0])
        headers = [("Content-Type", "application/json")]
        if self.tree_endless:  # new entries and a new cursor on every page, forever
            body = json.dumps([{"type": "file", "oid": "%040x" % (start + i), "size": 1,
                                "path": "endless/%09d.bin" % (start + i)} for i in range(self.tree_endless)])
            nxt = "%s/api/%ss/%s/tree/%s?recursive=true&expand=false&cursor=%d" % (
                self.url, kind, repo_id, parts[idx + 1], start + self.tree_endless)
            headers.append(("Link", '<%s>; rel="next"' % nxt))
            return self.reply(h, 200, headers, body.encode(), head)
        entries = repo.tree()
        if self.tree_edit:
            entries = self.tree_edit(entries)
        page = entries[start:start + self.tree_page]
        if self.tree_loop == "self":  # this very page again
            headers.append(("Link", '<%s%s>; rel="next"' % (self.url, h.path)))
        elif self.tree_loop == "cursor":  # the same cursor, under a URL never seen before
            with self.lock:
                self.loop_count = getattr(self, "loop_count", 0) + 1
            nxt = "%s/api/%ss/%s/tree/%s?recursive=true&expand=false&cursor=%d&n=%d" % (
                self.url, kind, repo_id, parts[idx + 1], start, self.loop_count)
            headers.append(("Link", '<%s>; rel="next"' % nxt))
        elif start + self.tree_page < len(entries):
            nxt = "%s/api/%ss/%s/tree/%s?recursive=true&expand=false&cursor=%d" % (
                self.tree_next_base or self.url, kind, repo_id, parts[idx + 1], start + self.tree_page)
            headers.append(("Link", '<%s>; rel="next"' % nxt))
        return self.reply(h, 200, headers, json.dumps(page).encode(), head)

    def serve_bytes(self, h, data, key, head, headers=()):
        if not head and self.fault(key, "503"):
            return self.reply(h, 503, [("Retry-After", "0")], b"busy", head)
        asked = self.faults.get(key, {}).get("retry_after")
        if not head and asked is not None:
            return self.reply(h, 503, [("Retry-After", asked)], b"busy", head)
        start = 0
        rng = h.headers.get("Range")
        code = 200
        extra = list(headers)
        if rng and rng.startswith("bytes=") and not head:
            start = int(rng[6:].split("-")[0])
            if start >= len(data):
                return self.reply(h, 416, head=head)
            code = 206
            extra.append(("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data))))
        body = data[start:]
        if self.faults.get(key, {}).get("corrupt") and body:
            body = bytes([body[0] ^ 0xFF]) + body[1:]
        h.send_response(code)
        for k, v in extra:
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if head:
            return
        if self.fault(key, "drop"):
            h.wfile.write(body[: len(body) // 2])
            h.wfile.flush()
            h.close_connection = True
            import socket
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        drip = self.faults.get(key, {}).get("drip", 0)
        if drip:  # `drip` bytes a second, one write each 1/drip s
            try:
                for i in range(len(body)):
                    time.sleep(1.0 / drip)
                    h.wfile.write(body[i:i + 1])
                    h.wfile.flush()
            except OSError:
                pass  # the client gave up: what the test wants
            return
        slow = self.faults.get(key, {}).get("slow", 0)
        chunk = 1 << 20
        for i in range(0, len(body), chunk):
            if slow:
                time.sleep(slow)
            h.wfile.write(body[i:i + chunk])
