"""The words the editor does not write: terms the glossary replaces, and colloquialisms.

Shared by the prose tests (built pages, printed outputs) and the figure tests. The author's
own words stay inside 「quotations」, which are left out before checking.
"""

import re

# Editor's word -> the glossary's term (book/glossary.md explains each).
REPLACED = {"补零": "填充", "显存": "内存", "批大小": "批次大小", "分值": "分数",
            # the two classes named MiniMultiHeadAttention, each with one name
            "扩展版": "配套包的扩展层", "同名层": "配套包的扩展层", "原稿的类": "原稿的最小层",
            "原稿版": "原稿的最小层"}
COLLOQUIAL = ["较真", "甩给你", "撑不住", "吃紧", "现形"]


def without_quotes(text):
    """``text`` with the content of every 「quotation」, and of the glossary's
    不写作“…” (the word it rules out), taken out."""
    return re.sub(r"不写作“[^”]*”", "不写作“”", re.sub(r"「[^」]*」", "「」", text))


def term_problems(text):
    """The replaced terms and colloquialisms that ``text`` uses outside quotations."""
    text = without_quotes(text)
    found = [f"{word}（应写“{REPLACED[word]}”）" for word in REPLACED if word in text]
    return found + [f"{word}（口语）" for word in COLLOQUIAL if word in text]
