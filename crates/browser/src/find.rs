//! Finding the Chromium to run: a configured path, else the usual names on `PATH`.

use std::path::{Path, PathBuf};

/// Names Chromium goes by on Linux distributions, most specific first.
const NAMES: &[&str] = &["chromium", "chromium-browser", "google-chrome-stable", "google-chrome", "chrome"];

/// Where a distribution's launcher script keeps the real binary. The script reads
/// configuration from `/etc` that the sandbox does not mount, so the binary is run directly.
const BEHIND_SCRIPTS: &[&str] = &["/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser"];

/// No Chromium to run, and how to get one.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BrowserMissing(pub String);

/// The Chromium binary: `configured` if given (it must exist), else the first of the usual
/// names on the `PATH` in `env`. A launcher script is resolved to the binary behind it.
pub fn find_chromium(configured: Option<&Path>, env: &[(String, String)]) -> Result<PathBuf, BrowserMissing> {
    let found = match configured {
        Some(p) if p.is_file() => p.to_path_buf(),
        Some(p) => {
            return Err(BrowserMissing(format!(
                "the configured browser {} does not exist; fix `[browser] chromium` in wright.toml or \
                 --chromium, or install Debian's package: apt-get install chromium",
                p.display()
            )));
        }
        None => {
            let path = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str()).unwrap_or("/usr/bin:/bin");
            NAMES
                .iter()
                .flat_map(|n| std::env::split_paths(path).map(move |d| d.join(n)))
                .find(|p| p.is_file())
                .ok_or_else(|| {
                    BrowserMissing(
                        "no Chromium found on PATH (looked for chromium, chromium-browser, google-chrome); \
                         install Debian's package (apt-get install chromium) or set `[browser] chromium` \
                         in wright.toml"
                            .into(),
                    )
                })?
        }
    };
    Ok(behind_script(&found).unwrap_or(found))
}

fn behind_script(p: &Path) -> Option<PathBuf> {
    let head = std::fs::read(p).ok().map(|b| b.iter().take(2).copied().collect::<Vec<u8>>())?;
    if head != b"#!" {
        return None;
    }
    BEHIND_SCRIPTS.iter().map(PathBuf::from).find(|b| b.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_path_that_is_missing_says_how_to_fix_it() {
        let e = find_chromium(Some(Path::new("/nowhere/chromium")), &[]).unwrap_err();
        assert!(e.0.contains("/nowhere/chromium") && e.0.contains("apt-get install chromium"), "{e}");
    }

    #[test]
    fn names_are_found_on_the_given_path_only() {
        let dir = tempfile::tempdir().unwrap();
        let env = vec![("PATH".to_string(), dir.path().display().to_string())];
        assert!(find_chromium(None, &env).is_err());
        let bin = dir.path().join("chromium-browser");
        std::fs::write(&bin, b"\x7fELF").unwrap();
        assert_eq!(find_chromium(None, &env).unwrap(), bin);
    }
}
