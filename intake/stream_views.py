"""``POST /api/stream/<agent>/``: newline-delimited memory events, authenticated by a bearer token."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from intake.push_tokens import agent_name_check, token_check
from intake.stream import StreamTooLarge, stream_apply
from memviz.body_gate import bearer_token


def _read_body(request: HttpRequest, limit: int) -> bytes:
    """The body, read from the stream so the limit is ours (413), not Django's generic 400."""
    declared = request.META.get("CONTENT_LENGTH") or ""
    if declared.isdigit() and int(declared) > limit:
        raise StreamTooLarge(f"body of {declared} bytes is over {limit}")
    parts: list[bytes] = []
    total = 0
    while True:
        block = request.read(1 << 16)
        if not block:
            break
        total += len(block)
        if total > limit:
            raise StreamTooLarge(f"body is over {limit} bytes")
        parts.append(block)
    return b"".join(parts)


@csrf_exempt  # token-authenticated machine API; no cookies are used
@require_POST
def stream_push(request: HttpRequest, agent: str) -> JsonResponse:
    problem = agent_name_check(agent)
    if problem:
        return JsonResponse({"error": problem}, status=400)
    if not token_check(agent, bearer_token(request.headers.get("Authorization", ""))):
        response = JsonResponse({"error": "missing or wrong bearer token"}, status=401)
        response["WWW-Authenticate"] = 'Bearer realm="memviz-stream"'
        return response
    try:
        body = _read_body(request, settings.MEMVIZ_STREAM_MAX_BODY_BYTES)
        result = stream_apply(agent_name=agent, body=body)
    except StreamTooLarge as exc:
        return JsonResponse({"error": str(exc)}, status=413)
    status = 400 if result.errors and not (result.applied or result.duplicates) else 200
    return JsonResponse(result.as_dict(), status=status)
