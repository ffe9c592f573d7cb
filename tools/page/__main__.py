"""``make page SECTION=N``: the manuscript of section N in, its page out and listed.

    python -m tools.page 4.6            # manuscript/4.6-*.txt -> book/ch04/<name>.md, listed in _toc.yml
    python -m tools.page 4.6 --sync     # the author revised it: update the page's author layer

A new page (:mod:`tools.page.render`) has the author's text and a hidden set-up cell, and
is listed in ``_toc.yml`` (:mod:`tools.page.toc`). ``--sync`` updates an existing page in
place (:mod:`tools.page.sync`), prints the author's changes as a diff and names the claims
of ``book/claims.yml`` whose quotes the revision no longer has (the build fails on them).
On any error nothing is written and the exit status is 1: no manuscript for N or two of
them, a line the format cannot classify (named by its number), a page that exists when
not syncing.
"""

import argparse
import sys
from pathlib import Path

import yaml

from book._ext.shared import manuscript
from book._ext.shared.sections import Book, page_of
from tools.page import render, sync, toc

ROOT = Path(__file__).resolve().parents[2]


class PageError(Exception):
    """A reason to write nothing, said in one line."""


def make_page(number, root=ROOT, resync=False):
    """Write section ``number``'s page (and list it); return what to tell the author."""
    book = Book(root)
    try:
        path = book.file(number)
        text = manuscript.read(path)
    except manuscript.ManuscriptError as error:
        raise PageError(str(error)) from None
    slug = manuscript.FILE_NAME.match(path.name)["slug"]
    docname = page_of(number, slug)
    page = root / f"{docname}.md"
    label = f"sec-{slug}"
    report = []
    if resync:
        if not page.is_file():
            raise PageError(f"{docname}.md 不存在，没有可同步的页面：新的一节用 make page SECTION={number}")
        result = sync.sync(page.read_text(encoding="utf-8"), text, label, page)
        new_page = result.text
        report += [result.diff or "原稿与页面上的原文一致，页面没有改动。", *result.warnings]
        report += [f"论断 {claim} 引的原文不在任何原稿里了：改 book/claims.yml，否则构建会失败"
                   for claim in stale_claims(root)]
    elif page.exists():
        raise PageError(f"{docname}.md 已经存在：作者修订了原稿时用 make page SECTION={number} SYNC=1，"
                        "它只改页面上的原文")
    else:
        new_page = render.page(text, label)
        report.append(f"写出了 {docname}.md。")
    toc_path = root / "_toc.yml"
    old_toc = toc_path.read_text(encoding="utf-8")
    new_toc = old_toc
    if docname not in book.tree:
        numbers = {page_of(n, manuscript.FILE_NAME.match(p.name)["slug"]): n for n, p in book.files.items()}
        new_toc = toc.add(old_toc, docname, number, numbers.get)
        report.append(f"在 _toc.yml 的“第 {int(number.split('.')[0])} 章”里列出了它。")
    page.parent.mkdir(parents=True, exist_ok=True)
    if not page.is_file() or page.read_text(encoding="utf-8") != new_page:
        page.write_text(new_page, encoding="utf-8")
    if new_toc != old_toc:
        toc_path.write_text(new_toc, encoding="utf-8")
    return "\n".join(report)


def stale_claims(root):
    """Ids of the claims in ``book/claims.yml`` whose quote no manuscript has."""
    claims_file = root / "book" / "claims.yml"
    if not claims_file.is_file():
        return []
    texts = [path.read_text(encoding="utf-8") for path in (root / "manuscript").glob("*.txt")]
    claims = yaml.safe_load(claims_file.read_text(encoding="utf-8")) or []
    return [claim["id"] for claim in claims if not any(claim["quote"] in t for t in texts)]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.page", description="把一节原稿做成书里的一页。")
    parser.add_argument("number", help="节号，例如 4.6（原稿是 manuscript/4.6-*.txt）")
    parser.add_argument("--sync", action="store_true", help="页面已经存在：按修订后的原稿更新页面上的原文")
    args = parser.parse_args(argv)
    try:
        print(make_page(args.number, resync=args.sync))
    except PageError as error:
        print(f"make page：{error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
