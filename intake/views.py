"""Intake pages: ingest the data root, a job's progress and retry, uploads, push tokens."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from canvases.op_input import optional, read_sent, request_data
from intake.archive import TEXTS as ARCHIVE_TEXTS
from intake.archive import ArchiveError
from intake.jobs import ingest_start, job_retry
from intake.page_types import TokensPage
from intake.push_tokens import TokenForbidden, token_create, token_revoke, tokens_list
from intake.uploads import UploadBusy, upload_delete, upload_store, uploads_list
from memviz.input_refused import InputRefused
from memviz.pages import json_response, render_page, wants_json
from memviz.public_errors import public_data, scrub_paths
from memviz.responders import HtmxHttpRequest, Outcome, respond, wants_json_answer
from memviz.said import said
from sessions import home_selectors
from sessions.access import signed_in_to_write
from sessions.models import IngestJob
from sessions.share_links import links_list
from sessions.share_views import token_page_refusal


@require_POST
@signed_in_to_write
def ingest_view(request: HttpRequest) -> HttpResponse:
    job = ingest_start(Path(settings.MEMVIZ_DATA_ROOT))
    return _job_response(request, job)


def _job_response(request: HttpRequest, job: IngestJob) -> HttpResponse:
    if wants_json(request):
        data = home_selectors.job_item(job)  # the folder it reads is shown to staff only, as on every page
        return json_response(data if request.user.is_staff else public_data(data), status=202)
    if getattr(request, "htmx", False):
        return render_page(request, "intake/_job.html", {"job": home_selectors.job_item(job)})
    return redirect(reverse("job", args=[job.pk]))


@require_GET
def job_page(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(IngestJob, pk=job_id)
    return render_page(request, "intake/job.html", {"job": home_selectors.job_item(job)}, partial="job")


@require_POST
@signed_in_to_write
def job_retry_view(request: HtmxHttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(IngestJob, pk=job_id)
    if not job_retry(job):
        refused = Outcome.refused(_("only a failed or stalled ingest can be retried"), 409)
        return respond(request, refused, redirect_to=reverse("job", args=[job.pk]))
    job.refresh_from_db()
    return _job_response(request, job)


@require_POST
@signed_in_to_write
def upload_view(request: HtmxHttpRequest) -> HttpResponse:
    upload = request.FILES.get("archive")
    if upload is None:
        error = _("choose a .zip or .tar.gz file to upload")
    elif upload.size is None or upload.size > settings.MEMVIZ_UPLOAD_MAX_BYTES:
        # a size Django could not tell is refused rather than stored without a bound
        limit = settings.MEMVIZ_UPLOAD_MAX_BYTES
        error = _("the upload is larger than %(limit)d bytes") % {"limit": limit}
    else:
        try:
            root = upload_store(upload.chunks(), upload.name or "upload", owner=request.user)
        except ArchiveError as exc:
            reason = said(ARCHIVE_TEXTS, exc.code, exc.values)
            error = scrub_paths(_("upload refused: %(reason)s") % {"reason": reason})
        else:
            return _job_response(request, ingest_start(root))
    return respond(request, Outcome.refused(error, 400), redirect_to=reverse("home"))


@require_GET
@signed_in_to_write
def uploads_page(request: HttpRequest) -> HttpResponse:
    uploads = [
        {"id": u.id, "name": u.name, "uploaded_at": u.uploaded_at, "agents": u.agents}
        for u in uploads_list(request.user)
    ]
    return render_page(request, "intake/uploads.html", {"uploads": uploads})


@require_POST
@signed_in_to_write
def upload_delete_view(request: HtmxHttpRequest, upload_id: str) -> HttpResponse:
    back = reverse("uploads")
    try:
        slugs = upload_delete(upload_id, request.user)
    except LookupError:
        raise Http404(_("no such upload")) from None
    except UploadBusy as exc:
        busy = Outcome.refused(_("not deleted: %(reason)s") % {"reason": exc}, 409)
        return respond(request, busy, redirect_to=back)
    done = ngettext(
        "upload %(id)s deleted (%(n)d agent)", "upload %(id)s deleted (%(n)d agents)", len(slugs)
    ) % {"id": upload_id, "n": len(slugs)}
    outcome = Outcome(ok=True, message=done, body={"deleted": upload_id, "agents": slugs})
    return respond(request, outcome, redirect_to=back)


@signed_in_to_write
def tokens_view(request: HttpRequest) -> HttpResponse:
    """GET: the push tokens (agent, created by, last used); POST: create or rotate one."""
    if request.method == "POST":
        return _token_create(request)
    if request.method != "GET":
        return HttpResponse(status=405)
    data: TokensPage = {"tokens": tokens_list(request.user), "share_links": links_list(request.user)}
    return render_page(request, "intake/tokens.html", data)


TOKEN_INPUT = (optional("agent"),)  # its name is checked by token_create, with the reason


def _token_create(request: HttpRequest) -> HttpResponse:
    """Create (or rotate) the push token of an agent; shown once, only its hash is kept."""
    try:
        sent = read_sent(TOKEN_INPUT, request_data(request))  # a form, or a script's JSON body
    except InputRefused as exc:
        return token_page_refusal(request, str(exc), exc.status)
    name = sent.get("agent", "").strip()
    try:
        token = token_create(name, user=request.user)
    except TokenForbidden as exc:
        return token_page_refusal(request, str(exc), 403)
    except ValueError as exc:
        return token_page_refusal(request, str(exc), 400)
    url = request.build_absolute_uri(reverse("home"))
    data = {"agent": name, "token": token, "push_url": url}
    if wants_json_answer(request):
        return json_response(data, status=201)
    return render_page(request, "intake/token.html", data)


@require_POST
@signed_in_to_write
def token_revoke_view(request: HtmxHttpRequest, agent: str) -> HttpResponse:
    try:
        token_revoke(agent, user=request.user)
    except TokenForbidden as exc:
        return token_page_refusal(request, str(exc), 403)
    except ValueError as exc:
        return token_page_refusal(request, str(exc), 404)
    revoked = _("the push token of %(agent)s is revoked") % {"agent": agent}
    outcome = Outcome(ok=True, message=revoked, body={"revoked": agent})
    return respond(request, outcome, redirect_to=reverse("tokens"))
