//! File tools: create, update, delete, read, list, search, patch.

use crate::{Tool, ToolContext, ToolError, ToolSuccess, decode, schema::schema_for};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use wright_events::EventKind;
use wright_sandbox::{EntryKind, PathError, Workspace};

/// Folders that are generated, not written: listed but never descended into or searched.
const SKIP_DIRS: &[&str] = &["node_modules", ".git", ".wright", "target", "__pycache__", ".venv"];
/// Most text readFile returns; larger files are cut and say so.
const READ_LIMIT: usize = 100 * 1024;
const LIST_LIMIT: usize = 500;
const SEARCH_LIMIT: usize = 100;

#[derive(Deserialize, JsonSchema)]
struct WriteArgs {
    /// File path relative to the project folder, like 'index.html' or 'src/app.js'.
    path: String,
    /// The complete file content.
    content: String,
}

/// Models sometimes send structured content (package.json as an object); keep it as JSON text.
fn coerce_content(args: &mut Value) {
    if let Some(c) = args.get_mut("content") {
        if c.is_object() || c.is_array() {
            *c = Value::String(serde_json::to_string_pretty(c).unwrap_or_default());
        }
    }
}

fn write_file(ctx: &ToolContext, path: &str, content: &str) -> Result<ToolSuccess, ToolError> {
    let out = ctx.workspace.write(path, content.as_bytes())?;
    ctx.emitter.emit(EventKind::FileWritten { path: out.path.clone(), bytes: out.bytes, created: out.created });
    let verb = if out.created { "created" } else { "updated" };
    Ok(ToolSuccess {
        summary: format!("{verb} {} ({} bytes)", out.path, out.bytes),
        value: json!({"ok": true, "path": out.path, "bytes": out.bytes}),
    })
}

/// createFile and updateFile: the same whole-file write under the two names the contract
/// gives it (models reach for "create" first and "update" when fixing).
pub struct WriteFile {
    name: &'static str,
    description: &'static str,
}

/// `createFile`.
#[allow(non_upper_case_globals)]
pub const CreateFile: WriteFile = WriteFile {
    name: "createFile",
    description: "Create a file in the project with the given full content (replaces it if it exists).",
};

/// `updateFile`.
#[allow(non_upper_case_globals)]
pub const UpdateFile: WriteFile = WriteFile {
    name: "updateFile",
    description: "Replace a file's whole content (used to fix bugs). Send the complete new content.",
};

#[async_trait::async_trait]
impl Tool for WriteFile {
    fn name(&self) -> &'static str {
        self.name
    }
    fn description(&self) -> &'static str {
        self.description
    }
    fn parameters(&self) -> Value {
        schema_for::<WriteArgs>()
    }
    fn coerce(&self, args: &mut Value) {
        coerce_content(args);
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolSuccess, ToolError> {
        let a: WriteArgs = decode(args)?;
        write_file(ctx, &a.path, &a.content)
    }
}

#[derive(Deserialize, JsonSchema)]
struct PathArgs {
    /// File path relative to the project folder.
    path: String,
}

pub struct DeleteFile;

#[async_trait::async_trait]
impl Tool for DeleteFile {
    fn name(&self) -> &'static str {
        "deleteFile"
    }
    fn description(&self) -> &'static str {
        "Delete a file (or an empty folder) from the project."
    }
    fn parameters(&self) -> Value {
        schema_for::<PathArgs>()
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolSuccess, ToolError> {
        let a: PathArgs = decode(args)?;
        let path = ctx.workspace.delete(&a.path)?;
        ctx.emitter.emit(EventKind::FileDeleted { path: path.clone() });
        Ok(ToolSuccess { summary: format!("deleted {path}"), value: json!({"ok": true, "path": path}) })
    }
}

pub struct ReadFile;

#[async_trait::async_trait]
impl Tool for ReadFile {
    fn name(&self) -> &'static str {
        "readFile"
    }
    fn description(&self) -> &'static str {
        "Read a text file from the project. Very large files are cut and say so."
    }
    fn parameters(&self) -> Value {
        schema_for::<PathArgs>()
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolSuccess, ToolError> {
        let a: PathArgs = decode(args)?;
        let bytes = ctx.workspace.read(&a.path)?;
        if bytes.iter().take(8192).any(|b| *b == 0) {
            return Err(ToolError::Failed(format!(
                "`{}` is a binary file ({} bytes); readFile shows text only",
                a.path,
                bytes.len()
            )));
        }
        let text = String::from_utf8_lossy(&bytes);
        let truncated = text.len() > READ_LIMIT;
        let content = crate::clip(&text, READ_LIMIT);
        let mut v = json!({"ok": true, "path": a.path, "content": content});
        if truncated {
            v["truncated"] = json!(true);
            v["total_bytes"] = json!(bytes.len());
        }
        Ok(ToolSuccess {
            summary: format!("read {} ({} bytes{})", a.path, bytes.len(), if truncated { ", cut" } else { "" }),
            value: v,
        })
    }
}

#[derive(Deserialize, JsonSchema)]
struct ListArgs {
    /// Folder to list, relative to the project folder (default: the whole project).
    #[serde(default)]
    path: Option<String>,
}

pub struct ListFiles;

/// The project's files (relative paths, sorted), skipping generated folders. Links are not
/// files of the project and are never followed.
pub fn project_files(ws: &Workspace) -> Vec<String> {
    walk(ws, ".")
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, kind, _)| *kind == EntryKind::File)
        .map(|(p, _, _)| p)
        .collect()
}

/// The files beneath the folder `rel` of the project, relative to that folder (the same walk as
/// [`project_files`]).
pub fn project_files_under(ws: &Workspace, rel: &str) -> Result<Vec<String>, PathError> {
    let prefix = wright_sandbox::normalize_path(rel)?.join("/");
    Ok(walk(ws, rel)?
        .into_iter()
        .filter(|(_, kind, _)| *kind == EntryKind::File)
        .map(|(p, _, _)| if prefix.is_empty() { p } else { p[prefix.len() + 1..].to_string() })
        .collect())
}

/// An entry's kind as `listFiles` names it for the model.
fn kind_name(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::File => "file",
        EntryKind::Dir => "dir",
        EntryKind::Link => "symlink",
        EntryKind::Other => "other",
    }
}

/// Everything beneath the folder `rel` of the project, through the workspace's capability (a
/// folder swapped for a link mid-walk is never entered): `(path, kind, bytes)` with paths
/// relative to the project root. A generated folder is shown, but not what is inside it.
fn walk(ws: &Workspace, rel: &str) -> Result<Vec<(String, EntryKind, u64)>, PathError> {
    let names = wright_sandbox::normalize_path(rel)?;
    let enter = |name: &str| !SKIP_DIRS.contains(&name);
    let found =
        if names.is_empty() { ws.dir().walk(&enter) } else { ws.dir().open_dir(rel).and_then(|d| d.walk(&enter)) }
            .map_err(PathError::from)?;
    let prefix = names.join("/");
    Ok(found
        .into_iter()
        .filter(|e| !e.path.contains(".wright-tmp-"))
        .filter(|e| e.kind != EntryKind::Other)
        .map(|e| {
            let path = if prefix.is_empty() { e.path } else { format!("{prefix}/{}", e.path) };
            (path, e.kind, e.len)
        })
        .collect())
}

#[async_trait::async_trait]
impl Tool for ListFiles {
    fn name(&self) -> &'static str {
        "listFiles"
    }
    fn description(&self) -> &'static str {
        "List files and folders in the project (recursively). Generated folders like node_modules are shown but not expanded."
    }
    fn parameters(&self) -> Value {
        schema_for::<ListArgs>()
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolSuccess, ToolError> {
        let a: ListArgs = decode(args)?;
        let rel = a.path.filter(|p| !p.trim().is_empty()).unwrap_or_else(|| ".".into());
        if rel.trim() != "." && !ctx.workspace.meta(&rel).is_ok_and(|m| m.kind == EntryKind::Dir) {
            ctx.workspace.resolve(&rel)?;
            return Err(ToolError::Failed(format!("`{rel}` is not a folder")));
        }
        let all = walk(&ctx.workspace, &rel)?;
        let total = all.len();
        let entries: Vec<Value> = all
            .into_iter()
            .take(LIST_LIMIT)
            .map(|(path, kind, bytes)| json!({"path": path, "kind": kind_name(kind), "bytes": bytes}))
            .collect();
        let mut v = json!({"ok": true, "entries": entries});
        if total > LIST_LIMIT {
            v["truncated"] = json!(true);
            v["total_entries"] = json!(total);
        }
        Ok(ToolSuccess { summary: format!("{total} entries in {rel}"), value: v })
    }
}

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    /// A regular expression (or plain text) to look for, line by line.
    pattern: String,
    /// Folder or file to search, relative to the project folder (default: everywhere).
    #[serde(default)]
    path: Option<String>,
}

pub struct SearchFiles;

#[async_trait::async_trait]
impl Tool for SearchFiles {
    fn name(&self) -> &'static str {
        "searchFiles"
    }
    fn description(&self) -> &'static str {
        "Search the project's text files for a pattern (regular expression); returns matching lines."
    }
    fn parameters(&self) -> Value {
        schema_for::<SearchArgs>()
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolSuccess, ToolError> {
        let a: SearchArgs = decode(args)?;
        if a.pattern.is_empty() {
            return Err(ToolError::InvalidArguments("`pattern` is empty".into()));
        }
        let (re, literal) = match regex::Regex::new(&a.pattern) {
            Ok(re) => (re, false),
            Err(_) => {
                (regex::Regex::new(&regex::escape(&a.pattern)).map_err(|e| ToolError::Failed(e.to_string()))?, true)
            }
        };
        let rel = a.path.filter(|p| !p.trim().is_empty()).unwrap_or_else(|| ".".into());
        let start = ctx.workspace.resolve(&rel)?;
        let files: Vec<String> = if ctx.workspace.is_file(&rel) {
            vec![ctx.workspace.relative(&start)]
        } else {
            walk(&ctx.workspace, &rel)?
                .into_iter()
                .filter(|(_, k, b)| *k == EntryKind::File && *b <= 1024 * 1024)
                .map(|(p, _, _)| p)
                .collect()
        };
        let mut matches = Vec::new();
        let mut more = false;
        'files: for f in files {
            let Ok(bytes) = ctx.workspace.read(&f) else { continue };
            if bytes.iter().take(8192).any(|b| *b == 0) {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            for (i, line) in text.lines().enumerate() {
                if re.is_match(line) {
                    if matches.len() == SEARCH_LIMIT {
                        more = true;
                        break 'files;
                    }
                    matches.push(json!({"path": f, "line": i + 1, "text": crate::clip(line.trim_end(), 300)}));
                }
            }
        }
        let mut v = json!({"ok": true, "matches": matches});
        if more {
            v["truncated"] = json!(true);
        }
        if literal {
            v["note"] = json!("the pattern is not a valid regular expression, so it was searched as plain text");
        }
        Ok(ToolSuccess {
            summary: format!("{} matches for {:?}", v["matches"].as_array().map_or(0, Vec::len), a.pattern),
            value: v,
        })
    }
}

#[derive(Deserialize, JsonSchema)]
struct PatchArgs {
    /// File to change, relative to the project folder.
    path: String,
    /// A unified diff (with @@ hunk headers) against the file's current content.
    patch: String,
}

pub struct ApplyPatch;

#[async_trait::async_trait]
impl Tool for ApplyPatch {
    fn name(&self) -> &'static str {
        "applyPatch"
    }
    fn description(&self) -> &'static str {
        "Change part of a file with a unified diff. Context lines must match the file exactly; if it fails, read the file and retry, or use updateFile."
    }
    fn parameters(&self) -> Value {
        schema_for::<PatchArgs>()
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolSuccess, ToolError> {
        let a: PatchArgs = decode(args)?;
        let original = match ctx.workspace.read(&a.path) {
            Ok(b) => String::from_utf8(b).map_err(|_| ToolError::Failed(format!("`{}` is not UTF-8 text", a.path)))?,
            Err(wright_sandbox::PathError::NotFound(_)) => String::new(),
            Err(e) => return Err(e.into()),
        };
        let patched = apply_unified(&original, &a.patch)
            .map_err(|e| ToolError::Failed(format!("the patch does not apply to `{}`: {e}", a.path)))?;
        let mut s = write_file(ctx, &a.path, &patched)?;
        s.value = json!({"ok": true, "path": s.value["path"]});
        s.summary = format!("patched {}", a.path);
        Ok(s)
    }
}

/// Apply a unified diff. Accepts patches with or without `---`/`+++` headers (models often
/// omit them) and tolerates a missing trailing newline.
pub(crate) fn apply_unified(original: &str, patch: &str) -> Result<String, String> {
    let mut text = patch.replace("\r\n", "\n");
    if !text.contains("\n@@") && !text.starts_with("@@") {
        return Err("no hunk found; a hunk starts with a line like `@@ -3,4 +3,5 @@`".into());
    }
    if !text.starts_with("---") {
        let body = text.trim_start_matches(|c| c != '@').to_string();
        text = format!("--- a\n+++ b\n{body}");
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let parsed = diffy::Patch::from_str(&text).map_err(|e| e.to_string())?;
    diffy::apply(original, &parsed).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::fixture;

    /// The registry with this module's tools only.
    fn builtin_registry() -> crate::Registry {
        let mut r = crate::Registry::new();
        let tools: [std::sync::Arc<dyn Tool>; 7] = [
            std::sync::Arc::new(CreateFile),
            std::sync::Arc::new(UpdateFile),
            std::sync::Arc::new(DeleteFile),
            std::sync::Arc::new(ReadFile),
            std::sync::Arc::new(ListFiles),
            std::sync::Arc::new(SearchFiles),
            std::sync::Arc::new(ApplyPatch),
        ];
        for t in tools {
            r.register(t);
        }
        r
    }
    use wright_provider::ToolCall;

    async fn run(f: &crate::test_support::Fixture, name: &str, args: Value) -> crate::ToolOutcome {
        builtin_registry()
            .dispatch(&ToolCall { id: "x".into(), name: name.into(), arguments: args.to_string() }, &f.ctx)
            .await
    }

    #[tokio::test]
    async fn write_read_list_search_delete() {
        let f = fixture();
        let o = run(
            &f,
            "createFile",
            json!({"path": "src/app.js", "content": "let count = 0;\nfunction inc() { count++; }\n"}),
        )
        .await;
        assert_eq!(o.value, json!({"ok": true, "path": "src/app.js", "bytes": 43}));
        let o = run(
            &f,
            "createFile",
            json!({"path": "package.json", "content": {"name": "x", "scripts": {"test": "node --test"}}}),
        )
        .await;
        assert!(o.ok, "{:?}", o.value);
        let pkg = std::fs::read_to_string(f.ctx.workspace.root().join("package.json")).unwrap();
        assert!(pkg.contains("\"test\": \"node --test\""));
        let o = run(&f, "updateFile", json!({"path": "src/app.js", "content": "let count = 1;\n"})).await;
        assert!(o.ok);
        let o = run(&f, "readFile", json!({"path": "src/app.js"})).await;
        assert_eq!(o.value["content"], "let count = 1;\n");
        std::fs::create_dir_all(f.ctx.workspace.root().join("node_modules/dep")).unwrap();
        std::fs::write(f.ctx.workspace.root().join("node_modules/dep/index.js"), "count").unwrap();
        let o = run(&f, "listFiles", json!({})).await;
        let paths: Vec<&str> =
            o.value["entries"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
        assert_eq!(paths, vec!["node_modules", "package.json", "src", "src/app.js"]);
        let o = run(&f, "searchFiles", json!({"pattern": "count ="})).await;
        assert_eq!(o.value["matches"], json!([{"path": "src/app.js", "line": 1, "text": "let count = 1;"}]));
        let o = run(&f, "searchFiles", json!({"pattern": "inc("})).await;
        assert!(o.value["note"].is_string());
        let o = run(&f, "deleteFile", json!({"path": "src/app.js"})).await;
        assert_eq!(o.value, json!({"ok": true, "path": "src/app.js"}));
        let types: Vec<String> = f.sink.events().iter().map(|e| e.kind.type_name().to_string()).collect();
        assert!(types.contains(&"file_written".to_string()));
        assert!(types.contains(&"file_deleted".to_string()));
    }

    #[tokio::test]
    async fn read_large_file_is_cut_and_says_so() {
        let f = fixture();
        std::fs::write(f.ctx.workspace.root().join("big.txt"), "a".repeat(300_000)).unwrap();
        let o = run(&f, "readFile", json!({"path": "big.txt"})).await;
        assert_eq!(o.value["truncated"], true);
        assert_eq!(o.value["total_bytes"], 300_000);
        assert!(o.value["content"].as_str().unwrap().len() < 110_000);
        let o = run(&f, "createFile", json!({"path": "huge.txt", "content": "b".repeat(1024 * 1024 + 1)})).await;
        assert!(!o.ok);
        assert!(o.value["error"].as_str().unwrap().contains("limit"));
    }

    #[tokio::test]
    async fn apply_patch_with_and_without_headers() {
        let f = fixture();
        run(&f, "createFile", json!({"path": "a.js", "content": "one\ntwo\nthree\n"})).await;
        let o = run(
            &f,
            "applyPatch",
            json!({"path": "a.js", "patch": "--- a/a.js\n+++ b/a.js\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"}),
        )
        .await;
        assert_eq!(o.value, json!({"ok": true, "path": "a.js"}));
        let o = run(&f, "applyPatch", json!({"path": "a.js", "patch": "@@ -2,2 +2,2 @@\n TWO\n-three\n+3"})).await;
        assert!(o.ok, "{:?}", o.value);
        assert_eq!(std::fs::read_to_string(f.ctx.workspace.root().join("a.js")).unwrap(), "one\nTWO\n3\n");
        let o = run(&f, "applyPatch", json!({"path": "a.js", "patch": "@@ -1,1 +1,1 @@\n-nope\n+yes\n"})).await;
        assert!(!o.ok);
        assert!(o.value["error"].as_str().unwrap().starts_with("the patch does not apply"));
        let o = run(&f, "applyPatch", json!({"path": "a.js", "patch": "just replace it"})).await;
        assert!(o.value["error"].as_str().unwrap().contains("no hunk"));
    }

    proptest::proptest! {
        #[test]
        fn patch_parser_never_panics(orig in ".{0,40}", patch in ".{0,80}") {
            let _ = apply_unified(&orig, &patch);
            let _ = apply_unified(&orig, &format!("@@ -1 +1 @@\n{patch}"));
        }
    }
}
