//! wright-browser: open a generated web app in headless Chromium and report what breaks for the
//! person who would open it.
//!
//! A page can parse, have every asset and pass its tests, and still throw a `TypeError` on load,
//! fail a request, render nothing, or crash when a button is clicked. This crate loads the page
//! the way a visitor would, clicks each visible button and submits each form once, and turns
//! what goes wrong into [`Finding`]s with the file, line and column from the stack, plus a PNG
//! screenshot.
//!
//! Chromium runs inside the build's own sandbox (the same runner commands use, network denied),
//! started by a small host script that also serves the page on the sandbox's loopback and
//! carries DevTools over a Unix socket; requests to any other origin are refused through the
//! DevTools `Fetch` domain and reported. Nothing is downloaded: the browser is Debian's
//! `chromium`, found on `PATH` or through a setting ([`find_chromium`]).

mod find;
mod host;
mod inspect;
mod outside;
mod types;

pub use find::{BrowserMissing, find_chromium};
pub use host::PageSource;
pub use types::{BrowserError, BrowserMode, BrowserSettings, Finding, FindingKind, Launch, OutsideAccess, PageReport};

/// Load `source` in headless Chromium and report what breaks.
pub async fn check_page(
    settings: &BrowserSettings,
    launch: &Launch,
    source: &PageSource,
) -> Result<PageReport, BrowserError> {
    let chromium = find_chromium(settings.chromium.as_deref(), &launch.env)?;
    if !launch.confined && running_as_root() {
        return Err(BrowserError::Unconfined);
    }
    if !launch.runner.loopback_tcp() {
        return Err(BrowserError::NoLoopback);
    }
    let started = std::time::Instant::now();
    let out_of_memory = |why: String| PageReport {
        findings: vec![Finding {
            kind: FindingKind::OutOfMemory,
            message: why,
            file: None,
            line: None,
            column: None,
            during: None,
        }],
        elapsed: started.elapsed(),
        ..PageReport::default()
    };
    let host = match host::Host::start(launch, &chromium, source, settings).await {
        Ok(h) => h,
        Err(BrowserError::OutOfMemory(why)) => return Ok(out_of_memory(why)),
        Err(e) => return Err(e),
    };
    // The host's watchdog ends the check as soon as it stops the browser: what DevTools
    // would say next (a closed socket, a crashed target) explains nothing.
    let result = tokio::select! {
        r = tokio::time::timeout(settings.time_limit, inspect::inspect(&host, settings)) => Some(r),
        () = host.stopped_for_memory() => None,
    };
    let over = host.memory_overrun();
    host.stop().await;
    if let Some(why) = over {
        return Ok(out_of_memory(why));
    }
    let mut report = match result {
        Some(Ok(r)) => r?,
        Some(Err(_)) => return Err(BrowserError::Timeout(settings.time_limit)),
        None => return Err(BrowserError::Protocol("the browser stopped".into())),
    };
    report.elapsed = started.elapsed();
    Ok(report)
}

/// The check's own folder (Chromium's profile, the DevTools socket) inside a build's TMPDIR
/// `tmp`, open to the sandbox user (wright as root runs commands unprivileged); removed when
/// dropped. Builds and `wright doctor` make it the same way, so doctor fails where builds would.
pub fn check_folder(tmp: &std::path::Path) -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(tmp)?;
    let dir = tempfile::Builder::new().prefix("wb").tempdir_in(tmp)?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))?;
    Ok(dir)
}

fn running_as_root() -> bool {
    wright_sandbox::running_as_root()
}

/// Width and height of a PNG, from its header (for checks of a screenshot).
pub fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    if png.len() < 24 || &png[..8] != b"\x89PNG\r\n\x1a\n" || &png[12..16] != b"IHDR" {
        return None;
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    Some((be(&png[16..20]), be(&png[20..24])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_access_matches_host_and_port_exactly() {
        let allow = wright_egress::AllowList::parse(&["api.example.com:443", "127.0.0.1:38123", "[::1]:8080"]).unwrap();
        let o = OutsideAccess { proxy: "http://127.0.0.1:9".into(), allow };
        assert!(o.allows("https://api.example.com/v1/x?q=1"));
        assert!(o.allows("https://API.example.com:443/"));
        assert!(!o.allows("http://api.example.com/v1"), "port 80 was not allowed");
        assert!(o.allows("http://127.0.0.1:38123/data.json"));
        assert!(!o.allows("http://127.0.0.1:38124/data.json"));
        assert!(o.allows("http://[::1]:8080/"));
        assert!(!o.allows("https://user@api.example.com/"), "credentials in the URL are never let through");
        assert!(!o.allows("ws://api.example.com/"));
        assert!(!o.allows("https://api.example.com.evil.test/"));
        assert!(!o.allows("data:text/plain,hi"));
    }

    #[test]
    fn modes_parse() {
        assert_eq!(BrowserMode::parse("ON"), Some(BrowserMode::On));
        assert_eq!(BrowserMode::parse("off"), Some(BrowserMode::Off));
        assert_eq!(BrowserMode::parse(" auto "), Some(BrowserMode::Auto));
        assert_eq!(BrowserMode::parse("sometimes"), None);
    }

    #[test]
    fn findings_describe_themselves_with_their_place() {
        let f = Finding {
            kind: FindingKind::Exception,
            message: "TypeError: x is undefined".into(),
            file: Some("app.js".into()),
            line: Some(3),
            column: Some(9),
            during: Some("clicking the button \"Go\"".into()),
        };
        assert_eq!(
            f.describe(),
            "uncaught exception after clicking the button \"Go\" at app.js:3:9: TypeError: x is undefined"
        );
    }

    #[test]
    fn png_size_reads_the_header_and_refuses_other_bytes() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(1280u32.to_be_bytes());
        png.extend(800u32.to_be_bytes());
        assert_eq!(png_size(&png), Some((1280, 800)));
        assert_eq!(png_size(b"GIF89a............................"), None);
        assert_eq!(png_size(&png[..20]), None);
    }
}
