//! A chat or assistant turn's lease: the server answering a turn says so in the store every
//! third of [`TURN_LEASE`] ([`Engine::hold_turn`]), and any server's sweep
//! ([`Engine::end_lapsed_turns`]) ends the turns whose lease ran out, so a turn whose server
//! died (on this machine or another) ends with an `error` and its `complete` instead of
//! leaving its followers waiting for ever.

use super::Engine;
use std::time::Duration;
use tokio::task::JoinHandle;
use wright_store::{Store, TurnState};

/// How long a turn stays open after its server last said it answers it.
pub const TURN_LEASE: Duration = Duration::from_secs(30);

/// What a turn ended by the sweep says.
const SERVER_GONE: &str = "The server answering this message stopped; send it again.";

/// Renews a turn's lease until dropped.
pub struct TurnHold {
    keeper: JoinHandle<()>,
    store: std::sync::Arc<dyn Store>,
    run: String,
}

impl TurnHold {
    /// The turn now waits for its page, which holds no server: stop renewing and give the
    /// lease back, so the sweep leaves the turn alone however long the page takes (its calls'
    /// deadline ends it) and the server that resumes it takes a lease of its own.
    pub async fn release(self) {
        self.keeper.abort();
        if let Err(e) = self.store.release_turn(&self.run).await {
            tracing::warn!(run = %self.run, "giving back the turn's lease: {e}");
        }
    }
}

impl Drop for TurnHold {
    fn drop(&mut self) {
        self.keeper.abort();
    }
}

async fn keep(store: std::sync::Arc<dyn Store>, run: String, lease: Duration) {
    loop {
        match store.hold_turn(&run, lease).await {
            Ok(true) => {}
            // Ended (by its own end, or by a sweep that found its lease run out): nothing to hold.
            Ok(false) => return,
            Err(e) => tracing::warn!(run = %run, "renewing the turn's lease: {e}"),
        }
        tokio::time::sleep(lease / 3).await;
    }
}

impl Engine {
    /// Hold turn `run` for this server while the returned guard lives (the first lease is
    /// taken before this returns, so a sweep never finds a turn being answered without one).
    pub async fn hold_turn(&self, run: &str) -> TurnHold {
        if let Err(e) = self.store.hold_turn(run, TURN_LEASE).await {
            tracing::warn!(run, "taking the turn's lease: {e}");
        }
        let (store, id) = (self.store.clone(), run.to_string());
        let keeper = tokio::spawn(async move {
            tokio::time::sleep(TURN_LEASE / 3).await;
            keep(store, id, TURN_LEASE).await
        });
        TurnHold { keeper, store: self.store.clone(), run: run.to_string() }
    }

    /// End the turns whose lease ran out (their server died or lost the store), whichever
    /// server answered them: each gets an `error` and the `complete` made from its record
    /// (`server_stopped`); an assistant turn's state ends with it. Every server sweeps; the
    /// store ends each turn once. How many this call ended.
    pub async fn end_lapsed_turns(&self) -> usize {
        let lapsed = match self.store.lapsed_turns().await {
            Ok(runs) => runs,
            Err(e) => {
                tracing::warn!("turns whose lease ran out could not be read: {e}");
                return 0;
            }
        };
        let mut ended = 0;
        for run in lapsed {
            if !self.fail_chat_turn(&run, SERVER_GONE).await {
                continue;
            }
            ended += 1;
            if let Ok(mut turn) = self.store.assistant_turn(&run).await
                && turn.state != TurnState::Ended
            {
                turn.state = TurnState::Ended;
                if let Err(e) = self.store.save_assistant_turn(&turn).await {
                    tracing::warn!(run = %run, "the assistant turn's state was not ended: {e}");
                }
            }
        }
        ended
    }
}
