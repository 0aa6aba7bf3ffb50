//! Chat's per-user limits in this process: one turn at a time, and so many messages an hour.
//! Turns cost a model call each, so a loop of messages cannot run up a bill or starve others.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Inner {
    answering: HashSet<String>,
    sent: HashMap<String, VecDeque<Instant>>,
}

/// Who is being answered now, and when each user's recent messages came.
#[derive(Default, Clone)]
pub struct ChatLimits(Arc<Mutex<Inner>>);

/// A user's turn; the next message may start once it is dropped.
pub struct ChatSlot {
    limits: ChatLimits,
    user: String,
}

impl Drop for ChatSlot {
    fn drop(&mut self) {
        self.limits.0.lock().unwrap_or_else(PoisonError::into_inner).answering.remove(&self.user);
    }
}

const HOUR: Duration = Duration::from_secs(3600);

impl ChatLimits {
    /// Count one more message of `who` in this hour (no turn is held), or say why not and in
    /// how many seconds to try again.
    pub fn count(&self, who: &str, per_hour: u32) -> Result<(), (String, u64)> {
        let mut inner = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let sent = inner.sent.entry(who.to_string()).or_default();
        while sent.front().is_some_and(|t| now.duration_since(*t) >= HOUR) {
            sent.pop_front();
        }
        if sent.len() >= per_hour as usize {
            let wait = sent.front().map(|t| HOUR.saturating_sub(now.duration_since(*t)).as_secs() + 1).unwrap_or(60);
            return Err((format!("at most {per_hour} an hour; try again in {wait} s"), wait));
        }
        sent.push_back(now);
        Ok(())
    }

    /// Take `user`'s turn, or say why not and in how many seconds to try again.
    pub fn take(&self, user: &str, per_hour: u32) -> Result<ChatSlot, (String, u64)> {
        let mut inner = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if inner.answering.contains(user) {
            return Err(("the previous message is still being answered; wait for it to finish".into(), 2));
        }
        let now = Instant::now();
        let sent = inner.sent.entry(user.to_string()).or_default();
        while sent.front().is_some_and(|t| now.duration_since(*t) >= HOUR) {
            sent.pop_front();
        }
        if sent.len() >= per_hour as usize {
            let wait = sent.front().map(|t| HOUR.saturating_sub(now.duration_since(*t)).as_secs() + 1).unwrap_or(60);
            return Err((format!("at most {per_hour} chat messages an hour; try again in {wait} s"), wait));
        }
        sent.push_back(now);
        inner.answering.insert(user.to_string());
        Ok(ChatSlot { limits: self.clone(), user: user.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_turn_at_a_time_and_so_many_an_hour() {
        let l = ChatLimits::default();
        let a = l.take("u", 2).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(l.take("u", 2).is_err(), "a second turn while the first runs");
        assert!(l.take("v", 2).is_ok(), "another user is not held up");
        drop(a);
        drop(l.take("u", 2).unwrap_or_else(|e| panic!("{e:?}")));
        let (why, retry) = l.take("u", 2).err().unwrap_or_default();
        assert!(why.contains("2 chat messages an hour") && retry > 3500, "{why} {retry}");
    }
}
