//! A build the built-in model cannot make: no tested starter fits the request. It ends at
//! once, failed with `no_fitting_starter`, and says so plainly, in the user's language: what
//! the built-in model can make instead (the closest starters, each with a ready command) and
//! how to get an app written for the request (a key, or a local model server). Publishing the
//! nearest starter as if it were the request would be worse than failing: a beginner cannot
//! tell, and every other "Done" would lose their trust.

use wright_events::Lang;
use wright_starters::Starter;

/// Why a build of the built-in model will not start, with what it could make instead.
#[derive(Debug, Clone)]
pub struct NoFit {
    /// The starters closest to the request, closest first (at most a few).
    pub closest: Vec<Starter>,
}

/// A request quoted in a shell command: single quotes, any inside closed and reopened.
fn quoted(prompt: &str) -> String {
    let one_line = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("'{}'", one_line.replace('\'', r"'\''"))
}

/// The narration of a build no starter fits.
pub fn explain(lang: Lang, nf: &NoFit, prompt: &str) -> String {
    let (head, closest, more) = match lang {
        Lang::En => (
            "The built-in model makes apps only from wright's tested starters, and none of them is what you asked for, so nothing was built (a different app would not be what you asked for).",
            "The closest it can make, each a working app you can change afterwards:",
            "For an app written for this request, connect a stronger model:\n  • with a key: OPENAI_API_KEY=… (or ANTHROPIC_API_KEY, GEMINI_API_KEY) wright run …\n  • with a model server on this machine (llama.cpp, Ollama): wright run --provider openai --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b …",
        ),
        Lang::Pt => (
            "O modelo embutido só faz apps a partir dos modelos testados do wright, e nenhum deles é o que você pediu; por isso nada foi construído (um app diferente não seria o que você pediu).",
            "O mais próximo que ele sabe fazer, cada um um app pronto que você pode mudar depois:",
            "Para um app escrito para este pedido, conecte um modelo mais forte:\n  • com uma chave: OPENAI_API_KEY=… (ou ANTHROPIC_API_KEY, GEMINI_API_KEY) wright run …\n  • com um servidor de modelo nesta máquina (llama.cpp, Ollama): wright run --provider openai --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b …",
        ),
    };
    let mut out = vec![head.to_string()];
    if !nf.closest.is_empty() {
        out.push(closest.to_string());
        for s in &nf.closest {
            let m = &s.manifest;
            out.push(format!(
                "  • {}: {}\n    wright run --starter {} {}",
                m.title.get(lang),
                m.description.get(lang),
                s.id(),
                quoted(prompt)
            ));
        }
    }
    out.push(more.to_string());
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_names_the_closest_starters_with_a_command_and_the_ways_to_more() {
        let lib = wright_starters::Library::builtin().unwrap_or_else(|e| panic!("{e}"));
        let closest: Vec<Starter> =
            ["calculator", "unit-converter"].iter().filter_map(|id| lib.get(id).cloned()).collect();
        let nf = NoFit { closest };
        let en = explain(Lang::En, &nf, "a BMI calculator that tells me if I'm healthy");
        assert!(en.contains("none of them is what you asked for"), "{en}");
        assert!(en.contains("Calculator: A basic calculator"), "{en}");
        assert!(
            en.contains(r"wright run --starter calculator 'a BMI calculator that tells me if I'\''m healthy'"),
            "{en}"
        );
        assert!(en.contains("OPENAI_API_KEY") && en.contains("--base-url"), "{en}");
        let pt = explain(Lang::Pt, &nf, "calculadora de IMC");
        assert!(
            pt.contains("nenhum deles") && pt.contains("Calculadora:") && pt.contains("--starter calculator"),
            "{pt}"
        );
    }
}
