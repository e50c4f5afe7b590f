"""Every setting, declared once: its flag, environment variable, default, check and meaning.

The table (`OPTIONS`) drives the command line (`cli.main` adds each option to the commands that take
it, `papercode archive`'s too), the environment (`PAPERCODE_*`), validation (one line naming the flag or variable and what to
pass instead), and the settings table of docs/settings.md (`options_markdown`, checked by a test). A flag
beats its environment variable, which beats the default.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from papercode.archive.location import real_archive_dir
from papercode.core.days import checked_day
from papercode.core.limits import Limits
from papercode.core.paths import RealPath, given_path, xdg_base
from papercode.verified.sources import DEFAULT_BASE_URL

Transport = Literal["stdio", "sse", "streamable-http"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "sse", "streamable-http")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DEFAULT_CODE_BASE_URL = DEFAULT_BASE_URL  # where the source fetcher downloads from unless told otherwise
_LIMITS = Limits()


class SettingError(ValueError):
    """A bad setting value; the message is one line saying what is wrong and what to pass. `next_step`, when given,
    is what to do about it (else: the command's `--help`)."""

    def __init__(self, message: str, next_step: str | None = None) -> None:
        super().__init__(message)
        self.next_step = next_step


def bundled_records_dir() -> Path:
    """The records shipped with papercode: inside the wheel, or beside `server/` in a checkout."""
    packaged = Path(__file__).parent / "_records"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "records"


def user_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/papercode`, else `~/.cache/papercode`."""
    return xdg_base("XDG_CACHE_HOME", ".cache") / "papercode"


@dataclass(frozen=True, slots=True)
class Settings:
    records: tuple[Path, ...] = field(default_factory=lambda: (bundled_records_dir(),))
    archive: bool = False
    archive_dir: RealPath = field(default_factory=real_archive_dir)  # read as its real path once, here: `core.paths`
    max_file_bytes: int = _LIMITS.max_file_bytes
    max_line_bytes: int = _LIMITS.max_line_bytes
    max_string_chars: int = _LIMITS.max_string_chars
    log_level: str = "WARNING"
    cache_dir: Path | None = field(default_factory=user_cache_dir)
    code_dir: Path = field(default_factory=lambda: user_cache_dir() / "code")
    offline: bool = False
    code_base_url: str = DEFAULT_CODE_BASE_URL
    watch: bool = False
    watch_interval: float = 5.0
    ready_timeout: float = 20.0
    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    auth_token_env: str | None = None
    insecure_no_auth: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    stateless: bool = False
    no_views: bool = False
    max_sessions: int = 100
    session_idle_timeout: float = 600.0
    fetch_stall_timeout: float = 60.0
    data_date: str | None = None  # `papercode archive build | fetch`: the date of the data (--snapshot), when given

    @property
    def limits(self) -> Limits:
        return Limits(self.max_file_bytes, self.max_line_bytes, self.max_string_chars)

    @property
    def served_archive(self) -> Path | None:
        """The archive directory served beneath the records (its real path), when `--archive` is on."""
        return self.archive_dir.real if self.archive else None

    @property
    def roots(self) -> list[Path]:
        """Every root the records are read from, in order."""
        return list(self.records)


# -- value checks: text (from a flag or the environment) -> value, or SettingError --------


def _positive(kind: Callable[[str], Any], what: str) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise SettingError(f"must be {what}, got {text!r}") from None
        if not value > 0 or value != value or value == float("inf"):  # NaN and inf are numbers too
            raise SettingError(f"must be positive, got {text!r}")
        return value

    return parse


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise SettingError(f"must be a port number from 0 to 65535, got {text!r}") from None
    if not 0 <= value <= 65_535:
        raise SettingError(f"must be a port number from 0 to 65535, got {text!r}")
    return value


def _one_of(choices: tuple[str, ...], *, upper: bool = False) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip().upper() if upper else text.strip()
        if value not in choices:
            raise SettingError(f"must be one of {', '.join(choices)}, got {text!r}")
        return value

    return parse


def _directory(text: str) -> Path:
    path = given_path(text)  # as the archive build reads PAPERCODE_ARCHIVE_DIR: one treatment of a path everywhere
    if path is None:
        raise SettingError("must be a directory path, got an empty value")
    return path


def _archive_directory(text: str) -> RealPath:
    return real_archive_dir(_directory(text))


def _directories(text: str) -> tuple[Path, ...]:
    paths = tuple(path for part in text.split(os.pathsep) if (path := given_path(part)) is not None)
    if not paths:
        raise SettingError(f"must be one or more directories ({os.pathsep!r}-separated), got an empty value")
    return paths


def _cache_directory(text: str) -> Path | None:
    return None if text.strip().lower() == "off" else _directory(text)


def _switch(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise SettingError(f"must be 1 or 0, got {text!r}")


def _base_url(text: str) -> str:
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise SettingError(f"must be an http(s) URL like {DEFAULT_CODE_BASE_URL}, got {text!r}")
    return text.strip().rstrip("/")


def _day(text: str) -> str:
    try:
        return checked_day(text)
    except ValueError as exc:
        raise SettingError(str(exc), "pass the date of the data, e.g. --snapshot 2025-07-28") from None


def _text(text: str) -> str:
    return text.strip()


def _variable_name(text: str) -> str:
    name = text.strip()
    if not name.replace("_", "a").isalnum() or name[0].isdigit():
        raise SettingError(f"must name an environment variable (the token itself never goes on the command line), got {text[:40]!r}")
    return name


def _names(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:
        raise SettingError("must not be empty")
    return names


# -- the table ------------------------------------------------------------------------------

CORPUS_COMMANDS = frozenset({"serve", "call", "check", "materialize"})
RECORDS_COMMANDS = CORPUS_COMMANDS | {"config"}
HTTP_COMMANDS = frozenset({"serve", "config"})
ANSWER_COMMANDS = frozenset({"serve", "call"})
CACHED_COMMANDS = frozenset({"serve", "call", "materialize"})
CODE_COMMANDS = frozenset({"serve", "call", "materialize"})
SERVE = frozenset({"serve"})
FETCH = frozenset({"archive fetch"})
ARCHIVE_BUILDS = FETCH | {"archive build"}
ARCHIVE_COMMANDS = ARCHIVE_BUILDS | {"archive verify"}


@dataclass(frozen=True, slots=True)
class Option:
    """One setting of `Settings`, as the command line, the environment and the documentation know it."""

    name: str  # the `Settings` field
    flag: str
    help: str
    default: str  # as docs/settings.md shows it
    commands: frozenset[str]
    parse: Callable[[str], Any] | None = None  # None: an on/off flag with no value
    env: str | None = None
    metavar: str | None = None
    env_note: str = ""  # how the variable's value reads, when not like the flag's
    repeatable: bool = False


def _in_mebibytes(size: int) -> str:
    """A default size as the settings table shows it: `33554432 (32 MiB)`."""
    return f"{size} ({size / (1024 * 1024):g} MiB)"


OPTIONS: tuple[Option, ...] = (
    Option(
        "records",
        "--records",
        "where the records are (a directory or file)",
        "the bundled `records/`",
        RECORDS_COMMANDS,
        _directories,
        "PAPERCODE_RECORDS",
        "DIR",
        f"`{os.pathsep}`-separated",
        repeatable=True,
    ),
    Option(
        "archive",
        "--archive",
        "serve the Papers-with-Code archive beneath the records (see `papercode archive`)",
        "off",
        RECORDS_COMMANDS,
        env="PAPERCODE_ARCHIVE",
        env_note="`1` turns it on",
    ),
    Option(
        "archive_dir",
        "--archive-dir",
        "where the archive is (`papercode archive build` and `fetch` write there)",
        "`$XDG_DATA_HOME/papercode/archive` or `~/.local/share/papercode/archive`",
        RECORDS_COMMANDS,
        _archive_directory,
        "PAPERCODE_ARCHIVE_DIR",
        "DIR",
    ),
    Option(
        "max_file_bytes",
        "--max-file-bytes",
        "a larger `.json`/`.txt` file (after gunzip) is rejected",
        _in_mebibytes(_LIMITS.max_file_bytes),
        CORPUS_COMMANDS,
        _positive(int, "a whole number"),
        "PAPERCODE_MAX_FILE_BYTES",
        "N",
    ),
    Option(
        "max_line_bytes",
        "--max-line-bytes",
        "a longer `.jsonl` line is rejected",
        _in_mebibytes(_LIMITS.max_line_bytes),
        CORPUS_COMMANDS,
        _positive(int, "a whole number"),
        "PAPERCODE_MAX_LINE_BYTES",
        "N",
    ),
    Option(
        "max_string_chars",
        "--max-string-chars",
        "longer titles, abstracts, proceedings and author names are cut (warning)",
        str(_LIMITS.max_string_chars),
        CORPUS_COMMANDS,
        _positive(int, "a whole number"),
        "PAPERCODE_MAX_STRING_CHARS",
        "N",
    ),
    Option(
        "log_level",
        "--log-level",
        "stderr logging",
        "WARNING",
        CORPUS_COMMANDS,
        _one_of(LOG_LEVELS, upper=True),
        "PAPERCODE_LOG_LEVEL",
        "LEVEL",
    ),
    Option(
        "cache_dir",
        "--cache-dir",
        "index snapshots for warm starts",
        "`$XDG_CACHE_HOME/papercode` or `~/.cache/papercode`",
        CACHED_COMMANDS,
        _cache_directory,
        "PAPERCODE_CACHE_DIR",
        "DIR",
        "`off` disables",
    ),
    Option("cache_dir", "--no-cache", "build from the records every time; write no snapshot", "off", CACHED_COMMANDS),
    Option(
        "code_dir",
        "--code-dir",
        "the verified code store (`<prefix>.py` files); a `code/` folder in a records directory is read too",
        "`$XDG_CACHE_HOME/papercode/code` or `~/.cache/papercode/code`",
        CORPUS_COMMANDS,
        _directory,
        "PAPERCODE_CODE_DIR",
        "DIR",
    ),
    Option(
        "offline",
        "--offline",
        "get_code serves only stored code: no on-demand download",
        "off",
        ANSWER_COMMANDS,
        env="PAPERCODE_OFFLINE",
        env_note="`1` turns it on",
    ),
    Option(
        "code_base_url",
        "--code-base-url",
        "where source files are downloaded from (`<url>/<owner>/<name>/HEAD/<path>`)",
        DEFAULT_CODE_BASE_URL,
        CODE_COMMANDS,
        _base_url,
        "PAPERCODE_CODE_BASE_URL",
        "URL",
    ),
    Option("watch", "--watch", "poll the records and reload when they change", "off", SERVE),
    Option(
        "watch_interval",
        "--watch-interval",
        "time between polls; each poll stats every record file",
        "5",
        SERVE,
        _positive(float, "a number of seconds"),
        "PAPERCODE_WATCH_INTERVAL",
        "SECONDS",
    ),
    Option(
        "ready_timeout",
        "--ready-timeout",
        "while the records load, a call waits this long for them (with progress) before answering `loading`",
        "20",
        SERVE,
        _positive(float, "a number of seconds"),
        "PAPERCODE_READY_TIMEOUT",
        "SECONDS",
    ),
    Option(
        "transport",
        "--transport",
        "`stdio`, `sse` or `streamable-http`",
        "stdio",
        SERVE,
        _one_of(TRANSPORTS),
        "PAPERCODE_TRANSPORT",
        "NAME",
    ),
    Option("host", "--host", "address the HTTP transports bind", "127.0.0.1", HTTP_COMMANDS, _text, "PAPERCODE_HOST", "ADDRESS"),
    Option(
        "port",
        "--port",
        "port of the HTTP transports (0: any free port; the startup line on stderr names it)",
        "8000",
        HTTP_COMMANDS,
        _port,
        "PAPERCODE_PORT",
        "N",
    ),
    Option(
        "auth_token_env",
        "--auth-token-env",
        "HTTP: require `Authorization: Bearer <token>`, the token(s) read from this environment variable (comma-separated, to rotate)",
        "no auth",
        HTTP_COMMANDS,
        _variable_name,
        "PAPERCODE_AUTH_TOKEN_ENV",
        "VAR",
    ),
    Option(
        "insecure_no_auth",
        "--insecure-no-auth",
        "HTTP: serve a non-loopback --host without a token (refused otherwise)",
        "off",
        SERVE,
        env="PAPERCODE_INSECURE_NO_AUTH",
        env_note="`1` turns it on",
    ),
    Option(
        "allowed_hosts",
        "--allowed-host",
        "HTTP: a `Host` header to accept besides loopback and --host, e.g. `papers.example.org` or `papers.example.org:*`",
        "loopback and --host",
        SERVE,
        _names,
        "PAPERCODE_ALLOWED_HOSTS",
        "HOST",
        "comma-separated",
        repeatable=True,
    ),
    Option(
        "allowed_origins",
        "--allowed-origin",
        "HTTP: an `Origin` to accept besides loopback, e.g. `https://papers.example.org`",
        "loopback",
        SERVE,
        _names,
        "PAPERCODE_ALLOWED_ORIGINS",
        "ORIGIN",
        "comma-separated",
        repeatable=True,
    ),
    Option(
        "stateless",
        "--stateless",
        "streamable HTTP without sessions, answering JSON: for replicas behind a load balancer",
        "off",
        SERVE,
        env="PAPERCODE_STATELESS",
        env_note="`1` turns it on",
    ),
    Option(
        "no_views",
        "--no-views",
        "serve no MCP Apps views: get_leaderboard and get_paper name no `ui://` view, and hosts show the answers as text",
        "off (views on)",
        SERVE,
        env="PAPERCODE_NO_VIEWS",
        env_note="`1` turns them off",
    ),
    Option(
        "max_sessions",
        "--max-sessions",
        "streamable HTTP: open sessions at most; a new one closes the least recently used",
        "100",
        SERVE,
        _positive(int, "a whole number"),
        "PAPERCODE_MAX_SESSIONS",
        "N",
    ),
    Option(
        "session_idle_timeout",
        "--session-idle-timeout",
        "streamable HTTP: a session idle this long is closed",
        "600",
        SERVE,
        _positive(float, "a number of seconds"),
        "PAPERCODE_SESSION_IDLE_TIMEOUT",
        "SECONDS",
    ),
    Option(
        "fetch_stall_timeout",
        "--stall-timeout",
        "a download that receives under 64 KiB in this long is stopped (exit 1; run it again to go on)",
        "60",
        FETCH,
        _positive(float, "a number of seconds"),
        "PAPERCODE_FETCH_STALL_TIMEOUT",
        "SECONDS",
    ),
    Option(
        "archive_dir",
        "--out",
        "the archive directory `papercode archive` builds into or verifies (what --archive-dir names for the other commands)",
        "`$XDG_DATA_HOME/papercode/archive` or `~/.local/share/papercode/archive`",
        ARCHIVE_COMMANDS,
        _archive_directory,
        "PAPERCODE_ARCHIVE_DIR",
        "DIR",
    ),
    Option(
        "data_date",
        "--snapshot",
        "the date of the data",
        "the dataset commit's date when known, else the newest source file's modification date",
        ARCHIVE_BUILDS,
        _day,
        metavar="YYYY-MM-DD",
    ),
)


def settings_for(command: str, given: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Settings:
    """Settings for `command` from the flags `given` (by `Option.flag`; None or False: not given)
    over the environment over the defaults. Raises SettingError naming the flag or variable."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for option in OPTIONS:
        if command not in option.commands or option.name in values:
            continue
        raw = given.get(option.flag)
        if option.parse is None:  # an on/off flag; --no-cache switches the cache off
            if raw:
                values[option.name] = None if option.name == "cache_dir" else True
            elif option.env and environ.get(option.env, "").strip():
                values[option.name] = _checked(_switch, environ[option.env], option.env)
            continue
        if raw is not None and raw != []:
            if option.repeatable:
                values[option.name] = tuple(item for text in raw for item in _checked(option.parse, text, option.flag))
            else:
                values[option.name] = _checked(option.parse, raw, option.flag)
        elif option.env and environ.get(option.env, "").strip():
            values[option.name] = _checked(option.parse, environ[option.env], option.env)
    return replace(Settings(), **values)


def _checked(parse: Callable[[str], Any], text: str, source: str) -> Any:
    try:
        return parse(text)
    except SettingError as error:
        raise SettingError(f"{source} {error}", error.next_step) from None


def options_markdown() -> str:
    """The settings table of docs/settings.md, rendered from `OPTIONS`."""
    rows = ["| flag | environment | default | commands | meaning |", "|---|---|---|---|---|"]
    order = ("serve", "call", "check", "materialize", "config", "archive build", "archive fetch", "archive verify")
    for option in OPTIONS:
        flag = f"`{option.flag} {option.metavar}`" if option.metavar else f"`{option.flag}`"
        if option.repeatable:
            flag += " (repeatable)"
        env = f"`{option.env}`" if option.env else ""
        if option.env and option.env_note:
            env += f" ({option.env_note})"
        commands = ", ".join(command for command in order if command in option.commands)
        rows.append(f"| {flag} | {env} | {option.default} | {commands} | {option.help} |")
    return "\n".join(rows) + "\n"
