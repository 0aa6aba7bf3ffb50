//! A published build's app as events and API answers name it: its address (`/apps/<slug>`),
//! and the title and one-line description taken from its entry page.

use serde::{Deserialize, Serialize};

/// Where a published build's app lives and what it is called. On `complete` (when the build
/// published and the store gave it an address) and on `GET /api/builds/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AppRef {
    /// Unique across the store: lowercase ASCII words joined by `-` (`my-todo-app`, `my-todo-app-2`).
    pub slug: String,
    /// The page's `<title>`, or the request's first words when it had none.
    pub title: String,
    /// The page's `<meta name="description">`, or the request (clipped) when it had none.
    pub description: String,
    /// The address on the API's origin: `/apps/<slug>` (it redirects to the app's own origin).
    pub url_path: String,
}

impl AppRef {
    /// The path every app answers at on the API's origin.
    pub fn path_of(slug: &str) -> String {
        format!("/apps/{slug}")
    }
}
