//! The prompts wright sends: a stable system prefix (identity, template rules, tools) first,
//! the request and anything dynamic after it, so provider prompt caches hit on the prefix.

use crate::verify::Failure;

/// What kind of project to build; each kind has its own rules and checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Template {
    Static,
    Interactive,
    Fullstack,
    Auto,
}

impl Template {
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "static" => Some(Self::Static),
            "interactive" => Some(Self::Interactive),
            "fullstack" | "full-stack" => Some(Self::Fullstack),
            "auto" => Some(Self::Auto),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Static => "static",
            Self::Interactive => "interactive",
            Self::Fullstack => "fullstack",
            Self::Auto => "auto",
        }
    }

    /// Pick a concrete template from the request's words (`auto`).
    pub fn resolve(self, prompt: &str) -> Self {
        if self != Self::Auto {
            return self;
        }
        let p = prompt.to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| p.contains(w));
        if has(&[
            "server",
            "backend",
            "back-end",
            "api",
            "database",
            "full-stack",
            "fullstack",
            "full stack",
            "express",
            "servidor",
        ]) {
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

    /// The page wright checks for this kind of project.
    pub fn entry_page(self) -> &'static str {
        match self {
            Self::Fullstack => "client/index.html",
            _ => "index.html",
        }
    }

    /// Whether a build of this kind must have tests to count as verified.
    pub fn requires_tests(self) -> bool {
        matches!(self, Self::Interactive | Self::Fullstack)
    }

    fn rules(self) -> &'static str {
        match self {
            Self::Static => include_str!("../prompts/static.md"),
            Self::Fullstack => include_str!("../prompts/fullstack.md"),
            Self::Interactive | Self::Auto => include_str!("../prompts/interactive.md"),
        }
    }
}

/// Narration language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    En,
    Pt,
}

impl Lang {
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "en" | "en-us" | "en-gb" => Some(Self::En),
            "pt" | "pt-br" | "pt-pt" => Some(Self::Pt),
            _ => None,
        }
    }
    fn instruction(self) -> &'static str {
        match self {
            Self::En => "Write every announceStatus message and your final answer in English.",
            Self::Pt => {
                "Write every announceStatus message and your final answer in Brazilian Portuguese (code, file names and identifiers stay in English)."
            }
        }
    }
}

/// wright's own narration (phase messages), in the build's language.
pub fn narrate(lang: Lang, key: Narration) -> String {
    use Narration::*;
    match (lang, key) {
        (Lang::En, Planning(t)) => format!("Planning {}.", t.with_article_en()),
        (Lang::Pt, Planning(t)) => format!("Planejando {}.", t.name_pt()),
        (Lang::En, Generating) => "Writing the project.".into(),
        (Lang::Pt, Generating) => "Escrevendo o projeto.".into(),
        (Lang::En, Verifying) => "Checking that the project works.".into(),
        (Lang::Pt, Verifying) => "Verificando se o projeto funciona.".into(),
        (Lang::En, Published) => "The project is built and verified.".into(),
        (Lang::Pt, Published) => "O projeto está pronto e verificado.".into(),
        (Lang::En, StillFailing(n, dir)) => {
            format!("The project still fails verification after {n} fix attempt(s); its files are kept in {dir}.")
        }
        (Lang::Pt, StillFailing(n, dir)) => format!(
            "O projeto ainda falha na verificação depois de {n} tentativa(s) de correção; os arquivos ficam em {dir}."
        ),
        (Lang::En, ProviderFailed(e)) => format!("The model could not be used: {e}"),
        (Lang::Pt, ProviderFailed(e)) => format!("Não foi possível usar o modelo: {e}"),
        (Lang::En, TimedOut(s)) => format!("The build ran out of time ({s}s)."),
        (Lang::Pt, TimedOut(s)) => format!("O tempo da construção acabou ({s}s)."),
        (Lang::En, BudgetSpent(c)) => format!("The cost budget is spent (${c:.4}); stopping here."),
        (Lang::Pt, BudgetSpent(c)) => format!("O orçamento de custo acabou (US$ {c:.4}); parando aqui."),
        (Lang::En, Stopped) => "The build was stopped.".into(),
        (Lang::Pt, Stopped) => "A construção foi interrompida.".into(),
    }
}

/// The things wright itself says.
#[derive(Debug, Clone)]
pub enum Narration {
    Planning(Template),
    Generating,
    Verifying,
    Published,
    StillFailing(u32, String),
    ProviderFailed(String),
    TimedOut(u64),
    BudgetSpent(f64),
    Stopped,
}

impl Template {
    fn with_article_en(self) -> &'static str {
        match self {
            Self::Static => "a static page",
            Self::Interactive | Self::Auto => "an interactive web app",
            Self::Fullstack => "a full-stack app",
        }
    }
    fn name_pt(self) -> &'static str {
        match self {
            Self::Static => "uma página estática",
            Self::Interactive | Self::Auto => "um app web interativo",
            Self::Fullstack => "um app full-stack",
        }
    }
}

/// The stable system prompt for a build.
pub fn system_prompt(template: Template, lang: Lang) -> String {
    format!("{}\n{}\n{}\n", include_str!("../prompts/identity.md"), template.rules(), lang.instruction())
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
        m.push_str(&format!("\n## {}\n{}\n", f.title(), f.detail.trim_end()));
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

    #[test]
    fn auto_picks_a_template() {
        assert_eq!(Template::Auto.resolve("make a counter app with a + button"), Template::Interactive);
        assert_eq!(Template::Auto.resolve("a landing page for my bakery"), Template::Static);
        assert_eq!(Template::Auto.resolve("weather dashboard with a backend API"), Template::Fullstack);
        assert_eq!(Template::Static.resolve("a game with a server"), Template::Static);
    }

    #[test]
    fn system_prompt_is_stable_and_localised() {
        let a = system_prompt(Template::Interactive, Lang::En);
        assert_eq!(a, system_prompt(Template::Interactive, Lang::En));
        assert!(a.contains("node --test"));
        assert!(system_prompt(Template::Static, Lang::Pt).contains("Portuguese"));
    }
}
