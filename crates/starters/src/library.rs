//! The starters themselves: a starter's manifest and files, and the library of them (the
//! built-in ones, embedded, and a user's own folder).

use crate::subject::subject;
use include_dir::{Dir, include_dir};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use wright_events::{Lang, Template};

/// The built-in starters, embedded at compile time.
static BUILTIN: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/library");

/// Why a starter cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StarterError {
    #[error("starter {0}: {1}")]
    Invalid(String, String),
    #[error("starter {id}: the values do not fit its slots: {why}")]
    Values { id: String, why: String },
    #[error("starter {id}: {file} could not be rendered: {why}")]
    Render { id: String, file: String, why: String },
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// Whether a starter of kind `starter` may answer a request for `asked`: one of that kind, or
/// for `auto` any web app (a Python, Rust or Go starter only answers a request for a program).
pub(crate) fn fits_template(asked: Template, starter: Template) -> bool {
    if asked == Template::Auto { starter.is_web() } else { starter == asked }
}

/// Text in both languages wright speaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Words {
    pub en: String,
    pub pt: String,
}

impl Words {
    pub fn get(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.en,
            Lang::Pt => &self.pt,
        }
    }
}

/// Example requests a starter answers (or, as `not_for`, near misses it does not), per language.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Examples {
    pub en: Vec<String>,
    pub pt: Vec<String>,
}

impl Examples {
    pub fn is_empty(&self) -> bool {
        self.en.is_empty() && self.pt.is_empty()
    }
}

/// `starter.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub id: String,
    pub title: Words,
    pub description: Words,
    pub template: Template,
    pub tags: Vec<String>,
    pub examples: Examples,
    /// Requests that sound like this starter but ask for something it does not do (a
    /// personality quiz for a quiz of right answers, a scientific calculator for a basic one):
    /// a request closer to one of these than to anything the starter makes is not given it.
    #[serde(default, skip_serializing_if = "Examples::is_empty")]
    pub not_for: Examples,
    /// A JSON Schema object: every property with a description and a default.
    pub slots: Value,
    /// Defaults in other languages than the schema's (English): `{"pt": {"start_label": "Iniciar"}}`.
    /// A build in that language starts from them; each set must fit the slots too.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub defaults: Map<String, Value>,
    /// The slot that names what the app is for (a business, a place): when the model leaves it
    /// at its default, it takes the request's own subject ("…for my yoga studio").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject_slot: Option<String>,
}

/// A starter: its manifest and its files (templates), by path relative to the project.
#[derive(Debug, Clone, PartialEq)]
pub struct Starter {
    pub manifest: Manifest,
    files: Vec<(String, String)>,
}

impl Starter {
    /// A starter from its manifest text and files, checked as `docs/starters.md` says.
    pub fn new(manifest: &str, files: Vec<(String, String)>) -> Result<Self, StarterError> {
        let manifest: Manifest = serde_json::from_str(manifest)
            .map_err(|e| StarterError::Invalid("?".into(), format!("starter.json: {e}")))?;
        let starter = Self { manifest, files };
        starter.check()?;
        Ok(starter)
    }

    /// Read a starter folder (`starter.json` and `files/`).
    pub fn load(dir: &Path) -> Result<Self, StarterError> {
        let io = |p: &Path, e| StarterError::Io(p.to_path_buf(), e);
        let manifest_path = dir.join("starter.json");
        let manifest = std::fs::read_to_string(&manifest_path).map_err(|e| io(&manifest_path, e))?;
        let root = dir.join("files");
        let mut files = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).map_err(|e| io(&d, e))? {
                let entry = entry.map_err(|e| io(&d, e))?;
                let path = entry.path();
                let kind = entry.file_type().map_err(|e| io(&path, e))?;
                if kind.is_dir() {
                    stack.push(path);
                } else if kind.is_file() {
                    let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
                    let rel = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
                    files.push((rel, text));
                }
            }
        }
        files.sort();
        let starter = Self::new(&manifest, files)?;
        let folder = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        if starter.manifest.id != folder {
            return Err(StarterError::Invalid(folder, format!("its id is `{}`, not its folder's name", starter.id())));
        }
        Ok(starter)
    }

    pub fn id(&self) -> &str {
        &self.manifest.id
    }

    /// The project's files as templates, by path.
    pub fn files(&self) -> &[(String, String)] {
        &self.files
    }

    fn invalid(&self, why: impl Into<String>) -> StarterError {
        StarterError::Invalid(self.manifest.id.clone(), why.into())
    }

    /// A Python, Rust or Go starter has its language's manifest or code and its tests.
    fn check_program(&self) -> Result<(), StarterError> {
        let has = |f: &dyn Fn(&str) -> bool| self.files.iter().any(|(p, _)| f(p));
        let (code, tests, what): (bool, bool, &str) = match self.manifest.template {
            Template::Python => (
                has(&|p| p.ends_with(".py")),
                has(&|p| p.rsplit('/').next().is_some_and(|n| n.starts_with("test_") && n.ends_with(".py"))),
                "a .py file and a test_*.py test file",
            ),
            Template::Rust => {
                (has(&|p| p == "Cargo.toml"), has(&|p| p.ends_with(".rs")), "Cargo.toml and src/*.rs with tests")
            }
            _ => (has(&|p| p == "go.mod"), has(&|p| p.ends_with("_test.go")), "go.mod and a _test.go file"),
        };
        if code && tests {
            Ok(())
        } else {
            Err(self.invalid(format!("a {} starter needs {what}", self.manifest.template)))
        }
    }

    fn properties(&self) -> Option<&Map<String, Value>> {
        self.manifest.slots.get("properties").and_then(Value::as_object)
    }

    fn check(&self) -> Result<(), StarterError> {
        let m = &self.manifest;
        let id_ok = !m.id.is_empty() && m.id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !id_ok {
            return Err(self.invalid("an id is lowercase letters, digits and `-`"));
        }
        if m.template == Template::Auto {
            return Err(self.invalid("`template` is static, interactive or fullstack"));
        }
        if m.examples.en.len() < 3 || m.examples.pt.len() < 3 {
            return Err(self.invalid("at least 3 example requests in English and in Portuguese"));
        }
        if m.tags.is_empty() {
            return Err(self.invalid("`tags` names it"));
        }
        let props =
            self.properties().ok_or_else(|| self.invalid("`slots` is a JSON Schema object with `properties`"))?;
        if m.slots.get("additionalProperties") != Some(&Value::Bool(false)) {
            return Err(self.invalid("`slots` must say `\"additionalProperties\": false`"));
        }
        let required: Vec<&str> = m
            .slots
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, schema) in props {
            if schema.get("default").is_none() || schema.get("description").is_none() {
                return Err(self.invalid(format!("slot `{name}` needs a description and a default")));
            }
            if !required.contains(&name.as_str()) {
                return Err(self.invalid(format!("slot `{name}` must be required")));
            }
        }
        if m.template.is_code() {
            return self.check_program();
        }
        let entry = m.template.entry_page();
        if !self.files.iter().any(|(p, _)| p == entry) {
            return Err(self.invalid(format!("its files need {entry}")));
        }
        if m.template.requires_tests() && !self.files.iter().any(|(p, _)| p == "package.json") {
            return Err(self.invalid("an interactive or full-stack starter has tests and a package.json"));
        }
        if let Some(slot) = &m.subject_slot {
            let is_text = props.get(slot).and_then(|p| p.get("type")).and_then(Value::as_str) == Some("string");
            if !is_text {
                return Err(self.invalid(format!("`subject_slot` names `{slot}`, which is not a text slot")));
            }
        }
        for (lang, set) in &m.defaults {
            if Lang::parse(lang).is_none() || !set.is_object() {
                return Err(
                    self.invalid(format!("`defaults.{lang}`: a language (en, pt) and an object of slot values"))
                );
            }
        }
        // The defaults (in every language) must fit the slots, and every file must render.
        for lang in [Lang::En, Lang::Pt] {
            self.render(&self.defaults_in(lang))?;
        }
        Ok(())
    }

    /// Every slot's default in `lang`: the schema's, then that language's own where it has them.
    pub fn defaults_in(&self, lang: Lang) -> Value {
        let mut values = self.defaults();
        if let (Some(into), Some(Value::Object(own))) =
            (values.as_object_mut(), self.manifest.defaults.get(lang.as_str()))
        {
            for (k, v) in own {
                into.insert(k.clone(), v.clone());
            }
        }
        values
    }

    /// Every slot's default.
    pub fn defaults(&self) -> Value {
        let values: Map<String, Value> = self
            .properties()
            .map(|p| p.iter().filter_map(|(k, s)| s.get("default").map(|d| (k.clone(), d.clone()))).collect())
            .unwrap_or_default();
        Value::Object(values)
    }

    /// `values` over the defaults (a slot left out keeps its default), checked against the
    /// slots' schema; the error names every field that does not fit.
    pub fn fill(&self, values: &Value) -> Result<Value, StarterError> {
        self.fill_over(self.defaults(), values)
    }

    /// [`Starter::fill`] over the defaults in `lang`.
    pub fn fill_in(&self, lang: Lang, values: &Value) -> Result<Value, StarterError> {
        self.fill_over(self.defaults_in(lang), values)
    }

    /// `values` with the request's subject in the subject slot, when the starter has one and
    /// `values` left it at its default (small models copy defaults), clipped to the slot's
    /// length. Unchanged otherwise.
    pub fn with_subject(&self, lang: Lang, mut values: Value, request: &str) -> Value {
        let (Some(slot), Some(found)) = (&self.manifest.subject_slot, subject(request)) else { return values };
        let default = self.defaults_in(lang).get(slot).cloned();
        let max = self
            .properties()
            .and_then(|p| p.get(slot))
            .and_then(|p| p.get("maxLength"))
            .and_then(Value::as_u64)
            .unwrap_or(60) as usize;
        if let Some(v) = values.get_mut(slot).filter(|v| Some(&**v) == default.as_ref() || v.is_null()) {
            *v = Value::String(found.chars().take(max).collect());
        }
        values
    }

    fn fill_over(&self, defaults: Value, values: &Value) -> Result<Value, StarterError> {
        let mut merged = defaults;
        if let (Some(into), Some(from)) = (merged.as_object_mut(), values.as_object()) {
            for (k, v) in from {
                into.insert(k.clone(), v.clone());
            }
        } else if !values.is_null() {
            return Err(StarterError::Values { id: self.id().into(), why: "the values are a JSON object".into() });
        }
        wright_tools::schema::validate(&self.manifest.slots, &merged)
            .map_err(|why| StarterError::Values { id: self.id().into(), why })?;
        Ok(merged)
    }

    /// The project's files with `values` (complete and valid: see [`Starter::fill`]) in their
    /// slots; values left out take the schema's defaults.
    pub fn render(&self, values: &Value) -> Result<Vec<(String, String)>, StarterError> {
        let values = self.fill(values)?;
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env.set_keep_trailing_newline(true);
        // HTML-escaped where a value lands in markup; JS and JSON use `|tojson` explicitly.
        env.set_auto_escape_callback(|name| {
            if name.ends_with(".html") || name.ends_with(".htm") || name.ends_with(".svg") {
                minijinja::AutoEscape::Html
            } else {
                minijinja::AutoEscape::None
            }
        });
        self.files
            .iter()
            .map(|(path, text)| {
                let fail = |e: minijinja::Error| StarterError::Render {
                    id: self.id().into(),
                    file: path.clone(),
                    why: e.to_string(),
                };
                let tmpl = env.template_from_named_str(path.as_str(), text.as_str()).map_err(fail)?;
                Ok((path.clone(), tmpl.render(&values).map_err(fail)?))
            })
            .collect()
    }
}

/// The starters wright can start from.
#[derive(Debug, Clone, Default)]
pub struct Library {
    pub(crate) starters: Vec<Starter>,
}

impl Library {
    /// The built-in starters.
    pub fn builtin() -> Result<Self, StarterError> {
        let mut starters = Vec::new();
        for dir in BUILTIN.dirs() {
            let id = dir.path().to_string_lossy().to_string();
            let manifest = dir
                .get_file(dir.path().join("starter.json"))
                .and_then(|f| f.contents_utf8())
                .ok_or_else(|| StarterError::Invalid(id.clone(), "no starter.json".into()))?;
            let root = dir.path().join("files");
            let mut files = Vec::new();
            if let Some(files_dir) = dir.get_dir(&root) {
                collect(files_dir, &root, &mut files);
            }
            files.sort();
            let starter = Starter::new(manifest, files)?;
            if starter.id() != id {
                return Err(StarterError::Invalid(id, "its id is not its folder's name".into()));
            }
            starters.push(starter);
        }
        starters.sort_by(|a, b| a.manifest.id.cmp(&b.manifest.id));
        Ok(Self { starters })
    }

    /// The user's own starters in `dir` (one folder each) added; one with the id of a
    /// built-in replaces it. A folder that is not a valid starter is an error that names it.
    pub fn with_dir(mut self, dir: &Path) -> Result<Self, StarterError> {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(self),
            Err(e) => return Err(StarterError::Io(dir.to_path_buf(), e)),
        };
        for entry in entries {
            let path = entry.map_err(|e| StarterError::Io(dir.to_path_buf(), e))?.path();
            if path.is_dir() {
                let starter = Starter::load(&path)?;
                self.starters.retain(|s| s.id() != starter.id());
                self.starters.push(starter);
            }
        }
        self.starters.sort_by(|a, b| a.manifest.id.cmp(&b.manifest.id));
        Ok(self)
    }

    pub fn list(&self) -> &[Starter] {
        &self.starters
    }

    pub fn get(&self, id: &str) -> Option<&Starter> {
        self.starters.iter().find(|s| s.id() == id)
    }
}

fn collect(dir: &Dir<'_>, root: &Path, out: &mut Vec<(String, String)>) {
    for f in dir.files() {
        if let (Ok(rel), Some(text)) = (f.path().strip_prefix(root), f.contents_utf8()) {
            out.push((rel.to_string_lossy().replace('\\', "/"), text.to_string()));
        }
    }
    for d in dir.dirs() {
        collect(d, root, out);
    }
}
