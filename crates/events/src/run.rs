//! The words a run's life is told in, typed once for every front end: what kind of run it is,
//! where it stands, why it ended, how each of its tasks went, and the build's template and
//! narration language. Each is parsed once, where a string comes in (a stored row, a request,
//! a flag), and travels typed from there.

use serde::{Deserialize, Serialize};

/// Defines a string-named enum: its wire names, `as_str`, and a strict `parse` of those names.
macro_rules! named {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The wire name, exactly; `None` for anything else.
            pub fn parse(s: &str) -> Option<Self> {
                match s {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

named! {
    /// Builds, task runs and chat turns are kinds of one run: the same stored rows, stream,
    /// cancel and limits; the kind says which engine drives it and how a list shows it.
    RunKind {
        /// PLANNING → … → PUBLISHED | FAILED from a prompt (`wright run`, `POST /api/builds`).
        Build = "build",
        /// The tasks of a task file on an existing project (`wright task run`).
        Task = "task",
        /// One turn of a chat.
        Chat = "chat",
    }
}

// The macro derives no `Default`; a build is what a run is unless it says otherwise.
#[allow(clippy::derivable_impls)]
impl Default for RunKind {
    fn default() -> Self {
        RunKind::Build
    }
}

named! {
    /// Where a run stands.
    RunStatus {
        /// Waiting for a worker (`wright serve`).
        Queued = "queued",
        Running = "running",
        Published = "published",
        Failed = "failed",
    }
}

impl RunStatus {
    /// Published or failed: nothing more happens to it.
    pub fn is_final(self) -> bool {
        matches!(self, RunStatus::Published | RunStatus::Failed)
    }
}

named! {
    /// Why a run that did not publish stopped.
    EndReason {
        /// Verification still failed after the last fix attempt.
        VerificationFailed = "verification_failed",
        /// The model could not be used (unreachable, refused the key, rejected the request).
        ProviderUnusable = "provider_unusable",
        /// The conversation outgrew the model's context window even after compaction.
        ContextFull = "context_full",
        TimedOut = "timed_out",
        /// Someone pressed stop.
        Cancelled = "cancelled",
        /// The run's money limit was reached.
        BudgetSpent = "budget_spent",
        /// Interrupted once more than the server may run it again.
        ServerStopped = "server_stopped",
        /// The stored request could not be run (a model or template no longer allowed).
        InvalidRequest = "invalid_request",
        /// The run's folder could not be made ready.
        WorkspaceUnusable = "workspace_unusable",
        /// A task run in which some task did not pass.
        TasksFailed = "tasks_failed",
        /// An assistant turn whose model asked for more rounds of tool calls than allowed.
        RoundLimit = "round_limit",
        /// The built-in model has no tested starter that fits the request (docs/starters.md).
        NoFittingStarter = "no_fitting_starter",
        /// An MCP server its `wright.toml` table marks `required` could not be started.
        ToolServerFailed = "tool_server_failed",
    }
}

named! {
    /// How a task of a task run ended.
    TaskStatus {
        Passed = "passed",
        Failed = "failed",
        /// It ran and had nothing to check.
        Skipped = "skipped",
        /// It did not run: a dependency did not pass, or the run stopped first.
        NotRun = "not_run",
    }
}

impl TaskStatus {
    /// Whether the tasks depending on it may run.
    pub fn ok(self) -> bool {
        matches!(self, TaskStatus::Passed | TaskStatus::Skipped)
    }
}

named! {
    /// What kind of project a build makes; each kind has its own rules and checks.
    Template {
        Static = "static",
        Interactive = "interactive",
        Fullstack = "fullstack",
        /// React + TypeScript + Tailwind, type-checked and bundled (TRANSPILING) before it is
        /// verified; the bundled page is what previews and the browser check open.
        React = "react",
        /// A Python project (a script, a command-line tool, a small API) tested with pytest;
        /// its packages come from the host's cache, installed offline in the sandbox.
        Python = "python",
        /// A Rust crate tested with `cargo test`, its crates vendored from the host's cache.
        Rust = "rust",
        /// A Go module tested with `go test -json`, its modules served from the host's cache.
        Go = "go",
        /// Chosen from the request's words when the build starts ([`Template::resolve`]).
        Auto = "auto",
    }
}

impl Template {
    /// Parse what a person typed: any case, and `full-stack` too.
    pub fn parse_loose(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "full-stack" => Some(Template::Fullstack),
            other => Template::parse(other),
        }
    }

    /// Pick a concrete template from the request's words (`auto`).
    pub fn resolve(self, prompt: &str) -> Self {
        if self != Self::Auto {
            return self;
        }
        let p = prompt.to_lowercase();
        if let Some(language) = Self::language_asked(&p) {
            return language;
        }
        let has = |words: &[&str]| words.iter().any(|w| p.contains(w));
        // A server or a database make a full-stack app even when React is named (the react
        // template has no backend); an "API" alone is a page that may call one.
        let backend = has(&[
            "server",
            "backend",
            "back-end",
            "database",
            "full-stack",
            "fullstack",
            "full stack",
            "express",
            "servidor",
        ]);
        if !backend && has(&["react", "tsx", "typescript", "tailwind", "next.js", "shadcn"]) {
            return Self::React;
        }
        if backend || has(&["api"]) {
            Self::Fullstack
        } else if has(&[
            "landing",
            "portfolio",
            "static",
            "résumé",
            "resume",
            "cv ",
            "bio",
            "página pessoal",
            "about me",
        ]) && !has(&["button", "click", "botão", "game", "jogo", "timer", "counter", "contador"])
        {
            Self::Static
        } else {
            Self::Interactive
        }
    }

    /// A Python, Rust or Go project named in the (lower-cased) request, or a script or
    /// command-line tool with no page, which is a Python project.
    fn language_asked(p: &str) -> Option<Self> {
        let words: Vec<&str> =
            p.split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '-')).filter(|w| !w.is_empty()).collect();
        let word = |w: &str| words.iter().any(|x| x.trim_end_matches('.') == w);
        let pair = |a: &str, b: &[&str]| {
            words.windows(2).any(|x| x[0] == a && b.iter().any(|w| x[1].trim_end_matches('.') == *w))
        };
        if word("rust") || word("cargo") || word("rustlang") {
            return Some(Self::Rust);
        }
        const GO_THINGS: &[&str] = &[
            "program", "cli", "tool", "module", "package", "library", "service", "server", "api", "script", "binary",
            "app",
        ];
        let go = word("golang")
            || pair("go", GO_THINGS)
            || ["in", "using", "with", "em", "written"].iter().any(|w| pair(w, &["go"]));
        if go {
            return Some(Self::Go);
        }
        if word("python")
            || word("python3")
            || word("pytest")
            || word("flask")
            || word("fastapi")
            || words.iter().any(|w| w.ends_with(".py"))
        {
            return Some(Self::Python);
        }
        let web =
            ["page", "website", "site", "browser", "html", "button", "bookmarklet", "página", "botão", "userscript"];
        let scriptish = word("script")
            || word("cli")
            || p.contains("command-line")
            || p.contains("command line")
            || p.contains("linha de comando")
            || p.contains("terminal program");
        (scriptish && !web.iter().any(|w| p.contains(w))).then_some(Self::Python)
    }

    /// Whether a build of this kind makes a web page (checked, previewed, opened in a browser).
    pub fn is_web(self) -> bool {
        matches!(self, Self::Static | Self::Interactive | Self::Fullstack | Self::React)
    }

    /// Whether a build of this kind is a Python, Rust or Go project (no page; its packages come
    /// from the cache; a command-line program answers `--help`).
    pub fn is_code(self) -> bool {
        matches!(self, Self::Python | Self::Rust | Self::Go)
    }

    /// The page wright checks for this kind of project.
    pub fn entry_page(self) -> &'static str {
        match self {
            Self::Fullstack => "client/index.html",
            Self::React => "dist/index.html",
            _ => "index.html",
        }
    }

    /// Whether a build of this kind must have tests to count as verified.
    pub fn requires_tests(self) -> bool {
        matches!(self, Self::Interactive | Self::Fullstack | Self::React | Self::Python | Self::Rust | Self::Go)
    }

    /// Whether the project is transpiled and bundled (TRANSPILING) before it is verified.
    pub fn has_build_step(self) -> bool {
        self == Self::React
    }
}

named! {
    /// The language a run is narrated in.
    Lang {
        En = "en",
        Pt = "pt",
    }
}

#[allow(clippy::derivable_impls)]
impl Default for Lang {
    fn default() -> Self {
        Lang::En
    }
}

impl Lang {
    /// The language's name in English, for prompts ("Write in Portuguese").
    pub fn name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::Pt => "Portuguese",
        }
    }

    /// Parse what a person typed: any case, with a region (`pt-BR`).
    pub fn parse_loose(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "en" | "en-us" | "en-gb" => Some(Lang::En),
            "pt" | "pt-br" | "pt-pt" => Some(Lang::Pt),
            _ => None,
        }
    }
}

named! {
    /// How a verification round's browser check went (`browser_check.outcome`).
    BrowserOutcome {
        /// The page was opened, exercised and looked at; the counts say what was seen.
        Checked = "checked",
        /// Not run this round (`reason` says why): no browser here, or nothing to open.
        Skipped = "skipped",
        /// Started but did not finish (`reason` says why, e.g. out of memory).
        Failed = "failed",
    }
}

named! {
    /// Why an interrupted run went back to the queue (`restarted.reason`).
    RestartReason {
        /// Its worker vanished (crash, kill -9): the lease ran out unrenewed.
        WorkerLost = "worker_lost",
        /// The server stopped while it ran past the grace time.
        Shutdown = "shutdown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug + Copy>(
        all: &[T],
        name: impl Fn(T) -> &'static str,
        parse: impl Fn(&str) -> Option<T>,
    ) {
        for &v in all {
            assert_eq!(parse(name(v)), Some(v));
            assert_eq!(serde_json::to_value(v).unwrap(), serde_json::Value::String(name(v).into()));
            assert_eq!(serde_json::from_value::<T>(serde_json::Value::String(name(v).into())).unwrap(), v);
        }
    }

    #[test]
    fn every_name_round_trips_through_text_and_json() {
        round_trip(RunKind::ALL, RunKind::as_str, RunKind::parse);
        round_trip(RunStatus::ALL, RunStatus::as_str, RunStatus::parse);
        round_trip(EndReason::ALL, EndReason::as_str, EndReason::parse);
        round_trip(TaskStatus::ALL, TaskStatus::as_str, TaskStatus::parse);
        round_trip(Template::ALL, Template::as_str, Template::parse);
        round_trip(Lang::ALL, Lang::as_str, Lang::parse);
        round_trip(BrowserOutcome::ALL, BrowserOutcome::as_str, BrowserOutcome::parse);
        round_trip(RestartReason::ALL, RestartReason::as_str, RestartReason::parse);
    }

    #[test]
    fn parsing_is_strict_at_the_store_and_loose_for_people() {
        assert_eq!(RunKind::parse("Build"), None);
        assert_eq!(EndReason::parse("cancelled "), None);
        assert_eq!(Template::parse_loose("Full-Stack"), Some(Template::Fullstack));
        assert_eq!(Lang::parse_loose("pt-BR"), Some(Lang::Pt));
        assert_eq!(Lang::parse_loose("fr"), None);
    }

    #[test]
    fn auto_picks_a_template_from_the_words() {
        assert_eq!(Template::Auto.resolve("make a counter app with a + button"), Template::Interactive);
        assert_eq!(Template::Auto.resolve("a landing page for my bakery"), Template::Static);
        assert_eq!(Template::Auto.resolve("weather dashboard with a backend API"), Template::Fullstack);
        assert_eq!(Template::Auto.resolve("a todo app with an API and a database"), Template::Fullstack);
        assert_eq!(Template::Auto.resolve("a countdown timer"), Template::Interactive);
        assert_eq!(Template::Static.resolve("a game with a server"), Template::Static);
        assert_eq!(Template::Auto.resolve("a React to-do app with TypeScript and Tailwind"), Template::React);
        assert_eq!(Template::Auto.resolve("a react app with an express server"), Template::Fullstack);
        assert_eq!(Template::Auto.resolve("a TSX counter"), Template::React);
        assert_eq!(Template::Auto.resolve("a python script that counts words in a file, with tests"), Template::Python);
        assert_eq!(Template::Auto.resolve("a script that renames my photos by date"), Template::Python);
        assert_eq!(Template::Auto.resolve("a command-line tool to count lines"), Template::Python);
        assert_eq!(Template::Auto.resolve("a Rust library that parses durations like 1h30m"), Template::Rust);
        assert_eq!(Template::Auto.resolve("a word counter in Go, with tests"), Template::Go);
        assert_eq!(Template::Auto.resolve("a Go program that counts words"), Template::Go);
        assert_eq!(Template::Auto.resolve("a small Flask API for notes"), Template::Python);
        // "go" the verb and a web script stay web.
        assert_eq!(Template::Auto.resolve("a page with a go button"), Template::Interactive);
        assert_eq!(Template::Auto.resolve("let's go: a todo list"), Template::Interactive);
        assert_eq!(Template::Auto.resolve("a bookmarklet script for my page"), Template::Interactive);
    }
}
