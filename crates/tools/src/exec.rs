//! Running commands for the model and for verification, with events for every step.

use crate::{Tool, ToolContext, ToolError, ToolSuccess, decode, schema::schema_for};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use std::time::Instant;
use wright_events::{Emitter, EventKind, PackageRefusal, Stream};
use wright_packages::{Ecosystem, PackagesError};
use wright_sandbox::{CommandOutcome, CommandSpec, OutputSink, RedactStream, Redactor, RunError, StreamKind};

/// Forwards live output as `command_output` events, redacted. Each stream holds back the
/// unfinished end of its text so a secret split across two chunks is still caught; call
/// [`flush`](Self::flush) when the command has ended.
struct EventOutput<'a> {
    emitter: &'a Emitter,
    streams: Mutex<[RedactStream; 2]>,
}

impl<'a> EventOutput<'a> {
    fn new(emitter: &'a Emitter, redactor: &Redactor) -> Self {
        Self { emitter, streams: Mutex::new([redactor.stream(), redactor.stream()]) }
    }

    fn send(&self, stream: Stream, text: String) {
        if !text.is_empty() {
            self.emitter.emit(EventKind::CommandOutput { stream, chunk: text });
        }
    }

    fn flush(&self) {
        let [out, err] = {
            let mut s = self.streams.lock().unwrap_or_else(PoisonError::into_inner);
            [s[0].finish(), s[1].finish()]
        };
        self.send(Stream::Stdout, out);
        self.send(Stream::Stderr, err);
    }
}

impl OutputSink for EventOutput<'_> {
    fn output(&self, stream: StreamKind, chunk: &str) {
        let (i, stream) = match stream {
            StreamKind::Stdout => (0, Stream::Stdout),
            StreamKind::Stderr => (1, Stream::Stderr),
        };
        let text = self.streams.lock().unwrap_or_else(PoisonError::into_inner)[i].push(chunk);
        self.send(stream, text);
    }
}

/// Run a command in the workspace with `command_started` / `command_output` /
/// `command_finished` events around it. Used by runCommand, runTests and verification alike.
///
/// The outcome's output is already redacted (see [`ExecConfig::redactor`]), so whatever a
/// caller makes of it, a fix prompt or a report, carries no secret.
///
/// A Python, Rust or Go project's declared packages are made ready first
/// ([`packages_ready`]); when they cannot be, nothing runs and the error says why.
pub async fn run_logged(
    ctx: &ToolContext,
    program: &str,
    args: &[String],
    extra_env: &[(String, String)],
    timeout: Duration,
) -> Result<CommandOutcome, RunError> {
    let mut env = packages_ready(ctx).await?;
    for (k, v) in extra_env {
        env.retain(|(ek, _)| ek != k);
        env.push((k.clone(), v.clone()));
    }
    run_plain(ctx, program, args, &env, timeout).await
}

/// [`run_logged`] without the packages step (which uses it for its own installs).
pub(crate) async fn run_plain(
    ctx: &ToolContext,
    program: &str,
    args: &[String],
    extra_env: &[(String, String)],
    timeout: Duration,
) -> Result<CommandOutcome, RunError> {
    let mut env = ctx.exec.env.clone();
    for (k, v) in extra_env {
        env.retain(|(ek, _)| ek != k);
        env.push((k.clone(), v.clone()));
    }
    let mut spec = CommandSpec::new(program, args.to_vec(), ctx.workspace.root().to_path_buf(), env);
    spec.timeout = timeout;
    ctx.emitter.emit(EventKind::CommandStarted { command: program.to_string(), args: args.to_vec() });
    let live = EventOutput::new(&ctx.emitter, &ctx.exec.redactor);
    let result = ctx.runner.run(spec, &live, &ctx.cancel).await;
    live.flush();
    let redactor = &ctx.exec.redactor;
    match result {
        Ok(mut o) => {
            ctx.emitter.emit(EventKind::CommandFinished {
                exit_code: o.exit_code,
                duration_ms: o.duration.as_millis() as u64,
                timed_out: o.timed_out,
            });
            o.stdout = redactor.redact_capture(o.stdout);
            o.stderr = redactor.redact_capture(o.stderr);
            Ok(o)
        }
        Err(e) => {
            let chunk = redactor.redact(&format!("{e}\n")).into_owned();
            ctx.emitter.emit(EventKind::CommandOutput { stream: Stream::Stderr, chunk });
            ctx.emitter.emit(EventKind::CommandFinished { exit_code: None, duration_ms: 0, timed_out: false });
            Err(e)
        }
    }
}

/// Python, Rust and Go packages, made ready before a project's command runs: for a project
/// with a Python, Rust or Go manifest (or loose `.py` files), [`wright_packages::prepare`]
/// checks the declared set and fetches it on the host on a miss; its offline install runs
/// inside the sandbox once per build, and every command gets the environment that points its
/// toolchain at it. A refused spec becomes a `packages_refused` event and an error the model
/// reads; nothing of the command runs.
///
/// Returns the environment the project's packages add to a command (empty for a project with none,
/// or when packages are not configured). Installs them first when the declared set changed.
async fn packages_ready(ctx: &ToolContext) -> Result<Vec<(String, String)>, RunError> {
    let Some(config) = &ctx.exec.packages else { return Ok(Vec::new()) };
    let root = ctx.workspace.root();
    let Some(ecosystem) = Ecosystem::of_project(root) else { return Ok(Vec::new()) };
    // One preparation at a time per build: two commands must not install the same set twice.
    let mut installed = config.installed.lock().await;
    let started = Instant::now();
    let prepared = match wright_packages::prepare(ecosystem, root, &config.settings, &ctx.exec.env, &ctx.cancel).await {
        Ok(p) => p,
        Err(e) => {
            if let PackagesError::Refused(refusals) = &e {
                ctx.emitter.emit(EventKind::PackagesRefused {
                    ecosystem: ecosystem.name().to_string(),
                    refusals: refusals
                        .iter()
                        .map(|r| PackageRefusal {
                            file: r.file.clone(),
                            spec: r.spec.clone(),
                            reason: r.reason.clone(),
                        })
                        .collect(),
                });
            }
            return Err(RunError::Packages(ctx.exec.redactor.redact(&e.to_string()).into_owned()));
        }
    };
    let env = prepared.env_over(&ctx.exec.env);
    if installed.get(&ecosystem) == Some(&prepared.key) {
        return Ok(env);
    }
    for argv in &prepared.setup {
        let Some((program, args)) = argv.split_first() else { continue };
        let o = run_plain(ctx, program, args, &env, ctx.exec.command_timeout).await?;
        if !o.success() {
            let out = crate::clip_tail(&format!("{}{}", o.stdout.render(), o.stderr.render()), 2000);
            return Err(RunError::Packages(format!(
                "installing the {} packages from wright's cache failed (`{}`):\n{out}",
                ecosystem.name(),
                argv.join(" ")
            )));
        }
    }
    ctx.emitter.emit(EventKind::PackagesReady {
        ecosystem: ecosystem.name().to_string(),
        packages: prepared.packages.clone(),
        fetched: prepared.fetched,
        duration_ms: started.elapsed().as_millis() as u64,
        bytes: prepared.bytes,
    });
    installed.insert(ecosystem, prepared.key);
    Ok(env)
}

#[derive(Deserialize, JsonSchema)]
struct CommandArgs {
    /// The program to run, like 'npm' or 'node'.
    command: String,
    /// Its arguments, like ['install', 'express'].
    #[serde(default)]
    args: Vec<String>,
}

pub struct RunCommand;

/// How much of each stream the model gets back.
const MODEL_OUTPUT_TAIL: usize = 4000;

#[async_trait::async_trait]
impl Tool for RunCommand {
    fn name(&self) -> &'static str {
        "runCommand"
    }
    fn description(&self) -> &'static str {
        "Run a program in the project folder (no shell; for pipes use command 'sh' with args ['-c', '...']). Returns exit code and the end of its output. Long-running servers are stopped at the time limit."
    }
    fn parameters(&self) -> Value {
        schema_for::<CommandArgs>()
    }
    fn coerce(&self, args: &mut Value) {
        // `"args": "install express"` → ["install", "express"]; `"command": "npm install"` with
        // no args → split the command line. Both are unambiguous shell-word splits.
        if let Some(s) = args.get("args").and_then(Value::as_str).map(str::to_string) {
            if let Ok(words) = shell_words::split(&s) {
                args["args"] = json!(words);
            }
        }
        let no_args = args.get("args").is_none_or(|a| a.as_array().is_some_and(Vec::is_empty));
        if let Some(cmd) = args.get("command").and_then(Value::as_str).map(str::to_string) {
            if no_args && cmd.trim().contains(char::is_whitespace) {
                if let Ok(mut words) = shell_words::split(&cmd) {
                    if !words.is_empty() {
                        let program = words.remove(0);
                        args["command"] = json!(program);
                        args["args"] = json!(words);
                    }
                }
            }
        }
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolSuccess, ToolError> {
        let a: CommandArgs = decode(args)?;
        if a.command.trim().is_empty() {
            return Err(ToolError::InvalidArguments("`command` is empty".into()));
        }
        if let Some(cache) = &ctx.exec.deps_cache {
            if let Some(request) = crate::deps::NpmInstall::parse(&a.command, &a.args) {
                return crate::deps::install(ctx, cache, request, &a.command, &a.args).await;
            }
        }
        let timeout = ctx.exec.command_timeout;
        let o = run_logged(ctx, &a.command, &a.args, &[], timeout).await?;
        let ok = o.success();
        let mut v = json!({
            "ok": ok,
            "exit_code": o.exit_code,
            "stdout": crate::clip_tail(&o.stdout.render(), MODEL_OUTPUT_TAIL),
            "stderr": crate::clip_tail(&o.stderr.render(), MODEL_OUTPUT_TAIL),
            "timed_out": o.timed_out,
        });
        if o.timed_out {
            v["error"] = json!(format!(
                "the command was stopped after {}s; servers and watchers that never exit cannot be run this way",
                timeout.as_secs()
            ));
        }
        let line =
            std::iter::once(a.command.as_str()).chain(a.args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ");
        if !ok && ctx.exec.deps_cache.is_some() && crate::deps::mentions_npm_install(&a.command, &a.args) {
            v["hint"] = json!(crate::deps::OFFLINE_HINT);
        }
        let how = match (o.timed_out, o.exit_code) {
            (true, _) => "timed out".to_string(),
            (_, Some(c)) => format!("exit {c}"),
            (_, None) => "killed".to_string(),
        };
        Ok(ToolSuccess {
            summary: format!("{} → {how} in {:.1}s", crate::clip(&line, 120), o.duration.as_secs_f32()),
            value: v,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::fixture;
    use serde_json::json;

    /// The registry with this module's tool, and the readers that see what a command left.
    fn builtin_registry() -> crate::Registry {
        let mut r = crate::Registry::new();
        r.register(std::sync::Arc::new(super::RunCommand));
        r.register(std::sync::Arc::new(crate::ReadFile));
        r.register(std::sync::Arc::new(crate::SearchFiles));
        r
    }
    use wright_provider::ToolCall;

    #[tokio::test]
    async fn runs_and_reports_with_events() {
        let f = fixture();
        let r = builtin_registry();
        let call = |args: serde_json::Value| ToolCall {
            id: "1".into(),
            name: "runCommand".into(),
            arguments: args.to_string(),
        };
        let o =
            r.dispatch(&call(json!({"command": "sh", "args": ["-c", "echo hi; echo oops >&2; exit 2"]})), &f.ctx).await;
        assert!(!o.ok);
        assert_eq!(o.value["exit_code"], 2);
        assert_eq!(o.value["stdout"], "hi\n");
        assert_eq!(o.value["stderr"], "oops\n");
        assert_eq!(o.value["timed_out"], false);
        // A whole command line in `command` is split.
        let o = r.dispatch(&call(json!({"command": "sh -c 'echo $HOME'"})), &f.ctx).await;
        assert!(o.ok, "{:?}", o.value);
        assert!(o.value["stdout"].as_str().unwrap().contains("home"));
        let o = r.dispatch(&call(json!({"command": "no-such-program-xyz", "args": []})), &f.ctx).await;
        assert!(o.value["error"].as_str().unwrap().contains("was not found"));
        let types: Vec<String> = f.sink.events().iter().map(|e| e.kind.type_name().to_string()).collect();
        assert!(types.iter().any(|t| t == "command_started"));
        assert!(types.iter().any(|t| t == "command_output"));
        assert!(types.iter().any(|t| t == "command_finished"));
    }

    #[tokio::test]
    async fn secrets_and_home_never_reach_the_model_or_the_events() {
        let mut f = fixture();
        let home = f.ctx.workspace.root().parent().unwrap().to_path_buf();
        f.ctx.exec.redactor = wright_sandbox::Redactor::new(vec!["hunter2-VERY-secret".into()], Some(&home));
        let r = builtin_registry();
        let call = |name: &str, args: serde_json::Value| ToolCall {
            id: "1".into(),
            name: name.into(),
            arguments: args.to_string(),
        };
        // Printed in two writes, so the live stream sees the secret split across chunks.
        let script = "printf 'key=hunter2-VE'; sleep 0.2; printf 'RY-secret at %s\\n' \"$PWD\"; echo ghp_abcdefghijklmnopqrstuvwxyz0123456789 >&2";
        let o = r.dispatch(&call("runCommand", json!({"command": "sh", "args": ["-c", script]})), &f.ctx).await;
        assert!(o.ok, "{:?}", o.value);
        assert_eq!(o.value["stdout"], "key=[redacted] at ~/ws\n");
        assert_eq!(o.value["stderr"], "[redacted]\n");
        assert!(o.value["redacted"].is_string());
        let live: String = f
            .sink
            .events()
            .iter()
            .filter_map(|e| match &e.kind {
                wright_events::EventKind::CommandOutput { chunk, .. } => Some(chunk.clone()),
                _ => None,
            })
            .collect();
        assert!(live.contains("key=[redacted] at ~/ws"), "{live}");
        assert!(!live.contains("hunter2") && !live.contains("ghp_"), "{live}");
        // File contents too, with a note so the model does not write the marker back.
        f.ctx.workspace.write("config.js", b"const key = 'hunter2-VERY-secret';\n").unwrap();
        let o = r.dispatch(&call("readFile", json!({"path": "config.js"})), &f.ctx).await;
        assert_eq!(o.value["content"], "const key = '[redacted]';\n");
        assert!(o.value["redacted"].as_str().unwrap().contains("never write"));
        let o = r.dispatch(&call("searchFiles", json!({"pattern": "key"})), &f.ctx).await;
        assert_eq!(o.value["matches"][0]["text"], "const key = '[redacted]';");
        let all = serde_json::to_string(&f.sink.events()).unwrap();
        assert!(!all.contains("hunter2-VERY-secret"), "{all}");
    }
}
