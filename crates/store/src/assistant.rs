//! What the in-app assistant keeps (`docs/assistant.md`): a turn's state between rounds of tool
//! calls, every call of those rounds, embed keys and the anonymous visitors of embedded apps.
//!
//! A turn that waits for the user's page holds no task and no connection: it is a row in
//! `waiting` with its calls `pending`. Results are accepted in one transaction that checks
//! every id is a pending call of that conversation, and the transaction that answers a round's
//! last call is the one that resumes the turn, so two posts can never both resume it.

use crate::Result;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use wright_events::chat::{ClientToolDef, Part};

/// Where an assistant turn stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnState {
    /// A server is asking the model or running server tools.
    Running,
    /// Waiting for the page to post the round's results.
    Waiting,
    Ended,
}

impl TurnState {
    pub fn as_str(self) -> &'static str {
        match self {
            TurnState::Running => "running",
            TurnState::Waiting => "waiting",
            TurnState::Ended => "ended",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "running" => Some(TurnState::Running),
            "waiting" => Some(TurnState::Waiting),
            "ended" => Some(TurnState::Ended),
            _ => None,
        }
    }
}

/// An assistant turn between rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct AssistantTurn {
    pub run: String,
    pub conversation: String,
    pub user: String,
    /// `wright` or `key:<embed key id>`.
    pub assistant: String,
    pub lang: wright_events::Lang,
    /// The client tools the page said it runs.
    pub client_tools: Vec<String>,
    /// The provider messages of this turn after the history, as JSON (the store does not
    /// read them).
    pub transcript: serde_json::Value,
    /// Parts gathered for the reply so far.
    pub parts: Vec<Part>,
    /// Rounds of tool calls so far.
    pub round: u32,
    pub state: TurnState,
}

/// Who runs a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "client" => Some(Side::Client),
            "server" => Some(Side::Server),
            _ => None,
        }
    }
}

/// Where a call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStatus {
    Pending,
    Answered,
    Cancelled,
    Expired,
}

impl CallStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Pending => "pending",
            CallStatus::Answered => "answered",
            CallStatus::Cancelled => "cancelled",
            CallStatus::Expired => "expired",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(CallStatus::Pending),
            "answered" => Some(CallStatus::Answered),
            "cancelled" => Some(CallStatus::Cancelled),
            "expired" => Some(CallStatus::Expired),
            _ => None,
        }
    }
}

/// A result may be posted for call `id` only while it is a client call still pending: its
/// stored `side` and `status` (text, as either backend holds them) say whether it is.
pub(crate) fn waiting_for_result(id: &str, side: &str, status: &str) -> crate::Result<()> {
    let (side, status) = (Side::parse(side), CallStatus::parse(status));
    if side == Some(Side::Client) && status == Some(CallStatus::Pending) {
        return Ok(());
    }
    let now = match (side, status) {
        (Some(Side::Client), Some(s)) => s.as_str(),
        (Some(Side::Client), None) => "in a state this version does not know",
        _ => "run by the server",
    };
    Err(crate::StoreError::Invalid(format!("results: tool call {id} is not waiting for a result (it is {now})")))
}

/// A new id for an assistant call: `ac-` and a whole UUID (122 random bits), so ids never meet
/// in a store however many calls, turns and servers share it. The page and the results route
/// know a call by it; the provider never sees it.
pub fn new_call_id() -> String {
    format!("ac-{}", uuid::Uuid::new_v4().simple())
}

/// One tool call of a round.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRow {
    /// The server's id ([`new_call_id`]), unique in the store: the page answers the call by it.
    pub id: String,
    /// The id the provider gave the call, told back to it with the call's result. Unique only
    /// within one answer of the model (many providers start again at `call_0` each time).
    pub provider_id: String,
    pub run: String,
    pub conversation: String,
    pub round: u32,
    pub pos: u32,
    pub name: String,
    /// The arguments as the model wrote them (JSON text).
    pub arguments: String,
    pub args_hash: String,
    pub side: Side,
    pub read_only: bool,
    /// RFC 3339.
    pub deadline: String,
    pub status: CallStatus,
    pub output: Option<String>,
    pub error: Option<String>,
}

/// A page's answer to one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Output(String),
    Error(String),
}

/// What accepting a batch of results did.
#[derive(Debug, Clone, PartialEq)]
pub enum Answered {
    /// Other calls of the round are still pending.
    Waiting { run: String, left: usize },
    /// This batch answered the round's last call: the caller resumes the turn (no one else
    /// will).
    RoundComplete { run: String },
}

/// An embed key as stored (its secret is kept only as a hash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbedKey {
    pub id: String,
    pub owner_id: String,
    pub name: String,
    /// Origins whose pages may use it (`https://app.example`).
    pub origins: Vec<String>,
    pub tools: Vec<ClientToolDef>,
    pub docs_dir: Option<String>,
    /// Messages an hour for all its visitors together.
    pub per_hour: u32,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

/// The in-app assistant's persistence; every [`crate::Store`] is one.
#[async_trait]
pub trait AssistantStore: Send + Sync {
    /// Record a new turn (state `running`, round 0).
    async fn begin_assistant_turn(&self, turn: &AssistantTurn) -> Result<()>;
    /// [`crate::StoreError::NotFound`] when there is none.
    async fn assistant_turn(&self, run: &str) -> Result<AssistantTurn>;
    /// Store the turn's transcript, parts, round and state.
    async fn save_assistant_turn(&self, turn: &AssistantTurn) -> Result<()>;
    /// In one transaction: store `turn` (as `waiting`) and the round's calls (client calls
    /// `pending`, server calls already answered).
    async fn wait_for_page(&self, turn: &AssistantTurn, calls: &[CallRow]) -> Result<()>;
    /// Accept the page's results for pending calls of `conversation`, all or none: an id that
    /// is not a pending call of this conversation, a repeated id, or ids of two turns refuse
    /// the whole batch ([`crate::StoreError::Invalid`]).
    /// When the batch answers the round's last call the turn goes back to `running` and its
    /// run's record names `answerer` (who resumes it).
    async fn answer_calls(&self, conversation: &str, answers: &[(String, Answer)], answerer: &str) -> Result<Answered>;
    /// The calls of `run`'s round `round`, in the model's order.
    async fn round_calls(&self, run: &str, round: u32) -> Result<Vec<CallRow>>;
    /// The client calls of `conversation` still pending, oldest first.
    async fn pending_calls(&self, conversation: &str) -> Result<Vec<CallRow>>;
    /// Close every pending call of `conversation` as cancelled with `why` and end their turns;
    /// the runs of the turns that were waiting (for the caller to end).
    async fn close_pending(&self, conversation: &str, why: &str) -> Result<Vec<String>>;
    /// Close pending calls whose deadline is before `now` as expired and end their turns;
    /// `(run, conversation)` of each turn that was waiting.
    async fn expire_calls(&self, now: &str) -> Result<Vec<(String, String)>>;

    /// A new embed key with the hash of its secret.
    async fn create_embed_key(&self, key: &EmbedKey, key_hash: &str) -> Result<()>;
    /// The live (not revoked) key with this hash.
    async fn embed_key_by_hash(&self, key_hash: &str) -> Result<Option<EmbedKey>>;
    /// One key by id, revoked or not.
    async fn embed_key(&self, id: &str) -> Result<Option<EmbedKey>>;
    /// `owner`'s keys, newest first.
    async fn embed_keys(&self, owner: &str) -> Result<Vec<EmbedKey>>;
    /// Revoke `owner`'s key `id`; whether it was live. Its visitors are signed out with it.
    async fn revoke_embed_key(&self, owner: &str, id: &str) -> Result<bool>;
    /// A new visitor of key `key_id` with the hash of its token, whose session ends once
    /// unused for `idle`; false (nothing made) when the key already has `max_live` visitors
    /// whose sessions have not ended. Counted and made in one step under the key's lock, so
    /// servers sharing the store keep one cap.
    async fn create_visitor(
        &self,
        id: &str,
        token_hash: &str,
        key_id: &str,
        idle: std::time::Duration,
        max_live: u32,
    ) -> Result<bool>;
    /// Visitor `id` was just active: their session now ends `idle` from now.
    async fn touch_visitor(&self, id: &str, idle: std::time::Duration) -> Result<()>;
    /// The visitor with this token, whose session has not ended, and its live key.
    async fn visitor_by_hash(&self, token_hash: &str) -> Result<Option<(String, EmbedKey)>>;
}
