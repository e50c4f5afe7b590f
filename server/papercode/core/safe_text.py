"""What a string read from a table may hold before an agent is shown it: a URL a client can follow safely (`web_url`),
text without the characters no one sees (`visible`).

An archive build holds the leaderboards' and the papers' strings to these rules (`archive.rows`, `archive.catalogues`);
the server applies them again where a build made before a rule may still hold what it now refuses (a dataset's
homepage in `describe`).
"""

from __future__ import annotations

import re
from typing import Final

from .records import MAX_URL_CHARS

# -- URLs ------------------------------------------------------------------------------------
#
# A URL is written only when a client can follow it safely: http or https, a host name (not an address, no port,
# no credentials), no control, bidi or zero-width characters, no `.` or `..` path step, at most MAX_URL_CHARS.
# Nearly every URL in the archive has the plain shape `_PLAIN_URL` accepts (a lower-case host name, then ASCII
# that means nothing special in a path: no `%` (an encoded dot), no `\\` (a slash to browsers)), with no `/.` and
# no `..` anywhere: checked in C, one pattern and two searches. Only the others are taken apart (`_taken_apart`),
# which says what is wrong, and accepts every URL the plain shape does.

_PLAIN_URL = re.compile(r"https?://[a-z0-9.-]*\.[a-z]{2,63}/[A-Za-z0-9_~!$&'()*+,;=:@-][.A-Za-z0-9_~!$&'()*+,;=:@/?#-]*").fullmatch
# Characters no one sees, or that change how what follows is shown: controls but white space, bidi controls and marks,
# zero-width and other invisible format characters, Unicode tags. A URL must hold none of them, nor white space.
_UNSEEN_CLASS: Final = (
    "\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\xad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb\U000e0000-\U000e007f"
)
_HIDDEN = re.compile(f"[\x09-\x0d\x1c-\x1f\x85\u2028\u2029{_UNSEEN_CLASS}]").search
_SPACE = re.compile(r"\s").search
_URL_PARTS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):(?://(?P<authority>[^/?#]*))?(?P<rest>.*)", re.DOTALL).fullmatch
_HOST_NAME = re.compile(r"(?:[a-z0-9-]+\.)+[a-z]{2,63}").fullmatch  # labels of letters, digits and `-`; a top level of letters

# What is wrong with a URL (`web_url`), as the summary says it.
URL_PROBLEMS: Final = {
    "malformed": "not a URL",
    "not_http": "not http or https",
    "credentials": "a user name or password in it",
    "not_a_host_name": "not a host name (an address, a port, or no domain)",
    "hidden_characters": "control, bidi or zero-width characters in it",
    "dot_segments": "a . or .. path step in it",
    "too_long": f"over {MAX_URL_CHARS:,} characters",
}


def web_url(value: object, need_path: bool = False) -> tuple[str | None, str | None]:
    """(the URL to write, None) or (None, what is wrong: a key of `URL_PROBLEMS`). The URL written has its scheme
    and host in lower case; white space around it is dropped. `need_path`: a path must follow the host."""
    if type(value) is str and len(value) <= MAX_URL_CHARS and _PLAIN_URL(value) and "/." not in value and ".." not in value:
        return value, None
    return _taken_apart(value, need_path)


def followable(url: str | None) -> str | None:
    """`url` as `web_url` writes it when a client can follow it safely; None otherwise, or when there is none."""
    return None if url is None else web_url(url)[0]


def _taken_apart(value: object, need_path: bool) -> tuple[str | None, str | None]:
    if type(value) is not str:
        return None, "malformed"
    url = value.strip()
    if len(url) > MAX_URL_CHARS:
        return None, "too_long"
    if _HIDDEN(url):
        return None, "hidden_characters"
    parts = _URL_PARTS(url)
    if parts is None or _SPACE(url) or "\\" in url:
        return None, "malformed"
    scheme, authority, rest = parts["scheme"].lower(), parts["authority"], parts["rest"]
    if scheme not in ("http", "https"):
        return None, "not_http"
    if not authority:
        return None, "malformed"
    if "@" in authority:
        return None, "credentials"
    host = authority.lower()
    if not host.isascii() or not _HOST_NAME(host):
        return None, "not_a_host_name"
    path = rest.partition("?")[0].partition("#")[0]
    if any(step.lower().replace("%2e", ".") in (".", "..") for step in path.split("/")):
        return None, "dot_segments"
    if need_path and not path.strip("/"):
        return None, "malformed"
    return f"{scheme}://{host}{rest}", None


# -- texts -----------------------------------------------------------------------------------

# A terminal's escape sequences (CSI, as `ESC [ 31 m`, and OSC, as `ESC ] 8 ;; url BEL`; a lone ESC and the next
# character otherwise; the one-byte CSI): taken out whole, so that no `[31m` is left behind.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -~]?|\x9b[0-?]*[ -/]*[@-~]")
_UNSEEN = re.compile(f"[{_UNSEEN_CLASS}]")


def visible(text: str) -> str:
    """`text` without terminal escape sequences and without the characters no one sees or that reorder what follows
    (`_UNSEEN_CLASS`: controls but white space, bidi controls, zero-width characters); its white space as it was."""
    return _UNSEEN.sub("", _ESCAPES.sub("", text)) if not text.isprintable() else text
