//! The fix loop, shared by builds and by the model-driven tasks of `wright task`: verify →
//! (passed: done) → another attempt? → the fix message → the model → verify again. After the
//! first try, at most `max` fix attempts, and the last one, when there is more than one,
//! starts from a fresh conversation (a long failing transcript misleads a model more than it
//! helps). [`fix_loop`] is that loop, written once; each caller gives its verification, its
//! messages and its model run through [`FixLoop`] (the build adds diagnosis and lessons in its
//! message, the task engine keeps its own handlers and checks).

use std::future::Future;
use wright_provider::Message;

/// Fix attempts when nothing says otherwise (builds' `--max-fix-attempts`, tasks' limits; a
/// task may ask for fewer, never more).
pub const DEFAULT_FIX_ATTEMPTS: u32 = 3;

/// One fix attempt: which one (1-based), and whether it starts a fresh conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixAttempt {
    pub number: u32,
    pub fresh: bool,
}

/// How many fix attempts a loop may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixPlan {
    max: u32,
}

impl FixPlan {
    /// At most `max` attempts.
    pub fn new(max: u32) -> Self {
        Self { max }
    }

    pub fn max(self) -> u32 {
        self.max
    }

    /// The attempt after `made` attempts, or `None` when none is left.
    pub fn next(self, made: u32) -> Option<FixAttempt> {
        (made < self.max).then(|| FixAttempt { number: made + 1, fresh: made + 1 == self.max && self.max > 1 })
    }
}

/// What one verification round decided.
#[derive(Debug)]
pub enum Round<End, Failed> {
    /// The loop is over: the work passed, or it was stopped.
    Done(End),
    /// Something fails: fixed by the next attempt, if one is left.
    Failed(Failed),
}

/// What differs between the fix loops of builds and tasks. [`fix_loop`] calls these in order:
/// [`FixLoop::verify`], then (when something fails and [`FixLoop::may_fix`] and the plan allow)
/// [`FixLoop::fix_message`] and [`FixLoop::run`]; [`FixLoop::exhausted`] when no attempt is left.
pub trait FixLoop {
    /// How the loop ends.
    type End;
    /// What a failed verification found.
    type Failed;

    /// Verifies the work after `made` fix attempts.
    fn verify(&mut self, made: u32) -> impl Future<Output = Round<Self::End, Self::Failed>> + Send;

    /// Whether another attempt may start at all (not once the run is cancelled).
    fn may_fix(&self) -> bool {
        true
    }

    /// No attempt is left (or may start) after `made` of them: how the loop ends.
    fn exhausted(&mut self, failed: Self::Failed, made: u32) -> Self::End;

    /// The user message of `attempt`. With `attempt.fresh` it opens a new conversation under
    /// [`FixLoop::system`]; otherwise it is added to the current one.
    fn fix_message(&mut self, failed: &Self::Failed, attempt: FixAttempt) -> impl Future<Output = String> + Send;

    /// The system prompt a fresh conversation starts with.
    fn system(&self) -> String;

    /// Lets the model work on the conversation; `Some` ends the loop (cancelled, out of budget,
    /// the provider failed).
    fn run(&mut self, messages: &mut Vec<Message>) -> impl Future<Output = Option<Self::End>> + Send;
}

/// The fix loop: verify, and while something fails and `plan` allows, hand the failure to the
/// model in `messages` (a fresh conversation on the last attempt) and verify again.
pub async fn fix_loop<L: FixLoop>(l: &mut L, plan: FixPlan, messages: &mut Vec<Message>) -> L::End {
    let mut made = 0;
    loop {
        let failed = match l.verify(made).await {
            Round::Done(end) => return end,
            Round::Failed(failed) => failed,
        };
        let Some(next) = plan.next(made).filter(|_| l.may_fix()) else {
            return l.exhausted(failed, made);
        };
        made = next.number;
        let text = l.fix_message(&failed, next).await;
        if next.fresh {
            *messages = vec![Message::system(l.system()), Message::user(text)];
        } else {
            messages.push(Message::user(text));
        }
        if let Some(end) = l.run(messages).await {
            return end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loop whose verification fails `failing` times; it records what the loop did.
    struct Scripted {
        failing: u32,
        calls: Vec<String>,
        stop_at: Option<u32>,
    }

    impl FixLoop for Scripted {
        type End = String;
        type Failed = u32;

        async fn verify(&mut self, made: u32) -> Round<String, u32> {
            self.calls.push(format!("verify {made}"));
            if made >= self.failing { Round::Done(format!("passed after {made}")) } else { Round::Failed(made) }
        }

        fn exhausted(&mut self, failed: u32, made: u32) -> String {
            format!("gave up on failure {failed} after {made}")
        }

        async fn fix_message(&mut self, failed: &u32, attempt: FixAttempt) -> String {
            format!("fix {failed} (attempt {}, fresh {})", attempt.number, attempt.fresh)
        }

        fn system(&self) -> String {
            "system".into()
        }

        async fn run(&mut self, messages: &mut Vec<Message>) -> Option<String> {
            let last = messages.last().and_then(|m| m.content.clone()).unwrap_or_default();
            self.calls.push(format!("run {} message(s), last: {last}", messages.len()));
            let runs = u32::try_from(self.calls.iter().filter(|c| c.starts_with("run")).count()).unwrap_or(0);
            (self.stop_at == Some(runs)).then(|| "stopped".to_string())
        }
    }

    async fn drive(failing: u32, max: u32, stop_at: Option<u32>) -> (String, Vec<String>) {
        let mut l = Scripted { failing, calls: Vec::new(), stop_at };
        let mut messages = vec![Message::system("system"), Message::user("build it")];
        let end = fix_loop(&mut l, FixPlan::new(max), &mut messages).await;
        (end, l.calls)
    }

    #[tokio::test]
    async fn the_loop_fixes_until_it_passes_the_last_attempt_fresh() {
        let (end, calls) = drive(3, 3, None).await;
        assert_eq!(end, "passed after 3");
        assert_eq!(
            calls,
            [
                "verify 0",
                "run 3 message(s), last: fix 0 (attempt 1, fresh false)",
                "verify 1",
                "run 4 message(s), last: fix 1 (attempt 2, fresh false)",
                "verify 2",
                "run 2 message(s), last: fix 2 (attempt 3, fresh true)",
                "verify 3",
            ]
        );
    }

    #[tokio::test]
    async fn the_loop_gives_up_when_no_attempt_is_left_and_a_run_can_end_it() {
        assert_eq!(drive(5, 2, None).await.0, "gave up on failure 2 after 2");
        assert_eq!(drive(0, 2, None).await, ("passed after 0".to_string(), vec!["verify 0".to_string()]));
        assert_eq!(drive(5, 3, Some(1)).await.0, "stopped");
    }

    #[test]
    fn three_attempts_the_last_from_a_fresh_conversation() {
        let plan = FixPlan::new(3);
        let attempts: Vec<FixAttempt> = (0..).map_while(|made| plan.next(made)).collect();
        assert_eq!(
            attempts,
            [
                FixAttempt { number: 1, fresh: false },
                FixAttempt { number: 2, fresh: false },
                FixAttempt { number: 3, fresh: true }
            ]
        );
    }

    #[test]
    fn one_attempt_keeps_its_conversation_and_none_means_none() {
        assert_eq!(FixPlan::new(1).next(0), Some(FixAttempt { number: 1, fresh: false }));
        assert_eq!(FixPlan::new(1).next(1), None);
        assert_eq!(FixPlan::new(0).next(0), None);
        assert_eq!(FixPlan::new(5).next(4), Some(FixAttempt { number: 5, fresh: true }));
    }
}
