#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use super::*;
use serde_json::Value;
use serde_json::json;
use wright_events::{Lang, Template};

fn manifest(slots: Value) -> String {
    json!({
        "id": "tea-timer",
        "title": {"en": "Tea timer", "pt": "Timer de chá"},
        "description": {"en": "Counts down.", "pt": "Conta para trás."},
        "template": "static",
        "tags": ["tea timer", "countdown", "cronômetro"],
        "examples": {
            "en": ["a countdown timer", "a timer for my tea", "countdown to zero"],
            "pt": ["um cronômetro regressivo", "um timer para o chá", "contagem regressiva"]
        },
        "slots": slots
    })
    .to_string()
}

fn slots() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": 20, "description": "The heading", "default": "Tea"},
            "minutes": {"type": "integer", "minimum": 1, "maximum": 60, "description": "Minutes", "default": 3},
            "accent": {"type": "string", "pattern": "^#[0-9a-fA-F]{6}$", "description": "Colour", "default": "#336699"},
            "steps": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 30},
                      "description": "Steps", "default": ["boil", "steep"]}
        },
        "required": ["title", "minutes", "accent", "steps"],
        "additionalProperties": false
    })
}

fn files() -> Vec<(String, String)> {
    vec![
        ("index.html".into(), "<h1>{{ title }}</h1>{% for s in steps %}<li>{{ s }}</li>{% endfor %}\n".into()),
        ("app.js".into(), "const TITLE = {{ title|tojson }};\nconst MINUTES = {{ minutes }};\n".into()),
        ("styles.css".into(), "h1 { color: {{ accent }}; }\n".into()),
    ]
}

fn starter() -> Starter {
    Starter::new(&manifest(slots()), files()).unwrap()
}

#[test]
fn defaults_render_and_values_land_in_their_slots() {
    let s = starter();
    let out: std::collections::HashMap<String, String> =
        s.render(&json!({"title": "Chai", "steps": ["a"]})).unwrap().into_iter().collect();
    assert_eq!(out["index.html"], "<h1>Chai</h1><li>a</li>\n");
    assert_eq!(out["app.js"], "const TITLE = \"Chai\";\nconst MINUTES = 3;\n", "a left-out slot keeps its default");
    assert_eq!(out["styles.css"], "h1 { color: #336699; }\n");
}

#[test]
fn markup_in_a_value_is_escaped_in_html_and_quoted_in_js() {
    let s = starter();
    assert!(s.render(&json!({"title": "<script>alert(1)</script>"})).is_err(), "20 characters at most");
    let title = "<b>\"Tea\"</b>";
    let out: std::collections::HashMap<String, String> =
        s.render(&json!({"title": title})).unwrap().into_iter().collect();
    assert!(out["index.html"].contains("&lt;b&gt;&quot;Tea&quot;&lt;&#x2f;b&gt;"), "{}", out["index.html"]);
    assert!(!out["index.html"].contains("<b>"));
    assert!(
        out["app.js"].contains(r#"const TITLE = "<b>\"Tea\"</b>";"#) || out["app.js"].contains("\\u003cb\\u003e"),
        "{}",
        out["app.js"]
    );
}

#[test]
fn values_that_break_the_schema_are_refused_with_the_field_named() {
    let s = starter();
    for (values, field) in [
        (json!({"title": "x".repeat(21)}), "title"),
        (json!({"minutes": 0}), "minutes"),
        (json!({"minutes": "five"}), "minutes"),
        (json!({"accent": "red; background: url(x)"}), "accent"),
        (json!({"steps": ["a", "b", "c", "d"]}), "steps"),
        (json!({"colour": "#000000"}), "colour"),
    ] {
        let e = s.fill(&values).unwrap_err().to_string();
        assert!(e.contains(&format!("`{field}")) || e.contains(field), "{values}: {e}");
    }
    assert!(matches!(s.fill(&json!([1])), Err(StarterError::Values { .. })));
}

#[test]
fn a_starter_that_breaks_the_format_is_refused_with_the_reason() {
    let mut no_default = slots();
    no_default["properties"]["title"].as_object_mut().unwrap().remove("default");
    let e = Starter::new(&manifest(no_default), files()).unwrap_err().to_string();
    assert!(e.contains("slot `title` needs a description and a default"), "{e}");
    let mut open = slots();
    open["additionalProperties"] = json!(true);
    assert!(Starter::new(&manifest(open), files()).unwrap_err().to_string().contains("additionalProperties"));
    let e = Starter::new(&manifest(slots()), vec![("app.js".into(), "x".into())]).unwrap_err().to_string();
    assert!(e.contains("index.html"), "{e}");
    let broken = vec![("index.html".into(), "{{ nope }}".into())];
    let e = Starter::new(&manifest(slots()), broken).unwrap_err().to_string();
    assert!(e.contains("index.html") && e.contains("could not be rendered"), "{e}");
}

#[test]
fn a_request_picks_the_starter_that_names_it_and_nothing_else_does() {
    let lib = Library { starters: vec![starter()] };
    for ask in ["a countdown timer for my tea", "Um cronômetro para o chá", "I need a Tea Timer", "countdowns please"]
    {
        let pick = lib.pick(ask, Template::Auto).unwrap_or_else(|| panic!("{ask}"));
        assert!(pick.score >= THRESHOLD, "{ask}: {}", pick.score);
    }
    for ask in ["a landing page for a bakery", "a calculator", "um jogo da memória", "a snake game"] {
        assert!(lib.pick(ask, Template::Auto).is_none(), "{ask}: {:?}", lib.scores(ask)[0].1);
    }
    assert!(lib.pick("a countdown timer", Template::Interactive).is_none(), "a chosen template is kept");
}

#[test]
fn words_alone_invent_no_page() {
    // Nothing is named: no starter by words (the built-in model picks such requests by
    // meaning, `tests/meaning.rs`), never the landing page at a made-up score.
    let lib = Library::builtin().unwrap();
    for ask in ["a page about the history of my town", "a page about my grandfather's life"] {
        assert!(lib.pick(ask, Template::Auto).is_none(), "{ask}");
    }
    // A recipe is named, and there is a recipe starter: that one, not a general page.
    let pick = lib.pick("a recipe page for my grandmother's apple pie", Template::Auto).map(|p| p.starter.id());
    assert_eq!(pick, Some("recipe-page"));
}

#[test]
fn the_built_in_library_loads() {
    let lib = Library::builtin().unwrap();
    for s in lib.list() {
        assert!(s.render(&s.defaults()).is_ok(), "{}", s.id());
    }
}

#[test]
fn a_users_folder_adds_starters_and_a_bad_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("tea-timer");
    std::fs::create_dir_all(one.join("files")).unwrap();
    std::fs::write(one.join("starter.json"), manifest(slots())).unwrap();
    for (p, t) in files() {
        std::fs::write(one.join("files").join(p), t).unwrap();
    }
    let lib = Library::default().with_dir(dir.path()).unwrap();
    assert_eq!(lib.get("tea-timer").unwrap().files().len(), 3);
    std::fs::create_dir_all(dir.path().join("wrong-name")).unwrap();
    std::fs::copy(one.join("starter.json"), dir.path().join("wrong-name/starter.json")).unwrap();
    std::fs::create_dir_all(dir.path().join("wrong-name/files")).unwrap();
    std::fs::write(dir.path().join("wrong-name/files/index.html"), "x").unwrap();
    let e = Library::default().with_dir(dir.path()).unwrap_err().to_string();
    assert!(e.contains("wrong-name") && e.contains("folder"), "{e}");
}

#[test]
fn everyday_requests_pick_the_built_in_starter_they_mean() {
    let lib = Library::builtin().unwrap();
    for (ask, want) in [
        ("a to-do app to track my homework", "todo-list"),
        ("a landing page for a dog walking business", "landing-page"),
        ("a countdown timer", "countdown-timer"),
        ("a simple calculator for my kid", "calculator"),
        ("um cronômetro para medir minhas corridas", "stopwatch"),
        ("uma calculadora de gorjeta para dividir a conta", "tip-calculator"),
        ("um quiz sobre o sistema solar", "quiz-game"),
        ("a page with the menu of my pizza place", "menu"),
    ] {
        let got = lib.pick(ask, Template::Auto).map(|p| (p.starter.id().to_string(), p.score));
        assert!(
            lib.pick("uma pagina de contagem regressiva", Template::Static).is_none(),
            "a countdown is no general page"
        );
        assert_eq!(
            got.as_ref().map(|g| g.0.as_str()),
            Some(want),
            "{ask}: {:?}",
            &lib.scores(ask)[..3].iter().map(|(s, f)| (s.id(), *f)).collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_language_of_its_own_has_its_own_defaults_and_they_must_fit() {
    let mut m: Value = serde_json::from_str(&manifest(slots())).unwrap();
    m["defaults"] = json!({"pt": {"title": "Chá", "steps": ["ferver"]}});
    let s = Starter::new(&m.to_string(), files()).unwrap();
    assert_eq!(s.defaults_in(Lang::Pt)["title"], "Chá");
    assert_eq!(s.defaults_in(Lang::Pt)["minutes"], 3, "the rest stay the schema's");
    assert_eq!(s.defaults_in(Lang::En)["title"], "Tea");
    assert_eq!(s.fill_in(Lang::Pt, &json!({"minutes": 5})).unwrap()["title"], "Chá");
    m["defaults"] = json!({"pt": {"title": "x".repeat(30)}});
    let e = Starter::new(&m.to_string(), files()).unwrap_err().to_string();
    assert!(e.contains("title"), "{e}");
    m["defaults"] = json!({"fr": {}});
    assert!(Starter::new(&m.to_string(), files()).unwrap_err().to_string().contains("defaults.fr"));
}

#[test]
fn the_timer_and_calculators_speak_portuguese_from_their_defaults() {
    let lib = Library::builtin().unwrap();
    let timer = lib.get("countdown-timer").unwrap();
    let page: String = timer.render(&timer.defaults_in(Lang::Pt)).unwrap().into_iter().map(|(_, t)| t).collect();
    assert!(page.contains("Iniciar") && page.contains("O tempo acabou!"), "Portuguese labels");
}

#[test]
fn the_subject_slot_takes_the_requests_subject_only_when_left_at_its_default() {
    let lib = Library::builtin().unwrap();
    let page = lib.get("landing-page").unwrap();
    let asked = "a website for my yoga studio";
    let kept = page.with_subject(Lang::En, page.defaults(), asked);
    assert_eq!(kept["business_name"], "Yoga Studio");
    let mut chosen = page.defaults();
    chosen["business_name"] = json!("Namaste Place");
    assert_eq!(
        page.with_subject(Lang::En, chosen, asked)["business_name"],
        "Namaste Place",
        "the model's own name stays"
    );
    assert_eq!(
        page.with_subject(Lang::En, page.defaults(), "a landing page")["business_name"],
        page.defaults()["business_name"]
    );
    let mut m: Value = serde_json::from_str(&manifest(slots())).unwrap();
    m["subject_slot"] = json!("minutes");
    assert!(Starter::new(&m.to_string(), files()).unwrap_err().to_string().contains("not a text slot"));
}

/// A request nearer to one of a starter's near misses (`not_for`) than to anything it makes is
/// declined, whatever the model would say; one nearer to what it makes is not. Unit vectors
/// stand in for the e5 model's: the quiz's own passages point one way, its near misses another.
#[test]
fn a_request_nearer_a_near_miss_than_the_starter_is_declined() {
    use crate::meaning::{Meanings, Model, own_passages, passages};
    let lib = Library::builtin().unwrap();
    let quiz = lib.get("quiz-game").unwrap();
    assert!(passages(quiz).len() > own_passages(quiz), "the quiz names its near misses");
    let (own_dir, miss_dir, other_dir) = (vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]);
    let vectors = lib
        .list()
        .iter()
        .map(|s| {
            let own = own_passages(s);
            (0..passages(s).len())
                .map(|i| match (s.id() == "quiz-game", i < own) {
                    (true, true) => own_dir.clone(),
                    (true, false) => miss_dir.clone(),
                    (false, _) => other_dir.clone(),
                })
                .collect()
        })
        .collect();
    let meanings = Meanings::from_vectors(&lib, vectors).unwrap();
    let sure = Model { weights: [10.0, 0.0, 0.0, 0.0], bias: -5.0, threshold: 0.5 };
    let quiz_of = |asked: &[f32]| {
        let i = lib.list().iter().position(|s| s.id() == "quiz-game").unwrap();
        lib.signals("a quiz", asked, &meanings)[i]
    };
    let nearer_the_quiz = [0.8, 0.6, 0.0];
    let nearer_a_miss = [0.6, 0.8, 0.0];
    assert!(!quiz_of(&nearer_the_quiz).declined);
    assert!(quiz_of(&nearer_a_miss).declined);
    assert_eq!(sure.probability(&quiz_of(&nearer_a_miss)), 0.0);
    let picked = |asked: &[f32]| {
        lib.pick_by_meaning("a quiz", asked, &meanings, &sure, Template::Interactive)
            .map(|p| p.starter.id().to_string())
    };
    assert_eq!(picked(&nearer_the_quiz).as_deref(), Some("quiz-game"));
    assert_eq!(picked(&nearer_a_miss), None, "declined, and nothing else is near");
    // Still named first among the closest, for the user to choose with `--starter`.
    let closest = lib.closest_by_meaning("a quiz", &nearer_a_miss, &meanings, &sure, 1);
    assert_eq!(closest[0].id(), "quiz-game");
}
