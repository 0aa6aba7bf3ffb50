//! The task file: types, reading, checking and ordering.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// One task, with the seed's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// Unique within its plan: names the task in results, events and `depends_on`.
    pub id: String,
    /// Which handler runs it: `code_generation`, `planning`, `validation`, `ai_interaction`
    /// or `no_op`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The goal, in a sentence.
    pub description: String,
    /// Specific steps for the model: one text or a list of steps.
    #[serde(default)]
    pub instructions: Instructions,
    /// Files and folders (relative to the workspace) read for context; a folder is shown as a tree.
    #[serde(default)]
    pub input_artifacts: Vec<String>,
    /// Files the task must create or change; one missing afterwards fails the task.
    #[serde(default)]
    pub output_artifacts: Vec<String>,
    /// Rules the result must keep (style, versions, files not to touch).
    #[serde(default)]
    pub constraints: Vec<String>,
    /// Commands that must exit 0 (a string, or `{"command": …}`), or `{"description": …}`
    /// criteria the model judges against the final files.
    #[serde(default)]
    pub validation_criteria: Vec<Criterion>,
    /// Ids of tasks that must pass before this one runs.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// A model for this task instead of the configured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Limits for this task instead of the configured ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<TaskLimits>,
}

/// Steps for the model: one text, or a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Instructions {
    Text(String),
    Steps(Vec<String>),
}

impl Default for Instructions {
    fn default() -> Self {
        Self::Steps(Vec::new())
    }
}

impl Instructions {
    /// The non-empty steps, in order.
    pub fn lines(&self) -> Vec<&str> {
        let all: Vec<&str> = match self {
            Self::Text(t) => vec![t.as_str()],
            Self::Steps(s) => s.iter().map(String::as_str).collect(),
        };
        all.into_iter().filter(|l| !l.trim().is_empty()).collect()
    }
}

/// One validation criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Criterion {
    /// A shell command that must exit 0 (run in the workspace, in the sandbox).
    Command(String),
    /// The same, spelled out: `{"command": "npm test"}`.
    CommandObject { command: String },
    /// Judged by the model against the final files, its reasoning kept: never counted as a
    /// command that passed.
    Descriptive { description: String },
}

impl Criterion {
    /// The command, when this criterion is one.
    pub fn command(&self) -> Option<&str> {
        match self {
            Self::Command(c) | Self::CommandObject { command: c } => Some(c.as_str()),
            Self::Descriptive { .. } => None,
        }
    }

    /// The command or the description.
    pub fn text(&self) -> &str {
        match self {
            Self::Command(c) | Self::CommandObject { command: c } => c.as_str(),
            Self::Descriptive { description } => description.as_str(),
        }
    }
}

/// Per-task limits; unset ones come from the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskLimits {
    pub max_turns: Option<u32>,
    /// Fix attempts after a failed validation (at most 3).
    pub max_fix_attempts: Option<u32>,
    pub timeout_secs: Option<u64>,
    pub max_cost_usd: Option<f64>,
}

/// Tasks run in dependency order (file order among those that are ready together).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// What the plan is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    pub tasks: Vec<Task>,
}

/// What a task file may hold: a plan, one task, or (not in the schema, but read) a bare list.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only described, never built: `parse` reads the file in two steps for its errors
enum TaskFile {
    Plan(Plan),
    Task(Box<Task>),
}

/// The JSON Schema of a task file (`wright task schema`).
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(TaskFile)).unwrap_or_default()
}

/// The file's language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Toml,
}

impl Format {
    /// TOML for `.toml`, JSON otherwise.
    pub fn of(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("toml") => Self::Toml,
            _ => Self::Json,
        }
    }
}

/// Why a task file was refused; field errors name the field (`tasks[1].depends_on`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskFileError {
    #[error("{0}")]
    Syntax(String),
    #[error("at `{path}`: {message}")]
    Field { path: String, message: String },
    #[error("{0}")]
    Plan(String),
}

/// Read and check a task file. One task becomes a plan of one.
pub fn parse(text: &str, format: Format) -> Result<Plan, TaskFileError> {
    let mut value: serde_json::Value = match format {
        Format::Json => {
            serde_json::from_str(text).map_err(|e| TaskFileError::Syntax(format!("this is not valid JSON: {e}")))?
        }
        Format::Toml => {
            toml::from_str(text).map_err(|e| TaskFileError::Syntax(format!("this is not valid TOML: {e}")))?
        }
    };
    if value.is_array() {
        value = serde_json::json!({ "tasks": value });
    }
    let single = value.get("tasks").is_none();
    let plan = if single { Plan { goal: None, tasks: vec![typed::<Task>(value)?] } } else { typed::<Plan>(value)? };
    check(&plan, single)?;
    Ok(plan)
}

fn typed<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, TaskFileError> {
    serde_path_to_error::deserialize(value)
        .map_err(|e| TaskFileError::Field { path: e.path().to_string(), message: e.into_inner().to_string() })
}

/// What serde cannot say: usable and unique ids, known dependencies, no circles, nothing empty.
fn check(plan: &Plan, single: bool) -> Result<(), TaskFileError> {
    let field = |i: usize, f: &str, message: String| TaskFileError::Field {
        path: if single { f.to_string() } else { format!("tasks[{i}].{f}") },
        message,
    };
    if plan.tasks.is_empty() {
        return Err(TaskFileError::Field { path: "tasks".into(), message: "a plan needs at least one task".into() });
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, t) in plan.tasks.iter().enumerate() {
        if t.id.is_empty() || !t.id.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            let m = format!("`{}` is not a usable id: use letters, digits, `-`, `_` and `.`", t.id);
            return Err(field(i, "id", m));
        }
        if let Some(first) = seen.insert(t.id.as_str(), i) {
            return Err(field(i, "id", format!("`{}` is already the id of tasks[{first}]", t.id)));
        }
        if t.kind.trim().is_empty() {
            return Err(field(i, "type", "the type is empty".into()));
        }
        if t.description.trim().is_empty() {
            return Err(field(i, "description", "the description is empty: say what the task is for".into()));
        }
        if t.validation_criteria.iter().any(|c| c.text().trim().is_empty()) {
            return Err(field(i, "validation_criteria", "a criterion is empty".into()));
        }
        if t.limits.and_then(|l| l.max_fix_attempts).is_some_and(|n| n > 3) {
            return Err(field(i, "limits.max_fix_attempts", "at most 3 fix attempts".into()));
        }
    }
    for (i, t) in plan.tasks.iter().enumerate() {
        for d in &t.depends_on {
            if *d == t.id {
                return Err(field(i, "depends_on", "a task cannot depend on itself".into()));
            }
            if !seen.contains_key(d.as_str()) {
                return Err(field(i, "depends_on", format!("`{d}` is not the id of any task in this plan")));
            }
        }
    }
    order(plan).map(|_| ())
}

/// Indexes of the plan's tasks in the order they run: each after all it depends on, and
/// otherwise in file order. Refuses a circle, naming the tasks in it.
pub fn order(plan: &Plan) -> Result<Vec<usize>, TaskFileError> {
    let index: HashMap<&str, usize> = plan.tasks.iter().enumerate().map(|(i, t)| (t.id.as_str(), i)).collect();
    let n = plan.tasks.len();
    let mut waiting_on = vec![0usize; n];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, t) in plan.tasks.iter().enumerate() {
        for d in &t.depends_on {
            let Some(&j) = index.get(d.as_str()) else {
                return Err(TaskFileError::Plan(format!("task `{}` depends on `{d}`, which is not in the plan", t.id)));
            };
            waiting_on[i] += 1;
            dependents[j].push(i);
        }
    }
    let mut ready: BTreeSet<usize> = (0..n).filter(|&i| waiting_on[i] == 0).collect();
    let mut out = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        out.push(i);
        for &k in &dependents[i] {
            waiting_on[k] = waiting_on[k].saturating_sub(1);
            if waiting_on[k] == 0 {
                ready.insert(k);
            }
        }
    }
    if out.len() < n {
        let stuck: Vec<&str> = (0..n).filter(|i| !out.contains(i)).map(|i| plan.tasks[i].id.as_str()).collect();
        return Err(TaskFileError::Plan(format!(
            "the tasks {} depend on each other in a circle, so none of them can start; remove one `depends_on`",
            stuck.join(", ")
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"{"id": "validate-form", "type": "code_generation", "description": "Add input validation",
        "instructions": ["Reject empty emails", ""], "input_artifacts": ["src/form.js", "src"],
        "output_artifacts": ["src/form.js"], "constraints": ["no new dependencies"],
        "validation_criteria": ["npm test", {"command": "node --check src/form.js"},
            {"description": "an empty email shows an error"}]}"#;

    fn task(id: &str, deps: &[&str]) -> serde_json::Value {
        serde_json::json!({"id": id, "type": "no_op", "description": format!("task {id}"), "depends_on": deps})
    }

    #[test]
    fn one_task_is_a_plan_of_one() {
        let plan = parse(ONE, Format::Json).unwrap();
        assert_eq!(plan.tasks.len(), 1);
        let t = &plan.tasks[0];
        assert_eq!((t.id.as_str(), t.kind.as_str()), ("validate-form", "code_generation"));
        assert_eq!(t.instructions.lines(), vec!["Reject empty emails"]);
        let commands: Vec<Option<&str>> = t.validation_criteria.iter().map(Criterion::command).collect();
        assert_eq!(commands, vec![Some("npm test"), Some("node --check src/form.js"), None]);
        assert_eq!(t.validation_criteria[2].text(), "an empty email shows an error");
        // It writes back as it was read.
        let again: Task = serde_json::from_value(serde_json::to_value(t).unwrap()).unwrap();
        assert_eq!(&again, t);
    }

    #[test]
    fn errors_point_at_the_field() {
        let typo = serde_json::json!({"tasks": [task("a", &[]), {"id": "b", "type": "no_op", "descripton": "x"}]});
        let e = parse(&typo.to_string(), Format::Json).unwrap_err().to_string();
        assert!(e.contains("tasks[1]") && e.contains("descripton"), "{e}");
        let e = parse(r#"{"id": "a", "type": "no_op", "description": "x", "depends_on": "b"}"#, Format::Json)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("at `depends_on`"), "{e}");
        let e = parse(r#"{"id": "a", "type": "no_op"}"#, Format::Json).unwrap_err().to_string();
        assert!(e.contains("description"), "{e}");
        let e = parse("{\"id\": ", Format::Json).unwrap_err();
        assert!(matches!(e, TaskFileError::Syntax(_)), "{e}");
        let e = parse(r#"{"tasks": []}"#, Format::Json).unwrap_err().to_string();
        assert!(e.contains("at least one task"), "{e}");
    }

    #[test]
    fn ids_must_be_unique_usable_and_dependencies_known() {
        let dup = serde_json::json!([task("a", &[]), task("a", &[])]);
        let e = parse(&dup.to_string(), Format::Json).unwrap_err().to_string();
        assert!(e.contains("tasks[1].id") && e.contains("tasks[0]"), "{e}");
        let unknown = serde_json::json!([task("a", &["zz"])]);
        let e = parse(&unknown.to_string(), Format::Json).unwrap_err().to_string();
        assert!(e.contains("tasks[0].depends_on") && e.contains("zz"), "{e}");
        let own = serde_json::json!([task("a", &["a"])]);
        assert!(parse(&own.to_string(), Format::Json).unwrap_err().to_string().contains("itself"));
        let spaced = serde_json::json!([task("a b", &[])]);
        assert!(parse(&spaced.to_string(), Format::Json).unwrap_err().to_string().contains("usable id"));
    }

    #[test]
    fn plans_run_in_dependency_order_and_circles_are_refused() {
        let plan = serde_json::json!({"goal": "g", "tasks": [task("b", &["a"]), task("a", &[]), task("c", &["a", "b"]), task("d", &[])]});
        let plan = parse(&plan.to_string(), Format::Json).unwrap();
        let ids: Vec<&str> = order(&plan).unwrap().into_iter().map(|i| plan.tasks[i].id.as_str()).collect();
        assert_eq!(ids, vec!["a", "b", "c", "d"]);
        let circle = serde_json::json!([task("a", &["c"]), task("b", &["a"]), task("c", &["b"]), task("d", &[])]);
        let e = parse(&circle.to_string(), Format::Json).unwrap_err().to_string();
        assert!(e.contains("circle") && e.contains("the tasks a, b, c depend"), "{e}");
    }

    #[test]
    fn toml_works_too() {
        let text = "goal = \"green tests\"\n[[tasks]]\nid = \"check\"\ntype = \"validation\"\n\
                    description = \"the tests pass\"\nvalidation_criteria = [\"npm test\"]\n";
        let plan = parse(text, Format::Toml).unwrap();
        assert_eq!(plan.goal.as_deref(), Some("green tests"));
        assert_eq!(plan.tasks[0].validation_criteria[0].command(), Some("npm test"));
        assert_eq!(Format::of(Path::new("plan.TOML")), Format::Toml);
        assert_eq!(Format::of(Path::new("task.json")), Format::Json);
    }

    #[test]
    fn the_schema_describes_every_field() {
        let s = schema().to_string();
        for f in [
            "description",
            "instructions",
            "input_artifacts",
            "output_artifacts",
            "constraints",
            "validation_criteria",
            "depends_on",
            "limits",
            "tasks",
        ] {
            assert!(s.contains(&format!("\"{f}\"")), "{f} missing from {s}");
        }
    }

    proptest::proptest! {
        /// Whatever the file holds, reading it answers (never panics), and what it accepts
        /// can be ordered.
        #[test]
        fn reading_any_text_never_panics(text in ".{0,300}") {
            for format in [Format::Json, Format::Toml] {
                if let Ok(plan) = parse(&text, format) {
                    proptest::prop_assert!(order(&plan).is_ok());
                }
            }
        }

        /// Any acyclic plan (each task depending only on earlier ones) orders with every
        /// dependency first.
        #[test]
        fn dependencies_always_come_first(deps in proptest::collection::vec(proptest::collection::vec(0usize..8, 0..3), 1..8)) {
            let tasks: Vec<serde_json::Value> = deps
                .iter()
                .enumerate()
                .map(|(i, ds)| {
                    let on: Vec<String> = ds.iter().filter(|&&d| d < i).map(|d| format!("t{d}")).collect();
                    serde_json::json!({"id": format!("t{i}"), "type": "no_op", "description": "x", "depends_on": on})
                })
                .rev()
                .collect();
            let plan = parse(&serde_json::Value::Array(tasks).to_string(), Format::Json).unwrap();
            let order = order(&plan).unwrap();
            proptest::prop_assert_eq!(order.len(), plan.tasks.len());
            let position: HashMap<&str, usize> =
                order.iter().enumerate().map(|(p, &i)| (plan.tasks[i].id.as_str(), p)).collect();
            for t in &plan.tasks {
                for d in &t.depends_on {
                    proptest::prop_assert!(position[d.as_str()] < position[t.id.as_str()]);
                }
            }
        }
    }
}
