"""Loopback server for tests/bench/fetch.sh: the hub protocol (revision API,
tree listing, HEAD resolve with X-Repo-Commit, ETag and size) over files on
disk, bodies sent with sendfile so that the server is not what the benchmark
measures. Every file is an LFS file (its ETag a sha256), as model shards are."""
import hashlib
import http.server
import json
import os
import sys

ROOT = sys.argv[1]
COMMIT = "b" * 40
FILES = sorted(os.listdir(ROOT))
ETAGS = {}
for name in FILES:
    h = hashlib.sha256()
    with open(os.path.join(ROOT, name), "rb") as f:
        for chunk in iter(lambda: f.read(1 << 24), b""):
            h.update(chunk)
    ETAGS[name] = h.hexdigest()


def tree_entry(name):
    """The hub's /tree entry of an LFS file: oid is the git id of its pointer."""
    size = os.path.getsize(os.path.join(ROOT, name))
    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n" % (ETAGS[name].encode(), size)
    oid = hashlib.sha1(b"blob %d\0" % len(pointer) + pointer).hexdigest()
    return {"type": "file", "oid": oid, "size": size, "path": name,
            "lfs": {"oid": ETAGS[name], "size": size, "pointerSize": len(pointer)}}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_HEAD(self):
        self.answer(False)

    def do_GET(self):
        self.answer(True)

    def answer(self, body):
        path = self.path.split("?")[0]
        if path.startswith(("/api/models/bench/model/revision/", "/api/models/bench/model/tree/")):
            if "/tree/" in path:
                data = json.dumps([tree_entry(n) for n in FILES]).encode()
            else:
                data = json.dumps({"sha": COMMIT, "siblings": [{"rfilename": n} for n in FILES]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if body:
                self.wfile.write(data)
            return
        name = path.rsplit("/", 1)[-1]
        if name not in ETAGS:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        full = os.path.join(ROOT, name)
        size = os.path.getsize(full)
        self.send_response(200)
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("ETag", '"%s"' % ETAGS[name])
        self.send_header("Content-Length", str(size))
        self.end_headers()
        if not body:
            return
        self.wfile.flush()
        with open(full, "rb") as f:
            off = 0
            while off < size:
                n = os.sendfile(self.connection.fileno(), f.fileno(), off, size - off)
                if n == 0:
                    break
                off += n


http.server.ThreadingHTTPServer.request_queue_size = 64  # 8 connections at once, never a dropped SYN
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
