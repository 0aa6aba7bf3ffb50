//! How a Go module's tests run: `go test -json` on every package (`./...`), or on the package
//! of one `_test.go` file, with go's stderr merged into stdout. Compile errors are only on
//! stderr before Go 1.24, and the parser ([`crate::parse_go_test_json`]) reads them there.

use crate::Format;
use crate::plan::{RunPlan, Runner};
use std::path::Path;

/// Whether `root` holds a `go.mod` (read beneath it, no link followed).
pub(crate) fn is_go_module(root: &Path) -> bool {
    wright_beneath::Dir::open(root).is_ok_and(|d| d.is_file("go.mod"))
}

/// `sh -c 'exec go test -json "$1" 2>&1' sh PATTERN`: the pattern is an argument, never part
/// of the script, so a file name cannot become shell code. `test_file` (already checked to
/// be a relative path inside the project) selects its package's folder.
pub(crate) fn go_plan(test_file: Option<&str>) -> RunPlan {
    let pattern = match test_file.and_then(|f| f.rsplit_once('/')) {
        Some((dir, _)) => format!("./{dir}"),
        None => ".".to_string(),
    };
    let (pattern, description) = match test_file {
        Some(file) => (pattern, format!("go test -json on the package of {file}")),
        None => ("./...".to_string(), "go test -json ./... (every package of the module)".to_string()),
    };
    RunPlan {
        runner: Runner::GoTest,
        program: "sh".to_string(),
        args: vec!["-c".to_string(), "exec go test -json \"$1\" 2>&1".to_string(), "sh".to_string(), pattern],
        env: Vec::new(),
        format: Format::GoTestJson,
        report_file: None,
        description,
    }
}
