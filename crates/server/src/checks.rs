//! What a prompt must pass before a build is queued: its length, no secrets in it (a key pasted
//! by mistake must not go to a model), and the optional moderation hook, which fails closed.

use crate::error::ApiError;
use axum::http::StatusCode;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

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
pub fn check_prompt(prompt: &str, bounds: (usize, usize), redactor: &wright_sandbox::Redactor) -> Result<(), ApiError> {
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
        assert!(check_prompt("a countdown timer", (10, 2000), &r).is_ok());
        assert_eq!(check_prompt("timer", (10, 2000), &r).unwrap_err().code, "prompt_length");
        assert_eq!(check_prompt(&"x".repeat(2001), (10, 2000), &r).unwrap_err().code, "prompt_length");
        let key = "a todo app using sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z please";
        assert_eq!(check_prompt(key, (10, 2000), &r).unwrap_err().code, "prompt_secret");
        assert_eq!(
            check_prompt("use hunter2-very-secret as the password", (10, 2000), &r).unwrap_err().code,
            "prompt_secret"
        );
        // Characters, not bytes.
        assert!(check_prompt("ação ação ação", (10, 14), &r).is_ok());
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
