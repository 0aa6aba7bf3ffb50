//! The API's bodies come from the protocol crate ([`wright_events::api`]); what is left here
//! is how the server fills them from its records. A leaf of the module graph.

use wright_events::api::UserId;
pub use wright_events::api::{
    AppEdit, AppView, BuildBody, BuildView, Cancelled, Created, ErrorBody, ErrorInner, FileEntry, Me, Models,
    StarterView, TaskBody, TaskOutcomeView, TaskRunView,
};
use wright_store::BuildRecord;

/// A stored rating as the API shows it.
pub fn rating_of(f: wright_store::BuildFeedback) -> wright_events::api::BuildRating {
    wright_events::api::BuildRating {
        value: wright_events::api::Thumb::of(f.value),
        comment: f.comment,
        updated_at: f.updated_at,
    }
}

/// A stored build as the API shows it; the report only in `GET /api/builds/{id}`.
pub fn view_of(b: BuildRecord, preview_origin: &str, with_report: bool) -> BuildView {
    let template = b.shown_template().to_string();
    // A Python, Rust or Go program has no page to preview.
    let program = b.start.template.is_some_and(|t| t.resolve(&b.start.prompt).is_code());
    let id = b.start.id;
    BuildView {
        kind: b.start.kind,
        events_url: events_url(b.start.kind, &id),
        preview_url: b.preview_key.as_ref().filter(|_| !program).map(|k| url_for(preview_origin, &id, k)),
        prompt: b.start.prompt,
        template,
        lang: b.start.lang,
        model: b.start.model,
        status: b.status,
        end_reason: b.end_reason,
        attempt: b.attempt,
        parent_id: b.start.parent_id,
        owner: b.owner.map(UserId),
        fix_attempts: b.fix_attempts,
        turns: b.turns,
        input_tokens: b.tokens.input_tokens,
        output_tokens: b.tokens.output_tokens,
        cost_usd: b.tokens.cost_usd,
        duration_ms: b.duration_ms,
        files: b.files,
        started_at: b.start.started_at,
        finished_at: b.finished_at,
        queue_position: None,
        report: if with_report { b.report } else { None },
        app: None,
        shared_by: None,
        feedback: None,
        id,
    }
}

/// Where a run's events stream: a task run's under `/api/tasks`, every other's under
/// `/api/builds` (which serves any run the caller may see).
pub fn events_url(kind: wright_events::RunKind, id: &str) -> String {
    match kind {
        wright_events::RunKind::Task => format!("/api/tasks/{id}/events"),
        _ => format!("/api/builds/{id}/events"),
    }
}

/// The preview address of a build on the host-per-build scheme.
pub fn url_for(base: &str, id: &str, key: &str) -> String {
    let (scheme, rest) = base.split_once("://").unwrap_or(("http", base));
    format!("{scheme}://{id}-{key}.{}/", rest.trim_end_matches('/'))
}

/// A published app's own origin: `app-{slug}.` before the preview origin's host name.
pub fn app_url_for(base: &str, slug: &str) -> String {
    let (scheme, rest) = base.split_once("://").unwrap_or(("http", base));
    format!("{scheme}://app-{slug}.{}/", rest.trim_end_matches('/'))
}
