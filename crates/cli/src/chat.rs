//! `wright chat "…"`: the chat agent in a terminal. The reply streams as it is written; the
//! tools' results follow, readable as text (a diagram as its Mermaid source, a quiz answerable
//! at the prompt when stdin is a terminal).

use crate::{DbArgs, Exit, ModelArgs, parse_lang};
use anyhow::anyhow;
use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_engine::config::FileConfig;
use wright_engine::{ChatJob, Engine, Overrides};
use wright_events::chat::{ChatMessage, Mode, Part, Quiz, Role};
use wright_events::{Event, EventKind, EventSink, Lang};

/// The one user of a terminal's conversations.
pub const LOCAL_USER: &str = "local";

#[derive(clap::Args)]
pub struct ChatArgs {
    /// What to say (omit with --history or --clear).
    message: Option<String>,
    /// Continue this conversation (its id, printed after each answer).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Language of the answer: en or pt [default: en].
    #[arg(long, value_name = "CODE")]
    lang: Option<String>,
    /// Switch a tool on or off for this message: `--tool quiz=on`, `--tool diagram=off`.
    #[arg(long = "tool", value_name = "NAME=on|off")]
    tools: Vec<String>,
    /// Print the session's messages instead of sending one.
    #[arg(long, requires = "session")]
    history: bool,
    /// Clear the session's messages.
    #[arg(long, requires = "session")]
    clear: bool,
    /// Do not ask the quiz's questions even in a terminal.
    #[arg(long)]
    no_quiz: bool,
    #[command(flatten)]
    llm: ModelArgs,
    #[command(flatten)]
    db: DbArgs,
}

/// Prints a turn's events as they are stored.
struct Live {
    lang: Lang,
}

impl EventSink for Live {
    fn accept(&self, e: &Event) {
        let mut out = std::io::stdout();
        let t = |en: &'static str, pt: &'static str| if self.lang == Lang::Pt { pt } else { en };
        match &e.kind {
            EventKind::ToolSelected { tool, confidence } => {
                let _ = writeln!(out, "🔧 {} {tool} ({confidence:.2})", t("using", "usando"));
            }
            EventKind::ChatToolResult { tool, success: false, error, .. } => {
                let _ = writeln!(out, "⚠️  {tool}: {}", error.as_deref().unwrap_or("failed"));
            }
            EventKind::TextDelta { text } => {
                let _ = write!(out, "{text}");
                let _ = out.flush();
            }
            _ => {}
        }
    }
}

fn parse_modes(items: &[String], known: &[String]) -> Result<BTreeMap<String, Mode>, Exit> {
    items
        .iter()
        .map(|item| {
            let (name, mode) = item
                .split_once('=')
                .ok_or_else(|| Exit(2, anyhow!("--tool takes NAME=on or NAME=off, not `{item}`")))?;
            if !known.iter().any(|k| k == name) {
                return Err(Exit(2, anyhow!("--tool: no tool is called `{name}` ({})", known.join(", "))));
            }
            let mode = match mode {
                "on" => Mode::On,
                "off" => Mode::Off,
                _ => return Err(Exit(2, anyhow!("--tool {name}= takes on or off, not `{mode}`"))),
            };
            Ok((name.to_string(), mode))
        })
        .collect()
}

/// A part as terminal text.
pub fn render_part(p: &Part, lang: Lang) -> String {
    let t = |en: &'static str, pt: &'static str| if lang == Lang::Pt { pt } else { en };
    match p {
        Part::Text { .. } => String::new(),
        Part::Diagram { title, mermaid } => format!(
            "📊 {title}\n```mermaid\n{mermaid}\n```\n({})",
            t(
                "Mermaid source: `wright serve`'s chat draws it, as does any Mermaid viewer",
                "código Mermaid: o chat do `wright serve` o desenha, como qualquer visualizador Mermaid"
            )
        ),
        Part::Quiz { quiz } => {
            let mut s = format!("📝 {}", quiz.title);
            for (i, q) in quiz.questions.iter().enumerate() {
                s.push_str(&format!("\n{}. {}", i + 1, q.question));
                for (j, o) in q.options.iter().enumerate() {
                    s.push_str(&format!("\n   {}) {o}", (b'a' + j as u8) as char));
                }
            }
            s
        }
        Part::Flashcards { cards } => {
            let mut s = format!("🗂️  {} {}", cards.len(), t("cards added to your deck:", "cartões no seu baralho:"));
            for c in cards {
                s.push_str(&format!("\n   • {} — {}", c.front, c.back));
            }
            s
        }
        Part::Videos { query, videos } => {
            let mut s = format!("🎬 {query}");
            for v in videos {
                s.push_str(&format!("\n   • {} ({}) {}", v.title, v.channel, v.url));
            }
            s
        }
        Part::Code { language, code } => format!("```{language}\n{code}\n```"),
        Part::BackgroundProcess { summary, .. } => format!("🗂️  {summary}"),
        Part::Documents { hits, .. } => {
            let mut s = format!("📚 {}", t("Sources:", "Fontes:"));
            for h in hits {
                s.push_str(&format!("\n   • {} › {}", h.source, h.heading));
            }
            s
        }
        Part::ToolOutput { tool, text } => format!("🧰 {tool}:\n{text}"),
        Part::Error { tool, message } => format!("⚠️  {tool}: {message}"),
    }
}

/// Ask the quiz's questions at the prompt and score the answers.
fn ask_quiz(quiz: &Quiz, lang: Lang) -> std::io::Result<()> {
    let t = |en: &'static str, pt: &'static str| if lang == Lang::Pt { pt } else { en };
    let stdin = std::io::stdin();
    let mut answers = Vec::new();
    for (i, q) in quiz.questions.iter().enumerate() {
        let letters: String = (0..q.options.len()).map(|j| (b'a' + j as u8) as char).collect();
        loop {
            print!("{} {} [{letters}]: ", t("Your answer to", "Sua resposta para"), i + 1);
            std::io::stdout().flush()?;
            let mut line = String::new();
            if stdin.lock().read_line(&mut line)? == 0 {
                return Ok(());
            }
            let c = line.trim().to_lowercase();
            if let Some(pos) = c.chars().next().and_then(|ch| letters.find(ch)).filter(|_| c.len() == 1) {
                answers.push(pos);
                break;
            }
        }
    }
    if let Some(score) = quiz.score(&answers) {
        for (i, r) in score.results.iter().enumerate() {
            let mark = if r.correct { "✅" } else { "❌" };
            println!("{mark} {}. {}", i + 1, r.explanation);
        }
        println!("{} {}/{}", t("Score:", "Pontuação:"), score.score, score.total);
    }
    Ok(())
}

fn print_message(m: &ChatMessage, lang: Lang, with_text: bool) {
    for p in &m.parts {
        match p {
            Part::Text { text } if with_text => println!("{text}"),
            Part::Text { .. } => {}
            other => println!("\n{}", render_part(other, lang)),
        }
    }
}

pub async fn chat(args: ChatArgs, config_path: Option<PathBuf>) -> Result<u8, Exit> {
    let (file, _) = FileConfig::load(config_path.as_deref())?;
    let lang = args.lang.as_deref().or(file.lang.as_deref()).map(parse_lang).transpose()?.unwrap_or_default();
    let overrides = Overrides {
        provider: args.llm.provider,
        model: args.llm.model,
        base_url: args.llm.base_url,
        db: args.db.db,
        data_dir: args.db.data_dir,
        notices: crate::notices::terminal(),
        ..Overrides::default()
    };
    let engine = Engine::new(file, overrides).await?;
    // Turns a killed `wright chat` or server left open (their process is gone) end now.
    engine.end_interrupted_chat_turns().await;
    let store = engine.store().clone();
    let conversation = match &args.session {
        Some(id) => match store.conversation(id).await {
            Ok(c) if c.user_id == LOCAL_USER => c.id,
            _ => return Err(Exit(1, anyhow!("no conversation {id} here; start one without --session"))),
        },
        None => engine.new_conversation(LOCAL_USER).await?,
    };
    if args.clear {
        let n = store.clear_messages(&conversation).await.map_err(|e| Exit(1, anyhow!("{e}")))?;
        println!("{n} messages cleared from {conversation}");
        return Ok(0);
    }
    if args.history {
        for m in store.messages(&conversation, None).await.map_err(|e| Exit(1, anyhow!("{e}")))? {
            println!("\n── {} ──", m.role.as_str());
            print_message(&m, lang, true);
        }
        return Ok(0);
    }
    let Some(content) = args.message.map(|m| m.trim().to_string()).filter(|m| !m.is_empty()) else {
        return Err(Exit(2, anyhow!("say something: wright chat \"make me a quiz about cells\"")));
    };
    let known: Vec<String> = engine.chat_tools().iter().map(|t| t.name().to_string()).collect();
    let modes = parse_modes(&args.tools, &known)?;
    let mut job = ChatJob {
        run: wright_engine::new_build_id(),
        asked: None,
        conversation: conversation.clone(),
        user: LOCAL_USER.into(),
        content,
        modes,
        lang,
    };
    engine.record_chat_turn(&mut job).await?;
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    let done = engine.chat_turn(job, vec![Arc::new(Live { lang })], cancel).await?;
    println!();
    if let Some(reply) = &done.reply {
        print_message(reply, lang, false);
        let quiz = reply.parts.iter().find_map(|p| if let Part::Quiz { quiz } = p { Some(quiz) } else { None });
        if let Some(q) = quiz
            && !args.no_quiz
            && std::io::stdin().is_terminal()
        {
            println!();
            ask_quiz(q, lang).map_err(|e| Exit(1, anyhow!("reading your answers: {e}")))?;
        }
    }
    // Background tools (a flashcard for a definition) finish after the reply: wait for them
    // (each is bounded by the tool timeout) and show what they left.
    engine.finish_background_tools(Duration::from_secs(120)).await;
    if let Some(reply) = &done.reply {
        let later = store.messages(&conversation, Some(5)).await.unwrap_or_default();
        for m in later.iter().filter(|m| m.run == reply.run && m.id != reply.id && m.role == Role::Assistant) {
            print_message(m, lang, false);
        }
    }
    let more = if lang == Lang::Pt { "continue com" } else { "continue with" };
    eprintln!("\n({more} --session {conversation})");
    match done.error {
        Some(e) => Err(Exit(1, anyhow!("{e}"))),
        None => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_checked() {
        let known = vec!["quiz".to_string(), "diagram".to_string()];
        let m = parse_modes(&["quiz=on".into(), "diagram=off".into()], &known).unwrap_or_default();
        assert_eq!(m.get("quiz"), Some(&Mode::On));
        assert!(parse_modes(&["video=on".into()], &known).is_err());
        assert!(parse_modes(&["quiz".into()], &known).is_err());
        assert!(parse_modes(&["quiz=maybe".into()], &known).is_err());
    }
}
