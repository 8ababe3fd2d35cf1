"""Template filters for numbers on the board (formatting only)."""

from __future__ import annotations

from typing import Any

from django import template
from django.contrib.auth.models import AnonymousUser

from leaderboard.rankings.selectors import Channel, challenge_refusal
from leaderboard.scoring.metric_names import display_name
from leaderboard.scoring.models import Split
from leaderboard.web import boards, forest

register = template.Library()


@register.filter
def metric_name(metric: Any) -> str:
    """A metric's name for a reader ("COCO AP" for ``coco_ap``; issue 22, P2)."""
    return display_name(str(metric))


@register.filter
def num(value: Any, digits: int = 4) -> str:
    return boards.fmt(value, digits)


@register.filter
def pval(value: Any) -> str:
    return boards.fmt_p(value)


@register.filter
def pval_eq(value: Any) -> str:
    """``= 0.062`` or ``< 0.001``: a p-value after the letter p."""
    text = boards.fmt_p(value)
    return f"< {text[1:]}" if text.startswith("<") else f"= {text}"


@register.filter
def signed(value: Any, digits: int = 4) -> str:
    return boards.signed_text(value, digits)


@register.filter
def get(mapping: Any, key: Any) -> Any:
    try:
        return mapping.get(key) if hasattr(mapping, "get") else mapping[key]
    except (KeyError, IndexError, TypeError):
        return None


@register.filter
def bytes_mb(value: int) -> str:
    """A byte limit in binary units, as the browser's and the server's checks count it (50 MiB, not MB)."""
    if value >= 1024 * 1024:
        return f"{value / (1024 * 1024):g} MiB ({value:,} bytes)"
    return f"{value / 1024:g} KiB ({value:,} bytes)"


@register.filter
def fixed(value: Any, digits: int = 4) -> str:
    """A number at exactly ``digits`` decimals (one precision per column), "\u2013" when undefined."""
    v = boards._num(value)
    return "\u2013" if v is None else f"{v:.{digits}f}".replace("-", "\u2212")


@register.filter
def fsigned(value: Any, digits: int = 4) -> str:
    """A difference at exactly ``digits`` decimals with its sign (``+0.012``, ``\u22120.012``, ``0.000``)."""
    v = boards._num(value)
    return "\u2013" if v is None else forest.signed(v, digits)


@register.simple_tag(takes_context=True)
def summary_readable(context: Any, challenge: Any) -> bool:
    """Does the read policy let this reader open the challenge's "Across tasks" page (its public split)?
    Under the Ladder it does not before the reveal (the summary ranks entries by exact values), and the nav
    link would lead to a refusal (issue 22, A3)."""
    tasks = list(challenge.tasks.all())
    if len(tasks) < 2:
        return False
    user = context.get("user") or getattr(context.get("request"), "user", None) or AnonymousUser()
    return challenge_refusal(tasks, Split.PUBLIC, user, Channel.SUMMARY) is None
