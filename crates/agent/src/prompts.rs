//! The prompts wright sends: a stable system prefix first, the request and anything dynamic
//! after it, so provider prompt caches hit on the prefix.
//!
//! The system prompt is built from per-language prompt files (`prompts/<lang>/…`): identity →
//! constraints → tools → examples. Seed 002 puts examples before constraints; we put the worked
//! example last, next to the request, because the tiny offline model copies the example nearest
//! the request: with it earlier it deterministically broke the dog-walking page (a truncated
//! attribute), with it last it builds that page and the bakery one. The fifth layer, knowledge
//! (lessons from earlier builds), changes from build to build, so it is never part of the system
//! prompt: it opens the first user message instead ([`knowledge_block`],
//! [`request_message_with_knowledge`]).

use crate::verdict::Failure;

pub use wright_events::{Lang, Template};

/// Prompt text per narration language.
trait LangText {
    fn instruction(self) -> &'static str;
    fn layers(self) -> &'static Layers;
}

impl LangText for Lang {
    fn instruction(self) -> &'static str {
        match self {
            Self::En => "Write every announceStatus message and your final answer in English.",
            // The English name stays in brackets: models that follow English better still get it.
            Self::Pt => {
                "Escreva toda mensagem do announceStatus e a sua resposta final em português do Brasil (Brazilian Portuguese); código, nomes de arquivos e identificadores ficam em inglês."
            }
        }
    }

    fn layers(self) -> &'static Layers {
        match self {
            Self::En => &EN,
            Self::Pt => &PT,
        }
    }
}

/// One language's prompt files. Embedded, so a build never depends on files next to the binary.
struct Layers {
    identity: &'static str,
    constraints: &'static str,
    tools: &'static str,
    knowledge_title: &'static str,
    /// (examples, constraints) per concrete template.
    static_page: (&'static str, &'static str),
    interactive: (&'static str, &'static str),
    fullstack: (&'static str, &'static str),
    react: (&'static str, &'static str),
    python: (&'static str, &'static str),
    rust: (&'static str, &'static str),
    go: (&'static str, &'static str),
    /// Python, Rust and Go projects' general rules, in place of `constraints` (which are about
    /// web pages and node's test runner).
    code_rules: &'static str,
    /// The react template's general rules, in place of `constraints` (which forbid frameworks
    /// and build steps, and name node's test runner).
    react_rules: &'static str,
}

macro_rules! layers {
    ($lang:literal, $knowledge_title:literal) => {
        Layers {
            identity: include_str!(concat!("../prompts/", $lang, "/identity.md")),
            constraints: include_str!(concat!("../prompts/", $lang, "/constraints.md")),
            tools: include_str!(concat!("../prompts/", $lang, "/tools.md")),
            knowledge_title: $knowledge_title,
            static_page: (
                include_str!(concat!("../prompts/", $lang, "/static/examples.md")),
                include_str!(concat!("../prompts/", $lang, "/static/constraints.md")),
            ),
            interactive: (
                include_str!(concat!("../prompts/", $lang, "/interactive/examples.md")),
                include_str!(concat!("../prompts/", $lang, "/interactive/constraints.md")),
            ),
            fullstack: (
                include_str!(concat!("../prompts/", $lang, "/fullstack/examples.md")),
                include_str!(concat!("../prompts/", $lang, "/fullstack/constraints.md")),
            ),
            react: (
                include_str!(concat!("../prompts/", $lang, "/react/examples.md")),
                include_str!(concat!("../prompts/", $lang, "/react/constraints.md")),
            ),
            react_rules: include_str!(concat!("../prompts/", $lang, "/react/rules.md")),
            python: (
                include_str!(concat!("../prompts/", $lang, "/python/examples.md")),
                include_str!(concat!("../prompts/", $lang, "/python/constraints.md")),
            ),
            rust: (
                include_str!(concat!("../prompts/", $lang, "/rust/examples.md")),
                include_str!(concat!("../prompts/", $lang, "/rust/constraints.md")),
            ),
            go: (
                include_str!(concat!("../prompts/", $lang, "/go/examples.md")),
                include_str!(concat!("../prompts/", $lang, "/go/constraints.md")),
            ),
            code_rules: include_str!(concat!("../prompts/", $lang, "/code/rules.md")),
        }
    };
}

static EN: Layers = layers!(
    "en",
    "# Lessons from earlier builds\nThese mistakes happened in earlier builds; avoid them where they apply:"
);
static PT: Layers = layers!(
    "pt",
    "# Lições de construções anteriores\nEstes erros aconteceram em construções anteriores; evite-os quando se aplicarem:"
);

impl Layers {
    /// The template's (examples, constraints); `auto` that was never resolved gets the
    /// interactive rules, the most general ones.
    fn template(&self, template: Template) -> (&'static str, &'static str) {
        match template {
            Template::Static => self.static_page,
            Template::Fullstack => self.fullstack,
            Template::React => self.react,
            Template::Python => self.python,
            Template::Rust => self.rust,
            Template::Go => self.go,
            Template::Interactive | Template::Auto => self.interactive,
        }
    }
}

/// wright's own narration (phase messages), in the build's language.
pub fn narrate(lang: Lang, key: Narration) -> String {
    use Narration::*;
    match (lang, key) {
        (Lang::En, Planning(t)) => format!("Planning {}.", t.with_article_en()),
        (Lang::Pt, Planning(t)) => format!("Planejando {}.", t.name_pt()),
        (Lang::En, Starter(title)) => format!("Starting from the tested \"{title}\" starter."),
        (Lang::Pt, Starter(title)) => format!("Começando do modelo testado \"{title}\"."),
        (Lang::En, Generating) => "Writing the project.".into(),
        (Lang::Pt, Generating) => "Escrevendo o projeto.".into(),
        (Lang::En, Preparing) => "Setting up React, TypeScript and Tailwind for your app.".into(),
        (Lang::Pt, Preparing) => "Preparando React, TypeScript e Tailwind para o seu app.".into(),
        (Lang::En, Transpiling) => {
            "Turning your components into a page a browser can open, and checking their types.".into()
        }
        (Lang::Pt, Transpiling) => {
            "Transformando os componentes numa página que o navegador abre, e conferindo os tipos.".into()
        }
        (Lang::En, Verifying) => "Checking that the project works.".into(),
        (Lang::Pt, Verifying) => "Verificando se o projeto funciona.".into(),
        (Lang::En, Published) => "The project is built and verified.".into(),
        (Lang::Pt, Published) => "O projeto está pronto e verificado.".into(),
        (Lang::En, PublishedUnchecked(why)) => format!(
            "The project is built and its checks pass, but its page was not opened in a browser ({why}), so errors a visitor would meet may remain."
        ),
        (Lang::Pt, PublishedUnchecked(why)) => format!(
            "O projeto está pronto e passa nas verificações, mas a página não foi aberta num navegador ({why}); erros que um visitante veria podem continuar."
        ),
        (Lang::En, StillFailing(n, dir)) => {
            format!("The project still fails verification after {n} fix attempt(s); its files are kept in {dir}.")
        }
        (Lang::Pt, StillFailing(n, dir)) => format!(
            "O projeto ainda falha na verificação depois de {n} tentativa(s) de correção; os arquivos ficam em {dir}."
        ),
        // Kind words first; the technical reason goes with them as the error's `detail`.
        (lang, ProviderFailed) => wright_events::words::say(lang, wright_events::words::Said::ModelUnavailable),
        (Lang::En, HiddenRemoved(n)) => format!(
            "{n} invisible character{s} (control, text-direction or zero-width characters) {were} removed from your request before the model read it.",
            s = if n == 1 { "" } else { "s" },
            were = if n == 1 { "was" } else { "were" }
        ),
        (Lang::Pt, HiddenRemoved(n)) => format!(
            "{n} caractere{s} invisíve{is} (de controle, de direção do texto ou de largura zero) {foram} removido{s} do seu pedido antes de o modelo lê-lo.",
            s = if n == 1 { "" } else { "s" },
            is = if n == 1 { "l" } else { "is" },
            foram = if n == 1 { "foi" } else { "foram" }
        ),
        (Lang::En, ContextFull(e)) => format!(
            "The conversation no longer fits the model's context window, even shortened ({e}); a model or server with a larger context (or a smaller --max-tokens) may get further."
        ),
        (Lang::Pt, ContextFull(e)) => format!(
            "A conversa não cabe mais na janela de contexto do modelo, mesmo encurtada ({e}); um modelo ou servidor com contexto maior (ou um --max-tokens menor) pode ir mais longe."
        ),
        (Lang::En, TimedOut(s)) => format!("The build ran out of time ({s}s)."),
        (Lang::Pt, TimedOut(s)) => format!("O tempo da construção acabou ({s}s)."),
        (Lang::En, BudgetSpent(c)) => format!("The cost budget is spent (${c:.4}); stopping here."),
        (Lang::Pt, BudgetSpent(c)) => format!("O orçamento de custo acabou (US$ {c:.4}); parando aqui."),
        (Lang::En, Stopped) => "The build was stopped.".into(),
        (Lang::Pt, Stopped) => "A construção foi interrompida.".into(),
        (Lang::En, FromStarter(title, false)) => {
            format!("This is the tested \"{title}\" app, filled in for your request; you can change it.")
        }
        (Lang::Pt, FromStarter(title, false)) => {
            format!("Este é o app testado \"{title}\", preenchido para o seu pedido; você pode mudá-lo.")
        }
        (Lang::En, FromStarter(title, true)) => format!(
            "This is the tested \"{title}\" app with its own example texts: the model could not fill them in for your request; you can change them."
        ),
        (Lang::Pt, FromStarter(title, true)) => format!(
            "Este é o app testado \"{title}\" com os textos de exemplo dele: o modelo não conseguiu preenchê-los para o seu pedido; você pode mudá-los."
        ),
        (Lang::En, NoFittingStarter) => {
            "Nothing was built: the built-in model has no tested app that fits this request.".into()
        }
        (Lang::Pt, NoFittingStarter) => {
            "Nada foi construído: o modelo embutido não tem um app testado que sirva para este pedido.".into()
        }
        (Lang::En, ToolServerFailed(why)) => {
            format!("Nothing was built: a tool server this build requires did not start ({why}).")
        }
        (Lang::Pt, ToolServerFailed(why)) => {
            format!("Nada foi construído: um servidor de ferramentas exigido por esta construção não iniciou ({why}).")
        }
    }
}

/// The things wright itself says.
#[derive(Debug, Clone)]
pub enum Narration {
    Planning(Template),
    /// Starting from a tested starter (its title).
    Starter(String),
    Generating,
    /// The react template's packages are being made ready (wright's own step).
    Preparing,
    Transpiling,
    Verifying,
    Published,
    /// Published, but the web page was never opened in a browser (the reason).
    PublishedUnchecked(String),
    StillFailing(u32, String),
    /// The model could not be used; the reason is the error's detail, not these words.
    ProviderFailed,
    /// Invisible characters removed from the prompt (how many).
    HiddenRemoved(u32),
    /// The conversation outgrew the context window even after compaction.
    ContextFull(String),
    TimedOut(u64),
    BudgetSpent(f64),
    Stopped,
    /// The built-in model has no tested app that fits the request.
    NoFittingStarter,
    /// A required MCP server did not start (why).
    ToolServerFailed(String),
    /// What a build filled from a starter is (its title), and whether its texts stayed the
    /// starter's defaults.
    FromStarter(String, bool),
}

/// How narration names a template.
trait TemplateText {
    fn with_article_en(self) -> &'static str;
    fn name_pt(self) -> &'static str;
}

impl TemplateText for Template {
    fn with_article_en(self) -> &'static str {
        match self {
            Self::Static => "a static page",
            Self::Interactive | Self::Auto => "an interactive web app",
            Self::Fullstack => "a full-stack app",
            Self::React => "a React app",
            Self::Python => "a Python program",
            Self::Rust => "a Rust program",
            Self::Go => "a Go program",
        }
    }
    fn name_pt(self) -> &'static str {
        match self {
            Self::Static => "uma página estática",
            Self::Interactive | Self::Auto => "um app web interativo",
            Self::Fullstack => "um app full-stack",
            Self::React => "um app React",
            Self::Python => "um programa em Python",
            Self::Rust => "um programa em Rust",
            Self::Go => "um programa em Go",
        }
    }
}

/// The stable system prompt for a build: identity, constraints (with the narration language),
/// tools, examples. The same template and language always give the same string, byte for byte,
/// so provider prompt caches hit.
pub fn system_prompt(template: Template, lang: Lang) -> String {
    let l = lang.layers();
    let (examples, rules) = l.template(template);
    let general = match template {
        Template::React => l.react_rules,
        t if t.is_code() => l.code_rules,
        _ => l.constraints,
    };
    let constraints = format!("{}\n{}\n{}\n", general, rules, lang.instruction());
    [l.identity, &constraints, l.tools, examples].join("\n")
}

/// An outside API a build may call, as the prompt names it (never with its key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideApi {
    pub name: String,
    /// `WRIGHT_API_<NAME>`: where the server finds the API's base URL.
    pub env: String,
}

/// The suppliers section of a full-stack build's system prompt: which APIs the server may
/// call and how (the page never does). `None` for other templates or when there are none, so
/// builds without outside access keep their prompt byte for byte.
pub fn suppliers_section(template: Template, lang: Lang, apis: &[OutsideApi]) -> Option<String> {
    if template != Template::Fullstack || apis.is_empty() {
        return None;
    }
    let text = match lang {
        Lang::En => include_str!("../prompts/en/fullstack/suppliers.md"),
        Lang::Pt => include_str!("../prompts/pt/fullstack/suppliers.md"),
    };
    let list: Vec<String> = apis.iter().map(|a| format!("- `{}`: `process.env.{}`", a.name, a.env)).collect();
    Some(text.replace("{apis}", &list.join("\n")))
}

/// Most lessons shown, and most characters per lesson: the block opens every build's first user
/// message, and the local engine's context is small.
const MAX_LESSONS: usize = 8;
const MAX_LESSON_CHARS: usize = 300;

/// The knowledge layer: lessons from earlier builds as a short section for the start of the
/// first user message (never the system prompt, which must stay cache-stable). `None` when
/// there is nothing to say. Blank and repeated notes are dropped; long ones are shortened.
pub fn knowledge_block(notes: &[String], lang: Lang) -> Option<String> {
    let mut lessons: Vec<String> = Vec::new();
    for note in notes {
        let one_line = note.split_whitespace().collect::<Vec<_>>().join(" ");
        if one_line.is_empty() || lessons.iter().any(|l| l.trim_end_matches('…') == one_line) {
            continue;
        }
        lessons.push(wright_text::clip(&one_line, MAX_LESSON_CHARS + 1));
        if lessons.len() == MAX_LESSONS {
            break;
        }
    }
    if lessons.is_empty() {
        return None;
    }
    let mut block = format!("{}\n", lang.layers().knowledge_title);
    for l in &lessons {
        block.push_str(&format!("- {l}\n"));
    }
    Some(block)
}

/// The first user message with the knowledge layer (from [`knowledge_block`]) in front of the
/// request; with no knowledge it is exactly [`request_message`].
pub fn request_message_with_knowledge(
    knowledge: Option<&str>,
    prompt: &str,
    existing_files: &[String],
    checks: &[String],
) -> String {
    let request = request_message(prompt, existing_files, checks);
    match knowledge.map(str::trim).filter(|k| !k.is_empty()) {
        Some(k) => format!("{k}\n\n{request}"),
        None => request,
    }
}

/// The first user message: the request, plus what is already in the folder.
pub fn request_message(prompt: &str, existing_files: &[String], checks: &[String]) -> String {
    let mut m = format!("Build this: {}\n", prompt.trim());
    if !existing_files.is_empty() {
        m.push_str("\nThe project folder already has these files (read them before changing them):\n");
        for f in existing_files.iter().take(200) {
            m.push_str(&format!("- {f}\n"));
        }
    }
    if !checks.is_empty() {
        m.push_str("\nWhen you are done, these acceptance commands must also succeed in the project folder:\n");
        for c in checks {
            m.push_str(&format!("- `{c}`\n"));
        }
    }
    m
}

/// The user message that hands a failed verification back to the model.
pub fn fix_message(failures: &[Failure], attempt: u32, max: u32) -> String {
    let mut m = format!(
        "wright verified the project and it is not done yet (fix attempt {attempt} of {max}). Fix the problems below: read the files involved, change them with updateFile or applyPatch, run the tests yourself with runTests, and stop calling tools when everything passes.\n"
    );
    for f in failures {
        m.push_str(&format!("\n## {}\n{}\n", f.title(), f.text().trim_end()));
    }
    m
}

/// The opening of a fix attempt that starts from a fresh context: the request, the files, and
/// a short history of what failed before, instead of the whole failed transcript.
pub fn fresh_fix_message(
    prompt: &str,
    files: &[String],
    history: &[String],
    failures: &[Failure],
    attempt: u32,
    max: u32,
) -> String {
    let mut m = request_message(prompt, files, &[]);
    m.push_str(
        "\nThe files above were written by earlier attempts that did not pass verification. What failed before:\n",
    );
    for h in history {
        m.push_str(&format!("- {h}\n"));
    }
    m.push('\n');
    m.push_str(&fix_message(failures, attempt, max));
    m.push_str("\nStart by reading the files that matter; a different approach may be needed.\n");
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATES: [Template; 8] = [
        Template::Static,
        Template::Interactive,
        Template::Fullstack,
        Template::React,
        Template::Python,
        Template::Rust,
        Template::Go,
        Template::Auto,
    ];
    const LANGS: [Lang; 2] = [Lang::En, Lang::Pt];
    /// ~1,500 tokens: the local engine has 8,192 tokens for the prompt, tool list, the few-shot
    /// example, the files and the answer.
    const MAX_SYSTEM_CHARS: usize = 6000;

    #[test]
    fn suppliers_are_named_only_for_full_stack_builds_that_have_them() {
        let apis = [OutsideApi { name: "weather".into(), env: "WRIGHT_API_WEATHER".into() }];
        let en = suppliers_section(Template::Fullstack, Lang::En, &apis).unwrap();
        assert!(en.contains("- `weather`: `process.env.WRIGHT_API_WEATHER`") && en.contains("never holds a key"));
        assert!(suppliers_section(Template::Fullstack, Lang::Pt, &apis).unwrap().contains("fornecedor"));
        assert!(suppliers_section(Template::Fullstack, Lang::En, &[]).is_none());
        assert!(suppliers_section(Template::Interactive, Lang::En, &apis).is_none());
    }

    #[test]
    fn system_prompt_is_stable_and_localised() {
        let a = system_prompt(Template::Interactive, Lang::En);
        assert_eq!(a, system_prompt(Template::Interactive, Lang::En));
        assert!(a.contains("node --test"));
        assert!(system_prompt(Template::Static, Lang::Pt).contains("português do Brasil"));
    }

    #[test]
    fn every_system_prompt_is_stable_small_and_names_the_tools() {
        for t in TEMPLATES {
            for l in LANGS {
                let p = system_prompt(t, l);
                assert_eq!(p, system_prompt(t, l), "{t:?}/{l:?} is not stable");
                assert!(!p.trim().is_empty());
                let chars = p.chars().count();
                assert!(chars <= MAX_SYSTEM_CHARS, "{t:?}/{l:?} is {chars} chars");
                for tool in ["createFile", "updateFile", "applyPatch", "runTests", "runCommand", "announceStatus"] {
                    assert!(p.contains(tool), "{t:?}/{l:?} does not mention {tool}");
                }
                assert!(p.contains('❌') && p.contains('✅'), "{t:?}/{l:?} has no narration pairs");
                assert_eq!(p.contains("Brazilian Portuguese"), l == Lang::Pt);
            }
        }
        // The tiny local model gets the static prompt most; it stays well under the cap.
        assert!(system_prompt(Template::Static, Lang::En).chars().count() <= 4500);
        assert!(system_prompt(Template::Static, Lang::Pt).chars().count() <= 4500);
    }

    #[test]
    fn layers_come_in_order_identity_constraints_tools_examples() {
        for (l, heads) in [
            (Lang::En, ["# Who you are", "# Rules", "# Tools", "# Example"]),
            (Lang::Pt, ["# Quem você é", "# Regras", "# Ferramentas", "# Exemplo"]),
        ] {
            for t in TEMPLATES {
                let p = system_prompt(t, l);
                let at: Vec<usize> =
                    heads.iter().map(|h| p.find(h).unwrap_or_else(|| panic!("{t:?}/{l:?} misses {h}"))).collect();
                assert!(at.windows(2).all(|w| w[0] < w[1]), "{t:?}/{l:?} layers out of order: {at:?}");
                // The narration language sits with the constraints, before the tools.
                assert!(p.find(l.instruction()).is_some_and(|i| i > at[1] && i < at[2]));
            }
        }
    }

    #[test]
    fn portuguese_differs_and_each_template_has_its_own_rules() {
        for t in TEMPLATES {
            assert_ne!(system_prompt(t, Lang::En), system_prompt(t, Lang::Pt));
        }
        for l in LANGS {
            let s = system_prompt(Template::Static, l);
            let i = system_prompt(Template::Interactive, l);
            let f = system_prompt(Template::Fullstack, l);
            assert!(s.contains("<!DOCTYPE html>") && s.contains("styles.css"));
            assert!(i.contains("node --test") && i.contains("addEventListener"));
            assert!(f.contains("process.env.PORT || 3000") && f.contains("server/server.js"));
            assert!(f.contains("node:http") && f.contains("\"start\": \"node server/server.js\""));
            assert_eq!(system_prompt(Template::Auto, l), i);
            assert!(s != i && i != f);
        }
        assert!(system_prompt(Template::Fullstack, Lang::En).contains("dining room"));
        assert!(system_prompt(Template::Fullstack, Lang::Pt).contains("garçom"));
    }

    #[test]
    fn knowledge_block_renders_lessons_and_nothing_when_empty() {
        assert_eq!(knowledge_block(&[], Lang::En), None);
        assert_eq!(knowledge_block(&["  ".into(), "\n".into()], Lang::Pt), None);
        let notes = vec![
            "Guard DOM code with typeof document.".to_string(),
            "Guard   DOM code\nwith typeof document.".to_string(),
            "x".repeat(1000),
        ];
        let en = knowledge_block(&notes, Lang::En).unwrap();
        assert!(en.starts_with("# Lessons from earlier builds\n"));
        assert_eq!(en.matches("- Guard DOM code with typeof document.").count(), 1, "{en}");
        assert!(en.contains(&format!("- {}…\n", "x".repeat(MAX_LESSON_CHARS))));
        let pt = knowledge_block(&notes[..1], Lang::Pt).unwrap();
        assert!(pt.starts_with("# Lições de construções anteriores\n"));
        let many: Vec<String> = (0..20).map(|i| format!("lesson {i}")).collect();
        assert_eq!(knowledge_block(&many, Lang::En).unwrap().matches("\n- ").count(), MAX_LESSONS);
    }

    #[test]
    fn knowledge_opens_the_first_user_message_and_stays_out_of_the_system_prompt() {
        let files = vec!["index.html".to_string()];
        let checks = vec!["test -f index.html".to_string()];
        let k = knowledge_block(&["Always link styles.css.".into()], Lang::En).unwrap();
        let m = request_message_with_knowledge(Some(&k), "a bakery page", &files, &checks);
        assert!(m.starts_with("# Lessons from earlier builds\n"), "{m}");
        assert!(m.contains("\n- Always link styles.css.\n\nBuild this: a bakery page\n"), "{m}");
        assert!(m.ends_with(&request_message("a bakery page", &files, &checks)));
        assert_eq!(
            request_message_with_knowledge(None, "a bakery page", &files, &checks),
            request_message("a bakery page", &files, &checks)
        );
        assert_eq!(request_message_with_knowledge(Some(" \n"), "p", &[], &[]), request_message("p", &[], &[]));
        for t in TEMPLATES {
            for l in LANGS {
                let p = system_prompt(t, l);
                assert!(!p.contains("# Lessons from earlier builds") && !p.contains("# Lições"));
            }
        }
    }
}
