//! What a declared package costs a Python, Rust or Go build, measured from outside: the real
//! `wright run` binary, a scripted model that writes a small program depending on one package
//! (and its tests), and the real toolchains in the sandbox.
//!
//! Per kind: a build with an empty package cache (cold: the host's tool fetches the package),
//! then a build with the cache filled (warm); each timed whole (process start to exit) and by
//! its `packages_ready` event (fetch and offline install). Then 20 more builds share the cache,
//! and its size is read.
//!
//! Packages: Python `six==1.16.0` and Rust `itoa = "1"` from their registries; Go's module
//! proxy is not reachable here, so Go's package comes from a local proxy folder in the real
//! GOPROXY layout (`GOPROXY=file://…`), which the host's `go` fetches from.
//!
//! Run: `cargo bench -p wright-cli --bench packages`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a panic is the report
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

#[path = "../tests/support/mod.rs"]
mod support;

use serde_json::json;
use std::path::Path;
use std::time::Instant;
use support::{MockLlm, Run, Turn, wright_in};

const BUILDS: usize = 20;

struct Kind {
    name: &'static str,
    files: Vec<(&'static str, String)>,
}

fn python() -> Kind {
    Kind {
        name: "python",
        files: vec![
            ("requirements.txt", "six==1.16.0\n".into()),
            ("shout.py", "import six\n\n\ndef shout(text):\n    return six.text_type(text).upper()\n".into()),
            (
                "main.py",
                "import argparse\nfrom shout import shout\n\nif __name__ == '__main__':\n    p = argparse.ArgumentParser(description='Shout.')\n    p.add_argument('text')\n    print(shout(p.parse_args().text))\n"
                    .into(),
            ),
            ("tests/test_shout.py", "from shout import shout\n\n\ndef test_shout():\n    assert shout('hi') == 'HI'\n".into()),
        ],
    }
}

fn rust() -> Kind {
    Kind {
        name: "rust",
        files: vec![
            ("Cargo.toml", "[package]\nname = \"digits\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nitoa = \"1\"\n".into()),
            (
                "src/lib.rs",
                "pub fn digits(n: u64) -> String {\n    itoa::Buffer::new().format(n).to_string()\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn formats() {\n        assert_eq!(super::digits(42), \"42\");\n    }\n}\n"
                    .into(),
            ),
        ],
    }
}

fn go() -> Kind {
    Kind {
        name: "go",
        files: vec![
            ("go.mod", "module shout\n\ngo 1.19\n\nrequire example.com/upper v1.0.0\n".into()),
            ("shout.go", "package shout\n\nimport \"example.com/upper\"\n\nfunc Shout(s string) string { return upper.Up(s) }\n".into()),
            (
                "shout_test.go",
                "package shout\n\nimport \"testing\"\n\nfunc TestShout(t *testing.T) {\n\tif Shout(\"hi\") != \"HI\" {\n\t\tt.Fatal(Shout(\"hi\"))\n\t}\n}\n".into(),
            ),
        ],
    }
}

/// A local module proxy (GOPROXY's file layout) serving `example.com/upper v1.0.0`.
fn go_proxy(dir: &Path) {
    let v = dir.join("example.com/upper/@v");
    std::fs::create_dir_all(&v).unwrap();
    std::fs::write(v.join("list"), "v1.0.0\n").unwrap();
    std::fs::write(v.join("v1.0.0.info"), r#"{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}"#).unwrap();
    let module = "module example.com/upper\n\ngo 1.19\n";
    std::fs::write(v.join("v1.0.0.mod"), module).unwrap();
    let zip = std::fs::File::create(v.join("v1.0.0.zip")).unwrap();
    let mut w = zip::ZipWriter::new(zip);
    let opts = zip::write::SimpleFileOptions::default();
    for (name, body) in [
        ("go.mod", module),
        (
            "upper.go",
            "package upper\n\nimport \"strings\"\n\n// Up upper-cases s.\nfunc Up(s string) string { return strings.ToUpper(s) }\n",
        ),
    ] {
        use std::io::Write;
        w.start_file(format!("example.com/upper@v1.0.0/{name}"), opts).unwrap();
        w.write_all(body.as_bytes()).unwrap();
    }
    w.finish().unwrap();
}

/// One build of `kind` with `cache` as its package cache; (seconds, its packages_ready event).
async fn build(kind: &Kind, cache: &Path, env: &[(&str, &str)]) -> (f64, serde_json::Value) {
    let writes: Vec<(&str, serde_json::Value)> =
        kind.files.iter().map(|(p, c)| ("createFile", json!({"path": p, "content": c}))).collect();
    let mock = MockLlm::start(vec![Turn::calls(&writes), Turn::text("Done.")]).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wright.toml"), format!("package_cache = {:?}\n", cache.to_string_lossy())).unwrap();
    let started = Instant::now();
    let run: Run =
        wright_in(dir, "openai", &mock.base_url, "a small program with one package", &["--template", kind.name], env)
            .await;
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(run.code, 0, "{} build failed:\n{}\n{}", kind.name, run.stderr, run.stdout);
    let ready = run.of_type("packages_ready").first().map(|e| (*e).clone()).unwrap_or_default();
    (secs, ready)
}

fn size(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return 0 };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path).unwrap().flatten().map(|e| size(&e.path())).sum()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let proxy = tempfile::tempdir().unwrap();
    go_proxy(proxy.path());
    let goproxy = format!("file://{}", proxy.path().display());
    let go_env = [("GOPROXY", goproxy.as_str()), ("GOSUMDB", "off"), ("GOFLAGS", "-mod=mod")];
    println!(
        "| kind | cold build | its fetch + install | warm build | its install | cache after {BUILDS} more builds |"
    );
    println!("|---|---|---|---|---|---|");
    for kind in [python(), rust(), go()] {
        let env: &[(&str, &str)] = if kind.name == "go" { &go_env } else { &[] };
        let cache = tempfile::tempdir().unwrap();
        let (cold, cold_ready) = build(&kind, cache.path(), env).await;
        let (warm, warm_ready) = build(&kind, cache.path(), env).await;
        assert_eq!(cold_ready["fetched"], true, "{cold_ready}");
        assert_eq!(warm_ready["fetched"], false, "{warm_ready}");
        for _ in 0..BUILDS {
            build(&kind, cache.path(), env).await;
        }
        let ms = |e: &serde_json::Value| e["duration_ms"].as_u64().unwrap_or(0) as f64 / 1000.0;
        println!(
            "| {} | {cold:.1} s | {:.1} s | {warm:.1} s | {:.1} s | {:.2} MiB |",
            kind.name,
            ms(&cold_ready),
            ms(&warm_ready),
            size(cache.path()) as f64 / (1 << 20) as f64
        );
    }
}
