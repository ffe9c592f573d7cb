"""The browser scripts of ``book/_ext/static``, as text: the extensions inline them into
the pages that need them (``resolving/figures``, ``after/previews``)."""

from pathlib import Path

STATIC = Path(__file__).resolve().parents[1] / "static"


def script(name):
    """The text of ``book/_ext/static/<name>``."""
    return (STATIC / name).read_text(encoding="utf-8")
