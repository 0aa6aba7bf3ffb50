//! Whose MCP session is whose. A Streamable HTTP session (the `Mcp-Session-Id` rmcp hands out
//! on `initialize`) belongs to the user who opened it: a request that names it with another
//! user's token is answered as if the session did not exist, so a leaked session id is worth
//! nothing without its owner's token. Kept in this process, as rmcp keeps the sessions.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

/// Sessions remembered at most; past it the oldest is forgotten (its client, told the session
/// is gone, opens a new one, as the protocol has it do).
const MAX_SESSIONS: usize = 10_000;

#[derive(Default)]
pub struct Sessions {
    owners: Mutex<HashMap<String, (String, Instant)>>,
}

impl Sessions {
    fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, (String, Instant)>) -> R) -> R {
        let mut m = match self.owners.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        f(&mut m)
    }

    /// Session `id` was opened by `user`.
    pub fn opened(&self, id: &str, user: &str) {
        self.with(|m| {
            if m.len() >= MAX_SESSIONS
                && let Some(oldest) = m.iter().min_by_key(|(_, (_, at))| *at).map(|(k, _)| k.clone())
            {
                m.remove(&oldest);
            }
            m.insert(id.to_string(), (user.to_string(), Instant::now()));
        });
    }

    /// Whether `user` may use session `id`: only the user who opened it.
    pub fn may_use(&self, id: &str, user: &str) -> bool {
        self.with(|m| m.get(id).is_some_and(|(owner, _)| owner == user))
    }

    pub fn closed(&self, id: &str) {
        self.with(|m| m.remove(id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_its_openers_only() {
        let s = Sessions::default();
        s.opened("s1", "alice");
        assert!(s.may_use("s1", "alice"));
        assert!(!s.may_use("s1", "bob"));
        assert!(!s.may_use("s2", "alice"), "a session this process never opened");
        s.closed("s1");
        assert!(!s.may_use("s1", "alice"));
    }
}
