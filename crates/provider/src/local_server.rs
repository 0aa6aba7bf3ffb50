//! What an OpenAI-compatible local server says about its context window, and the answer cap
//! wright takes from it.
//!
//! A small local model asked for no limit may write prose until the context is nearly full, and
//! the next request (its answer plus a fix request) no longer fits. llama.cpp's `llama-server`
//! tells its context size at `GET /props`; a request that sets no `max_tokens` is then capped
//! at a quarter of it. Servers without `/props` (Ollama, vLLM, hosted APIs) are left as they are.

use serde_json::Value;

/// The largest default cap: more than most answers need, and a user who wants more says so.
pub const MAX_DEFAULT_CAP: u32 = 8192;

/// Where llama-server answers `/props`: at its root, not under `/v1`.
pub fn props_url(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    let root = base.strip_suffix("/v1").unwrap_or(base);
    format!("{root}/props")
}

/// The context size (tokens) one request may use, from a `/props` body:
/// `default_generation_settings.n_ctx` (a slot's size, which is what one request gets when the
/// server runs several slots), else a top-level `n_ctx`. `None` for anything else, zero included.
pub fn parse_props(body: &str) -> Option<u32> {
    let v: Value = serde_json::from_str(body).ok()?;
    let n =
        v.pointer("/default_generation_settings/n_ctx").and_then(Value::as_u64).or_else(|| v.get("n_ctx")?.as_u64())?;
    u32::try_from(n).ok().filter(|n| *n > 0)
}

/// The answer cap for a context of `n_ctx` tokens: a quarter of it, so the conversation keeps
/// three quarters, and at most [`MAX_DEFAULT_CAP`].
pub fn default_max_tokens(n_ctx: u32) -> u32 {
    (n_ctx / 4).clamp(1, MAX_DEFAULT_CAP)
}

/// What a server with a context of `n_ctx` tokens is told, once.
pub fn cap_notice(base_url: &str, n_ctx: u32, cap: u32) -> String {
    format!(
        "The model server at {base_url} has a context of {n_ctx} tokens; wright caps each answer at {cap} tokens (a quarter of it, at most {MAX_DEFAULT_CAP}) so one long answer cannot fill it. Change it with --max-tokens N or max_tokens in wright.toml (0: no cap)."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn props_sit_at_the_server_root() {
        assert_eq!(props_url("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080/props");
        assert_eq!(props_url("http://127.0.0.1:8080/v1/"), "http://127.0.0.1:8080/props");
        assert_eq!(props_url("http://host:8080"), "http://host:8080/props");
    }

    #[test]
    fn the_context_size_is_read_from_either_place() {
        // llama-server (the shape of its /props, trimmed): the slot's n_ctx.
        let server = r#"{"default_generation_settings":{"id":0,"id_task":-1,"n_ctx":8192,"speculative":false,"is_processing":false,"params":{"n_predict":-1,"temperature":0.8}},"total_slots":1,"model_path":"SmolLM2-135M-Instruct.Q4_1.gguf","chat_template":"{{ x }}","build_info":"b1-0c1e570"}"#;
        assert_eq!(parse_props(server), Some(8192));
        // Four slots of a 16k context: one request gets 4096.
        let slots = r#"{"n_ctx":16384,"default_generation_settings":{"n_ctx":4096},"total_slots":4}"#;
        assert_eq!(parse_props(slots), Some(4096));
        assert_eq!(parse_props(r#"{"n_ctx":2048}"#), Some(2048));
        for nothing in [
            "",
            "not json",
            "{}",
            r#"{"default_generation_settings":{}}"#,
            r#"{"n_ctx":0}"#,
            r#"{"n_ctx":"8192"}"#,
            r#"{"n_ctx":-1}"#,
            r#"{"error":"Not Found"}"#,
        ] {
            assert_eq!(parse_props(nothing), None, "{nothing}");
        }
    }

    #[test]
    fn the_cap_is_a_quarter_of_the_context_within_bounds() {
        assert_eq!(default_max_tokens(8192), 2048);
        assert_eq!(default_max_tokens(2048), 512);
        assert_eq!(default_max_tokens(131_072), MAX_DEFAULT_CAP);
        assert_eq!(default_max_tokens(3), 1);
        assert!(
            cap_notice("http://h/v1", 8192, 2048).contains("8192 tokens")
                && cap_notice("http://h/v1", 8192, 2048).contains("2048")
        );
    }

    proptest! {
        #[test]
        fn props_parser_never_panics_and_never_says_zero(s in ".*", n in proptest::num::u64::ANY) {
            prop_assert_ne!(parse_props(&s), Some(0));
            let body = format!(r#"{{"default_generation_settings":{{"n_ctx":{n}}}}}"#);
            prop_assert_eq!(parse_props(&body), u32::try_from(n).ok().filter(|n| *n > 0));
            if let Some(ctx) = parse_props(&body) {
                let cap = default_max_tokens(ctx);
                prop_assert!((1..=MAX_DEFAULT_CAP).contains(&cap) && (cap <= ctx / 4 || ctx < 4));
            }
        }
    }
}
