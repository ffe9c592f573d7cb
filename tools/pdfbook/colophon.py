"""The colophon: when, where and from what this PDF was made.

The book prints timings and memory figures measured while its pages ran, so the PDF
says when the pages' code ran (the newest record of the execution cache that the
build used, found by the key of book/_ext/reading/execution.py), when the PDF was printed, on
what machine (CPU count, Python and TensorFlow versions), from which commit, and with
which version of the companion package: the commit the site's pages cite (read from
the built site), and the version as they give it (book/_ext/shared/checkout.py).
"""

import html
import os
import re
import platform
from datetime import datetime, timezone

from jupyter_cache import get_cache

from book._ext.shared.checkout import UNKNOWN, dependency_key, edition, package_version


def facts(root, build_dir):
    """The colophon's lines as (label, value) pairs, in print order."""
    return [
        ("代码执行", executed_at(root, build_dir)),
        ("PDF 生成", _utc(datetime.now(timezone.utc))),
        ("机器", machine()),
        ("源码提交", commit(build_dir)),
        ("配套包", f"attnbook {edition(root)}"),
    ]


def machine():
    return (f"{os.cpu_count()} 个 CPU 核，{platform.machine()}，Python {platform.python_version()}，"
            f"TensorFlow {package_version('tensorflow', 'tensorflow-cpu')}")


def commit(build_dir):
    """The commit the site was built from, as its pages cite it (the ``attnbook-commit``
    meta tag of book/_ext/writing/cite_section.py), not the one checked out now: the PDF
    prints that build. Marked when the work tree differed from the commit."""
    page = build_dir / "html" / "book" / "index.html"
    found = re.search(r'<meta name="attnbook-commit" content="([^"]+)"', page.read_text(encoding="utf-8")) \
        if page.is_file() else None
    if found is None or found.group(1) == UNKNOWN:
        return f"{UNKNOWN}（不在 git 仓库中构建）"
    sha = found.group(1)
    return f"{sha.removesuffix('-dirty')}（工作区另有未提交的改动）" if sha.endswith("-dirty") else sha


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
            "<p>这份 PDF 由本书网站的构建结果直接打印而成，页面上每个测得或运行出的数字、每张图都来自真正运行过的代码"
            "（编者讲解里手写的小算例与原稿印着的示例输出除外；另一类例外是结果文件里的数：成本账一页另列的一栏，"
            "以及论断核对表两行里列出的结果文件，它们来自另一次运行，机器、日期与提交写在旁边；"
            "论断所依据的测试结果也可能沿用上一次运行，见论断核对表）。"
            "页面与配套包都没变时，构建沿用执行缓存里上一次运行的输出，所以“代码执行”是最近一次运行的时间，"
            "成本账一页的表记下了那一页执行时的提交，它可能早于下面的源码提交。"
            "书中的计时与内存数字是执行它们的机器在那次运行时实测的，换一台机器会不同。</p>"
            f'<dl class="pdf-facts">{rows}</dl></section>')
