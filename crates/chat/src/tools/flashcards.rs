//! The user's flashcard deck: `flashcards` makes cards on request, `flashcard_update` adds one
//! in the background when the learner is studying a term (asks to remember, memorise or keep
//! it; a plain "what is X?" is not a wish for a card). No card the model wrote reaches the deck
//! unchecked ([`super::card_check`]). Reviews are scheduled by FSRS (the `rs-fsrs` crate, MIT),
//! never by a hand formula.

use super::card_check;
use crate::model::{structured, subject_line, text_field};
use crate::relevance::Cues;
use crate::tool::{ChatContext, ChatTool, ToolError, ToolOutput};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use rs_fsrs::{FSRS, Rating, State};
use serde_json::{Value, json};
use wright_events::chat::{Card, ChatMessage, Part, Role};
use wright_provider::ToolSpec;
use wright_store::{Store, StoredCard};

fn state_name(s: State) -> &'static str {
    match s {
        State::New => "new",
        State::Learning => "learning",
        State::Review => "review",
        State::Relearning => "relearning",
    }
}

fn state_of(s: &str) -> State {
    match s {
        "learning" => State::Learning,
        "review" => State::Review,
        "relearning" => State::Relearning,
        _ => State::New,
    }
}

fn time(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).unwrap_or_else(|_| Utc::now())
}

/// A rating as people send it.
pub fn parse_rating(s: &str) -> Option<Rating> {
    match s {
        "again" => Some(Rating::Again),
        "hard" => Some(Rating::Hard),
        "good" => Some(Rating::Good),
        "easy" => Some(Rating::Easy),
        _ => None,
    }
}

/// A new card for `user`, due now.
pub fn new_card(user: &str, front: &str, back: &str, now: DateTime<Utc>) -> StoredCard {
    StoredCard {
        id: format!("fc-{:012x}", fastrand::u64(..) & 0xffff_ffff_ffff),
        user_id: user.to_string(),
        front: front.to_string(),
        back: back.to_string(),
        created_at: now.to_rfc3339(),
        due: now.to_rfc3339(),
        stability: 0.0,
        difficulty: 0.0,
        elapsed_days: 0,
        scheduled_days: 0,
        reps: 0,
        lapses: 0,
        state: "new".into(),
        last_review: None,
    }
}

/// The card after a review with `rating` at `now`, as FSRS schedules it.
pub fn reviewed(card: &StoredCard, rating: Rating, now: DateTime<Utc>) -> StoredCard {
    let c = rs_fsrs::Card {
        due: time(&card.due),
        stability: card.stability,
        difficulty: card.difficulty,
        elapsed_days: card.elapsed_days,
        scheduled_days: card.scheduled_days,
        reps: card.reps as i32,
        lapses: card.lapses as i32,
        state: state_of(&card.state),
        last_review: card.last_review.as_deref().map(time).unwrap_or(now),
    };
    let next = FSRS::default().next(c, now, rating).card;
    StoredCard {
        due: next.due.to_rfc3339(),
        stability: next.stability,
        difficulty: next.difficulty,
        elapsed_days: next.elapsed_days,
        scheduled_days: next.scheduled_days,
        reps: next.reps.max(0) as u32,
        lapses: next.lapses.max(0) as u32,
        state: state_name(next.state).into(),
        last_review: Some(now.to_rfc3339()),
        ..card.clone()
    }
}

/// A stored card as clients see it.
pub fn view(c: &StoredCard) -> Card {
    Card {
        id: c.id.clone(),
        front: c.front.clone(),
        back: c.back.clone(),
        due: c.due.clone(),
        state: c.state.clone(),
        reps: c.reps,
    }
}

/// Review one of `user`'s cards and store the new schedule.
pub async fn review(
    store: &dyn Store,
    user: &str,
    card: &str,
    rating: Rating,
) -> Result<Card, wright_store::StoreError> {
    let c = store.card(user, card).await?;
    let next = reviewed(&c, rating, Utc::now());
    store.save_card(&next).await?;
    Ok(view(&next))
}

fn cards_in(v: &Value, max: usize) -> Result<Vec<(String, String)>, String> {
    let list = v.get("cards").and_then(Value::as_array).ok_or("`cards` is missing or not a list")?;
    if list.is_empty() || list.len() > max {
        return Err(format!("give 1 to {max} cards, not {}", list.len()));
    }
    list.iter()
        .enumerate()
        .map(|(i, c)| {
            let f = text_field(c, "front", 200).map_err(|e| format!("card {}: {e}", i + 1))?;
            let b = text_field(c, "back", 500).map_err(|e| format!("card {}: {e}", i + 1))?;
            Ok((f, b))
        })
        .collect()
}

/// The cards that are [`card_check::sound`], and how many were not; an error when none is.
fn sound_cards(cards: Vec<(String, String)>) -> Result<(Vec<(String, String)>, usize), String> {
    let total = cards.len();
    let mut why = String::new();
    let good: Vec<(String, String)> = cards
        .into_iter()
        .filter(|(f, b)| match card_check::sound(f, b) {
            Ok(()) => true,
            Err(e) => {
                why = e;
                false
            }
        })
        .collect();
    if good.is_empty() {
        return Err(format!("no card is usable: {why}"));
    }
    let refused = total - good.len();
    Ok((good, refused))
}

/// A message's own words (its text parts).
fn text_of(m: &ChatMessage) -> String {
    let texts: Vec<&str> = m
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

fn spec(name: &str, description: &str, max: usize) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters: json!({
            "type": "object",
            "properties": {"cards": {"type": "array", "maxItems": max, "items": {
                "type": "object",
                "properties": {"front": {"type": "string", "maxLength": 200}, "back": {"type": "string", "maxLength": 500}},
                "required": ["front", "back"]
            }}},
            "required": ["cards"]
        }),
    }
}

/// Add the cards to the user's deck; the cards as the deck has them (a front already there
/// keeps its card and schedule), and how many were new.
async fn add(ctx: &ChatContext, pairs: Vec<(String, String)>) -> Result<(Vec<Card>, u64), ToolError> {
    let now = Utc::now();
    let cards: Vec<StoredCard> = pairs.iter().map(|(f, b)| new_card(&ctx.user, f, b, now)).collect();
    let store = |e: wright_store::StoreError| ToolError::Store(e.to_string());
    let added = ctx.store.add_cards(&cards).await.map_err(store)?;
    let deck = ctx.store.cards(&ctx.user, None, 10_000).await.map_err(store)?;
    let shown = cards.iter().filter_map(|c| deck.iter().find(|d| d.front == c.front).map(view)).collect();
    Ok((shown, added))
}

/// The `flashcards` tool.
pub struct Flashcards;

#[async_trait]
impl ChatTool for Flashcards {
    fn name(&self) -> &'static str {
        "flashcards"
    }

    fn description(&self) -> &'static str {
        "Makes study cards on a topic and adds them to the user's deck, scheduled for review."
    }

    fn triggers(&self) -> &'static [&'static str] {
        &["flashcards", "study cards", "flash cards", "cartões", "flashcard", "cartões de estudo"]
    }

    fn message_type(&self) -> &'static str {
        "flashcards"
    }

    fn cues(&self) -> Cues {
        super::cues::flashcards()
    }

    fn can_handle(&self, message: &str, ctx: &ChatContext) -> f32 {
        ctx.scorer.score(self.name(), message, ctx.embedding.as_deref().map(Vec::as_slice))
    }

    async fn execute(&self, message: &str, ctx: &ChatContext) -> Result<ToolOutput, ToolError> {
        let system = format!(
            "You write flashcards for students: a short question or term on the front, a one- or two-sentence \
             answer on the back. Write 4 to 8 cards in {}.",
            ctx.lang.name()
        );
        let tool = spec("addFlashcards", "Return the flashcards for the topic.", 12);
        let ((pairs, refused), warning) =
            structured(ctx, tool, system, subject_line(message), |v| sound_cards(cards_in(v, 12)?)).await?;
        let (cards, added) = add(ctx, pairs).await?;
        let refused = (refused > 0).then(|| format!("{refused} malformed cards were left out"));
        let warning = warning.or(refused).or_else(|| {
            (added < cards.len() as u64).then(|| format!("{} were already in the deck", cards.len() as u64 - added))
        });
        Ok(ToolOutput {
            content: format!("{added} new flashcards were added to the user's deck; {} are shown.", cards.len()),
            part: Part::Flashcards { cards },
            warning,
        })
    }
}

/// The `flashcard_update` background tool.
pub struct FlashcardUpdate;

#[async_trait]
impl ChatTool for FlashcardUpdate {
    fn name(&self) -> &'static str {
        "flashcard_update"
    }

    fn description(&self) -> &'static str {
        "In the background, adds a card to the user's deck for a term they are studying, taken from the reply."
    }

    fn triggers(&self) -> &'static [&'static str] {
        &["remember", "memorise", "add to my deck", "decorar", "memorizar", "lembrar"]
    }

    fn message_type(&self) -> &'static str {
        "background_process"
    }

    fn background(&self) -> bool {
        true
    }

    fn cues(&self) -> Cues {
        super::cues::flashcard_update()
    }

    fn can_handle(&self, message: &str, ctx: &ChatContext) -> f32 {
        ctx.scorer.score(self.name(), message, ctx.embedding.as_deref().map(Vec::as_slice))
    }

    async fn execute(&self, message: &str, ctx: &ChatContext) -> Result<ToolOutput, ToolError> {
        // The turn runs background tools once its reply is stored, with the reply last in the
        // history: the card is taken from what the learner was told.
        let reply = ctx.history.last().filter(|m| m.role == Role::Assistant).map(text_of).unwrap_or_default();
        if reply.trim().is_empty() {
            return Err(ToolError::Invalid("there is no answer to take the card from".into()));
        }
        let system = format!(
            "The student is studying a term from this conversation. Write one flashcard: the term on the front, \
             as the student or the answer wrote it, and on the back its definition in one or two sentences \
             taken from the answer, in {}.\n\nThe answer:\n{}",
            ctx.lang.name(),
            reply.chars().take(3000).collect::<String>()
        );
        let tool = spec("addFlashcard", "Return one flashcard for the term being studied.", 1);
        let (pairs, warning) = structured(ctx, tool, system, subject_line(message), |v| {
            let cards = cards_in(v, 1)?;
            let (front, back) = cards.first().ok_or("no card")?;
            card_check::grounded(front, back, message, &reply).map(|c| vec![c])
        })
        .await?;
        let (cards, added) = add(ctx, pairs).await?;
        let front = cards.first().map(|c| c.front.clone()).unwrap_or_default();
        let summary = if added > 0 {
            format!("Added a flashcard to your deck: {front}")
        } else {
            format!("\"{front}\" is already in your deck")
        };
        Ok(ToolOutput {
            content: summary.clone(),
            part: Part::BackgroundProcess { tool: self.name().into(), summary },
            warning,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsrs_schedules_good_later_than_again() {
        let now = Utc::now();
        let card = new_card("u", "ATP", "energy", now);
        let good = reviewed(&card, Rating::Good, now);
        let again = reviewed(&card, Rating::Again, now);
        assert!(time(&good.due) > time(&again.due), "{} vs {}", good.due, again.due);
        assert_eq!(good.reps, 1);
        assert_ne!(good.state, "new");
        // Reviewing on time with Good pushes it further out.
        let later = reviewed(&good, Rating::Good, time(&good.due));
        assert!(time(&later.due) > time(&good.due));
    }

    #[test]
    fn cards_are_checked() {
        assert!(cards_in(&json!({"cards": []}), 3).is_err());
        assert!(cards_in(&json!({"cards": [{"front": "a"}]}), 3).err().unwrap_or_default().contains("back"));
        assert_eq!(cards_in(&json!({"cards": [{"front": "a", "back": "b"}]}), 3).map(|v| v.len()), Ok(1));
        assert_eq!(parse_rating("good"), Some(Rating::Good));
        assert_eq!(parse_rating("meh"), None);
    }
}
