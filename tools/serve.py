#!/usr/bin/env python3
"""Serve the built book under a URL sub-path, the way GitHub Pages does.

    python tools/serve.py                         # _build/html at /attention-book/ on port 8000
    python tools/serve.py --port 0 --prefix /x/y/ # any free port, any sub-path

The site is published under a sub-path (https://<user>.github.io/attention-book/), so
opening _build/html/index.html from disk, or serving it at "/", can hide links that
only work at the root. This server maps <prefix><path> to <root>/<path>, a directory
to its index.html, redirects "/" to the prefix, and answers everything else with
status 404 and the body of <root>/404.html when there is one.

On start it prints exactly one line, "serving http://127.0.0.1:PORT/prefix/", and
flushes it, so a test can start it as a subprocess and read the URL from stdout.
Standard library only. SIGTERM and SIGINT shut it down cleanly.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = ROOT / "_build" / "html"
DEFAULT_PREFIX = "/attention-book/"


def normalize_prefix(prefix: str) -> str:
    """'/x/y', 'x/y/', '/x/y/' -> '/x/y/'; '' or '/' -> '/'."""
    parts = [p for p in prefix.strip().split("/") if p]
    return "/" + "".join(p + "/" for p in parts)


class Handler(SimpleHTTPRequestHandler):
    """Static files under a prefix; GitHub-Pages-like 404s; quiet unless verbose."""

    prefix = "/"
    verbose = False

    # Make sure the types the book uses are right whatever the host's mime.types says.
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".css": "text/css",
        ".svg": "image/svg+xml",
        ".json": "application/json",
        ".woff": "font/woff",
        ".woff2": "font/woff2",
        ".ttf": "font/ttf",
        ".ipynb": "application/json",
        ".wasm": "application/wasm",
    }

    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        if self.verbose:
            super().log_message(format, *args)

    # --- routing --------------------------------------------------------------

    def _route(self) -> str | None:
        """The filesystem path for this request, "" for a redirect, None for a 404."""
        path = urlsplit(self.path).path
        if path == "/" and self.prefix != "/":
            return ""
        bare = self.prefix.rstrip("/")
        if bare and path == bare:
            return ""  # "/attention-book" -> "/attention-book/"
        if not path.startswith(self.prefix):
            return None
        rel = unquote(path[len(self.prefix):])
        # Refuse anything that would climb out of the served directory.
        parts = []
        for part in rel.split("/"):
            if part in ("", "."):
                continue
            if part == ".." or "\\" in part or "\0" in part:
                return None
            parts.append(part)
        full = os.path.join(self.directory, *parts)
        if os.path.isdir(full):
            if not path.endswith("/"):
                return ""  # a directory without its slash: redirect like any web server
            full = os.path.join(full, "index.html")
        return full if os.path.isfile(full) else None

    def send_head(self):
        target = self._route()
        if target == "":
            split = urlsplit(self.path)
            path = split.path
            location = self.prefix if path in ("/", self.prefix.rstrip("/")) else path + "/"
            if split.query:
                location += "?" + split.query
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if target is None:
            return self._not_found()
        ctype = self.guess_type(target)
        try:
            f = open(target, "rb")
        except OSError:
            return self._not_found()
        try:
            fs = os.fstat(f.fileno())
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(fs.st_size))
            self.send_header("Last-Modified", self.date_time_string(fs.st_mtime))
            # Like GitHub Pages: short-lived caching; tests use fresh browser contexts.
            self.send_header("Cache-Control", "max-age=600")
            self.end_headers()
            return f
        except Exception:
            f.close()
            raise

    def _not_found(self):
        page = os.path.join(self.directory, "404.html")
        try:
            with open(page, "rb") as fh:
                body = fh.read()
            ctype = "text/html; charset=utf-8"
        except OSError:
            body = b"404 Not Found\n"
            ctype = "text/plain; charset=utf-8"
        self.send_response(HTTPStatus.NOT_FOUND)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return None

    # Any method other than GET/HEAD: not allowed, quietly.
    def do_POST(self):
        self.send_error(HTTPStatus.METHOD_NOT_ALLOWED)

    do_PUT = do_DELETE = do_PATCH = do_POST


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # Browsers drop connections all the time (aborted loads); that is not an error.
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", nargs="?", default=str(DEFAULT_DIR),
                    help="directory to serve (default: _build/html of this repository)")
    ap.add_argument("--port", type=int, default=8000, help="port; 0 picks a free one (default 8000)")
    ap.add_argument("--prefix", default=DEFAULT_PREFIX,
                    help=f"URL sub-path the site lives under (default {DEFAULT_PREFIX})")
    ap.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = ap.parse_args(argv)

    directory = Path(args.directory).resolve()
    if not directory.is_dir():
        print(f"serve.py: no such directory: {directory} (run `make book` first)", file=sys.stderr)
        return 2
    prefix = normalize_prefix(args.prefix)
    handler = type("BookHandler", (Handler,), {"prefix": prefix, "verbose": args.verbose})
    try:
        httpd = Server(("127.0.0.1", args.port), partial(handler, directory=str(directory)))
    except OSError as exc:
        print(f"serve.py: cannot listen on 127.0.0.1:{args.port}: {exc}", file=sys.stderr)
        return 1

    def stop(signum, frame):
        # shutdown() waits for serve_forever() to return, so call it from another thread.
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    port = httpd.server_address[1]
    print(f"serving http://127.0.0.1:{port}{prefix}", flush=True)
    try:
        httpd.serve_forever(poll_interval=0.2)
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
