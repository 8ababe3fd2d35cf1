"""``lb``: log in, list challenges, submit predictions, follow scoring, read boards, from a terminal; and
everything else the site lets a participant or an organizer do (docs/api.md, "The ``lb`` client"), with the
site's warnings and confirmations.

Everything goes through the REST API (``/api/...``) of one host: ``lb --host`` (or ``lb login --host``),
else ``LB_HOST``, else the host of the last ``lb login``, else http://127.0.0.1:8000. The token comes from
``LB_TOKEN`` or from ``lb login``, which stores it, and remembers the host, in the user's config directory
(``click.get_app_dir("lb")/config.json``, readable by the user only).

Exit codes: 0 done; 1 the API refused (its message is printed); 2 a usage error, no token, the host
cannot be reached, or a confirmation was declined.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar, cast

import click
import httpx

# The one Python module of the service lb imports: the settings declaration, pure Python (no Django).
from leaderboard.challenges.settings_spec import CHALLENGE_SETTINGS_SPEC, TASK, TASK_SETTINGS, Setting

DEFAULT_HOST = "http://127.0.0.1:8000"
CONFIG_NAME = "config.json"
API_REFUSED = 1
CANNOT_PROCEED = 2
FINAL_STATUSES = ("scored", "failed", "cancelled")
F = TypeVar("F", bound=Callable[..., Any])


# --- configuration ------------------------------------------------------------------------------------
def config_path() -> Path:
    return Path(click.get_app_dir("lb")) / CONFIG_NAME


def load_config() -> dict[str, Any]:
    path = config_path()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_config(config: dict[str, Any]) -> Path:
    """Write the config with mode 0600 (created so, never widened for a moment) in a 0700 directory."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(config, handle, indent=2)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return path


# --- HTTP ---------------------------------------------------------------------------------------------
class Api:
    def __init__(self, host: str, token: str | None, timeout: float = 60.0) -> None:
        self.host = host.rstrip("/")
        self.token = token
        headers = {"Accept": "application/json", "User-Agent": "lb"}
        if token:
            headers["Authorization"] = f"Token {token}"
        self.client = httpx.Client(base_url=self.host, headers=headers, timeout=timeout)

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self.client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            fail(f"cannot reach {self.host}: {exc}", CANNOT_PROCEED)
        if response.status_code >= 400:
            fail(error_message(response), API_REFUSED)
        return response

    def upload(self, path: str, *, data: dict[str, str], files: list[tuple[str, Path]]) -> Any:
        """POST an upload with an ``Idempotency-Key``; retry it with the same key when the connection
        fails or the service answers 502/503/504, so an upload stored while its answer was lost is
        returned, never stored (and charged) a second time."""
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        attempt = 0
        while True:
            last = attempt == UPLOAD_ATTEMPTS - 1
            handles = [p.open("rb") for _, p in files]
            try:
                parts = [(f, (p.name, h)) for (f, p), h in zip(files, handles, strict=True)]
                response = self.client.post(path, data=data, files=parts, headers=headers)
            except httpx.TransportError as exc:
                if last:
                    fail(f"cannot reach {self.host}: {exc}", CANNOT_PROCEED)
                wait = UPLOAD_BACKOFF * 2**attempt
                click.echo(f"  {type(exc).__name__}; sending again in {wait:.0f} s (same upload)", err=True)
            else:
                if response.status_code not in RETRY_STATUSES or last:
                    if response.status_code >= 400:
                        fail(error_message(response), API_REFUSED)
                    return response.json()
                wait = _retry_after(response, UPLOAD_BACKOFF * 2**attempt)
                click.echo(
                    f"  HTTP {response.status_code}; sending again in {wait:.0f} s (same upload)", err=True
                )
            finally:
                for h in handles:
                    h.close()
            time.sleep(wait)
            attempt += 1

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.request(method, path, **kwargs).json()

    def require_token(self) -> None:
        if not self.token:
            fail("not logged in: run 'lb login' or set LB_TOKEN.", CANNOT_PROCEED)


#: Uploads are sent up to this many times (the service down for a moment, an answer lost on the way).
UPLOAD_ATTEMPTS = 4
UPLOAD_BACKOFF = 2.0
RETRY_STATUSES = (502, 503, 504)


def _retry_after(response: httpx.Response, default: float) -> float:
    try:
        return min(float(response.headers.get("Retry-After", default)), 60.0)
    except ValueError:
        return default


def error_message(response: httpx.Response) -> str:
    """The API's own message (``{"message", "extra"}``), with where it happened when it says so."""
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}: {response.text[:200]}"
    if isinstance(body, dict) and "message" in body:
        return str(body["message"])
    return f"HTTP {response.status_code}: {body}"


def fail(message: str, code: int) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def api_of(ctx: click.Context) -> Api:
    return cast(Api, ctx.obj)


# --- output -------------------------------------------------------------------------------------------
def fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        # At most 4 decimals, and no padding: a value rounded to the board's precision (0.9) is not
        # printed with digits it does not have (0.9000).
        return f"{value:.4f}".rstrip("0").rstrip(".") or "0"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    return str(value)


def table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> str:
    """A plain aligned text table; ``columns`` are (key, heading)."""
    cells = [[fmt(r.get(key)) for key, _ in columns] for r in rows]
    headings = [h for _, h in columns]
    widths = [max([len(h), *(len(c[i]) for c in cells)]) for i, h in enumerate(headings)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headings, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)


BOARD_COLUMNS = [
    ("rank", "rank"),
    ("name", "entry"),
    ("team", "team"),
    ("value", "value"),
    ("interval", "interval"),
    ("ranks", "ranks"),
    ("verdict", "verdict"),
    ("diff", "diff"),
    ("compared_with", "vs"),
    ("in_best_set", "best set"),
    ("is_baseline", "baseline"),
]


def board_table(rows: list[dict[str, Any]]) -> str:
    """The API's board rows (``rankings.board.SnapshotRow``) as a text table, each interval in one cell."""
    return table(
        [
            {**r, "interval": [r.get("low"), r.get("high")], "ranks": [r.get("rank_low"), r.get("rank_high")]}
            for r in rows
        ],
        BOARD_COLUMNS,
    )


# --- commands -----------------------------------------------------------------------------------------
def resolve_host(given: str | None) -> str:
    """``--host``, else ``LB_HOST``, else the host of the last ``lb login``, else the default."""
    host = given or os.environ.get("LB_HOST") or load_config().get("host") or DEFAULT_HOST
    return str(host).rstrip("/")


def api_for(host: str) -> Api:
    token = os.environ.get("LB_TOKEN") or load_config().get("tokens", {}).get(host)
    return Api(host, token)


HOST_HELP = f"The service (else LB_HOST, else the host of the last 'lb login', else {DEFAULT_HOST})."


@click.group()
@click.option("--host", default=None, help=HOST_HELP)
@click.pass_context
def cli(ctx: click.Context, host: str | None) -> None:
    """The leaderboard's command-line client."""
    ctx.obj = api_for(resolve_host(host))
    ctx.call_on_close(lambda: api_of(ctx).client.close())


@cli.command()
@click.option("--username", help="Asked for when not given.")
@click.option("--token", "given_token", help="Store this API token instead of logging in with a password.")
@click.option("--host", "login_host", default=None, help="Log in to this service (the same as 'lb --host').")
@click.pass_context
def login(ctx: click.Context, username: str | None, given_token: str | None, login_host: str | None) -> None:
    """Get an API token and store it in your config directory (mode 0600), with the host: the next
    commands go to the same host without ``--host``."""
    if login_host:
        api_of(ctx).client.close()
        ctx.obj = api_for(login_host.rstrip("/"))
    api = api_of(ctx)
    if given_token:
        token = given_token.strip()
        Api(api.host, token).json(
            "GET", "/api/challenges/", params={"limit": 1}
        )  # refused if the token is bad
    else:
        username = username or click.prompt("Username")
        password = click.prompt("Password", hide_input=True)
        token = api.json("POST", "/api/auth/token/", json={"username": username, "password": password})[
            "token"
        ]
    config = load_config()
    config.setdefault("tokens", {})[api.host] = token
    config["host"] = api.host
    path = save_config(config)
    click.echo(f"Logged in to {api.host}; token stored in {path}. The next commands go to this host.")


@cli.command()
@click.pass_context
def logout(ctx: click.Context) -> None:
    """Revoke your token on the server and forget it here."""
    api = api_of(ctx)
    api.require_token()
    api.request("DELETE", "/api/auth/token/")
    config = load_config()
    config.get("tokens", {}).pop(api.host, None)
    save_config(config)
    click.echo("Token revoked.")


@cli.command()
@click.option("--format", "output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_context
def challenges(ctx: click.Context, output: str) -> None:
    """The challenges you can see."""
    api = api_of(ctx)
    items: list[dict[str, Any]] = []
    page: dict[str, Any] = api.json("GET", "/api/challenges/", params={"limit": 100})
    items += page["results"]
    while page.get("next"):
        page = api.json("GET", page["next"])
        items += page["results"]
    if output == "json":
        click.echo(json.dumps(items, indent=2))
        return
    for c in items:
        c["task_list"] = ", ".join(c["tasks"])
    columns = [("slug", "slug"), ("title", "title"), ("visibility", "visibility"), ("is_open", "open"),
               ("task_list", "tasks"), ("end", "ends")]  # fmt: skip
    click.echo(table(items, columns))


@cli.command()
@click.argument("challenge")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--task", "-t", help="The task the files are for (needed when the challenge has several).")
@click.option(
    "--task-file",
    "task_files",
    nargs=2,
    multiple=True,
    type=(str, click.Path(exists=True, dir_okay=False, path_type=Path)),
    metavar="TASK FILE",
    help="A file for one task of a several-task challenge; repeat it for each task (and each run), as the "
    "site's form takes every task's files in one submission.",
)
@click.option("--message", "-m", default="", help="A description of the submission.")
@click.option("--name", "-n", help="The entry's name on the board (default: the message or the file name).")
@click.option("--link", default="", help="Link to code or paper.")
@click.option("--baseline", is_flag=True, help="Organizers: mark the entry as a baseline.")
@click.option("--wait", is_flag=True, help="Follow scoring, then print the entry's row of the board.")
@click.option("--timeout", default=600.0, show_default=True, help="Seconds to wait with --wait.")
@click.option("--interval", default=1.0, hidden=True)
@click.pass_context
def submit(
    ctx: click.Context,
    challenge: str,
    files: tuple[Path, ...],
    task: str | None,
    task_files: tuple[tuple[str, Path], ...],
    message: str,
    name: str | None,
    link: str,
    baseline: bool,
    wait: bool,
    timeout: float,
    interval: float,
) -> None:
    """Submit predictions FILES (several files: several runs) to CHALLENGE; several tasks at once with
    --task-file TASK FILE."""
    api = api_of(ctx)
    api.require_token()
    about = api.json("GET", f"/api/challenges/{challenge}/")
    parts = upload_parts(about, files=files, task=task, task_files=task_files)
    if about.get("replaces"):  # the web form's warning (issue 22, M8)
        replaced = about["replaces"]
        click.echo(
            f"Note: once scored, this submission replaces #{replaced['id']} '{replaced['name']}' on the board "
            f"({about['entry_selection']} rule), even if it scores worse.",
            err=True,
        )
    name = name or (message.splitlines()[0][:120] if message else parts[0][1].stem)
    sub = api.upload(
        f"/api/challenges/{challenge}/submissions/",
        data={
            "name": name,
            "description": message,
            "link": link,
            **({"is_baseline": "true"} if baseline else {}),
        },
        files=parts,
    )
    click.echo(f"Submission {sub['id']} accepted ({sub['status']}).")
    if not wait:
        return
    sub = follow(api, sub, timeout=timeout, interval=interval)
    if sub["status"] != "scored":
        fail(f"submission {sub['id']} {sub['status']}: {sub['error'] or 'no message'}", API_REFUSED)
    for score in sub["scores"]:
        board = board_all(
            api, f"/api/challenges/{challenge}/leaderboard/", {"task": score["task"], "split": score["split"]}
        )
        rows = [r for r in board["rows"] if r.get("submission_id") == sub["id"]]
        click.echo(f"{score['task']} ({score['split']}): {shown_value(score)}")
        if score.get("ladder"):
            click.echo(f"  {score['ladder']['message']}")
        if rows:
            click.echo(board_table(rows))
        else:
            click.echo("  (not your team's entry on this board, by the challenge's entry rule)")


def upload_parts(
    about: dict[str, Any],
    *,
    files: tuple[Path, ...],
    task: str | None,
    task_files: tuple[tuple[str, Path], ...],
) -> list[tuple[str, Path]]:
    """The multipart fields of an upload: ``file`` (one-task challenge), ``file:<task>`` per file."""
    if not files and not task_files:
        fail("give the predictions files (or --task-file TASK FILE).", CANNOT_PROCEED)
    if files and not task and len(about["tasks"]) > 1:
        fail(
            f"{about['slug']} has several tasks ({', '.join(about['tasks'])}): say which with --task. (Or "
            "give each task's files with --task-file TASK FILE.)",
            CANNOT_PROCEED,
        )
    field = f"file:{task}" if task else ("file" if not task_files else f"file:{about['tasks'][0]}")
    return [(field, path) for path in files] + [(f"file:{t}", path) for t, path in task_files]


def shown_value(score: dict[str, Any]) -> str:
    """A score's value as the board shows it: under the Ladder, the team's shown value (issue 15)."""
    release = score.get("ladder")
    if release:
        return (
            "not on the board yet" if release.get("shown") is None else f"board shows {fmt(release['shown'])}"
        )
    return fmt(score["value"])


def board_all(api: Api, path: str, params: dict[str, Any]) -> dict[str, Any]:
    """A board with every row: the API pages rows (100 by default), so follow ``next`` to the end."""
    board = api.json("GET", path, params={**params, "limit": 1000})
    rows = list(board["rows"])
    page = board
    while page.get("next"):
        page = api.json("GET", page["next"])
        rows.extend(page["rows"])
    return {**board, "rows": rows, "offset": 0, "limit": len(rows), "next": None, "previous": None}


def follow(api: Api, sub: dict[str, Any], *, timeout: float, interval: float) -> dict[str, Any]:
    """Poll the submission until it is final, printing each change of status to stderr."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        if sub["status"] != last:
            click.echo(f"  {sub['status']}", err=True)
            last = sub["status"]
        if sub["status"] in FINAL_STATUSES:
            return sub
        if time.monotonic() > deadline:
            fail(f"still {sub['status']} after {timeout:.0f}s; see 'lb status {sub['id']}'.", CANNOT_PROCEED)
        time.sleep(interval)
        sub = api.json("GET", f"/api/submissions/{sub['id']}/")


@cli.command()
@click.argument("submission_id", type=int)
@click.option("--format", "output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_context
def status(ctx: click.Context, submission_id: int, output: str) -> None:
    """A submission's status, error and scores."""
    api = api_of(ctx)
    api.require_token()
    sub = api.json("GET", f"/api/submissions/{submission_id}/")
    if output == "json":
        click.echo(json.dumps(sub, indent=2))
        return
    click.echo(f"#{sub['id']} {sub['name']} ({sub['team']}, {sub['challenge']}): {sub['status']}")
    if sub["error"]:
        click.echo(f"error: {sub['error']}")
    if sub["scores"]:
        shown = [{**score, "value": shown_value(score)} for score in sub["scores"]]
        click.echo(table(shown, [("task", "task"), ("split", "split"), ("value", "value"), ("runs", "runs")]))
    for score in sub["scores"]:
        if score.get("ladder"):
            click.echo(f"{score['task']} ({score['split']}): {score['ladder']['message']}")
    for score in sub["scores"]:
        details = score.get("details")
        if not details:
            continue
        percent = details.get("confidence_percent", "")
        click.echo(f"{score['task']}: all metrics ({percent}% intervals)")
        click.echo(
            table(
                details.get("metrics", []),
                [("name", "metric"), ("value", "value"), ("low", "low"), ("high", "high")],
            )
        )
        if details.get("classes"):
            click.echo(f"{score['task']}: {details.get('class_metric', 'value')} per class")
            click.echo(
                table(
                    details["classes"],
                    [("name", "class"), ("value", "value"), ("low", "low"), ("high", "high")],
                )
            )


def _click_option(setting: Setting, *, update: bool = False) -> Callable[[F], F]:
    """The option of a declared setting (``lb add-task``, ``lb create-challenge``, ``lb update-challenge``):
    its range checked by click before any upload, the declared help text, and the declared default shown
    (the server applies it when the option is left out). ``update``: nothing is required, and a switch has
    both forms (``--requires-approval/--no-requires-approval``), so that left out means unchanged."""
    kwargs: dict[str, Any] = {"help": setting.help or setting.verbose_label, "default": None}
    if setting.kind == "bool" and update:
        name = setting.option[2:]
        return click.option(f"--{name}/--no-{name}", setting.name, default=None, help=kwargs["help"])
    if setting.kind == "bool":
        kwargs.update(is_flag=True, default=False)
    elif setting.kind == "choice":
        kwargs["type"] = click.Choice(setting.values)
    elif setting.kind == "int":
        kwargs["type"] = click.IntRange(
            None if setting.minimum is None else int(setting.minimum),
            None if setting.maximum is None else int(setting.maximum),
        )
    elif setting.kind == "float":
        kwargs["type"] = click.FloatRange(
            0.0 if setting.positive else setting.minimum, setting.maximum, min_open=setting.positive
        )
    # The title defaults to the slug (a task) and the start to now (a challenge): not required here.
    kwargs["required"] = setting.required and setting.name not in ("title", "start") and not update
    if setting.default not in (None, "", False) and not setting.required and not update:
        kwargs["help"] = f"{kwargs['help']} [default: {setting.default}]"
    return click.option(setting.option, setting.name, **kwargs)


def task_setting_options(func: F) -> F:
    """Every declared task setting as an option (``challenges.settings_spec.TASK_SETTINGS``), in order."""
    for setting in reversed([s for s in TASK_SETTINGS if s.cli]):
        func = _click_option(setting)(func)
    return func


def challenge_setting_options(*, update: bool) -> Callable[[F], F]:
    """Every declared challenge setting as an option (``challenges.settings_spec.CHALLENGE_SETTINGS_SPEC``)."""

    def decorate(func: F) -> F:
        for setting in reversed(CHALLENGE_SETTINGS_SPEC):
            func = _click_option(setting, update=update)(func)
        return func

    return decorate


def _form_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@cli.command("add-task")
@click.argument("challenge")
@click.argument("truth", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@task_setting_options
@click.pass_context
def add_task(ctx: click.Context, challenge: str, truth: Path, **settings: Any) -> None:
    """Add a task to CHALLENGE (organizers) from its hidden labels file TRUTH: CSV/Parquet, a COCO
    annotation JSON (detection) or a zip/tar of PNG label maps (segmentation). A private board: name the
    file's split column with --split-column."""
    api = api_of(ctx)
    api.require_token()
    settings["title"] = settings["title"] or settings["slug"]
    data = {name: _form_value(value) for name, value in settings.items() if value not in (None, False)}
    with truth.open("rb") as handle:
        task = api.json(
            "POST", f"/api/challenges/{challenge}/tasks/", data=data, files=[("truth", (truth.name, handle))]
        )
    click.echo(f"Task '{task['slug']}' added ({task['kind']}, {task['metric']}, {task['n_items']} items).")


@cli.command()
@click.argument("challenge")
@click.option("--task", "-t", help="Task slug (default: the first task).")
@click.option("--split", type=click.Choice(["public", "private"]), default="public", show_default=True)
@click.option(
    "--format", "output", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True
)
@click.pass_context
def leaderboard(ctx: click.Context, challenge: str, task: str | None, split: str, output: str) -> None:
    """The latest board of a task."""
    api = api_of(ctx)
    params = {"split": split, **({"task": task} if task else {})}
    path = f"/api/challenges/{challenge}/leaderboard/"
    if output == "csv":
        # Ask for CSV in the Accept header too: the client's default Accept (JSON) with ?format=csv is a 406.
        response = api.request(
            "GET", path, params={**params, "format": "csv"}, headers={"Accept": "text/csv"}
        )
        click.echo(response.text, nl=False)
        return
    board = board_all(api, path, params)
    if output == "json":
        click.echo(json.dumps(board, indent=2))
        return
    sequence = board["sequence"]
    when = f"snapshot {sequence} of {board['created_at']}" if sequence else "no board yet"
    click.echo(f"{board['challenge']} / {board['task']} ({board['split']} board, {board['metric']}): {when}")
    if board["rows"]:
        click.echo(board_table(board["rows"]))
    sig = board["signature"]
    adjusted = leader_line(board["rows"], sig)
    if adjusted:
        click.echo(adjusted)
    secondary = sig.get("secondary_metrics") or {}
    if secondary:  # the task's secondary metrics are in --format json/csv; here, what their p-values are
        click.echo(
            f"Secondary metrics: {', '.join(secondary.get('metrics') or [])}; p-values vs the leader "
            f"{secondary.get('label', '')} (--format json or csv for the numbers)"
        )
    if sig.get("signature_text"):
        click.echo(sig["signature_text"])


# --- organizers: challenges, labels, re-score, reveal -------------------------------------------------
def _json_value(setting_name: str, value: Any) -> Any:
    """A datetime option is sent as given (ISO 8601, the API parses it); ``--end none`` clears the end."""
    if setting_name == "end" and isinstance(value, str) and value.lower() in ("", "none"):
        return None
    return value


def _challenge_payload(settings: dict[str, Any], *, update: bool) -> dict[str, Any]:
    skip = (None,) if update else (None, False)
    return {k: _json_value(k, v) for k, v in settings.items() if v not in skip}


def _print_challenge(challenge: dict[str, Any], verb: str) -> None:
    state = "open" if challenge["is_open"] else "closed"
    end = challenge.get("end") or "no end"
    click.echo(f"Challenge '{challenge['slug']}' {verb} ({challenge['visibility']}, {state}, ends: {end}).")


@cli.command("create-challenge")
@click.option("--slug", help="In addresses (default: made from the title).")
@challenge_setting_options(update=False)
@click.pass_context
def create_challenge(ctx: click.Context, slug: str | None, **settings: Any) -> None:
    """Create a challenge; you become its organizer. Every setting of the site's form is an option (the
    same declaration: ``challenges/settings_spec.py``); then add tasks with ``lb add-task``."""
    api = api_of(ctx)
    api.require_token()
    if not settings.get("title"):
        fail("say the challenge's title with --title.", CANNOT_PROCEED)
    payload = _challenge_payload(settings, update=False)
    if slug:
        payload["slug"] = slug
    challenge = api.json("POST", "/api/challenges/", json=payload)
    _print_challenge(challenge, "created; you organize it")
    click.echo(f"Next: lb add-task {challenge['slug']} TRUTH --slug TASK --metric METRIC")


@cli.command("update-challenge")
@click.argument("challenge")
@challenge_setting_options(update=True)
@click.pass_context
def update_challenge(ctx: click.Context, challenge: str, **settings: Any) -> None:
    """Change settings of CHALLENGE (organizers); options left out stay as they are. The statistics
    settings are frozen once a submission was scored (the API's message says so). ``--end none``: no end."""
    api = api_of(ctx)
    api.require_token()
    payload = _challenge_payload(settings, update=True)
    if not payload:
        fail("nothing to change: give at least one setting (lb update-challenge --help).", CANNOT_PROCEED)
    updated = api.json("PATCH", f"/api/challenges/{challenge}/", json=payload)
    _print_challenge(updated, "updated")
    click.echo("Changed: " + ", ".join(f"{k}={_said(updated.get(k))}" for k in payload))


def _said(value: Any) -> str:
    """A setting's value in a sentence: a switch as yes/no, nothing as "none"."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "none" if value is None else fmt(value)


@cli.command("update-task")
@click.argument("challenge")
@click.argument("task")
@click.option(
    "--public-mode",
    type=click.Choice(TASK["public_mode"].values),
    required=True,
    help=TASK["public_mode"].help,
)
@click.option("--ladder-eta", type=click.FloatRange(0, min_open=True), help=TASK["ladder_eta"].help)
@click.option("--ladder-z", type=click.FloatRange(0, TASK["ladder_z"].maximum), help=TASK["ladder_z"].help)
@click.pass_context
def update_task(
    ctx: click.Context,
    challenge: str,
    task: str,
    public_mode: str,
    ladder_eta: float | None,
    ladder_z: float | None,
) -> None:
    """Change TASK's public board mode (organizers; frozen once the task has submissions). Its hidden
    labels: ``lb replace-labels``."""
    api = api_of(ctx)
    api.require_token()
    payload = {"public_mode": public_mode, "ladder_eta": ladder_eta, "ladder_z": ladder_z}
    data = api.json("PATCH", f"/api/challenges/{challenge}/tasks/{task}/", json=payload)
    click.echo(f"Task '{data['slug']}': public board {data.get('public_mode', public_mode)}.")


@cli.command("replace-labels")
@click.argument("challenge")
@click.argument("task")
@click.argument("truth", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--split-column", default="", help=TASK["split_column"].help)
@click.option("--group-column", default="", help=TASK["group_column"].help)
@click.pass_context
def replace_labels(
    ctx: click.Context, challenge: str, task: str, truth: Path, split_column: str, group_column: str
) -> None:
    """Replace TASK's hidden labels with TRUTH, the same items (organizers; for fixing labelling errors).
    Scores keep the old labels until the task is re-scored (``lb rescore``), as on the site."""
    api = api_of(ctx)
    api.require_token()
    with truth.open("rb") as handle:
        data = api.json(
            "PUT",
            f"/api/challenges/{challenge}/tasks/{task}/truth/",
            data={"split_column": split_column, "group_column": group_column},
            files=[("truth", (truth.name, handle))],
        )
    click.echo(f"Labels of '{data['slug']}' replaced ({data['n_items']} items).")
    click.echo(
        f"Existing scores keep the old labels until you re-score the task: lb rescore {challenge} {task}",
        err=True,
    )


RESCORE_PROMPT = "Score every submission of '{task}' again (the board is rebuilt once, at the end)?"


@cli.command()
@click.argument("challenge")
@click.argument("task")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (the site's confirmation box).")
@click.option("--wait", is_flag=True, help="Follow the re-score to its end.")
@click.option("--timeout", default=1800.0, show_default=True, help="Seconds to wait with --wait.")
@click.option("--interval", default=1.0, hidden=True)
@click.pass_context
def rescore(
    ctx: click.Context, challenge: str, task: str, yes: bool, wait: bool, timeout: float, interval: float
) -> None:
    """Re-score every submission of TASK (organizers), after its labels were replaced; asks first."""
    api = api_of(ctx)
    api.require_token()
    if not yes and not click.confirm(RESCORE_PROMPT.format(task=task), err=True):
        fail("not re-scored (answer yes, or pass --yes).", CANNOT_PROCEED)
    path = f"/api/challenges/{challenge}/tasks/{task}/rescore/"
    job = api.json("POST", path)
    click.echo(
        f"Re-score {job['id']} of '{job['task']}' started: {job['done']} of {job['total']} submissions."
    )
    deadline = time.monotonic() + timeout
    while wait and job["state"] != "done":
        if time.monotonic() > deadline:
            fail(f"still {job['state']} after {timeout:.0f}s.", CANNOT_PROCEED)
        time.sleep(interval)
        job = api.json("GET", path)
        click.echo(f"  {job['done']} of {job['total']} ({job['state']})", err=True)
    if wait:
        click.echo(f"Re-score {job['id']} done: {job['done']} of {job['total']} submissions re-scored.")


REVEAL_OPEN = (
    "The challenge is still open{until}. After the reveal, every new submission shows its team its private "
    "score: one exact reading of the private labels per submission."
)


@cli.command()
@click.argument("challenge")
@click.option("--close", is_flag=True, help="Close submissions now, then reveal (an open challenge).")
@click.option("--while-open", is_flag=True, help="Reveal and keep the challenge open (an open challenge).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (the site's confirmation box).")
@click.pass_context
def reveal(ctx: click.Context, challenge: str, close: bool, while_open: bool, yes: bool) -> None:
    """Reveal CHALLENGE's private board to everyone who can see it (organizers; cannot be undone). An open
    challenge needs --close or --while-open, as the site asks."""
    api = api_of(ctx)
    api.require_token()
    if close and while_open:
        fail("say --close or --while-open, not both.", CANNOT_PROCEED)
    about = api.json("GET", f"/api/challenges/{challenge}/")
    if about["private_revealed"]:
        click.echo(f"The private board of '{challenge}' is already revealed.")
        return
    if about["is_open"]:
        until = f" until {about['end']}" if about.get("end") else " (it has no end)"
        click.echo(f"Warning: {REVEAL_OPEN.format(until=until)}", err=True)
        if not (close or while_open):
            fail("say --close (close submissions now, then reveal) or --while-open.", CANNOT_PROCEED)
    if not yes and not click.confirm(
        "Reveal the private board to everyone? This cannot be undone.", err=True
    ):
        fail("not revealed (answer yes, or pass --yes).", CANNOT_PROCEED)
    done = api.json(
        "POST", f"/api/challenges/{challenge}/reveal/", json={"close": close, "while_open": while_open}
    )
    closed = " Submissions are closed." if close and not done["is_open"] else ""
    click.echo(f"The private board is now visible to everyone who can see the challenge.{closed}")


# --- participants: my submissions, select, cancel, notices --------------------------------------------
def _all_pages(api: Api, path: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    page: dict[str, Any] = api.json("GET", path, params={**params, "limit": 100})
    items = list(page["results"])
    while page.get("next"):
        page = api.json("GET", page["next"])
        items += page["results"]
    return items


SUBMISSION_COLUMNS = [("id", "id"), ("name", "name"), ("status", "status"), ("counted", "selected"),
                      ("shown", "scores"), ("created_at", "submitted")]  # fmt: skip


@cli.command()
@click.argument("challenge")
@click.option("--status", "wanted", type=click.Choice(["queued", "running", "scored", "failed", "cancelled"]))
@click.option("--task", "-t", help="Only submissions with files of this task.")
@click.option("--format", "output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.pass_context
def submissions(
    ctx: click.Context, challenge: str, wanted: str | None, task: str | None, output: str
) -> None:
    """Your team's submissions to CHALLENGE, newest first (organizers: everyone's), with the scores as
    the status page shows them."""
    api = api_of(ctx)
    api.require_token()
    params = {
        "ordering": "-created_at",
        **({"status": wanted} if wanted else {}),
        **({"task": task} if task else {}),
    }
    items = _all_pages(api, f"/api/challenges/{challenge}/submissions/", params)
    if output == "json":
        click.echo(json.dumps(items, indent=2))
        return
    for sub in items:
        sub["counted"] = sub.get("selected")
        sub["shown"] = "; ".join(f"{s['task']} ({s['split']}) {shown_value(s)}" for s in sub["scores"])
        sub["created_at"] = f"{sub['created_at'][:16].replace('T', ' ')} UTC"
    click.echo(table(items, SUBMISSION_COLUMNS) if items else "No submissions.")


@cli.command()
@click.argument("submission_id", type=int)
@click.pass_context
def select(ctx: click.Context, submission_id: int) -> None:
    """Make SUBMISSION_ID your team's counted entry (challenges whose entries the teams select)."""
    api = api_of(ctx)
    api.require_token()
    sub = api.json("POST", f"/api/submissions/{submission_id}/select/")
    click.echo(f"Submission #{sub['id']} ({sub['name']}) now counts as your team's entry.")


@cli.command()
@click.argument("submission_id", type=int)
@click.pass_context
def cancel(ctx: click.Context, submission_id: int) -> None:
    """Cancel a queued submission (it is not counted against your team's limits)."""
    api = api_of(ctx)
    api.require_token()
    sub = api.json("DELETE", f"/api/submissions/{submission_id}/")
    click.echo(f"Submission #{sub['id']} ({sub['name']}) {sub['status']}; not counted against your limits.")


@cli.command()
@click.option("--all", "everything", is_flag=True, help="Also the notices already read.")
@click.option("--mark-read", is_flag=True, help="Mark the notices shown as read.")
@click.option("--format", "output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--email", type=click.Choice(["on", "off"]), help="Turn notices by e-mail on or off.")
@click.option(
    "--site", type=click.Choice(["on", "off"]), help="Turn notices on the site (and here) on or off."
)
@click.pass_context
def notices(
    ctx: click.Context, everything: bool, mark_read: bool, output: str, email: str | None, site: str | None
) -> None:
    """Your notices (unread ones; --all for every one): a submission scored or failed, a board revealed.
    --email / --site on|off set how you get them (the account page's opt-outs), then print the setting."""
    api = api_of(ctx)
    api.require_token()
    if email or site:
        now = api.json("GET", "/api/notices/preferences/")
        wanted = {k: (v == "on") if v else now[k] for k, v in (("email", email), ("site", site))}
        now = api.json("PUT", "/api/notices/preferences/", json=wanted)
        said = ", ".join(n for n, on in (("by e-mail", now["email"]), ("on the site", now["site"])) if on)
        click.echo(f"Notices saved: {said or 'none'}.")
        return
    items = _all_pages(api, "/api/notices/", {} if everything else {"unread": "true"})
    if output == "json":
        click.echo(json.dumps(items, indent=2))
    elif not items:
        click.echo("No notices." if everything else "No unread notices.")
    for n in items if output == "table" else []:
        mark = "" if n["read"] else "* "
        click.echo(f"{mark}{n['created_at'][:16].replace('T', ' ')}  {n['subject']}")
        click.echo("  " + n["body"].replace("\n", "\n  "))
        if n["url"]:
            click.echo(f"  {api.host}{n['url']}")
    if mark_read and items:
        marked = api.json("POST", "/api/notices/read/", json={"ids": [n["id"] for n in items]})["marked"]
        click.echo(f"{marked} marked as read.", err=True)


# --- teams and approved participation ------------------------------------------------------------------
@cli.command()
@click.argument("challenge")
@click.option("--found", "found", metavar="NAME", help="Found a team of this name and become its member.")
@click.option("--join", "join", metavar="CODE", help="Join the team whose invite code you were given.")
@click.pass_context
def team(ctx: click.Context, challenge: str, found: str | None, join: str | None) -> None:
    """Your team in CHALLENGE, with its invite code; or found one, or join one (as the site's Team page).
    Limits count per team, so a team that has submissions cannot be left (the API says so)."""
    api = api_of(ctx)
    api.require_token()
    if found and join:
        fail("say --found or --join, not both.", CANNOT_PROCEED)
    base = f"/api/challenges/{challenge}/teams/"
    if found:
        mine = api.json("POST", base, json={"name": found})
    elif join:
        mine = api.json("POST", base + "join/", json={"invite_code": join})
    else:
        mine = api.json("GET", base + "mine/")
    click.echo(f"Team '{mine['name']}': {', '.join(mine['members'])}.")
    click.echo(f"Invite code (give it to the people who should join): {mine['invite_code']}")


@cli.command()
@click.argument("challenge")
@click.pass_context
def participate(ctx: click.Context, challenge: str) -> None:
    """Ask to take part in CHALLENGE (challenges that take approved participants only)."""
    api = api_of(ctx)
    api.require_token()
    api.json("POST", f"/api/challenges/{challenge}/participation/")
    click.echo("You asked to take part; you may submit once an organizer approves you.")


@cli.command()
@click.argument("challenge")
@click.option("--waiting", is_flag=True, help="Only those not approved yet.")
@click.pass_context
def participants(ctx: click.Context, challenge: str, waiting: bool) -> None:
    """Who asked to take part in CHALLENGE, and who is approved (organizers)."""
    api = api_of(ctx)
    api.require_token()
    items = api.json(
        "GET", f"/api/challenges/{challenge}/participants/", params={"approved": "false"} if waiting else {}
    )
    items = items["results"] if isinstance(items, dict) else items
    columns = [("username", "user"), ("approved", "approved"), ("requested_at", "asked")]
    click.echo(table(items, columns) if items else "No one has asked yet.")


@cli.command()
@click.argument("challenge")
@click.argument("username")
@click.option("--revoke", is_flag=True, help="Withdraw the approval, or turn the request down.")
@click.pass_context
def approve(ctx: click.Context, challenge: str, username: str, revoke: bool) -> None:
    """Approve USERNAME in CHALLENGE, so they may submit (organizers); --revoke withdraws it."""
    api = api_of(ctx)
    api.require_token()
    api.request("DELETE" if revoke else "POST", f"/api/challenges/{challenge}/participants/{username}/")
    click.echo(f"{username} may no longer submit." if revoke else f"{username} is approved and may submit.")


def _cell(value: Any) -> str:
    return "unbounded" if value is None else str(value)


def leader_line(rows: list[dict[str, Any]], signature: dict[str, Any]) -> str:
    """The leader's selection-adjusted estimate and interval (the winner's curse), as the API gives it
    (empty when the board holds none: one entry, or a Ladder board before the reveal)."""
    leader = next((r for r in rows if r.get("is_leader")), None)
    if leader is None or leader.get("adjusted_value") is None:
        return ""
    line = (
        f"leader {leader.get('name')} adjusted for selection ({signature.get('selection_method', '')}, "
        f"beta {signature.get('selection_beta', '')}): {leader['adjusted_value']} "
        f"[{leader.get('adjusted_low')}, {leader.get('adjusted_high')}]; "
        f"bias-corrected {leader.get('bias_corrected')}"
    )
    if leader.get("conditional_value") is not None:
        line += (
            f"; conditional {leader['conditional_value']} "
            f"[{_cell(leader.get('conditional_low'))}, {_cell(leader.get('conditional_high'))}]"
        )
    return line


@cli.command()
@click.option("--metric", required=True, help="The task's metric (e.g. accuracy, mae, macro_f1).")
@click.option(
    "--gap", type=float, required=True, help="The smallest difference between two entries to detect."
)
@click.option("--power", type=float, default=0.8, show_default=True)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Two-sided test level.")
@click.option("--accuracy", type=float, help="0/1 metrics: the expected accuracy (default: the worst case).")
@click.option("--sd", type=float, help="Means of per-item values: their standard deviation.")
@click.option("--pilot-se", "pilot_standard_error", type=float, help="Other metrics: a pilot's paired SE...")
@click.option("--pilot-items", type=int, help="... measured on this many items.")
@click.option("--items", "n_items", type=int, help="Also: the smallest difference this many items resolve.")
@click.option("--json", "as_json", is_flag=True, help="Print the server's answer as JSON.")
@click.pass_context
def plan(ctx: click.Context, as_json: bool, **options: Any) -> None:
    """Plan a test set: the items needed to detect a gap at a power (per metric), from the server."""
    api = api_of(ctx)
    params = {k: v for k, v in options.items() if v is not None}
    answer = api.json("GET", "/api/plan/", params=params)
    if as_json:
        click.echo(json.dumps(answer, indent=2))
        return
    p = answer["plan"]
    click.echo(
        f"{p['items']} items detect a difference of {p['gap']:g} with power {p['power']:g} at alpha "
        f"{p['alpha']:g} ({p['method']}; {p['basis']})"
    )
    r = answer.get("resolves")
    if r:
        if r.get("difference") is None:
            click.echo(f"{r['n_items']} items: not computed ({r.get('reason')})")
        else:
            click.echo(
                f"{r['n_items']} items resolve a difference of {r['difference']:.4g} with power {r['power']:g}"
            )


if __name__ == "__main__":  # pragma: no cover
    cli()
