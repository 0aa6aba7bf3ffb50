//! Explaining a build's code to someone who has never programmed: the one place `wright
//! explain` and the web UI (`POST /api/builds/{id}/explain`) get it from.

use crate::EngineError;
use crate::config::ProviderKind;
use crate::engine::Engine;
use tokio_util::sync::CancellationToken;
use wright_agent::Lang;
use wright_provider::{ChatRequest, Delta, Message, RetryPolicy, complete};
use wright_sandbox::{Workspace, WorkspaceLimits};
use wright_store::{BuildRecord, Tokens, UsageEntry};

fn system_prompt(lang: Lang) -> &'static str {
    match lang {
        Lang::En => {
            "You explain a small software project to someone who has never programmed. Go file by file in the order a \
visitor meets them, in short paragraphs under plain headings. Say what each part does and how the parts work \
together, naming files and functions exactly as they appear. Use everyday analogies: HTML is the skeleton of a \
page, CSS its clothes, JavaScript its muscles; a test is a checklist a robot runs; a server is a restaurant \
kitchen, the API its waiter and the page the dining room. A program run in a terminal (Python, Rust, Go) is a \
helper you give instructions to by typing; a function is a recipe, ingredients in and a dish out. Explain every technical word the first time you use it. \
End with two or three small changes the reader could try first, and where to make them. Plain text, no code \
longer than three lines."
        }
        Lang::Pt => {
            "Você explica um pequeno projeto de software para alguém que nunca programou. Vá arquivo por arquivo, na \
ordem em que um visitante os encontra, em parágrafos curtos com títulos simples. Diga o que cada parte faz e como \
as partes trabalham juntas, citando arquivos e funções exatamente como aparecem. Use analogias do dia a dia: o HTML \
é o esqueleto da página, o CSS a roupa, o JavaScript os músculos; um teste é uma lista de conferência que um robô \
executa; um servidor é a cozinha de um restaurante, a API o garçom e a página o salão. Um programa de terminal (Python, Rust, Go) é um \
ajudante a quem você dá instruções digitando; uma função é uma receita: ingredientes entram, o prato sai. Explique cada palavra \
técnica na primeira vez que usá-la. Termine com duas ou três pequenas mudanças que o leitor pode tentar primeiro, e \
onde fazê-las. Texto simples, sem trechos de código com mais de três linhas."
        }
    }
}

/// The project's text files, most telling first, within `budget` characters.
fn project_text(ws: &Workspace, budget: usize) -> (String, usize) {
    let mut files = wright_tools::project_files(ws);
    // Lockfiles are long and say nothing a beginner needs.
    files.retain(|f| !["package-lock.json", "Cargo.lock", "go.sum"].iter().any(|l| f.ends_with(l)));
    let code = [".js", ".py", ".rs", ".go"];
    let rank = |f: &str| match f {
        f if f.ends_with("index.html") => 0,
        // Where a program starts is where a reader starts.
        "main.py" | "app.py" | "src/main.rs" | "main.go" => 0,
        f if code.iter().any(|e| f.ends_with(e)) && !f.contains("test") => 1,
        f if f.ends_with(".css") => 3,
        f if f.contains("test") => 4,
        _ => 2,
    };
    files.sort_by_key(|f| (rank(f), f.clone()));
    let mut out = String::new();
    let mut shown = 0;
    for f in &files {
        let Ok(bytes) = ws.read(f) else { continue };
        let Ok(text) = String::from_utf8(bytes) else { continue };
        let block = format!("### {f}\n```\n{}\n```\n\n", text.trim_end());
        if out.len() + block.len() > budget {
            out.push_str(&format!("### {f}\n(not shown: too long for this explanation)\n\n"));
            continue;
        }
        out.push_str(&block);
        shown += 1;
    }
    (out, shown)
}

impl Engine {
    /// Explain `build`'s files in `lang`. The text arrives through `on_text` as the model writes
    /// it (all at once for a provider that does not stream), and is returned whole at the end;
    /// `on_retry` hears of each retried model call. Its tokens and cost go to the build's usage
    /// log (phase `EXPLAIN`), so what explanations cost shows where builds' costs do.
    pub async fn explain(
        &self,
        build: &BuildRecord,
        lang: Lang,
        cancel: &CancellationToken,
        mut on_text: impl FnMut(&str),
        mut on_retry: impl FnMut(String),
    ) -> Result<String, EngineError> {
        let folder = self.artifacts().resolve(std::path::Path::new(&build.start.workspace));
        let ws = Workspace::existing(&folder, WorkspaceLimits::default()).map_err(|e| {
            EngineError::Usage(format!(
                "the files of build {} ({}) cannot be read: {e}",
                build.start.id, build.start.workspace
            ))
        })?;
        // The offline model has an 8k-token window; hosted ones can read much more.
        let budget = if self.provider_kind() == ProviderKind::Local { 12_000 } else { 60_000 };
        let (files, shown) = project_text(&ws, budget);
        if shown == 0 {
            return Err(EngineError::Usage(format!(
                "build {} has no readable files in {}",
                build.start.id, build.start.workspace
            )));
        }
        let (provider, model) = self.provider().await?;
        let priced_as = model.clone();
        let request = ChatRequest {
            model,
            messages: vec![
                Message::system(system_prompt(lang)),
                Message::user(format!(
                    "The project was built for this request: {}\n\n{files}",
                    build.start.prompt.trim()
                )),
            ],
            tools: Vec::new(),
            temperature: Some(self.temperature(crate::sampling::Phase::Explain)),
            max_tokens: Some(1500),
            tool_choice: Default::default(),
        };
        let mut streamed = String::new();
        let result = complete(
            provider.as_ref(),
            &request,
            &RetryPolicy::default(),
            cancel,
            |d| {
                if let Delta::Text(t) = d {
                    streamed.push_str(t);
                    on_text(t);
                }
            },
            |e, n, wait| {
                on_retry(format!(
                    "the model service had a problem ({}); retry {n} in {:.1}s",
                    e.class(),
                    wait.as_secs_f32()
                ))
            },
        )
        .await
        .map_err(|e| EngineError::Provider(format!("the AI provider could not be used: {e}")))?;
        let model = result.model.clone().unwrap_or(priced_as);
        let usage = UsageEntry {
            build_id: build.start.id.to_string(),
            phase: "EXPLAIN".into(),
            provider: self.provider_kind().as_str().into(),
            tokens: Tokens {
                input_tokens: result.usage.input_tokens,
                output_tokens: result.usage.output_tokens,
                cached_tokens: result.usage.cached_tokens,
                cost_usd: self.pricing().cost(&model, result.usage),
            },
            model,
            ts: wright_events::now(),
        };
        if let Err(e) = self.store().log_usage(&usage).await {
            tracing::warn!(build = %build.start.id, "the explanation's usage was not stored: {e}");
        }
        if streamed.is_empty() {
            on_text(&result.content);
            return Ok(result.content);
        }
        Ok(streamed)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_program_is_read_from_its_entry_point_and_lockfiles_stay_out() {
        let t = tempfile::tempdir().unwrap();
        let ws = Workspace::open(t.path().join("ws"), WorkspaceLimits::default()).unwrap();
        for (path, text) in [
            ("tests/test_wordcount.py", "def test_x():\n    pass\n"),
            ("wordcount.py", "def count(t):\n    return len(t.split())\n"),
            ("main.py", "import argparse\n"),
            ("Cargo.lock", "# generated\n"),
            ("go.sum", "example.com/x v1.0.0 h1:abc=\n"),
        ] {
            ws.write(path, text.as_bytes()).unwrap();
        }
        let (text, shown) = project_text(&ws, 10_000);
        assert_eq!(shown, 3, "{text}");
        let at = |f: &str| text.find(&format!("### {f}")).unwrap();
        assert!(at("main.py") < at("wordcount.py") && at("wordcount.py") < at("tests/test_wordcount.py"), "{text}");
        assert!(!text.contains("Cargo.lock") && !text.contains("go.sum"), "{text}");
    }
}
