"""The axe-core helper every browser test calls finds what it should (a check that passes on anything would
make '0 violations' worthless): the walk's scroll region that a keyboard cannot reach is a violation, and
the same region with tabindex=0 and a label is not."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.a11y import assert_accessible
from tests.browser.test_web_flow import browser  # noqa: F401  (the fixture)

PAGE = """<!doctype html><html lang="en"><head><title>t</title></head><body><main><h1>t</h1>
<div class="table-scroll" style="overflow-x:auto;width:200px"{attrs}><table><caption>c</caption>
<tr><th scope="col">{cells}</th></tr></table></div></main></body></html>"""


@pytest.mark.browser
def test_axe_flags_a_scroll_region_without_focus_and_passes_it_with_one(browser: Any) -> None:  # noqa: F811
    page = browser.new_page()
    wide = "x " * 400
    page.set_content(PAGE.format(attrs="", cells=f"<span style='white-space:nowrap'>{wide}</span>"))
    with pytest.raises(AssertionError, match="scrollable-region-focusable"):
        assert_accessible(page, "a scroll region without tabindex")
    attrs = ' tabindex="0" role="group" aria-label="Table (scrolls sideways on a narrow screen)"'
    page.set_content(PAGE.format(attrs=attrs, cells=f"<span style='white-space:nowrap'>{wide}</span>"))
    assert_accessible(page, "the same region, focusable and labelled")
    page.close()
