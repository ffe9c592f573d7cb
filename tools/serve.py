#!/usr/bin/env python3
"""Serve the built book under a URL sub-path, the way GitHub Pages does.

    python tools/serve.py                         # _build/html at /attention-book/ on port 8000
    python tools/serve.py --port 0 --prefix /x/y/ # any free port, any sub-path

The site is published under a sub-path (https://<user>.github.io/attention-book/), so
serving it at "/" can hide links that only work at the root. This server maps
<prefix><path> to <root>/<path> (a directory to its index.html), redirects "/" to the
prefix and answers anything else with 404 and the body of <root>/404.html. It serves a
path only when its real path is inside the folder (see safe_segment and inside), and
only GET and HEAD (any other method gets 405).

On start it prints exactly one line, "serving http://127.0.0.1:PORT/prefix/", and
flushes it, so a test can start it as a subprocess and read the URL from stdout.
Standard library only. SIGTERM and SIGINT shut it down cleanly.
"""

from __future__ import annotations

import argparse
import os
import re
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
ALLOWED = "GET, HEAD"
BACKLOG = 128  # listen() backlog: the default 5 drops connections under a few dozen clients
CONNECTION_TIMEOUT = 15.0  # seconds a connection may stay silent before it is closed
_PREFIX_SEGMENT = re.compile(r"^[A-Za-z0-9._~-]+$")


def normalize_prefix(prefix: str) -> str:
    """'/x/y', 'x/y/', '/x/y/' -> '/x/y/'; '' or '/' -> '/'.

    Raises ValueError for a segment that is not plain URL text ('..', '%', '?', a space).
    """
    parts = [p for p in prefix.strip().split("/") if p]
    bad = [p for p in parts if p in (".", "..") or not _PREFIX_SEGMENT.match(p)]
    if bad:
        raise ValueError(f"expected a URL path such as /attention-book/ (letters, digits, '.', '_', '~', '-' "
                         f"between slashes), got {prefix!r}")
    return "/" + "".join(p + "/" for p in parts)


def safe_segment(part: str) -> bool:
    """Whether one decoded path segment may name a file: not '..'; no slash (an encoded
    %2F), backslash, colon (a drive letter, an NTFS stream) or NUL."""
    return part != ".." and not any(c in part for c in "/\\:\0")


def inside(path: str, root: str) -> bool:
    """Whether the real ``path`` is ``root`` or below it (both already real paths)."""
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # on Windows: another drive
        return False


class Handler(SimpleHTTPRequestHandler):
    """Static files under a prefix; GitHub-Pages-like 404s; quiet unless verbose."""

    prefix = "/"
    verbose = False
    timeout = CONNECTION_TIMEOUT  # StreamRequestHandler sets it on the connection's socket

    # Make sure the types the book uses are right whatever the host's mime.types says.
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml",
        ".json": "application/json", ".ipynb": "application/json", ".wasm": "application/wasm",
        ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf",
    }

    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        if self.verbose:
            super().log_message(format, *args)

    def guess_type(self, path):
        ctype = super().guess_type(path)
        if ctype.startswith("text/") or ctype in ("application/json", "image/svg+xml"):
            ctype += "; charset=utf-8"
        return ctype

    # --- routing --------------------------------------------------------------

    def _route(self) -> tuple[str, str | None]:
        """("file", real path), ("redirect", location) or ("missing", None)."""
        split = urlsplit(self.path)
        path, query = split.path, f"?{split.query}" if split.query else ""
        if path != self.prefix and path in ("/", self.prefix.rstrip("/")):
            return "redirect", self.prefix + query
        if not path.startswith(self.prefix):
            return "missing", None
        parts = [unquote(p, errors="strict") for p in path[len(self.prefix):].split("/")]
        if not all(safe_segment(p) for p in parts):
            return "missing", None
        root = os.path.realpath(self.directory)
        full = os.path.realpath(os.path.join(root, *[p for p in parts if p not in ("", ".")]))
        if not inside(full, root):
            return "missing", None
        if os.path.isdir(full):
            if not path.endswith("/"):
                return "redirect", path + "/" + query  # like any web server
            full = os.path.realpath(os.path.join(full, "index.html"))
        return ("file", full) if inside(full, root) and os.path.isfile(full) else ("missing", None)

    def send_head(self):
        try:
            kind, target = self._route()
        except UnicodeDecodeError:
            kind, target = "missing", None
        if kind == "redirect":
            return self._respond(HTTPStatus.MOVED_PERMANENTLY, headers={"Location": target})
        if kind == "missing":
            return self._not_found()
        try:
            f = open(target, "rb")  # noqa: SIM115 - the base class copies and closes it
        except OSError:
            return self._not_found()
        try:
            fs = os.fstat(f.fileno())
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", self.guess_type(target))
            self.send_header("Content-Length", str(fs.st_size))
            self.send_header("Last-Modified", self.date_time_string(fs.st_mtime))
            # Like GitHub Pages: short-lived caching; tests use fresh browser contexts.
            self.send_header("Cache-Control", "max-age=600")
            self.end_headers()
            return f
        except Exception:
            f.close()
            raise

    def _respond(self, status, body=b"", ctype="text/plain; charset=utf-8", headers=None):
        """A whole response with ``body`` (none for HEAD); returns None for send_head."""
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)
        return None

    def _not_found(self):
        try:
            with open(os.path.join(self.directory, "404.html"), "rb") as fh:
                return self._respond(HTTPStatus.NOT_FOUND, fh.read(), "text/html; charset=utf-8")
        except OSError:
            return self._respond(HTTPStatus.NOT_FOUND, b"404 Not Found\n")

    # Any method other than GET and HEAD, known or not: 405, saying which are allowed.
    def __getattr__(self, name):
        if name.startswith("do_"):
            return self._not_allowed
        raise AttributeError(name)

    def _not_allowed(self):
        self.close_connection = True  # a request body, if any, is not read
        self._respond(HTTPStatus.METHOD_NOT_ALLOWED, b"405 Method Not Allowed\n",
                      headers={"Allow": ALLOWED, "Connection": "close"})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = BACKLOG

    def handle_error(self, request, client_address):
        # Browsers drop connections all the time (aborted loads); that is not an error.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def port_number(text: str) -> int:
    """argparse type: 0 (any free port) or 1-65535."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 1 to 65535 (0: any free port), got {text!r}")
    return port


def url_prefix(text: str) -> str:
    """argparse type: the prefix, normalized (see normalize_prefix)."""
    try:
        return normalize_prefix(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", nargs="?", default=str(DEFAULT_DIR),
                    help="directory to serve (default: _build/html of this repository)")
    ap.add_argument("--port", type=port_number, default=8000, help="port; 0 picks a free one (default 8000)")
    ap.add_argument("--prefix", type=url_prefix, default=DEFAULT_PREFIX,
                    help=f"URL sub-path the site lives under (default {DEFAULT_PREFIX})")
    ap.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = ap.parse_args(argv)

    directory = Path(args.directory).resolve()
    if not directory.is_dir():
        print(f"serve.py: no such directory: {directory} (run `make book` first)", file=sys.stderr)
        return 2
    handler = type("BookHandler", (Handler,), {"prefix": args.prefix, "verbose": args.verbose})
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
    print(f"serving http://127.0.0.1:{port}{args.prefix}", flush=True)
    try:
        httpd.serve_forever(poll_interval=0.2)
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
