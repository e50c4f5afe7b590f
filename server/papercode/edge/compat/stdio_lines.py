"""What each line a client sends over stdio deserves, judged before the SDK reads it: a good line passes unchanged; a
line the SDK would leave unanswered gets the JSON-RPC error it deserves (-32700 with the id when the id can still be
read, else null; -32600; -32602), and notifications and blank lines get no answer.

Works around: mcp 2.3.0's stdio transport drops a line it cannot parse with a debug log (not JSON, a lone surrogate
escape, a byte-order mark, `"jsonrpc": "1.0"`, `params` that are not an object), and takes a request whose id is
neither a string nor an integer (`1.5`, `true`, `null`) for a notification: either way, its client waits for an
answer that never comes.
Canary: `test_the_sdk_leaves_a_malformed_line_and_an_unusable_id_unanswered` fails the day the SDK answers them.
Goes when: the SDK's stdio transport answers such lines itself; `stdio_wire` then passes every line on.

The check is one orjson parse of each line (a microsecond or two); only a line that fails it is judged the SDK's
way (`jsonrpc_message_adapter`), so what the SDK accepts is exactly what passes.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Final, TypeGuard

import orjson
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, jsonrpc_message_adapter
from pydantic import ValidationError

log = logging.getLogger(__name__)

# Below this many brackets a line cannot nest deeper than the SDK's JSON parser allows (about 200 levels),
# so orjson (which allows 1,024) accepting it means the SDK does too.
FAST_BRACKETS = 128
_JSON_SPACE = " \t\r\n"
_DECODER = json.JSONDecoder()


class _Drop:
    """A line the SDK rejects that gets no answer (a notification, a malformed response, a blank line)."""


DROP: Final = _Drop()


def surely_valid(line: bytes) -> dict[str, Any] | None:
    """`line` parsed, when the SDK certainly accepts it (None: maybe not; `judge` decides). Returned so that what reads
    the line next (`stdio_eof`) does not parse it again."""
    if line.count(b"{") + line.count(b"[") > FAST_BRACKETS:
        return None
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(message) is not dict or message.get("jsonrpc") != "2.0":
        return None
    if type(message.get("method")) is str:
        params = message.get("params")
        valid = (params is None or type(params) is dict) and ("id" not in message or type(message["id"]) in (int, str))
    else:
        valid = type(message.get("result")) is dict and type(message.get("id")) in (int, str)
    return message if valid else None


def judge(line: bytes) -> bytes | _Drop | None:
    """None when the SDK accepts `line`; otherwise the answer it deserves, or DROP when it deserves none."""
    text = line.decode("utf-8", "replace")  # what the SDK reads
    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as error:
        problem = error.errors()[0]
    else:
        return _unusable_id(text)
    if not text.strip(_JSON_SPACE):
        return DROP
    try:
        message = json.loads(text) if problem["type"] != "json_invalid" else None
    except ValueError:
        message = None
    if message is None:
        if text.startswith("\ufeff"):
            reason = "the line starts with a byte-order mark"
        else:
            reason = str(problem["msg"]).removeprefix("Invalid JSON: ")
        return _answer(readable_id(text), PARSE_ERROR, f"Parse error: {reason}")
    if not isinstance(message, dict):
        what = "a batch (an array), which MCP does not take" if isinstance(message, list) else "not a JSON object"
        return _answer(None, INVALID_REQUEST, f"Invalid Request: the message is {what}")
    return _judge_object(message)


def _judge_object(message: dict[str, Any]) -> bytes | _Drop:
    """What a JSON object the SDK rejects deserves."""
    ident = message.get("id")
    if "method" not in message and ("result" in message or "error" in message):
        log.info("dropped a malformed response from the client")
        return DROP
    if not is_request_id(ident):
        log.info("dropped a malformed message without a usable id (a notification gets no answer)")
        return DROP
    if message.get("jsonrpc") != "2.0":
        return _answer(ident, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    if not isinstance(message.get("method"), str):
        return _answer(ident, INVALID_REQUEST, 'Invalid Request: "method" must be a string')
    if message.get("params") is not None and not isinstance(message["params"], dict):
        return _answer(ident, INVALID_PARAMS, 'Invalid params: "params" must be an object')
    return _answer(ident, INVALID_REQUEST, "Invalid Request")


def _unusable_id(text: str) -> bytes | None:
    """A request whose id is neither a string nor an integer (a float, true, null, …) the SDK takes for a
    notification and never answers, so its client would wait forever: answered here (MCP forbids a null id)."""
    message = json.loads(text)
    if not isinstance(message, dict) or "id" not in message or "method" not in message or is_request_id(message["id"]):
        return None
    ident = message["id"]
    shown = ident if isinstance(ident, float) else None  # a number its client can still match the answer to
    return _answer(shown, INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer')


def _answer(ident: object, code: int, message: str) -> bytes:
    log.info("answered a malformed line: %s", message)
    return error_line(ident, code, message)


def is_request_id(value: object) -> TypeGuard[int | str]:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def readable_id(text: str) -> object:
    """The request's id, read from the top-level members before the JSON breaks; None when it cannot be read."""
    found: object = None
    try:
        i = _space(text, 1 if text.startswith("\ufeff") else 0)
        if not text.startswith("{", i):
            return None
        i += 1
        while True:
            i = _space(text, i)
            if not text.startswith('"', i):
                break
            key, i = _DECODER.raw_decode(text, i)
            i = _space(text, i)
            if not text.startswith(":", i):
                break
            value, i = _DECODER.raw_decode(text, _space(text, i + 1))
            if key == "id":
                found = value
            i = _space(text, i)
            if not text.startswith(",", i):
                break
            i += 1
    except (ValueError, RecursionError):
        pass
    return found if is_request_id(found) else None


def _space(text: str, i: int) -> int:
    while i < len(text) and text[i] in _JSON_SPACE:
        i += 1
    return i


def error_line(ident: object, code: int, message: str) -> bytes:
    """A JSON-RPC error answer, as one line."""
    try:
        return orjson.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}) + b"\n"
    except TypeError:  # an id with a lone surrogate cannot be written back
        return orjson.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}) + b"\n"
