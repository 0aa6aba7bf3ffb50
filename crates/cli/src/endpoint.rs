//! `wright doctor --provider openai --base-url URL`: what an OpenAI-compatible server can do,
//! tried for real (its model list, one tiny tool call streamed and one whole), and what wright
//! will do about what it cannot.

use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_provider::openai::{EndpointMemory, OpenAiConfig, OpenAiProvider, list_models};
use wright_provider::{ChatRequest, ChatResponse, Message, ProviderError, RetryPolicy, ToolSpec, complete};

/// One finding: a short name, whether it works, and the words for it.
pub struct Finding {
    pub name: &'static str,
    pub ok: bool,
    pub text: String,
}

/// Everything the check found, with the advice that follows from it.
pub struct Report {
    pub base_url: String,
    pub model: String,
    pub findings: Vec<Finding>,
    pub advice: Vec<String>,
}

impl Report {
    pub fn usable(&self) -> bool {
        self.findings.iter().any(|f| f.name.starts_with("tool call") && f.ok)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "base_url": self.base_url,
            "model": self.model,
            "usable": self.usable(),
            "checks": self.findings.iter().map(|f| json!({"name": f.name, "ok": f.ok, "text": f.text})).collect::<Vec<_>>(),
            "advice": self.advice,
        })
    }

    pub fn print(&self) {
        println!("endpoint: {} (model {})", self.base_url, self.model);
        for f in &self.findings {
            println!("  {:<20} {} {}", f.name, if f.ok { "ok  " } else { "FAIL" }, f.text);
        }
        for a in &self.advice {
            println!("  → {a}");
        }
    }
}

fn probe_request(model: &str) -> ChatRequest {
    ChatRequest {
        model: model.to_string(),
        messages: vec![
            Message::system("You are a tool-using assistant. Answer only by calling a tool."),
            Message::user("Call announceStatus with the message \"ready\"."),
        ],
        tools: vec![ToolSpec {
            name: "announceStatus".into(),
            description: "Tell the user what you are doing.".into(),
            parameters: json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
        }],
        temperature: Some(0.0),
        max_tokens: Some(64),
        tool_choice: Default::default(),
    }
}

fn describe(r: &Result<ChatResponse, ProviderError>) -> (bool, String) {
    match r {
        Ok(resp) if !resp.tool_calls.is_empty() => {
            let c = &resp.tool_calls[0];
            (true, format!("the model called {}({})", c.name, wright_tools::clip(&c.arguments, 80)))
        }
        Ok(resp) => (
            false,
            format!(
                "answered in text, without a tool call: {:?} (the server may not pass tools to this model's template)",
                wright_tools::clip(resp.content.trim(), 80)
            ),
        ),
        Err(e) => (false, e.to_string()),
    }
}

/// Try the endpoint at `base_url` with `model` (default: the first it lists).
pub async fn check(base_url: &str, api_key: Option<String>, model: Option<String>, call_timeout: Duration) -> Report {
    let cfg = |stream: bool| OpenAiConfig {
        base_url: base_url.to_string(),
        api_key: api_key.clone(),
        stream,
        call_timeout,
        generation_timeout: Duration::from_secs(300),
        // A fresh memory: the check must see what the server does, not what wright learned.
        memory: Arc::new(EndpointMemory::default()),
        // The check's requests set their own small caps.
        auto_max_tokens: false,
    };
    let mut findings = Vec::new();
    let mut advice = Vec::new();
    let listed = list_models(&cfg(true)).await;
    let model = match (&listed, model) {
        (_, Some(m)) => m,
        (Ok(ids), None) => ids.first().cloned().unwrap_or_else(|| "default".into()),
        (Err(_), None) => "default".into(),
    };
    findings.push(match &listed {
        Ok(ids) => Finding { name: "models", ok: true, text: format!("{} listed: {}", ids.len(), ids.join(", ")) },
        Err(e) => Finding { name: "models", ok: false, text: e.to_string() },
    });
    if let Err(ProviderError::Unreachable(_)) = listed {
        advice.push("nothing answers there: start the server, or fix --base-url (it ends in /v1)".into());
        return Report { base_url: base_url.into(), model, findings, advice };
    }
    let policy = RetryPolicy { max_retries: 0, ..RetryPolicy::default() };
    let run = |stream: bool| {
        let request = probe_request(&model);
        let config = cfg(stream);
        let policy = policy.clone();
        async move {
            let provider = OpenAiProvider::new(config)?;
            complete(&provider, &request, &policy, &CancellationToken::new(), |_| {}, |_, _, _| {}).await
        }
    };
    let streamed = run(true).await;
    let whole = run(false).await;
    let (whole_ok, whole_text) = describe(&whole);
    match &streamed {
        Ok(resp) if !resp.notices.is_empty() => {
            findings.push(Finding {
                name: "tool call, streamed",
                ok: false,
                text: "the server broke off the stream (it cannot stream tool calls)".into(),
            });
            advice.push(
                "wright asks this server for whole answers whenever tools are offered (said once per build)".into(),
            );
        }
        other => {
            let (ok, text) = describe(other);
            findings.push(Finding { name: "tool call, streamed", ok, text });
        }
    }
    findings.push(Finding { name: "tool call, whole", ok: whole_ok, text: whole_text });
    if let Err(ProviderError::Auth(_)) = &whole {
        advice.push("the server wants a key: set OPENAI_API_KEY".into());
    }
    if !findings.iter().any(|f| f.name.starts_with("tool call") && f.ok) {
        advice.push(
            "no tool call came back: builds need a model (and server settings, e.g. llama-server --jinja) that can call tools"
                .into(),
        );
    }
    Report { base_url: base_url.into(), model, findings, advice }
}
