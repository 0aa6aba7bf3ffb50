//! What wright read in a verification's failures, for the fix prompt and for matching notes.
//!
//! The reading itself lives with the test reports ([`wright_testreport::diagnose`]): it knows
//! the runners' output and the TAP parser. This module hands it typed values: each failing
//! test as the [`TestFailure`](wright_testreport::TestFailure) verification found (its
//! location is where the error is when its message names no place of its own), and the tool
//! output each failure holds, with the place verification found when it knows one. Nothing
//! here re-reads text wright wrote.

use crate::verdict::Failure;
use wright_testreport::Location;
pub use wright_testreport::diagnose::{Diagnosis, ErrorKind, libraries_in_source};
use wright_testreport::diagnose::{Evidence, diagnose_all};

/// Every distinct error in `failures`, in order, deduplicated, at most 20.
pub fn diagnose(failures: &[Failure]) -> Vec<Diagnosis> {
    let places: Vec<Option<Location>> = failures.iter().map(Failure::place).collect();
    let mut evidence = Vec::new();
    for (f, place) in failures.iter().zip(&places) {
        if !f.output.trim().is_empty() {
            evidence.push(match place {
                Some(p) => Evidence::At(&f.output, p),
                None => Evidence::Output(&f.output),
            });
        }
        evidence.extend(f.tests.iter().map(Evidence::Test));
    }
    diagnose_all(&evidence)
}

/// The structured reading of the errors, as a section of the fix message.
pub fn diagnosis_block(diagnoses: &[Diagnosis]) -> String {
    if diagnoses.is_empty() {
        return String::new();
    }
    let mut m = String::from("\n## What wright read in the errors\n");
    for d in diagnoses.iter().take(8) {
        m.push_str(&format!("- {}: {}", d.kind.describe(), wright_tools::clip(&d.message, 300)));
        match (&d.file, d.line) {
            (Some(f), Some(l)) => m.push_str(&format!(" (in {f}, line {l})")),
            (Some(f), None) => m.push_str(&format!(" (in {f})")),
            _ => {}
        }
        if let Some(lib) = &d.library {
            m.push_str(&format!(" [package: {lib}]"));
        }
        m.push('\n');
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::FailureKind;
    use wright_testreport::TestFailure;

    fn failing(tests: Vec<TestFailure>) -> Failure {
        let mut f = Failure::new(FailureKind::TestFailure, "0 passed, 2 failed of 2", "0 passed, 2 failed of 2\n");
        f.tests = tests;
        f
    }

    #[test]
    fn a_failing_tests_file_and_line_reach_the_diagnosis_and_the_prompt() {
        let f = failing(vec![
            TestFailure {
                test: "formats count".into(),
                error: "TypeError: count.toFixed is not a function".into(),
                location: Some("tests/type.test.js:5:7".into()),
            },
            TestFailure {
                test: "adds".into(),
                error: "Expected values to be strictly equal:\n6 !== 5\nat src/sum.js:3:10".into(),
                location: Some("tests/sum.test.js:9:1".into()),
            },
        ]);
        let all = diagnose(&[f]);
        let places: Vec<_> = all.iter().map(|d| (d.kind, d.file.as_deref(), d.line, d.column)).collect();
        assert_eq!(
            places,
            [
                (ErrorKind::Type, Some("tests/type.test.js"), Some(5), Some(7)),
                (ErrorKind::TestAssertion, Some("src/sum.js"), Some(3), Some(10)),
            ]
        );
        let block = diagnosis_block(&all);
        assert!(block.contains("count.toFixed is not a function (in tests/type.test.js, line 5)"), "{block}");
        assert!(block.contains("(in src/sum.js, line 3)"), "{block}");
    }

    #[test]
    fn raw_output_of_other_failures_is_still_read() {
        let output = "/p/server.js:3\napp.listen(;\n           ^\nSyntaxError: Unexpected token ';'\n";
        let server =
            Failure::new(FailureKind::ServerCheck, "the server did not start", "wright ran it.").with_output(output);
        let all = diagnose(&[server]);
        assert_eq!(all.len(), 1, "{all:#?}");
        assert_eq!((all[0].kind, all[0].file.as_deref(), all[0].line), (ErrorKind::Syntax, Some("server.js"), Some(3)));
        assert_eq!(all[0].column, Some(12));
        assert_eq!(diagnosis_block(&[]), "");
    }

    #[test]
    fn wrights_own_words_are_not_read_and_a_known_place_is_kept() {
        // The detail is wright's prose: an error-shaped line in it is not diagnosed.
        let prose = Failure::new(FailureKind::CheckFailed, "`npm test` failed", "TypeError: made up by wright\n");
        assert!(diagnose(&[prose]).is_empty());
        let browser = Failure {
            file: Some("app.js".into()),
            line: Some(2),
            column: Some(5),
            ..Failure::new(FailureKind::Runtime, "uncaught exception", "In the browser, …")
                .with_output("ReferenceError: totl is not defined")
        };
        let all = diagnose(&[browser]);
        assert_eq!(all.len(), 1, "{all:#?}");
        assert_eq!(
            (all[0].kind, all[0].file.as_deref(), all[0].line, all[0].column),
            (ErrorKind::Runtime, Some("app.js"), Some(2), Some(5))
        );
    }
}
