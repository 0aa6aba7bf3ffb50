//! Every error the API returns: `{"error": {"code", "message"}}` with the fitting status, and a
//! JSON extractor whose rejections (bad JSON, wrong fields, too large) take that same shape.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use wright_store::StoreError;

/// An API error: a status, a stable machine code and words for people.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Seconds for `Retry-After` (429, 503).
    pub retry_after: Option<u64>,
    /// Further fields of the error object, for a program to act on (a spending cap's figures);
    /// boxed, so the error every handler returns stays small.
    pub details: Option<Box<serde_json::Map<String, serde_json::Value>>>,
    /// Which per-user limit refused the request, and how far it is used (429 only); boxed so
    /// every other error stays small.
    pub limit: Option<Box<LimitHit>>,
}

/// The limit a 429 ran into, as `error.limit`: a page can say which, how many were used and
/// when room comes back without reading the message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct LimitHit {
    /// The route's limit: `builds`, `tasks`, `explanations`, `chat_messages`,
    /// `assistant_turns`, `concurrent_runs`, or an app's own (`app_assistant`, …).
    pub route: &'static str,
    /// The most allowed in the window.
    pub limit: u32,
    /// Used in the window now (the refused request not counted: a refusal takes nothing).
    pub used: u64,
    /// The window, in seconds (3600: an hour; 0: at once, for `concurrent_runs`).
    pub window_secs: u64,
    /// Seconds until one use leaves the window (the `Retry-After` header).
    pub retry_after_secs: u64,
    /// When that is (RFC 3339, UTC).
    pub resets_at: String,
}

#[derive(Serialize)]
struct Body<'a> {
    error: Inner<'a>,
}

#[derive(Serialize)]
struct Inner<'a> {
    code: &'a str,
    message: &'a str,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    details: Option<&'a serde_json::Map<String, serde_json::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<&'a LimitHit>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), retry_after: None, details: None, limit: None }
    }
    /// The same error with `details` beside its code and message.
    pub fn with_details(self, details: serde_json::Map<String, serde_json::Value>) -> Self {
        Self { details: Some(Box::new(details)), ..self }
    }
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "sign in first: send `Authorization: Bearer <token>` (from `wright users add NAME`) or open the login link the server printed",
        )
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }
    pub fn not_found(what: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", format!("{} not found", what.into()))
    }
    pub fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }
    pub fn too_many(code: &'static str, message: impl Into<String>, retry_after: u64) -> Self {
        Self { retry_after: Some(retry_after.max(1)), ..Self::new(StatusCode::TOO_MANY_REQUESTS, code, message) }
    }
    /// 429 `rate_limited` for limit `hit`, with its wait as `Retry-After`.
    pub fn limited(message: impl Into<String>, hit: LimitHit) -> Self {
        let retry = hit.retry_after_secs;
        Self { limit: Some(Box::new(hit)), ..Self::too_many("rate_limited", message, retry) }
    }
    pub fn unavailable(code: &'static str, message: impl Into<String>) -> Self {
        Self { retry_after: Some(5), ..Self::new(StatusCode::SERVICE_UNAVAILABLE, code, message) }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        let message = message.into();
        tracing::error!("{message}");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(what) => Self::not_found(what),
            StoreError::Invalid(m) => Self::new(StatusCode::CONFLICT, "conflict", m),
            other => Self::unavailable("store", format!("the database could not be used: {other}")),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Body {
            error: Inner {
                code: self.code,
                message: &self.message,
                details: self.details.as_deref(),
                limit: self.limit.as_deref(),
            },
        };
        let mut res = (self.status, axum::Json(body)).into_response();
        if let Some(secs) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&secs.to_string())
        {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        if self.status == StatusCode::UNAUTHORIZED {
            res.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        res
    }
}

/// `Json<T>` whose rejections are [`ApiError`]s: 413 past the body limit, 415 without a JSON
/// content type, 422 for malformed JSON and for fields that are missing, unknown or mistyped.
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(Self(v)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

fn json_rejection(r: JsonRejection) -> ApiError {
    let status = r.status();
    let text = r.body_text();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::new(status, "too_large", "the request body is larger than 1 MiB");
    }
    match r {
        JsonRejection::MissingJsonContentType(_) => ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "content_type",
            "send the body as `Content-Type: application/json`",
        ),
        JsonRejection::JsonSyntaxError(_) => ApiError::invalid("malformed_json", text),
        JsonRejection::JsonDataError(_) => ApiError::invalid("invalid_fields", text),
        // A body that could not be read: most often one past the limit.
        _ if text.contains("length limit") => {
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", "the request body is larger than 1 MiB")
        }
        _ => ApiError::new(StatusCode::BAD_REQUEST, "bad_request", text),
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
