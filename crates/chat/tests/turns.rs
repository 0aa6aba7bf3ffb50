//! Chat turns end to end over a real store, with the model scripted by the tool it is asked
//! for: tools run in parallel (proved by their recorded start and end), results in order, the
//! reply shaped by what worked, failures beside successes, history kept and cleared.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failed unwrap is a failed test

mod common;

use common::{Keyed, diagram_call, quiz_call, store, video};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_chat::{
    AgentSettings, ChatAgent, ChatTool, Turn, TurnDeps, TurnOutcome, builtin_tools, run_turn, scorer_for,
};
use wright_events::chat::{Mode, Outcome, Part, Role};
use wright_events::{Emitter, Event, EventKind, Lang, MemorySink};
use wright_provider::scripted::ScriptStep;
use wright_provider::{ProviderError, RetryPolicy};
use wright_store::Store;

const PHOTO: &str = "flowchart TD\n  Sun[Light] --> Leaf\n  Water --> Leaf\n  Leaf --> Glucose\n  Leaf --> Oxygen";

struct Harness {
    deps: TurnDeps,
    model: Arc<Keyed>,
    store: Arc<dyn Store>,
    conversation: String,
}

async fn harness_with(model: Keyed, tools: Vec<Arc<dyn ChatTool>>, settings: AgentSettings) -> Harness {
    let store = store().await;
    let model = Arc::new(model);
    let scorer = Arc::new(scorer_for(&tools, None).unwrap());
    let conversation = "c-test".to_string();
    store.create_conversation(&conversation, "u-1", "").await.unwrap();
    let deps = TurnDeps {
        agent: Arc::new(ChatAgent::new(tools, settings)),
        provider: model.clone(),
        model: "scripted".into(),
        retry: RetryPolicy { max_rate_limited_retries: 0, max_retries: 0, ..RetryPolicy::default() },
        store: store.clone(),
        scorer,
        history_budget: 3000,
        temperature: Some(0.4),
    };
    Harness { deps, model, store, conversation }
}

async fn harness(model: Keyed) -> Harness {
    harness_with(model, builtin_tools(video("http://127.0.0.1:9", None)), AgentSettings::default()).await
}

impl Harness {
    async fn say(&self, text: &str, lang: Lang, modes: BTreeMap<String, Mode>) -> (TurnOutcome, Vec<Event>) {
        let sink = Arc::new(MemorySink::new());
        let emitter = Emitter::new("run-1", vec![sink.clone()]);
        let turn = Turn {
            asked: None,
            conversation: self.conversation.clone(),
            user: "u-1".into(),
            content: text.into(),
            modes,
            lang,
        };
        let out = run_turn(&self.deps, &turn, &emitter, &CancellationToken::new()).await;
        (out, sink.events())
    }
}

fn results(events: &[Event]) -> Vec<(String, bool, u32, serde_json::Value, Option<String>)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ChatToolResult { tool, success, execution_order, metadata, error, .. } => {
                Some((tool.clone(), *success, *execution_order, (**metadata).clone(), error.clone()))
            }
            _ => None,
        })
        .collect()
}

fn system_of(req: &wright_provider::ChatRequest) -> String {
    req.messages.first().and_then(|m| m.content.clone()).unwrap_or_default()
}

#[tokio::test]
async fn two_tools_run_at_once_in_order_and_the_reply_is_brief() {
    let model = Keyed::new(300)
        .on("drawDiagram", vec![diagram_call("Photosynthesis", PHOTO)])
        .on("makeQuiz", vec![quiz_call()])
        .replies(vec![ScriptStep::text("Here is a diagram and a quiz; look first, then test yourself.")]);
    let h = harness(model).await;
    let (out, events) = h.say("make me a diagram and a quiz about photosynthesis", Lang::En, BTreeMap::new()).await;
    assert!(out.error.is_none(), "{:?}", out.error);

    let selected: Vec<String> = events
        .iter()
        .filter_map(|e| if let EventKind::ToolSelected { tool, .. } = &e.kind { Some(tool.clone()) } else { None })
        .collect();
    assert_eq!(selected, ["diagram", "quiz"]);
    let scores = events.iter().find_map(|e| match &e.kind {
        EventKind::ToolScores { scores, .. } => Some(scores.clone()),
        _ => None,
    });
    assert_eq!(scores.map(|s| s.len()), Some(6), "every tool's score is logged");

    let r = results(&events);
    assert_eq!(
        r.iter().map(|x| (x.0.as_str(), x.1, x.2)).collect::<Vec<_>>(),
        [("diagram", true, 1), ("quiz", true, 2)]
    );
    let stamp = |i: usize, k: &str| r[i].3[k].as_f64().unwrap();
    // Each model call took 300 ms; the two overlapped: each started before the other ended.
    assert!(stamp(0, "started_ms") < stamp(1, "ended_ms") && stamp(1, "started_ms") < stamp(0, "ended_ms"), "{r:?}");

    let reply_req = h.model.reply_requests();
    assert_eq!(reply_req.len(), 1);
    let system = system_of(&reply_req[0]);
    assert!(system.contains("brief coordinating message of 1 to 2 sentences"), "{system}");
    assert_eq!(reply_req[0].max_tokens, Some(120));

    let deltas: String = events
        .iter()
        .filter_map(|e| if let EventKind::TextDelta { text } = &e.kind { Some(text.as_str()) } else { None })
        .collect();
    assert!(deltas.contains("look first"), "the reply streams: {deltas}");

    let reply = out.reply.unwrap();
    let types: Vec<&str> = reply.parts.iter().map(Part::type_name).collect();
    assert_eq!(types, ["text", "diagram", "quiz"]);
    assert!(reply.flags.has_diagram && reply.flags.has_quiz && !reply.flags.has_code);
    // The stream shows the quiz without answers; the store keeps them for scoring.
    let streamed = serde_json::to_string(&events).unwrap();
    assert!(!streamed.contains("Plants take in CO2"), "answers leaked into the stream");
    let stored = h.store.messages(&h.conversation, None).await.unwrap();
    assert_eq!(stored.len(), 2);
    let Part::Quiz { quiz } = &stored[1].parts[2] else { panic!("{:?}", stored[1].parts) };
    assert_eq!(quiz.score(&[1, 0]).map(|s| s.score), Some(2));
}

#[tokio::test]
async fn one_tool_failing_is_shown_beside_the_other_and_the_reply_explains_one() {
    let bad = ScriptStep::calls(&[("makeQuiz", serde_json::json!({"title": "x", "questions": []}))]);
    let model = Keyed::new(0)
        .on("drawDiagram", vec![diagram_call("Cells", PHOTO)])
        .on("makeQuiz", vec![bad])
        .replies(vec![ScriptStep::text("The diagram shows it.")]);
    let h = harness(model).await;
    let (out, events) = h.say("make me a diagram and a quiz about photosynthesis", Lang::En, BTreeMap::new()).await;
    let r = results(&events);
    assert_eq!((r[0].1, r[1].1), (true, false));
    assert!(r[1].4.as_deref().unwrap().contains("no questions"), "{:?}", r[1].4);
    assert_eq!(h.model.offering("makeQuiz").len(), 2, "re-asked once, then given up");
    let system = system_of(&h.model.reply_requests()[0]);
    assert!(system.contains("2 to 3 sentence explanation") && system.contains("could not be made"), "{system}");
    let types: Vec<&str> = out.reply.unwrap().parts.iter().map(Part::type_name).collect();
    assert_eq!(types, ["text", "diagram", "error"]);
}

#[tokio::test]
async fn when_every_tool_fails_the_reply_is_plain_chat() {
    let model = Keyed::new(0)
        .on("drawDiagram", vec![ScriptStep::Fail(ProviderError::BadRequest("nope".into()))])
        .on("makeQuiz", vec![ScriptStep::text("I can't do quizzes")])
        .replies(vec![ScriptStep::text("Photosynthesis turns light into sugar.")]);
    let h = harness(model).await;
    let (out, events) = h.say("make me a diagram and a quiz about photosynthesis", Lang::En, BTreeMap::new()).await;
    assert!(results(&events).iter().all(|r| !r.1));
    let system = system_of(&h.model.reply_requests()[0]);
    assert!(system.contains("Answer as a patient tutor"), "{system}");
    let reply = out.reply.unwrap();
    assert!(matches!(&reply.parts[0], Part::Text { text } if text.contains("light into sugar")));
    assert!(out.error.is_none());
}

#[tokio::test]
async fn no_tool_means_a_normal_reply_and_history_is_kept_then_cleared() {
    let model = Keyed::new(0).replies(vec![
        ScriptStep::text("The sky is blue because of Rayleigh scattering."),
        ScriptStep::text("Sunsets are red for the same reason."),
    ]);
    let h = harness(model).await;
    let (out, events) = h.say("why is the sky blue?", Lang::En, BTreeMap::new()).await;
    assert!(!events.iter().any(|e| matches!(e.kind, EventKind::ToolSelected { .. })));
    assert_eq!(out.reply.as_ref().map(|r| r.role), Some(Role::Assistant));
    h.say("and sunsets?", Lang::En, BTreeMap::new()).await;
    let second = &h.model.reply_requests()[1];
    let texts: Vec<String> = second.messages.iter().filter_map(|m| m.content.clone()).collect();
    assert!(texts.iter().any(|t| t.contains("Rayleigh")), "the history reaches the model: {texts:?}");
    assert_eq!(h.store.messages(&h.conversation, None).await.unwrap().len(), 4);
    assert_eq!(h.store.clear_messages(&h.conversation).await.unwrap(), 4);
    assert!(h.store.messages(&h.conversation, None).await.unwrap().is_empty());
}

#[tokio::test]
async fn an_invalid_diagram_is_asked_for_again_once() {
    let model = Keyed::new(0).on(
        "drawDiagram",
        vec![
            diagram_call("Water", "flowchart TD\n A[Rain --> B"),
            diagram_call("Water", "flowchart TD\n A[Rain] --> B"),
        ],
    );
    let h = harness(model).await;
    let (out, events) = h.say("draw a diagram of the water cycle", Lang::En, BTreeMap::new()).await;
    let asked = h.model.offering("drawDiagram");
    assert_eq!(asked.len(), 2);
    let again: Vec<String> = asked[1].messages.iter().filter_map(|m| m.content.clone()).collect();
    assert!(again.iter().any(|t| t.contains("never closed")), "the re-ask says what was wrong: {again:?}");
    let outcome = events.iter().find_map(|e| match &e.kind {
        EventKind::ChatToolResult { outcome, .. } => Some(*outcome),
        _ => None,
    });
    assert_eq!(outcome, Some(Outcome::Warning));
    assert!(out.reply.unwrap().flags.has_diagram);
}

#[tokio::test]
async fn portuguese_messages_pick_their_tools_and_the_reply_is_asked_in_portuguese() {
    let model = Keyed::new(0).on("makeQuiz", vec![quiz_call()]);
    let h = harness(model).await;
    let (_, events) = h.say("me faz um quiz sobre fotossíntese", Lang::Pt, BTreeMap::new()).await;
    assert_eq!(results(&events).len(), 1);
    assert!(system_of(&h.model.offering("makeQuiz")[0]).contains("Portuguese"));
    assert!(system_of(&h.model.reply_requests()[0]).contains("Always answer in Portuguese"));
}

#[tokio::test]
async fn modes_switch_tools_on_and_off_for_one_message() {
    let code = ScriptStep::calls(&[("showCode", serde_json::json!({"language": "Python", "code": "print('hi')"}))]);
    let model = Keyed::new(0).on("makeQuiz", vec![quiz_call()]).on("showCode", vec![code]);
    let h = harness(model).await;
    let modes = BTreeMap::from([("quiz".to_string(), Mode::Off), ("code".to_string(), Mode::On)]);
    let (out, _) = h.say("quiz me on loops", Lang::En, modes).await;
    let types: Vec<&str> = out.reply.unwrap().parts.iter().map(Part::type_name).collect();
    assert_eq!(types, ["text", "code"]);
    assert!(h.model.offering("makeQuiz").is_empty());
}

#[tokio::test]
async fn a_rate_limit_is_told_with_its_wait_not_waited_out() {
    let limited =
        ProviderError::RateLimited { retry_after: Some(Duration::from_secs(30)), message: "slow down".into() };
    let model = Keyed::new(0).replies(vec![ScriptStep::Fail(limited)]);
    let h = harness(model).await;
    let started = std::time::Instant::now();
    let (out, _) = h.say("hello there", Lang::En, BTreeMap::new()).await;
    let error = out.error.unwrap();
    assert_eq!(error, "The AI model is busy right now. Please try again in 30 seconds.");
    assert!(out.detail.unwrap().contains("slow down"), "the provider's own words are the detail");
    assert_eq!(h.model.reply_requests().len(), 1, "not retried");
    assert!(started.elapsed() < Duration::from_secs(30), "the 30 s were not waited");
    let parts = &out.reply.unwrap().parts;
    assert!(matches!(parts.last(), Some(Part::Error { message, .. }) if message.contains("30 seconds")));
    // In the learner's language.
    let h = harness(Keyed::new(0).replies(vec![ScriptStep::Fail(ProviderError::Unreachable("refused".into()))])).await;
    let (out, _) = h.say("olá", Lang::Pt, BTreeMap::new()).await;
    assert!(out.error.unwrap().starts_with("Estou com dificuldade para falar com o modelo de IA"));
}

#[tokio::test]
async fn studying_a_term_adds_a_card_from_the_reply_in_the_background_and_feeds_the_next_turn() {
    let mut card = ScriptStep::calls(&[(
        "addFlashcard",
        serde_json::json!({"cards": [{"front": "Osmosis", "back": "Water moving across a membrane."}]}),
    )]);
    if let ScriptStep::Reply(r) = &mut card {
        r.usage = wright_provider::Usage { input_tokens: 120, output_tokens: 30, cached_tokens: 0 };
    }
    let answer = ScriptStep::text("Osmosis is water moving across a membrane.");
    let model = Keyed::new(200).on("addFlashcard", vec![card]).replies(vec![answer]);
    let h = harness(model).await;
    let (mut out, events) =
        h.say("what is osmosis? I need to remember it for the test", Lang::En, BTreeMap::new()).await;
    let reply = out.reply.clone().unwrap();
    // The reply did not wait for the card: it is stored without it, and the turn hands the
    // running tool back to its caller.
    assert!(!reply.parts.iter().any(|p| matches!(p, Part::BackgroundProcess { .. })), "{:?}", reply.parts);
    assert!(!events.iter().any(|e| matches!(e.kind, EventKind::ChatToolResult { .. })), "{events:?}");
    let background = out.background.take().expect("the card is still being written");
    assert_eq!(background.tools(), ["flashcard_update"]);
    let later = background.finish(h.store.as_ref(), Duration::from_secs(30)).await;
    let follow_up = later.message.expect("the card's part is stored");
    assert!(
        matches!(follow_up.parts.last(), Some(Part::BackgroundProcess { summary, .. }) if summary.contains("Osmosis")),
        "{:?}",
        follow_up.parts
    );
    assert_eq!(follow_up.run, reply.run, "a follow-up of the same run");
    let history = h.store.messages(&h.conversation, None).await.unwrap();
    assert_eq!(history.last().map(|m| m.id.clone()), Some(follow_up.id.clone()), "after the reply in the history");
    assert_eq!((later.usage.input_tokens, later.usage.output_tokens), (120, 30), "the card's tokens, apart");
    assert_eq!(out.usage.input_tokens, 0, "the turn's own usage (its reply's) leaves them out");
    let deck = h.store.cards("u-1", None, 10).await.unwrap();
    assert_eq!(deck.len(), 1);
    h.say("thanks!", Lang::En, BTreeMap::new()).await;
    let next = &h.model.reply_requests()[1];
    let texts: Vec<String> = next.messages.iter().filter_map(|m| m.content.clone()).collect();
    assert!(texts.iter().any(|t| t.contains("in the background: Added a flashcard")), "{texts:?}");
}

/// A turn where the learner studies a term and the model returns `card` for it (every time).
async fn card_from(card: serde_json::Value) -> (Harness, wright_chat::BackgroundOutcome) {
    let step = ScriptStep::calls(&[("addFlashcard", card)]);
    let answer = ScriptStep::text("Osmosis is the movement of water across a membrane. It evens out concentrations.");
    let h = harness(Keyed::new(0).on("addFlashcard", vec![step]).replies(vec![answer])).await;
    let (mut out, _) = h.say("what is osmosis? I need to remember it for the test", Lang::En, BTreeMap::new()).await;
    let background = out.background.take().expect("studying a term starts the card");
    let later = background.finish(h.store.as_ref(), Duration::from_secs(30)).await;
    (h, later)
}

#[tokio::test]
async fn a_plain_question_adds_no_card() {
    for (text, lang) in [("O que é um algoritmo?", Lang::Pt), ("what is photosynthesis?", Lang::En)] {
        let h = harness(Keyed::new(0).replies(vec![ScriptStep::text("A list of steps.")])).await;
        let (out, _) = h.say(text, lang, BTreeMap::new()).await;
        assert!(out.background.is_none(), "{text}: {:?}", out.tools);
        assert!(h.model.offering("addFlashcard").is_empty(), "{text}");
        assert!(h.store.cards("u-1", None, 10).await.unwrap().is_empty(), "{text}");
    }
}

#[tokio::test]
async fn garbage_from_the_model_never_reaches_the_deck() {
    let long = "water ".repeat(100);
    for card in [
        serde_json::json!({"cards": [{"front": "aadfade-1234567890", "back": "aadfade-1234567890"}]}),
        serde_json::json!({"cards": [{"front": "Osmosis", "back": "aadfade-1234567890 water membrane"}]}),
        serde_json::json!({"cards": [{"front": "", "back": "The movement of water across a membrane."}]}),
        serde_json::json!({"cards": [{"front": "Osmosis", "back": "Osmosis."}]}),
        serde_json::json!({"cards": [{"front": "Osmosis", "back": long}]}),
        // A term nobody said, with a back the reply does not hold.
        serde_json::json!({"cards": [{"front": "Mitochondria", "back": "The powerhouse of the cell."}]}),
        serde_json::json!({"nothing": true}),
    ] {
        let (h, later) = card_from(card.clone()).await;
        assert!(h.store.cards("u-1", None, 10).await.unwrap().is_empty(), "{card}");
        assert_eq!(h.model.offering("addFlashcard").len(), 2, "re-asked once with the reason: {card}");
        let parts = later.message.expect("the failure is told").parts;
        assert!(matches!(parts.last(), Some(Part::Error { tool, .. }) if tool == "flashcard_update"), "{parts:?}");
    }
}

#[tokio::test]
async fn a_back_the_reply_does_not_hold_is_taken_from_the_reply() {
    let (h, _) =
        card_from(serde_json::json!({"cards": [{"front": "Osmosis", "back": "The capital of France is Paris."}]}))
            .await;
    let deck = h.store.cards("u-1", None, 10).await.unwrap();
    assert_eq!(deck.len(), 1);
    assert_eq!(
        (deck[0].front.as_str(), deck[0].back.as_str()),
        ("Osmosis", "Osmosis is the movement of water across a membrane.")
    );
}
