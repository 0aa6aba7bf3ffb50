//! `video_search`: videos from YouTube's Data API (v3 `search`), only when a key is configured.
//! Without one the tool scores 0 and `wright doctor` says why; it never invents a link: every
//! video it returns came from the API's answer.

use crate::relevance::{Cues, fold};
use crate::tool::{ChatContext, ChatTool, ToolError, ToolOutput};
use async_trait::async_trait;
use serde_json::Value;
use std::time::Duration;
use wright_events::chat::{Part, Video};

/// Where the API lives and the key to call it with.
#[derive(Clone)]
pub struct VideoSettings {
    /// `https://www.googleapis.com` unless a test or proxy says otherwise.
    pub base_url: String,
    pub api_key: Option<String>,
    /// Where the key was looked for, to say so when it is missing.
    pub key_source: String,
    pub max_results: u32,
}

impl std::fmt::Debug for VideoSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VideoSettings")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("key_source", &self.key_source)
            .finish()
    }
}

/// The `video_search` tool.
pub struct VideoSearch {
    settings: VideoSettings,
    http: reqwest::Client,
}

/// Words that ask for videos rather than name what they are about.
const FILLER: &[&str] = &[
    "find",
    "me",
    "a",
    "an",
    "some",
    "any",
    "video",
    "videos",
    "youtube",
    "on",
    "about",
    "for",
    "good",
    "watch",
    "show",
    "recommend",
    "please",
    "can",
    "you",
    "i",
    "want",
    "to",
    "is",
    "there",
    "of",
    "the",
    "lesson",
    "tutorial",
    "search",
    "link",
    "links",
    "encontre",
    "me",
    "um",
    "uma",
    "uns",
    "alguns",
    "algum",
    "video-aula",
    "videoaula",
    "videoaulas",
    "sobre",
    "de",
    "do",
    "da",
    "para",
    "quero",
    "assistir",
    "mostre",
    "recomende",
    "voce",
    "pode",
    "por",
    "favor",
    "aula",
    "busque",
    "procure",
    "tem",
    "ha",
    "no",
    "indique",
    "bom",
    "bons",
    "videos?",
    "aulas",
    "e",
    "o",
    "as",
    "os",
];

/// The search words: the message without the words that ask for a video.
pub fn query_of(message: &str) -> String {
    let text = fold(message);
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '+' || c == '#'))
        .filter(|w| !w.is_empty() && !FILLER.contains(w))
        .collect();
    let q = words.join(" ");
    if q.is_empty() { text.trim().to_string() } else { q }
}

/// The videos in a `search` answer (items without a video id are skipped).
pub fn videos_in(answer: &Value) -> Vec<Video> {
    let items = answer.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
    items
        .iter()
        .filter_map(|it| {
            let id = it.pointer("/id/videoId")?.as_str()?.to_string();
            let s = it.get("snippet")?;
            let text = |k: &str| s.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
            Some(Video {
                url: format!("https://www.youtube.com/watch?v={id}"),
                title: text("title"),
                channel: text("channelTitle"),
                thumbnail: s.pointer("/thumbnails/medium/url").and_then(Value::as_str).map(String::from),
                id,
            })
        })
        .collect()
}

impl VideoSearch {
    pub fn new(settings: VideoSettings) -> Self {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(15)).build().unwrap_or_default();
        Self { settings, http }
    }
}

#[async_trait]
impl ChatTool for VideoSearch {
    fn name(&self) -> &'static str {
        "video_search"
    }

    fn description(&self) -> &'static str {
        "Finds videos on a topic with YouTube's Data API (needs an API key)."
    }

    fn triggers(&self) -> &'static [&'static str] {
        &["video", "youtube", "watch", "vídeo", "videoaula", "assistir"]
    }

    fn message_type(&self) -> &'static str {
        "videos"
    }

    fn cues(&self) -> Cues {
        super::cues::video_search()
    }

    fn unavailable(&self) -> Option<String> {
        self.settings
            .api_key
            .is_none()
            .then(|| format!("video_search is off: no YouTube Data API key ({})", self.settings.key_source))
    }

    fn can_handle(&self, message: &str, ctx: &ChatContext) -> f32 {
        if self.settings.api_key.is_none() {
            return 0.0;
        }
        ctx.scorer.score(self.name(), message, ctx.embedding.as_deref().map(Vec::as_slice))
    }

    fn cache_key(&self, message: &str, ctx: &ChatContext) -> Option<String> {
        // The answer depends only on the search words and the language; kept per user, so
        // nobody learns from a hit what someone else asked.
        Some(format!("{}|{}|{}", ctx.user, ctx.lang.as_str(), query_of(message)))
    }

    async fn execute(&self, message: &str, ctx: &ChatContext) -> Result<ToolOutput, ToolError> {
        let key =
            self.settings.api_key.as_deref().ok_or_else(|| ToolError::Unavailable("no YouTube API key".into()))?;
        let query = query_of(message);
        let url = format!("{}/youtube/v3/search", self.settings.base_url.trim_end_matches('/'));
        let max = self.settings.max_results.clamp(1, 10).to_string();
        let params = [
            ("part", "snippet"),
            ("type", "video"),
            ("safeSearch", "strict"),
            ("maxResults", max.as_str()),
            ("q", query.as_str()),
            ("relevanceLanguage", ctx.lang.as_str()),
            ("key", key),
        ];
        let resp = self
            .http
            .get(&url)
            .query(&params)
            .send()
            .await
            .map_err(|e| ToolError::Provider(format!("YouTube could not be reached: {}", e.without_url())))?;
        let status = resp.status();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            let why = body.pointer("/error/message").and_then(Value::as_str).unwrap_or("no reason given");
            return Err(ToolError::Provider(format!("YouTube answered {}: {why}", status.as_u16())));
        }
        let videos = videos_in(&body);
        if videos.is_empty() {
            return Err(ToolError::Invalid(format!("YouTube found no videos for \"{query}\"")));
        }
        let titles: Vec<&str> = videos.iter().map(|v| v.title.as_str()).collect();
        Ok(ToolOutput {
            content: format!("{} videos for \"{query}\" are listed for the user: {}", videos.len(), titles.join("; ")),
            part: Part::Videos { query, videos },
            warning: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_is_the_subject() {
        assert_eq!(query_of("Find me a YouTube video about photosynthesis"), "photosynthesis");
        assert_eq!(query_of("quero assistir uma videoaula sobre mitose"), "mitose");
    }

    #[test]
    fn videos_come_only_from_the_answer() {
        let answer = serde_json::json!({"items": [
            {"id": {"kind": "youtube#video", "videoId": "abc123"}, "snippet": {"title": "Cells", "channelTitle": "Bio"}},
            {"id": {"kind": "youtube#channel", "channelId": "x"}, "snippet": {"title": "skip"}}
        ]});
        let v = videos_in(&answer);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].url, "https://www.youtube.com/watch?v=abc123");
        assert!(videos_in(&serde_json::json!({"nope": 1})).is_empty());
    }
}
