"""The glossary page's ``{glossary}`` block: read by ``config/search_terms`` (the terms
jieba keeps whole) and ``resolving/glossary_links`` (each term's named anchor)."""

import re

_GLOSSARY_BLOCK = re.compile(r"^```\{glossary\}\n(.*?)^```", re.S | re.M)


def glossary_block(text):
    """The body of the first ``{glossary}`` block of a MyST page (ValueError if none)."""
    block = _GLOSSARY_BLOCK.search(text)
    if block is None:
        raise ValueError("no ```{glossary} block found in the glossary page")
    return block.group(1)
