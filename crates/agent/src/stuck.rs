//! Noticing a model that goes round in circles.

use serde_json::Value;

/// What the detector concluded after one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stuck {
    No,
    /// First time: tell the model (the text says what it repeated).
    Warn(String),
    /// It happened again after the warning: end the phase.
    Stop(String),
}

/// Counts identical consecutive calls, and identical consecutive failures. Three in a row is
/// a loop: the first time the model is told, the second time the phase ends.
#[derive(Debug, Default)]
pub struct StuckDetector {
    last_call: Option<String>,
    same_calls: u32,
    last_failure: Option<String>,
    same_failures: u32,
    warned: bool,
    threshold: u32,
}

impl StuckDetector {
    pub fn new(threshold: u32) -> Self {
        Self { threshold: threshold.max(2), ..Default::default() }
    }

    /// Record one executed call and its outcome.
    pub fn observe(&mut self, name: &str, arguments: &str, ok: bool, error: Option<&str>) -> Stuck {
        // Compare parsed arguments so whitespace and key order do not hide a repeat.
        let canonical =
            serde_json::from_str::<Value>(arguments).map(|v| v.to_string()).unwrap_or_else(|_| arguments.to_string());
        let sig = format!("{name} {canonical}");
        if self.last_call.as_deref() == Some(sig.as_str()) {
            self.same_calls += 1;
        } else {
            self.last_call = Some(sig);
            self.same_calls = 1;
        }
        if ok {
            self.last_failure = None;
            self.same_failures = 0;
        } else {
            let fsig = format!("{name}: {}", error.unwrap_or(""));
            if self.last_failure.as_deref() == Some(fsig.as_str()) {
                self.same_failures += 1;
            } else {
                self.last_failure = Some(fsig);
                self.same_failures = 1;
            }
        }
        let reason = if self.same_calls >= self.threshold {
            format!("called {name} with the same arguments {} times in a row", self.same_calls)
        } else if self.same_failures >= self.threshold {
            format!(
                "got the same failure from {name} {} times in a row: {}",
                self.same_failures,
                error.unwrap_or("").chars().take(200).collect::<String>()
            )
        } else {
            return Stuck::No;
        };
        self.same_calls = 0;
        self.same_failures = 0;
        self.last_call = None;
        self.last_failure = None;
        if self.warned {
            Stuck::Stop(reason)
        } else {
            self.warned = true;
            Stuck::Warn(reason)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_once_then_stops() {
        let mut d = StuckDetector::new(3);
        assert_eq!(d.observe("readFile", r#"{"path":"a"}"#, true, None), Stuck::No);
        assert_eq!(d.observe("readFile", r#"{ "path": "a" }"#, true, None), Stuck::No);
        assert!(matches!(d.observe("readFile", r#"{"path":"a"}"#, true, None), Stuck::Warn(_)));
        assert_eq!(d.observe("readFile", r#"{"path":"a"}"#, true, None), Stuck::No);
        assert_eq!(d.observe("readFile", r#"{"path":"b"}"#, true, None), Stuck::No);
        assert_eq!(d.observe("readFile", r#"{"path":"b"}"#, true, None), Stuck::No);
        assert!(matches!(d.observe("readFile", r#"{"path":"b"}"#, true, None), Stuck::Stop(_)));
    }

    #[test]
    fn same_failure_with_different_arguments_counts() {
        let mut d = StuckDetector::new(3);
        for (i, expect_no) in [(0, true), (1, true)] {
            assert_eq!(
                d.observe("runCommand", &format!(r#"{{"command":"x{i}"}}"#), false, Some("not found")) == Stuck::No,
                expect_no
            );
        }
        assert!(
            matches!(d.observe("runCommand", r#"{"command":"x2"}"#, false, Some("not found")), Stuck::Warn(r) if r.contains("same failure"))
        );
        // A success in between resets the failure streak.
        d.observe("runCommand", r#"{"command":"a"}"#, false, Some("e"));
        d.observe("runCommand", r#"{"command":"b"}"#, true, None);
        assert_eq!(d.observe("runCommand", r#"{"command":"c"}"#, false, Some("e")), Stuck::No);
    }
}
