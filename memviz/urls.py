"""URL map: agents → sessions / canvases → nodes → refs; every page also answers ?format=json."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from browse import views as browse_views
from canvases import compare_views
from canvases import views as canvas_views
from debugging import compare_views as session_compare_views
from debugging import debug_views, offline_views, replay_branch
from intake import views as intake_views
from memviz.throttle import ThrottledLoginView
from sessions import share_views

handler500 = "memviz.outage.server_error"  # a database or Redis outage → 503
urlpatterns = [
    path("", browse_views.home, name="home"),
    path("search/", browse_views.search_page, name="search"),
    path("ingest/", intake_views.ingest_view, name="ingest"),
    path("upload/", intake_views.upload_view, name="upload"),
    path("uploads/", intake_views.uploads_page, name="uploads"),
    path("uploads/<str:upload_id>/delete/", intake_views.upload_delete_view, name="upload-delete"),
    path("tokens/", intake_views.tokens_view, name="tokens"),
    path("tokens/<str:agent>/revoke/", intake_views.token_revoke_view, name="token-revoke"),
    path("tokens/share/<str:key>/revoke/", share_views.share_revoke_view, name="share-revoke"),
    path("share/<str:key>/", share_views.share_open, name="share-open"),
    path("jobs/<int:job_id>/", intake_views.job_page, name="job"),
    path("jobs/<int:job_id>/retry/", intake_views.job_retry_view, name="job-retry"),
    path("login/", ThrottledLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("a/<str:agent>/", browse_views.agent_page, name="agent"),
    path("a/<str:agent>/s/<str:session>/", browse_views.session_page, name="session"),
    path("a/<str:agent>/c/<str:canvas>/", canvas_views.canvas_page, name="canvas"),
    path("a/<str:agent>/c/<str:canvas>/n/<str:node>/", canvas_views.node_panel, name="node"),
    path("a/<str:agent>/c/<str:canvas>/raw/", canvas_views.canvas_raw, name="canvas-raw"),
    path("a/<str:agent>/c/<str:canvas>/mermaid.json", canvas_views.canvas_mermaid_text, name="canvas-mermaid-text"),
    path("a/<str:agent>/refs/<path:name>", browse_views.ref_page, name="ref"),
    path("a/<str:agent>/share/", share_views.share_create_view, name="agent-share"),
    path("a/<str:agent>/s/<str:session>/share/", share_views.share_create_view, name="session-share"),
    path("a/<str:agent>/s/<str:session>/offline.html", offline_views.session_offline, name="session-offline"),
    path("a/<str:agent>/c/<str:canvas>/offline.html", offline_views.canvas_offline, name="canvas-offline"),
    path("a/<str:agent>/c/<str:canvas>/", include("canvases.edit_urls")),
    path("api/stream/", include("intake.stream_urls")),
    path("a/<str:agent>/review/", include("reviews.urls")),
]

# --- debugging a run (issue 13): replay, diagnostics, ledger, report, navigation, language ---
urlpatterns += [
    path("i18n/", include("django.conf.urls.i18n")),
    path("sessions/", debug_views.sessions_list, name="sessions-list"),
    path("a/<str:agent>/diagnostics/", debug_views.agent_diagnostics_page, name="agent-diagnostics"),
    path("a/<str:agent>/badges/", debug_views.agent_session_badges, name="agent-session-badges"),
    path("a/<str:agent>/ledger/", debug_views.agent_ledger_page, name="agent-ledger"),
    # ?id=<node id>: an id is never a path segment, so `../../admin/` cannot leave the agent
    path("a/<str:agent>/node/", debug_views.node_locate, name="node-locate"),
    path("a/<str:agent>/node/<path:node>", debug_views.node_locate, name="node-locate-path"),
    path("a/<str:agent>/s/<str:session>/replay/", debug_views.replay_page, name="session-replay"),
    path(
        "a/<str:agent>/s/<str:session>/diagnostics/",
        debug_views.session_diagnostics_page,
        name="session-diagnostics",
    ),
    path("a/<str:agent>/s/<str:session>/ledger/", debug_views.session_ledger_page, name="session-ledger"),
    path("a/<str:agent>/s/<str:session>/report.md", debug_views.session_report, name="session-report"),
    path("a/<str:agent>/c/<str:canvas>/compare/", compare_views.compare_page, name="canvas-compare"),
]
# --- end debugging a run ---

# --- branch and resume from any point (issue 25 part 2) ---
urlpatterns += [
    path("a/<str:agent>/branch/", replay_branch.branch, name="agent-branch"),
]

# --- comparing two sessions of an agent (issue 25) ---
urlpatterns += [
    path("a/<str:agent>/compare/", session_compare_views.session_compare_page, name="session-compare"),
]
