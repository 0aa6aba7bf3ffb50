//! What a prompt must pass before a build is queued: its length, no secrets in it (a key pasted
//! by mistake must not go to a model), no request to build one's own credentials into the app,
//! and the optional moderation hook, which fails closed.

use crate::error::ApiError;
use axum::http::StatusCode;
use regex::Regex;
use std::process::Stdio;
use std::sync::LazyLock;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// Words naming a credential, in English and Portuguese.
const CREDENTIAL: &str = r"(?:password|passphrase|passcode|passwd|pin code|api[ _-]?key|access[ _-]?key|secret[ _-]?key|private[ _-]?key|access[ _-]?token|auth(?:entication)?[ _-]?token|bearer[ _-]?token|token|secret|credentials?|login details|senha|chave(?: de| da)? api|chave secreta|chave privada|credenciais?|segredo)";

/// "my password", "our API key", "minha senha": a person's own credential.
#[allow(clippy::unwrap_used)] // a fixed pattern
static OWN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(?:my|our|meu|minha|meus|minhas|nosso|nossa)\s+(?:own\s+|real\s+|personal\s+)?{CREDENTIAL}\b"
    ))
    .unwrap()
});

/// A credential followed closely by a value: "password is hunter2", "token: ab12…", "senha = x9y8".
#[allow(clippy::unwrap_used)] // a fixed pattern
static GIVEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r#"(?i)\b{CREDENTIAL}\s*(?:is|are|=|:|é|será|as|como|of|de)?\s*["'`“]?([^\s"'`”]{{4,}})"#))
        .unwrap()
});

/// What a text is for: a build's prompt becomes code, a chat message is a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// A build's prompt: speaking of one's own credentials asks to write them into the app.
    Build,
    /// A chat message: "how do I reset my password?" is a fair question; only a value is refused.
    Chat,
}

/// Whether `prompt` puts someone's credentials in front of the model: it gives a password, key
/// or token a value, or (a build's prompt) speaks of a person's own, to be built into the app.
/// A prompt about the feature ("a password strength checker", "a login form with a password
/// field") passes.
pub fn asks_for_credentials(prompt: &str, asked: Asked) -> bool {
    let own = asked == Asked::Build && OWN.find_iter(prompt).any(|m| !prompt[m.end()..].starts_with(['-', '_']));
    own || GIVEN.captures_iter(prompt).any(|c| c.get(1).is_some_and(|v| looks_like_a_value(v.as_str())))
}

/// A value rather than a word: it has a digit or a symbol among its letters (`hunter2`,
/// `s3cr3t!`, `sk_live_…`), or it is all capitals and digits (`ABCD1234`).
fn looks_like_a_value(v: &str) -> bool {
    let v = v.trim_end_matches(['.', ',', ';', '!', '?', ')']);
    v.chars().count() >= 4
        && v.chars().any(|c| c.is_ascii_digit() || (c.is_ascii_punctuation() && c != '-'))
        && v.chars().any(char::is_alphanumeric)
}

/// A moderation hook: a command that reads the prompt on stdin and exits 0 to allow it. Exit 1
/// refuses it (its first line of output is the reason shown); anything else, or no answer in
/// time, refuses too, because a check that cannot run must not let everything through.
#[derive(Debug, Clone)]
pub struct Moderation {
    pub command: String,
    pub timeout: Duration,
}

impl Moderation {
    pub async fn check(&self, prompt: &str) -> Result<(), ApiError> {
        let unavailable = |why: String| {
            tracing::error!("moderation hook: {why}");
            ApiError::unavailable(
                "moderation_unavailable",
                "the prompt check is not working right now; try again later",
            )
        };
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| unavailable(format!("cannot start `{}`: {e}", self.command)))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A hook that does not read its input is its own business; its exit code decides.
            let _ = stdin.write_all(prompt.as_bytes()).await;
        }
        let out = tokio::time::timeout(self.timeout, child.wait_with_output())
            .await
            .map_err(|_| unavailable(format!("no answer within {:?}", self.timeout)))?
            .map_err(|e| unavailable(e.to_string()))?;
        match out.status.code() {
            Some(0) => Ok(()),
            Some(1) => {
                let text = String::from_utf8_lossy(&out.stdout);
                let reason = text.lines().next().map(str::trim).filter(|l| !l.is_empty());
                Err(ApiError::invalid(
                    "prompt_refused",
                    format!(
                        "this prompt was refused by the server's content check{}",
                        reason.map(|r| format!(": {r}")).unwrap_or_default()
                    ),
                ))
            }
            other => Err(unavailable(format!("exit status {other:?}"))),
        }
    }
}

/// Length bounds and secrets. `redactor` knows token shapes and this host's secret values.
pub fn check_prompt(
    prompt: &str,
    bounds: (usize, usize),
    redactor: &wright_sandbox::Redactor,
    asked: Asked,
) -> Result<(), ApiError> {
    let chars = prompt.trim().chars().count();
    let (min, max) = bounds;
    if chars < min || chars > max {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "prompt_length",
            format!("the prompt has {chars} characters; say what to build in {min} to {max}"),
        ));
    }
    if redactor.redact(prompt) != prompt {
        return Err(ApiError::invalid(
            "prompt_secret",
            "the prompt holds something that looks like a secret (an API key, token, password in a URL or private key); \
             remove it and send it again: wright never sends secrets to a model",
        ));
    }
    if asks_for_credentials(prompt, asked) {
        return Err(ApiError::invalid(
            "prompt_credentials",
            "the prompt asks to put your own password, key or token into the app; never share real credentials \
             with a model or write them into code. Describe the feature instead (\"a login form that checks a password\"), \
             and keep real secrets in the server's settings",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> wright_sandbox::Redactor {
        wright_sandbox::Redactor::new(["hunter2-very-secret".to_string()], None)
    }

    #[test]
    fn length_and_secrets() {
        let r = redactor();
        assert!(check_prompt("a countdown timer", (10, 2000), &r, Asked::Build).is_ok());
        assert_eq!(check_prompt("timer", (10, 2000), &r, Asked::Build).unwrap_err().code, "prompt_length");
        assert_eq!(check_prompt(&"x".repeat(2001), (10, 2000), &r, Asked::Build).unwrap_err().code, "prompt_length");
        let key = "a todo app using sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z please";
        assert_eq!(check_prompt(key, (10, 2000), &r, Asked::Build).unwrap_err().code, "prompt_secret");
        assert_eq!(
            check_prompt("use hunter2-very-secret as the password", (10, 2000), &r, Asked::Build).unwrap_err().code,
            "prompt_secret"
        );
        // Characters, not bytes.
        assert!(check_prompt("ação ação ação", (10, 14), &r, Asked::Build).is_ok());
    }

    #[test]
    fn a_prompt_that_asks_to_embed_credentials_is_refused_and_one_about_the_feature_is_not() {
        let r = redactor();
        for asks in [
            "a login page; use my password hunter2 for the admin",
            "a dashboard that calls the weather API with my API key",
            "a bot, the token is ab12cd34ef56",
            "password: s3cr3t! and user admin",
            "um site que usa minha senha para entrar",
            "a script with our credentials built in",
            "the api_key = ABCD1234EFGH",
        ] {
            assert_eq!(
                check_prompt(asks, (10, 2000), &r, Asked::Build).unwrap_err().code,
                "prompt_credentials",
                "{asks}"
            );
        }
        for feature in [
            "a password strength checker",
            "a login form with a password field and a show/hide button",
            "a page that generates strong passwords of 16 characters",
            "a password is at least 8 characters: show a meter",
            "a token counter for my essays",
            "my password-protected diary, with a lock screen",
            "um gerador de senhas fortes",
            "explain what an API key is, with a quiz",
        ] {
            assert!(check_prompt(feature, (10, 2000), &r, Asked::Build).is_ok(), "{feature}");
        }
        // A chat question about one's own password is fair; giving it is not.
        assert!(check_prompt("how do I reset my password on Linux?", (1, 2000), &r, Asked::Chat).is_ok());
        let given = check_prompt("my password is hunter2, is it strong?", (1, 2000), &r, Asked::Chat);
        assert_eq!(given.unwrap_err().code, "prompt_credentials");
    }

    #[tokio::test]
    async fn moderation_allows_refuses_and_fails_closed() {
        let m = |c: &str| Moderation { command: c.into(), timeout: Duration::from_secs(5) };
        assert!(m("cat >/dev/null").check("fine").await.is_ok());
        let refused = m("grep -q bomb && { echo 'weapons'; exit 1; } || exit 0").check("make a bomb").await;
        let e = refused.unwrap_err();
        assert_eq!((e.code, e.message.ends_with("weapons")), ("prompt_refused", true));
        assert_eq!(m("exit 7").check("x").await.unwrap_err().status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(m("/no/such/program").check("x").await.unwrap_err().status, StatusCode::SERVICE_UNAVAILABLE);
        let slow = Moderation { command: "sleep 5".into(), timeout: Duration::from_millis(200) };
        assert_eq!(slow.check("x").await.unwrap_err().code, "moderation_unavailable");
    }
}
