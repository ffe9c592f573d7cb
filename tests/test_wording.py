"""attnbook.pages.wording: the words of a sentence follow the measured values."""

import pytest

from attnbook.pages.wording import agreement, faster_or_slower, listing, where_faster


def test_listing_joins_with_the_chinese_enumeration_comma():
    assert listing([64, 128, 256]) == "64、128 和 256"
    assert listing([512]) == "512"
    assert listing([]) == "无"


def test_faster_or_slower_follows_the_numbers():
    assert faster_or_slower(3.1, 7.7) == "更快"
    assert faster_or_slower(7.7, 3.1) == "更慢"
    assert faster_or_slower(2.0, 2.0) == "一样快"


def test_where_faster_names_the_lengths():
    assert where_faster([64, 128], [1.0, 2.0], [3.0, 4.0], "GRU") == "在测到的每个长度（64 和 128）上都比 GRU 快"
    assert where_faster([64, 128, 512], [1.0, 5.0, 9.0], [3.0, 4.0, 8.0], "GRU") == "只在 64 上比 GRU 快"
    assert where_faster([64, 128], [5.0, 5.0], [3.0, 5.0], "GRU") == "在测到的每个长度（64 和 128）上都不比 GRU 快"
    with pytest.raises(ValueError, match="一样多"):
        where_faster([64, 128], [1.0], [3.0, 4.0], "GRU")


def test_agreement_says_bit_for_bit_only_for_a_zero_difference():
    assert agreement(0.0) == "逐位相同（本次构建的最大差为 0）"
    assert agreement(3.5762786865234375e-07) == "在 float32 舍入之内一致（本次构建的最大差为 3.6e-07）"
    for bad in (2e-5, -1e-7, float("nan")):
        with pytest.raises(ValueError):
            agreement(bad)
