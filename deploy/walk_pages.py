"""Walk a running site's pages as a visitor, a participant and an organizer, at a desktop and a phone width,
in headless Chromium: every page reached by following the site's own links, checked with axe-core and
saved as a screenshot (issue 22: "a new walk from a fresh clone finds none of them").

Usage, against the embedded demo (`make demo PORT=8077` in a fresh clone, in another shell)::

    .venv/bin/python deploy/walk_pages.py --base http://127.0.0.1:8077 --out /tmp/walk \\
        --participant svm-rbf --organizer organizer --password demo-password

It prints one line per page and role (status, axe violations, time) and a summary; the screenshots are
``OUT/<role>-<width>-<n>.png``. A 429 from the anonymous read throttle (60 renders a minute per
address by default) is waited out once, as its Retry-After says. Exit status 1 when a page answers 500 or has an axe violation. It follows
links only (GET), never a form, so it changes nothing but the session's own sign-in; it skips sign-out,
downloads (CSV, PNG, SVG, JSON) and the API's own pages (tests/reliability/test_fuzz.py walks the API).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from urllib.parse import urljoin, urlparse

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, sync_playwright

WIDTHS = {"desktop": (1366, 900), "phone": (390, 844)}
SKIP_SUFFIXES = (".csv", ".png", ".svg", ".json", ".zip", ".parquet", ".txt")
SKIP_PARTS = ("/accounts/logout/", "/api/", "/admin/", "/static/", "/media/")


def _links(page: Page, base: str) -> list[str]:
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
    host = urlparse(base).netloc
    out = []
    for href in hrefs:
        if not href or href.startswith(("#", "mailto:", "javascript:")):
            continue
        url = urljoin(page.url, href).split("#", 1)[0]
        parsed = urlparse(url)
        if parsed.netloc != host or parsed.path.endswith(SKIP_SUFFIXES):
            continue
        if any(part in parsed.path for part in SKIP_PARTS):
            continue
        out.append(url)
    return out


def _sign_in(page: Page, base: str, username: str, password: str) -> None:
    response = page.goto(urljoin(base, "/accounts/login/"))
    if response is not None and response.status == 429:  # the visitor's walk spent the address's reads
        time.sleep(min(float(response.headers.get("retry-after", "5")), 65.0))
        page.goto(urljoin(base, "/accounts/login/"))
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("form:has(input[name=password]) button[type=submit]")
    page.wait_for_load_state("load")
    if "/accounts/login/" in page.url:
        raise SystemExit(f"could not sign in as {username!r}")


def walk(base: str, out: Path, role: str, width: str, limit: int, credentials: tuple[str, str] | None) -> int:
    axe = Axe()
    problems = 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        w, h = WIDTHS[width]
        page = browser.new_page(viewport={"width": w, "height": h})
        if credentials:
            _sign_in(page, base, *credentials)
        seen: set[str] = set()
        queue = [urljoin(base, "/")]
        n = 0
        while queue and n < limit:
            url = queue.pop(0)
            key = url.split("?", 1)[0] if "page=" in url else url
            if key in seen:
                continue
            seen.add(key)
            t0 = time.perf_counter()
            response = page.goto(url)
            if response is not None and response.status == 429:  # the anonymous read throttle: wait it out
                time.sleep(min(float(response.headers.get("retry-after", "5")), 65.0))
                t0 = time.perf_counter()
                response = page.goto(url)
            status = response.status if response else 0
            elapsed = time.perf_counter() - t0
            if "html" not in (response.headers.get("content-type", "") if response else ""):
                continue
            n += 1
            results = axe.run(page)
            page.screenshot(path=str(out / f"{role}-{width}-{n:03d}.png"), full_page=False)
            bad = status >= 500 or results.violations_count > 0
            problems += bad
            path = urlparse(url).path + (("?" + urlparse(url).query) if urlparse(url).query else "")
            print(
                f"{role:11} {width:7} {n:3} {status} axe={results.violations_count} {elapsed:5.2f}s {path}"
                + ("  <-- " + results.generate_report().splitlines()[0] if results.violations_count else "")
            )
            queue.extend(u for u in _links(page, base) if u not in seen)
        browser.close()
    return problems


CHROMIUM = "/usr/bin/chromium"


def main(argv: list[str] | None = None) -> int:
    global CHROMIUM
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--out", type=Path, default=Path("/tmp/walk"))
    parser.add_argument("--participant", default="svm-rbf")
    parser.add_argument("--organizer", default="organizer")
    parser.add_argument("--password", default="demo-password")
    parser.add_argument("--limit", type=int, default=60, help="pages per role and width")
    parser.add_argument("--chromium", default=CHROMIUM)
    args = parser.parse_args(argv)
    CHROMIUM = args.chromium
    args.out.mkdir(parents=True, exist_ok=True)
    problems = 0
    roles: dict[str, tuple[str, str] | None] = {
        "visitor": None,
        "participant": (args.participant, args.password),
        "organizer": (args.organizer, args.password),
    }
    for role, credentials in roles.items():
        for width in WIDTHS:
            problems += walk(args.base, args.out, role, width, args.limit, credentials)
    print(f"pages with a 5xx or an axe violation: {problems}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
