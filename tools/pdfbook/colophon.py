"""The colophon: when, where and from what this PDF was made.

The book prints timings and memory figures measured while its pages ran, so the PDF
says when the pages' code ran (the newest record of the execution cache that the
build used, found by the key of book/_ext/execution.py), when the PDF was printed, on
what machine (CPU count, Python and TensorFlow versions), from which commit, and with
which version of the companion package.
"""

import html
import importlib.metadata
import os
import platform
import subprocess
import tomllib
from datetime import datetime, timezone

from jupyter_cache import get_cache

from book._ext.execution import dependency_key  # the checkout's root is on the path (tools/pdf.py)

UNKNOWN = "未知"


def facts(root, build_dir):
    """The colophon's lines as (label, value) pairs, in print order."""
    return [
        ("代码执行", executed_at(root, build_dir)),
        ("PDF 生成", _utc(datetime.now(timezone.utc))),
        ("机器", machine()),
        ("源码提交", commit(root)),
        ("配套包", f"attnbook {source_version(root)}"),
    ]


def machine():
    return (f"{os.cpu_count()} 个 CPU 核，{platform.machine()}，Python {platform.python_version()}，"
            f"TensorFlow {package_version('tensorflow', 'tensorflow-cpu')}")


def source_version(root):
    """The companion package's version in this checkout (code/pyproject.toml).

    That is the metadata ``attnbook.__version__`` reports once the checkout is installed;
    reading the file spares the PDF build an import of TensorFlow, and names the code
    the pages ran (the build puts this checkout's code/ on the path) even where the
    environment has another checkout installed.
    """
    project = tomllib.loads((root / "code" / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project.get("version") or package_version("attnbook")


def package_version(*names):
    """The installed version of the first of ``names`` that is installed."""
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return UNKNOWN


def commit(root):
    """The commit checked out, marked when the work tree differs from it."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()

    try:
        sha = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return f"{UNKNOWN}（不在 git 仓库中构建）"
    return f"{sha[:12]}（工作区另有未提交的改动）" if dirty else sha[:12]


def executed_at(root, build_dir):
    """When the pages' code last ran: the newest record of the build's execution cache."""
    folder = build_dir / ".jupyter_cache" / dependency_key(root)
    if not folder.is_dir():
        return UNKNOWN
    records = get_cache(str(folder)).list_cache_records()
    return _utc(max(r.created for r in records)) if records else UNKNOWN


def _utc(moment):
    if moment.tzinfo is None:  # jupyter-cache stores UTC without a zone
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def section(lines):
    """The colophon as HTML."""
    rows = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in lines)
    return ('<section class="pdf-colophon" id="pdf-colophon"><h1>版本说明</h1>'
            "<p>这份 PDF 由本书网站的构建结果直接打印而成，页面上的每个数字、每张图都来自下面这次构建中真正运行过的代码。"
            "书中的计时与内存数字是这台机器在那次运行时实测的，换一台机器会不同。</p>"
            f'<dl class="pdf-facts">{rows}</dl></section>')
