"""tools/serve.py: stays in its folder, answers every method, survives many clients.

No build: each test serves a small folder of its own, in this process (a thread) or,
for the command line, in a subprocess. Loopback only.
"""

import http.client
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import pytest

from buildfiles import ROOT
from tools import serve

SERVE = ROOT / "tools" / "serve.py"

PREFIX = "/book/"


@pytest.fixture
def site(tmp_path):
    """A served folder with a page, a sub-folder, a 404 page, and links in and out."""
    root = tmp_path / "site"
    (root / "sub").mkdir(parents=True)
    (root / "index.html").write_text("<p>首页</p>", encoding="utf-8")
    (root / "sub" / "index.html").write_text("<p>子页</p>", encoding="utf-8")
    (root / "404.html").write_text("<p>页面不存在</p>", encoding="utf-8")
    (root / "data.json").write_text("{}", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("secret", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "index.html").write_text("outside", encoding="utf-8")
    (root / "link-out.txt").symlink_to(secret)
    (root / "dir-out").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "link-in.html").symlink_to(root / "index.html")
    return root


@pytest.fixture
def server(site):
    """serve.Server on a free port, in a thread; yields (host, port)."""
    handler = type("TestHandler", (serve.Handler,), {"prefix": PREFIX, "timeout": 1.0})
    httpd = serve.Server(("127.0.0.1", 0), partial(handler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield httpd.server_address
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


def request(address, method, path, timeout=10):
    connection = http.client.HTTPConnection(*address, timeout=timeout)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_pages_are_served_under_the_prefix_as_utf8(server):
    status, headers, body = request(server, "GET", PREFIX)
    assert (status, body.decode()) == (200, "<p>首页</p>")
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert request(server, "GET", PREFIX + "data.json")[1]["Content-Type"] == "application/json; charset=utf-8"
    assert request(server, "GET", PREFIX + "link-in.html")[0] == 200  # a link inside the folder is fine


@pytest.mark.parametrize("path, location", [("/", PREFIX), (PREFIX.rstrip("/"), PREFIX),
                                            (PREFIX + "sub?x=1", PREFIX + "sub/?x=1")])
def test_redirects(server, path, location):
    status, headers, _ = request(server, "GET", path)
    assert (status, headers.get("Location")) == (301, location)


@pytest.mark.parametrize("path", [
    "link-out.txt",             # a symlink to a file outside
    "dir-out/", "dir-out",      # a symlink to a folder outside
    "../secret.txt", "%2e%2e/secret.txt", "sub/%2e%2e/%2e%2e/secret.txt",
    "sub%2F..%2F..%2Fsecret.txt",
    "C:/Windows/win.ini", "C%3A%5CWindows%5Cwin.ini", "c:secret.txt",  # drive letters
    "%5C%5Cserver%5Cshare%5Cfile", "..%5Csecret.txt",                  # UNC, backslashes
    "index.html%00.txt", "index.html::$DATA", "%ff%fe",
])
def test_paths_that_leave_the_folder_get_the_404_page(server, path):
    status, headers, body = request(server, "GET", PREFIX + path)
    assert (status, body.decode()) == (404, "<p>页面不存在</p>"), path
    assert headers["Content-Type"] == "text/html; charset=utf-8"


def test_outside_the_prefix_is_a_404_and_head_has_no_body(server):
    assert request(server, "GET", "/elsewhere/index.html")[0] == 404
    status, headers, body = request(server, "HEAD", PREFIX + "missing.html")
    assert (status, body) == (404, b"") and int(headers["Content-Length"]) > 0


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND", "BREW"])
def test_every_other_method_is_405_with_allow(server, method):
    status, headers, _ = request(server, method, PREFIX)
    assert (status, headers.get("Allow")) == (405, "GET, HEAD")


def test_an_idle_connection_is_closed_after_the_timeout(server):
    """The fixture's handler times out after 1 s; the server closes the silent socket."""
    with socket.create_connection(server, timeout=10) as idle:
        start = time.monotonic()
        assert idle.recv(1024) == b""  # closed by the server, no response
        assert 0.5 < time.monotonic() - start < 5
    assert request(server, "GET", PREFIX)[0] == 200  # and the server still answers


def test_the_server_listens_with_a_backlog_of_at_least_128_and_a_connection_timeout():
    assert serve.Server.request_queue_size >= 128
    assert 0 < serve.Handler.timeout <= 60


def run_cli(*args):
    return subprocess.run([sys.executable, str(SERVE), *args], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("args, says", [
    (["--port", "70000"], "expected a port number from 1 to 65535"),
    (["--port", "-1"], "expected a port number from 1 to 65535"),
    (["--port", "http"], "expected a port number from 1 to 65535"),
    (["--prefix", "/a/../b/"], "expected a URL path"),
    (["--prefix", "/a b/"], "expected a URL path"),
    (["--prefix", "/a?b/"], "expected a URL path"),
])
def test_bad_arguments_get_one_clear_line_and_status_2(args, says, site):
    done = run_cli(str(site), *args)
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("serve.py: error: argument")


def test_normalize_prefix():
    assert [serve.normalize_prefix(p) for p in ("", "/", "x", "/x/y", "x/y/", "//x//")] == \
        ["/", "/", "/x/", "/x/y/", "/x/y/", "/x/"]


def test_command_line_prints_its_url_and_stops_on_sigterm(site):
    proc = subprocess.Popen([sys.executable, str(SERVE), str(site), "--port", "0", "--prefix", "x/y"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("serving http://127.0.0.1:") and line.endswith("/x/y/"), line
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        assert request(("127.0.0.1", port), "GET", "/x/y/")[0] == 200
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
        proc.stdout.close()
        proc.stderr.close()


# --- load ------------------------------------------------------------------------------


def load(address, path, clients=50, seconds=10.0, timeout=10.0):
    """``clients`` threads GET ``path`` in a loop for ``seconds``; returns
    (latencies in seconds, failures as strings). Each request has ``timeout``."""
    deadline = time.monotonic() + seconds

    def client(_):
        latencies, failures = [], []
        while time.monotonic() < deadline:
            start = time.perf_counter()
            try:
                status = request(address, "GET", path, timeout=timeout)[0]
            except OSError as error:  # a timeout, a refused or reset connection
                failures.append(f"{type(error).__name__}: {error}")
                continue
            latencies.append(time.perf_counter() - start)
            if status != 200:
                failures.append(f"status {status}")
        return latencies, failures

    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(client, range(clients)))
    return [t for lat, _ in results for t in lat], [f for _, fails in results for f in fails]


@pytest.mark.slow
def test_fifty_concurrent_clients_for_ten_seconds_see_no_timeout(site, capsys):
    """The server in its own process, as make serve and the browser tests run it."""
    proc = subprocess.Popen([sys.executable, str(SERVE), str(site), "--port", "0", "--prefix", PREFIX],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(proc.stdout.readline().strip().rsplit(":", 1)[1].split("/")[0])
        latencies, failures = load(("127.0.0.1", port), PREFIX + "index.html")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
    assert not failures, f"{len(failures)} failed requests, e.g. {failures[:3]}"
    cuts = statistics.quantiles(latencies, n=100)
    with capsys.disabled():
        print(f"\nserve.py under 50 clients for 10 s: {len(latencies)} requests, "
              f"p50 {cuts[49] * 1000:.1f} ms, p99 {cuts[98] * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms")
    assert len(latencies) > 500
    assert cuts[98] < 2.0, "p99 above 2 s"


@pytest.mark.parametrize("segment", ["..", "C:", "c:secret.txt", "a\\b", "\\\\server", "x::$DATA", "a\0", "a/b"])
def test_segments_that_could_leave_the_folder_on_any_system_are_refused(segment):
    """On POSIX a "C:" or backslash segment is just an odd name; on Windows it is a way out."""
    assert not serve.safe_segment(segment)
    assert serve.safe_segment("index.html") and serve.safe_segment("...")
