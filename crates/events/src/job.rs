//! What a queued run does, as the queue stores it: the run's kind and that kind's own
//! arguments, typed (as River stores a job's kind beside its encoded args). The HTTP body is
//! parsed once, where the request comes in ([`BuildArgs::from_body`]); the worker reads back
//! the typed job and never sees the body again.
//!
//! Encoded as `{"kind":"build","args":{…}}` in the build's row (`builds.request`). Rows queued
//! before the job was typed hold the HTTP body itself; [`QueuedJob::decode`] reads those too
//! (the one tolerant reading, here), so a queue that was full across an upgrade still runs.

use crate::api::{BuildBody, RunId};
use crate::{Lang, RunKind, Template};
use serde::{Deserialize, Serialize};

/// A queued run's job: which engine runs it, and with what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "args", rename_all = "snake_case")]
pub enum QueuedJob {
    /// A build from a prompt (`POST /api/builds`).
    Build(BuildArgs),
    /// A task file run on a project (`POST /api/tasks`).
    Task(TaskArgs),
}

/// What a task run was asked to do. The plan was read and checked where the request came in
/// (as `wright task check` does) and is kept in the task file's own JSON shape, so the worker
/// reads it back with the task crate's reader: this crate does not know the task types.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskArgs {
    /// The checked plan, `{goal?, tasks: [...]}`.
    pub plan: serde_json::Value,
    /// The run whose project the tasks work on; `None`: a new folder (or `resume`'s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<RunId>,
    /// The earlier task run whose passed tasks are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<RunId>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rerun: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// What a build was asked to do, checked and typed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildArgs {
    pub prompt: String,
    /// `None`: the continued build's, else the server's setting, else `auto` (decided when it runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<Template>,
    /// `None`: the server's setting, else the continued build's, else English.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<Lang>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
    /// The earlier build this one keeps working on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_from: Option<RunId>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub assistant: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_hosts: Option<Vec<String>>,
    /// Characters a person cannot see that were removed from the prompt as it arrived
    /// ([`wright_text::hidden`]); the build's narration says so.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hidden_removed: u32,
    /// The running experiment's variant this build was put in when it was queued (never sent
    /// by a client: the server decides it), applied when it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<wright_experiments::Assignment>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A body or stored job that cannot be run, and why (said to the client or ends the run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobError(pub String);

impl std::fmt::Display for JobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JobError {}

impl BuildArgs {
    /// The arguments a `POST /api/builds` body asks for. Template and language are read as
    /// people type them (any case, `full-stack`, `pt-BR`); anything else is refused here.
    /// The prompt loses the characters a person cannot see (counted in `hidden_removed`).
    pub fn from_body(body: &BuildBody) -> Result<Self, JobError> {
        let prompt = wright_text::hidden::strip(&body.prompt);
        let template = body
            .template
            .as_deref()
            .map(|t| {
                Template::parse_loose(t).ok_or_else(|| {
                    JobError(format!("unknown template `{t}`; use static, interactive, fullstack, react or auto"))
                })
            })
            .transpose()?;
        let lang = body
            .lang
            .as_deref()
            .map(|l| Lang::parse_loose(l).ok_or_else(|| JobError(format!("unknown language `{l}`; use en or pt"))))
            .transpose()?;
        Ok(BuildArgs {
            prompt: prompt.text,
            template,
            lang,
            model: body.model.clone(),
            checks: body.checks.clone(),
            continue_from: body.r#continue.clone().map(RunId),
            assistant: body.assistant,
            allow_hosts: body.allow_hosts.clone(),
            hidden_removed: u32::try_from(prompt.removed).unwrap_or(u32::MAX),
            variant: None,
        })
    }
}

impl QueuedJob {
    /// The kind of run this job is.
    pub fn kind(&self) -> RunKind {
        match self {
            QueuedJob::Build(_) => RunKind::Build,
            QueuedJob::Task(_) => RunKind::Task,
        }
    }

    /// The text stored in the queue's row.
    pub fn encode(&self) -> String {
        // Plain data with string keys always serialises; an empty object (which no reading
        // accepts) rather than a panic if that ever changes.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }

    /// A stored job: the typed encoding, or the HTTP body rows queued by an earlier version
    /// hold (read as the server read it then). Anything else is an error that says what.
    pub fn decode(text: &str) -> Result<Self, JobError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| JobError(format!("the stored job is not JSON: {e}")))?;
        if value.get("kind").is_some() {
            return serde_json::from_value(value).map_err(|e| JobError(format!("the stored job cannot be read: {e}")));
        }
        let body: BuildBody =
            serde_json::from_value(value).map_err(|e| JobError(format!("the stored request cannot be read: {e}")))?;
        BuildArgs::from_body(&body).map(QueuedJob::Build)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body() -> BuildBody {
        BuildBody {
            prompt: "a counter app with a + button".into(),
            template: Some("Full-Stack".into()),
            lang: Some("pt-BR".into()),
            model: Some("m".into()),
            checks: vec!["npm test".into()],
            r#continue: Some("20261124-151203-9c1e".into()),
            assistant: true,
            allow_hosts: Some(vec!["api.example.test".into()]),
        }
    }

    #[test]
    fn a_job_is_stored_as_its_kind_and_typed_args_and_reads_back_the_same() {
        let job = QueuedJob::Build(BuildArgs::from_body(&body()).unwrap());
        let text = job.encode();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["kind"], "build");
        assert_eq!(v["args"]["template"], "fullstack");
        assert_eq!(v["args"]["lang"], "pt");
        assert_eq!(v["args"]["continue_from"], "20261124-151203-9c1e");
        assert_eq!(QueuedJob::decode(&text).unwrap(), job);
        assert_eq!(job.kind(), RunKind::Build);
    }

    #[test]
    fn a_prompt_arrives_without_what_a_person_cannot_see() {
        let hostile = BuildBody { prompt: "a timer\u{202E}remit\u{0} with a 🎉".into(), ..body() };
        let args = BuildArgs::from_body(&hostile).unwrap();
        assert_eq!((args.prompt.as_str(), args.hidden_removed), ("a timerremit with a 🎉", 2));
        let round = QueuedJob::decode(&QueuedJob::Build(args.clone()).encode()).unwrap();
        assert_eq!(round, QueuedJob::Build(args));
        // Nothing removed, nothing said (and nothing stored).
        let clean = BuildArgs::from_body(&body()).unwrap();
        assert!(!QueuedJob::Build(clean).encode().contains("hidden_removed"));
    }

    #[test]
    fn a_body_stored_by_an_earlier_version_still_reads_as_its_job() {
        let old = serde_json::to_string(&body()).unwrap();
        let QueuedJob::Build(args) = QueuedJob::decode(&old).unwrap() else { panic!("a build") };
        assert_eq!((args.template, args.lang), (Some(Template::Fullstack), Some(Lang::Pt)));
        assert_eq!(args.continue_from, Some(RunId("20261124-151203-9c1e".into())));
        assert_eq!(args.allow_hosts, Some(vec!["api.example.test".into()]));
        let minimal = QueuedJob::decode(r#"{"prompt":"a landing page"}"#).unwrap();
        assert_eq!(
            minimal,
            QueuedJob::Build(BuildArgs {
                prompt: "a landing page".into(),
                template: None,
                lang: None,
                model: None,
                checks: vec![],
                continue_from: None,
                assistant: false,
                allow_hosts: None,
                hidden_removed: 0,
                variant: None,
            })
        );
        assert!(!minimal.encode().contains("variant"), "no variant, no field: {}", minimal.encode());
    }

    #[test]
    fn a_build_keeps_its_experiment_variant_through_the_queue() {
        let mut variant = wright_experiments::Variant::named("fast", 2.0);
        variant.model = Some("m-small".into());
        let job = QueuedJob::Build(BuildArgs {
            prompt: "p".into(),
            variant: Some(wright_experiments::Assignment { experiment: "x-1".into(), variant }),
            ..Default::default()
        });
        assert_eq!(QueuedJob::decode(&job.encode()).unwrap(), job);
    }

    #[test]
    fn a_task_job_is_stored_as_its_kind_and_reads_back_the_same() {
        let job = QueuedJob::Task(TaskArgs {
            plan: serde_json::json!({"tasks": [{"id": "a", "type": "no_op", "description": "nothing"}]}),
            project: Some(RunId("20261124-151203-9c1e".into())),
            resume: None,
            rerun: vec![],
            model: None,
        });
        let text = job.encode();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!((v["kind"].as_str(), v["args"]["project"].as_str()), (Some("task"), Some("20261124-151203-9c1e")));
        assert_eq!(QueuedJob::decode(&text).unwrap(), job);
        assert_eq!(job.kind(), RunKind::Task);
        let e = QueuedJob::decode(r#"{"kind":"task","args":{"plan":{},"typo":1}}"#).unwrap_err();
        assert!(e.0.contains("typo"), "{e}");
    }

    #[test]
    fn unreadable_jobs_are_errors_that_say_what() {
        let e = QueuedJob::decode(r#"{"prompt":"x","template":"cobol"}"#).unwrap_err();
        assert!(e.0.contains("unknown template `cobol`"), "{e}");
        let e = QueuedJob::decode(r#"{"kind":"mcp","args":{}}"#).unwrap_err();
        assert!(e.0.contains("cannot be read"), "{e}");
        assert!(QueuedJob::decode("{}").is_err());
        assert!(QueuedJob::decode("not json").unwrap_err().0.contains("not JSON"));
    }
}
