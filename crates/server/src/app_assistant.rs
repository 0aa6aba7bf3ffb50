//! An assistant inside a built app (`POST /api/builds {"assistant": true}`): the build gets an
//! embed key of its owner, bound to the build's own preview origin, and the preview adds the
//! assistant's script tag to the app's HTML pages as it serves them (the project's files stay
//! as the model wrote them).
//!
//! The key's secret is derived from the build's preview key (a one-way hash), so nothing but
//! its hash is stored, and it can only be read by someone who can open the preview anyway. The
//! owner revokes it like any embed key (`DELETE /api/embed-keys/ek-b-{build}`); a revoked key
//! is no longer put in the pages.

use crate::auth::hash_token;
use crate::state::AppState;
use sha2::{Digest, Sha256};
use wright_store::EmbedKey;

/// The id of a build's embed key.
pub fn key_id(build: &str) -> String {
    format!("ek-b-{build}")
}

/// The build's embed key secret, from its preview key.
fn secret(preview_key: &str) -> String {
    let digest = Sha256::digest(format!("wright-assistant\n{preview_key}").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("ek_{hex}")
}

/// Make the embed key of build `build` (owned by `owner`) for its preview origin.
pub async fn create_key(
    state: &AppState,
    build: &str,
    preview_key: &str,
    owner: &str,
    prompt: &str,
) -> Result<(), wright_store::StoreError> {
    let origin = crate::api::url_for(&state.cfg.preview_origin(), build, preview_key).trim_end_matches('/').to_string();
    let name: String = prompt.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(60).collect();
    let key = EmbedKey {
        id: key_id(build),
        owner_id: owner.to_string(),
        name,
        origins: vec![origin],
        tools: wright_chat::assistant::ui_tools::ui_tools(),
        docs_dir: None,
        per_hour: 200,
        created_at: wright_events::now(),
        revoked_at: None,
    };
    state.store.create_embed_key(&key, &hash_token(&secret(preview_key))).await
}

/// The script tag to add to build `build`'s pages, when it has a live assistant key.
pub async fn tag_for(state: &AppState, build: &str, preview_key: &str) -> Option<String> {
    let key = state.store.embed_key(&key_id(build)).await.ok().flatten()?;
    if key.revoked_at.is_some() {
        return None;
    }
    let api = state.cfg.api_origin();
    Some(format!(
        "<script type=\"module\" src=\"{api}/assistant/assistant.js\" data-endpoint=\"{api}\" data-key=\"{}\"></script>",
        secret(preview_key)
    ))
}

/// `html` with `tag` before its last `</body>` (or at its end).
pub fn inject(html: &[u8], tag: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(html);
    let lower = text.to_ascii_lowercase();
    match lower.rfind("</body>") {
        Some(i) => format!("{}{tag}\n{}", &text[..i], &text[i..]).into_bytes(),
        None => format!("{text}\n{tag}\n").into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tag_goes_before_the_last_body_end() {
        let page = b"<html><body><p>x</p></BODY></html>";
        let out = String::from_utf8(inject(page, "<script></script>")).unwrap_or_default();
        assert_eq!(out, "<html><body><p>x</p><script></script>\n</BODY></html>");
        let bare = String::from_utf8(inject(b"<p>hi</p>", "<s>")).unwrap_or_default();
        assert_eq!(bare, "<p>hi</p>\n<s>\n");
    }

    #[test]
    fn the_secret_is_stable_per_preview_key_and_reveals_nothing_of_it() {
        let (a, b) = (secret("0123456789abcdef0123456789abcdef"), secret("0123456789abcdef0123456789abcdee"));
        assert_eq!(a, secret("0123456789abcdef0123456789abcdef"));
        assert!(a != b && a.starts_with("ek_") && a.len() == 67);
        assert!(!a.contains("0123456789abcdef"));
    }
}
