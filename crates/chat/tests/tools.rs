//! The agent under failure (a panicking tool, a tool past its timeout) and `video_search`
//! against a local server that speaks YouTube's Data API wire format.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failed unwrap is a failed test

mod common;

use async_trait::async_trait;
use axum::Json;
use axum::extract::Query;
use axum::routing::get;
use common::{context, video};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wright_chat::tools::video::VideoSearch;
use wright_chat::{AgentSettings, ChatAgent, ChatContext, ChatTool, ToolError, ToolOutput};
use wright_events::chat::Part;

/// A tool that always scores 1 and does what it is told when run.
struct Fake {
    name: &'static str,
    act: fn() -> Result<ToolOutput, ToolError>,
    sleep: Duration,
}

#[async_trait]
impl ChatTool for Fake {
    fn name(&self) -> &'static str {
        self.name
    }
    fn description(&self) -> &'static str {
        "test"
    }
    fn triggers(&self) -> &'static [&'static str] {
        &[]
    }
    fn message_type(&self) -> &'static str {
        "code"
    }
    fn can_handle(&self, _: &str, _: &ChatContext) -> f32 {
        1.0
    }
    async fn execute(&self, _: &str, _: &ChatContext) -> Result<ToolOutput, ToolError> {
        tokio::time::sleep(self.sleep).await;
        (self.act)()
    }
}

fn ok() -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput {
        content: "fine".into(),
        part: Part::Code { language: "text".into(), code: "ok".into() },
        warning: None,
    })
}

#[allow(clippy::panic)]
fn boom() -> Result<ToolOutput, ToolError> {
    panic!("tool bug")
}

#[tokio::test]
async fn a_panic_and_a_timeout_become_failed_results_and_the_others_still_work() {
    let tools: Vec<Arc<dyn ChatTool>> = vec![
        Arc::new(Fake { name: "fine", act: ok, sleep: Duration::ZERO }),
        Arc::new(Fake { name: "panics", act: boom, sleep: Duration::ZERO }),
        Arc::new(Fake { name: "slow", act: ok, sleep: Duration::from_secs(30) }),
    ];
    let settings = AgentSettings { tool_timeout: Duration::from_millis(200), ..AgentSettings::default() };
    let agent = ChatAgent::new(tools, settings);
    let (ctx, _) = context(None).await;
    let sel = agent.select("anything", &ctx, &BTreeMap::new());
    let t0 = Instant::now();
    let results = agent.run(&sel.foreground, "anything", &ctx, t0).await;
    assert!(t0.elapsed() < Duration::from_secs(10), "the slow tool was stopped");
    let by: HashMap<&str, _> = results.iter().map(|r| (r.tool.as_str(), r)).collect();
    assert!(by["fine"].success);
    assert!(!by["panics"].success && by["panics"].error.as_deref().unwrap().contains("stopped unexpectedly"));
    assert!(!by["slow"].success && by["slow"].error.as_deref().unwrap().contains("did not finish within"));
    let orders: Vec<u32> = results.iter().map(|r| r.execution_order).collect();
    assert_eq!(orders, [1, 2, 3]);
}

#[tokio::test]
async fn at_most_the_limit_runs_best_first() {
    let tools: Vec<Arc<dyn ChatTool>> = ["a", "b", "c"]
        .into_iter()
        .map(|n| Arc::new(Fake { name: n, act: ok, sleep: Duration::ZERO }) as Arc<dyn ChatTool>)
        .collect();
    let agent = ChatAgent::new(tools, AgentSettings { max_tools_per_message: 2, ..AgentSettings::default() });
    let (ctx, _) = context(None).await;
    let modes = BTreeMap::from([("a".to_string(), wright_events::chat::Mode::Off)]);
    let sel = agent.select("anything", &ctx, &modes);
    let chosen: Vec<&str> = sel.foreground.iter().map(|c| c.tool.name()).collect();
    assert_eq!(chosen, ["b", "c"]);
    let decision = |t: &str| sel.scores.iter().find(|s| s.tool == t).map(|s| s.decision.clone()).unwrap();
    assert_eq!(decision("a"), "switched_off");
}

/// A local server answering `GET /youtube/v3/search` as YouTube's Data API does.
async fn youtube() -> (String, Arc<Mutex<Vec<HashMap<String, String>>>>) {
    let seen: Arc<Mutex<Vec<HashMap<String, String>>>> = Arc::default();
    let log = seen.clone();
    let app = axum::Router::new().route(
        "/youtube/v3/search",
        get(move |Query(q): Query<HashMap<String, String>>| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(q.clone());
                Json(serde_json::json!({
                    "kind": "youtube#searchListResponse",
                    "items": [
                        {"kind": "youtube#searchResult", "id": {"kind": "youtube#video", "videoId": "dQw4w9WgXcQ"},
                         "snippet": {"title": format!("{} explained", q["q"]), "channelTitle": "Science Channel",
                                     "thumbnails": {"medium": {"url": "https://i.ytimg.com/vi/dQw4w9WgXcQ/mqdefault.jpg"}}}},
                        {"kind": "youtube#searchResult", "id": {"kind": "youtube#channel", "channelId": "UC123"},
                         "snippet": {"title": "a channel, not a video"}}
                    ]
                }))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), seen)
}

#[tokio::test]
async fn videos_come_from_the_api_and_never_without_a_key() {
    let (base, seen) = youtube().await;
    let (ctx, _) = context(None).await;
    let with_key = VideoSearch::new(video(&base, Some("k-123")));
    assert!(with_key.can_handle("find me a video about black holes", &ctx) >= 0.7);
    let out = with_key.execute("find me a video about black holes", &ctx).await.unwrap();
    let Part::Videos { query, videos } = &out.part else { panic!("{:?}", out.part) };
    assert_eq!(query, "black holes");
    assert_eq!(videos.len(), 1, "the channel result is not a video");
    assert_eq!(videos[0].url, "https://www.youtube.com/watch?v=dQw4w9WgXcQ");
    let q = seen.lock().unwrap()[0].clone();
    assert_eq!((q["key"].as_str(), q["type"].as_str(), q["q"].as_str()), ("k-123", "video", "black holes"));

    // The same search again within the cache's lifetime: no second request, marked cached.
    let agent = ChatAgent::new(vec![Arc::new(with_key) as Arc<dyn ChatTool>], AgentSettings::default());
    let sel = agent.select("find me a video about black holes", &ctx, &BTreeMap::new());
    let first = agent.run(&sel.foreground, "find me a video about black holes", &ctx, Instant::now()).await;
    let again = agent.run(&sel.foreground, "find me a video about black holes", &ctx, Instant::now()).await;
    assert!(first[0].success && again[0].success);
    assert_eq!(again[0].metadata["cached"], serde_json::json!(true));
    assert_eq!(seen.lock().unwrap().len(), 2, "one request by execute above, one by the agent's first run");
    let mut other = ctx.clone();
    other.user = "u-other".into();
    let theirs = agent.run(&sel.foreground, "find me a video about black holes", &other, Instant::now()).await;
    assert!(theirs[0].metadata.get("cached").is_none(), "another user's search is their own");
    assert_eq!(seen.lock().unwrap().len(), 3);

    let without = VideoSearch::new(video(&base, None));
    assert_eq!(without.can_handle("find me a video about black holes", &ctx), 0.0);
    assert!(without.unavailable().unwrap().contains("no YouTube Data API key"));
}

#[tokio::test]
async fn an_api_error_is_reported_not_invented() {
    let app = axum::Router::new().route(
        "/youtube/v3/search",
        get(|| async {
            (
                axum::http::StatusCode::FORBIDDEN,
                Json(serde_json::json!({"error": {"code": 403, "message": "The request cannot be completed because you have exceeded your quota."}})),
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let (ctx, _) = context(None).await;
    let tool = VideoSearch::new(video(&format!("http://{addr}"), Some("k")));
    let err = tool.execute("any youtube videos on the krebs cycle?", &ctx).await.err().unwrap().to_string();
    assert!(err.contains("403") && err.contains("quota"), "{err}");
}
