"""The OpenAPI schema's error answers, documented once for every operation (drf-spectacular hook).

Every error of the API has one JSON shape, ``{"message", "extra"}`` (leaderboard/api/exception_handlers.py),
and some errors can come from any operation: 401 (a wrong or revoked token is refused before the view
runs, also on public reads), 429 (a rate: writes, sign-up and log-in, anonymous reads that render; with
``Retry-After``), 503 (the database or the rate counters unreachable), 400 (an invalid query
or body) where the operation takes parameters or a body, 404 where its path names an object, 415 where
it takes a body (sent in a media type it does not read). This hook adds those answers where a view did
not document them, and gives every error answer the shape's schema, so schemathesis' conformance checks
hold for every answer (tests/reliability/test_fuzz.py).
"""

from __future__ import annotations

from typing import Any

ERROR_SCHEMA = {
    "type": "object",
    "description": "Every error of the API: a message for people and details for programs.",
    "properties": {
        "message": {"type": "string"},
        "extra": {"type": "object", "additionalProperties": True},
    },
    "required": ["message", "extra"],
}
_DESCRIPTIONS = {
    "400": "Invalid input: {message, extra}",
    "401": "Missing, wrong or revoked credentials: {message, extra}",
    "404": "Not found or not visible: {message, extra}",
    "415": "The body's media type is not one this operation reads (see its request body): {message, extra}",
    "429": "Too many requests from this client; try again after Retry-After seconds: {message, extra}",
    "503": "The service cannot answer right now; try again later: {message, extra}",
}
_RETRY_AFTER = {"description": "Seconds to wait before the next try.", "schema": {"type": "integer"}}
_METHODS = ("get", "put", "post", "patch", "delete")


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """``SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]``: document the errors every operation can answer."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    ref = {"$ref": "#/components/schemas/Error"}
    for path, item in result.get("paths", {}).items():
        for method in _METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            parameters = operation.get("parameters", []) + item.get("parameters", [])
            codes = ["401", "429", "503"]
            if parameters or "requestBody" in operation:
                codes.append("400")
            if "{" in path:
                codes.append("404")
            if "requestBody" in operation:
                codes.append("415")
            responses = operation.setdefault("responses", {})
            for code in codes:
                responses.setdefault(code, {"description": _DESCRIPTIONS[code]})
            responses["429"].setdefault("headers", {}).setdefault("Retry-After", _RETRY_AFTER)
            for code, response in responses.items():
                if code[:1] in ("4", "5") and "content" not in response:
                    response["content"] = {"application/json": {"schema": ref}}
    return result
