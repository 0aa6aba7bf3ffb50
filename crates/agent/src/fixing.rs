//! The fix loop's rules, shared by builds and by the model-driven tasks of `wright task`: after
//! the first try, at most `max` fix attempts, and the last one, when there is more than one,
//! starts from a fresh conversation (a long failing transcript misleads a model more than it
//! helps). Both loops ask [`FixPlan::next`] instead of counting for themselves, so the two
//! cannot drift apart.

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

#[cfg(test)]
mod tests {
    use super::*;

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
