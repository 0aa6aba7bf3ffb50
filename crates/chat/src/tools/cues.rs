//! The built-in tools' cues, English and Portuguese, in one place so they are tuned together
//! against the labelled set. Patterns run on accent-folded lower case (`faça` → `faca`).
//!
//! Asks need a request verb (or a request shape, like "quiz me") near the tool's noun; a noun
//! alone is a topic. Mentions are the ways people talk about an earlier result, or decline one.

use crate::relevance::Cues;

/// Request verbs, English and Portuguese (casual forms included).
const VERB: &str = r"(make|create|draw|sketch|give|get|build|generate|show|send|write|need|want|like|design|prepare|do|can i have|turn|gostaria|cri\w*|fa[zc]\w*|desenh\w*|mont\w*|ger[ae]\w*|quero|queria|me da|me de|mostr\w*|escrev\w*|prepar\w*|manda\w*|elabor\w*)";

/// Declining something ("don't", "no need for", "não precisa", "não me…").
const NEG: &str = r"\b(don'?t|do not|no need (for|to)|nao precisa( de)?|nao( me)?|nem)";

const LANGS: &str = r"(python|java|javascript|js|typescript|c|c\+\+|c#|rust|go|golang|sql|bash|shell|ruby|php|kotlin|swift|node\.?js|html|css)";

/// A second request joined to the first ("… and a quiz", "… e depois uns flashcards"): the
/// first request's verb covers the noun after the conjunction.
fn joined(noun: &str) -> String {
    v(&format!(
        r"\b(and|also|plus|then|too|e|depois|tambem|mais)\b\s+(then\s+|depois\s+|also\s+)?(a|an|some|um|uma|uns|umas|me|the)?\s*(\w+\s+){{0,2}}{noun}"
    ))
}

fn v(p: &str) -> String {
    p.replace("{VERB}", VERB).replace("{LANGS}", LANGS).replace("{NEG}", NEG)
}

pub fn diagram() -> Cues {
    Cues {
        asks: vec![
            v(
                r"\b{VERB}\b.{0,40}\b(diagram|flow ?chart|mind ?map|concept map|visual map|visual scheme|sequence diagram|diagrama|fluxograma|mapa mental|mapa conceitual|esquema)",
            ),
            v(r"(^|[.?!,]\s*)(diagram|draw|sketch|flowchart|desenh[ae])\b"),
            v(r"\b(sketch|draw|desenh[ae])\s+(me\s+|us\s+|pra mim\s+)?(the|a|an|out|how|o|um|uma|como)\b"),
            joined(r"(diagram|flow ?chart|mind ?map|diagrama|fluxograma|mapa mental|esquema)"),
            v(r"\b(explain|explica\w*)\b.{0,30}\b(with|com) (a|an|um|uma) (diagram|drawing|desenho|diagrama|esquema)"),
        ],
        topics: vec![v(r"\b(diagram|flow ?chart|mind ?map|diagrama|fluxograma|mapa mental|esquema visual)")],
        mentions: vec![
            v(r"{NEG}\b.{0,12}\b(draw|sketch|diagram|desenh\w*|diagrama|esquema)"),
            v(
                r"\b(the|that|this|your|my|o|a|esse|aquele|no|do|da)\s+(\w+\s+){0,2}(diagram|flow ?chart|mind ?map|diagrama|fluxograma|mapa mental|esquema\w*)\b.{0,25}\b(you|i|que voce|que vc|que eu|ficou|tava|tem|has|had|was)\b",
            ),
            v(
                r"\b(no|without|don'?t|stop|sem|nao quero|nao precisa)\b.{0,20}\b(diagram|flow ?chart|mind ?map|diagrama|fluxograma|esquema|desenho)",
            ),
            v(r"\b(drew|desenhei|desenhou)\b"),
            v(r"\bdraw(ing)? (a |the |any |some )?(conclusions?|attention|inspiration|a breath|lots)\b"),
        ],
        ..Cues::default()
    }
}

pub fn quiz() -> Cues {
    Cues {
        asks: vec![
            v(r"\bquizz?(es)? me\b"),
            v(r"\btest (me|my knowledge|what i know)\b"),
            v(r"\b(me )?test[ae] (me|meus conhecimentos|o que eu sei)\b|\bme test[ae]\w*\b"),
            v(
                r"\b{VERB}\b.{0,40}\b(quizz?|practice questions|multiple[- ]choice|test questions|questoes|perguntas|simulado|exercicios|teste de multipla)",
            ),
            v(r"\b(ask me|faz\w* perguntas|bora de perguntas)\b"),
            v(
                r"\b(ask|toss|throw|give|send|hit|fire|faz|faca|manda)\s+(me|us)\b.{0,20}\b(questions|perguntas|questoes)\s+(on|about|sobre|de)\b",
            ),
            joined(r"(quizz?|practice questions|multiple[- ]choice|teste|simulado|perguntas|questoes)\b"),
        ],
        topics: vec![v(r"\b(quizz?\w*|multiple[- ]choice|multipla escolha|simulado)\b")],
        mentions: vec![
            v(r"{NEG}\b.{0,12}\b(quiz|test|testa|teste|pergunt\w*)"),
            v(
                r"\b(the|that|your|this|yesterday'?s|last|o|do|no|esse|aquele)\s+(\w+\s+){0,2}quizz?\b.{0,30}\b(you|i|wrong|right|que voce|de ontem|gave)\b",
            ),
            v(r"\b(question|pergunta|questao) \w+ (of|do|da) (that|the|o|a)?\s*quiz"),
            v(r"\b(terceira|primeira|segunda|ultima) pergunta do quiz\b"),
            v(r"\b(don'?t|no|stop|chega de|nao precisa|sem|nao quero)\b.{0,15}\b(quizz?\w*|test|teste|perguntas)"),
            v(r"\b(having|have|tenho|teremos|vamos ter) (a |uma |um )?(quiz|prova|teste)\b"),
            v(r"\bquiz (in class|de ontem|na escola)\b"),
        ],
        ..Cues::default()
    }
}

pub fn flashcards() -> Cues {
    Cues {
        asks: vec![
            v(r"\b{VERB}\b.{0,40}\b(flash ?cards?|study cards|cartoes( de (estudo|memorizacao))?|fichas de estudo)"),
            v(r"(^|[.?!,]\s*)flash ?cards?\b.{0,10}\b(for|on|about|sobre|de)\b"),
            v(r"\b(into|in|em)\s+(flash ?cards?|cartoes)\b"),
            joined(r"(flash ?cards?|study cards|cartoes)"),
        ],
        topics: vec![v(r"\b(flash ?cards?|study cards|cartoes de (estudo|memorizacao))")],
        mentions: vec![
            v(r"{NEG}\b.{0,12}\b(flash ?cards?|cartoes|cards)"),
            v(
                r"\b(the|your|my|own|those|o|os|as|meus|seus)\s+(\w+\s+){0,3}(flash ?cards?|cartoes)\b.{0,25}\b(you|i|had|on paper|last|que voce|em papel|me ajudaram)\b",
            ),
            v(r"\b(hate|don'?t like|nao gosto de|odeio)\s+(\w+\s+)?(flash ?cards?|cartoes)"),
            v(r"\b(made my own|fiz meus|fiz os meus)\b"),
            v(r"\b(no|don'?t|nao precisa|sem|nao quero)\b.{0,15}\b(flash ?cards?|cartoes)"),
        ],
        ..Cues::default()
    }
}

/// Studying a term: asking to remember, memorise, review or keep it (a plain "what is X?" is
/// only a topic: a question is not a wish for a card).
pub fn flashcard_update() -> Cues {
    Cues {
        asks: vec![
            v(
                r"\b(remember|memori[sz]e|learn|study|review|revise)\b.{0,30}\b(what\b.{1,40}\b(is|are|means?)\b|the (term|word|definition|meaning|concept)\b|(term|word|definition|meaning) of\b)",
            ),
            v(r"\b(add|put|save)\b.{0,40}\b(to|in|into)\s+(my\s+)?(deck|cards|flash ?cards)\b"),
            v(r"\b(save|note|keep)\b.{0,10}\bthe (word|term)\b"),
            v(r"\b(keep|always) (forgetting|forget|blank(ing)? on)\b.{0,30}\b(what|the (meaning|definition))\b"),
            v(r"\bremind me\b.{0,40}\b(what|again)\b"),
            v(
                r"\b(what (is|are|does)|define|meaning)\b.{1,80}\b(remember|memori[sz]e|study|review)\s+(it|this|that)\b",
            ),
            v(
                r"\b(decor\w*|memoriz\w*|grav\w*|lembr\w*|revis\w*|estud\w*|saber de cor)\b.{0,30}\b(o que\b.{1,40}\b(e|sao|significa)\b|o (termo|conceito|significado)\b|a (palavra|definicao)\b|(termo|palavra|definicao|significado|conceito) de\b)",
            ),
            v(
                r"\b(adiciona\w*|coloca\w*|guarda\w*|salva\w*|anota\w*|bota)\b.{0,40}\b(baralho|cartoes|deck|flashcards|pra (eu )?revisar)\b",
            ),
            v(r"\b(sempre|vivo)\s+esque\w*|\bnunca (sei|lembro)\b.{0,20}\bo que\b"),
            v(
                r"\b(o que e|o que sao|significa|definicao)\b.{1,80}\b(lembrar|decorar|memorizar|gravar|revisar)\s+(disso|isso)\b",
            ),
        ],
        topics: vec![
            v(r"(^|[.?!,]\s*)(so )?(what|wat|wht)\s*('s|s|\s+is|\s+are)\s+(a |an |the )?\w"),
            v(r"\bwhat does .{1,60} mean\b"),
            v(r"\b(define|definition of|meaning of)\b"),
            v(r"(^|[.?!,]\s*)(e |mas )?(o que|oq|oque|que)\s+(e|sao|significa|quer dizer)\b"),
            v(r"\b(qual (e )?a definicao|defin[ae] |significado d[eo])"),
        ],
        mentions: vec![
            v(r"\b(already know|i know) what\b|\bja sei o que\b"),
            v(r"\bno need to define\b|\bnao precisa definir\b"),
            v(r"\bwhat (is|are) (the difference|your|you|up|the best|the time)\b"),
            v(r"\bwhat'?s (up|new|going on|happening|wrong)\b|\bwhats (up|new)\b"),
        ],
        ..Cues::default()
    }
}

pub fn video_search() -> Cues {
    Cues {
        asks: vec![
            v(
                r"\b(find|look up|search|recommend|suggest|show|send|get|want|need|any|is there|are there|got)\b.{0,35}\b(videos?|youtube|video lessons?|video tutorials?)\b",
            ),
            v(r"\b(want|like|something) to watch\b|\bsomething i can watch\b"),
            v(
                r"\b(ach\w*|busc\w*|procur\w*|recomend\w*|indic\w*|mostr\w*|manda\w*|quero|tem|ha|sugir\w*|sugere)\b.{0,35}\b(videos?|video-aulas?|videoaulas?|youtube)\b",
            ),
            v(r"\bquero (assistir|ver um video)\b"),
            v(r"\b(anything|something|algo|alguma coisa)\b.{0,20}\b(youtube|videos?)\b"),
            v(
                r"\b(something|anything|algo|alguma coisa)\b.{0,15}\b(i could|i can|to|pra|para|que eu possa)\s+(watch|assistir|ver)\b",
            ),
            joined(r"(videos?|youtube|video-?aulas?|videoaulas?)\b"),
        ],
        topics: vec![v(r"\b(videos?|youtube|videoaulas?|video-aulas?)\b")],
        mentions: vec![
            v(r"{NEG}\b.{0,12}\b(videos?|youtube|watch|assistir)"),
            v(
                r"\b(the|that|your|o|esse|aquele)\s+(\w+\s+){0,2}(video|documentario)\b.{0,25}\b(you|i|que voce|que vc|tava|was|foi)\b",
            ),
            v(r"\b(watched|saw|showed us|vi|assisti|passou)\b.{0,40}\b(videos?|youtube|documentar\w*|lesson)"),
            v(r"\b(don'?t|nao quero|sem|stop)\b.{0,20}\b(videos?|youtube)|\bno (more )?videos\b"),
        ],
        ..Cues::default()
    }
}

pub fn code() -> Cues {
    Cues {
        asks: vec![
            v(
                // Not "function" alone: "give me an example of a function in math" is no code.
                r"\b{VERB}\b.{0,40}\b(code|script|program|sql query|implementation|snippet|codigo|programa|consulta sql)\b",
            ),
            v(r"\b(example|implementation|implement|exemplo|implementar)\b.{0,40}\b(in|em|using|usando)\s+{LANGS}\b"),
            v(r"\b(code|codigo|script|programa|funcao|function)\s+(in|em)\s+{LANGS}\b"),
            v(r"\b(show|see|mostra|ver)\s+(me\s+)?(the\s+|o\s+)?(code|codigo)\b"),
            v(r"\b(write|code|program|escrev\w*|implement\w*|programe|codifique)\b.{0,40}\b(in|em)\s+{LANGS}\b"),
            v(r"\b{LANGS}\s+([\w-]+\s+){0,2}(example|code|function|script|program|snippet)\b"),
            joined(r"(code|codigo|script|(\w+\s+)?example in {LANGS})\b"),
            v(
                r"\b(how (would|do|can) i|como)\s+(implement|code|program|implementar|programar)\b.{0,40}\b(in|em)\s+{LANGS}\b",
            ),
        ],
        topics: vec![v(r"\b(code|coding|programming|codigo|programar|programacao|script)\b")],
        mentions: vec![
            v(r"{NEG}\b.{0,12}\b(code|codigo|program\w*)"),
            v(
                r"\b(the|your|my|that|o|meu|seu|esse)\s+(\w+\s+){0,2}(code|script|codigo|programa)\b.{0,25}\b(you|i|gave|que voce|que vc|rodou|ta|deu|tava)\b",
            ),
            v(r"\b(no|without|don'?t want|sem|nao quero)\s+(\w+\s+)?(code|codigo)\b"),
            v(r"\b(learning to (code|program)|aprendendo a programar|copied your)\b"),
        ],
        ..Cues::default()
    }
}

#[cfg(test)]
mod tests {
    use crate::relevance::Scorer;

    fn scorer() -> Scorer {
        let tools = vec![
            ("diagram", super::diagram()),
            ("quiz", super::quiz()),
            ("flashcards", super::flashcards()),
            ("flashcard_update", super::flashcard_update()),
            ("video_search", super::video_search()),
            ("code", super::code()),
        ];
        Scorer::new(tools, None).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Everyday phrasings that look like a request and are not.
    #[test]
    fn everyday_words_are_not_requests() {
        let s = scorer();
        for (tool, text) in [
            ("code", "give me an example of a function in math"),
            ("code", "write an essay in r"),
            ("diagram", "draw conclusions from this text"),
            ("quiz", "my little brother asked me a million questions about dinosaurs"),
            ("flashcard_update", "what's up? just got back from school"),
            ("video_search", "please don't send videos, my internet is slow"),
        ] {
            assert!(s.score(tool, text, None) < 0.7, "{tool} for {text:?}: {}", s.score(tool, text, None));
        }
        assert!(s.score("code", "write a Python function that adds two numbers", None) >= 0.7);
        assert!(s.score("diagram", "draw the water cycle", None) >= 0.7);
    }
}
