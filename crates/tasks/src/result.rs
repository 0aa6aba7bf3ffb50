//! What a task ends with, exactly in the seed's shape:
//! `{message, ai_result, validation_details: {commands_executed: [{command, exit_code, stdout,
//! stderr}], overall_status}}`. Descriptive criteria the model judged are kept apart from the
//! commands, so a judgement is never counted as a command that passed.

use serde::{Deserialize, Serialize};

/// The result of one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// One sentence on how it went.
    pub message: String,
    /// The model's last answer (`{"content": …}`), or what the handler produced (a plan's path).
    pub ai_result: serde_json::Value,
    pub validation_details: ValidationDetails,
}

/// How the task was checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationDetails {
    pub commands_executed: Vec<CommandExecuted>,
    pub overall_status: OverallStatus,
    /// Descriptive criteria and the model's verdict on each, with its reasoning.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judged: Vec<Judgement>,
}

impl ValidationDetails {
    /// Nothing to check.
    pub fn skipped() -> Self {
        Self { commands_executed: Vec::new(), overall_status: OverallStatus::Skipped, judged: Vec::new() }
    }

    /// `passed` when every command exited 0 and every judgement held; `skipped` with neither.
    pub fn from_parts(commands_executed: Vec<CommandExecuted>, judged: Vec<Judgement>) -> Self {
        let overall_status = if commands_executed.is_empty() && judged.is_empty() {
            OverallStatus::Skipped
        } else if commands_executed.iter().all(|c| c.exit_code == Some(0)) && judged.iter().all(|j| j.met) {
            OverallStatus::Passed
        } else {
            OverallStatus::Failed
        };
        Self { commands_executed, overall_status, judged }
    }
}

/// One validation command as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandExecuted {
    pub command: String,
    /// `null` when the command was killed (time limit, cancel) or could not start.
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// `passed`, `failed`, or `skipped` when there was nothing to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OverallStatus {
    Passed,
    Failed,
    Skipped,
}

impl OverallStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
        }
    }
}

/// The model's verdict on one descriptive criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    pub criterion: String,
    pub met: bool,
    pub reasoning: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(command: &str, exit_code: Option<i32>) -> CommandExecuted {
        CommandExecuted { command: command.into(), exit_code, stdout: String::new(), stderr: String::new() }
    }

    #[test]
    fn the_result_has_the_seeds_shape() {
        let r = TaskResult {
            message: "Code generation completed and validation passed.".into(),
            ai_result: serde_json::json!({"content": "Done."}),
            validation_details: ValidationDetails::from_parts(vec![ran("npm test", Some(0))], vec![]),
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "message": "Code generation completed and validation passed.",
                "ai_result": {"content": "Done."},
                "validation_details": {
                    "commands_executed": [{"command": "npm test", "exit_code": 0, "stdout": "", "stderr": ""}],
                    "overall_status": "passed"
                }
            })
        );
    }

    #[test]
    fn the_overall_status_needs_every_check() {
        assert_eq!(ValidationDetails::from_parts(vec![], vec![]).overall_status, OverallStatus::Skipped);
        assert_eq!(ValidationDetails::skipped().overall_status, OverallStatus::Skipped);
        let failed = ValidationDetails::from_parts(vec![ran("a", Some(0)), ran("b", Some(1))], vec![]);
        assert_eq!(failed.overall_status, OverallStatus::Failed);
        let killed = ValidationDetails::from_parts(vec![ran("a", None)], vec![]);
        assert_eq!(killed.overall_status, OverallStatus::Failed);
        let judged = Judgement { criterion: "shows an error".into(), met: false, reasoning: "it does not".into() };
        let v = ValidationDetails::from_parts(vec![ran("a", Some(0))], vec![judged]);
        assert_eq!(v.overall_status, OverallStatus::Failed, "a judgement that did not hold fails the task");
        assert_eq!(serde_json::to_value(OverallStatus::Skipped).unwrap(), "skipped");
    }
}
