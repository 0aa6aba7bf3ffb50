//! What the proxy adds per request: the same small GET to a loopback server, direct, through
//! the forward proxy, and as a named-API call with a key added. Prints p50/p99 of each.
//! `cargo bench -p wright-egress --bench overhead` (N=2000 by default; `EGRESS_BENCH_N`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a failed unwrap is a failed run
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

use axum::Router;
use axum::routing::get;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wright_egress::{AllowList, Api, EgressPolicy, KeyPlacement, Limits, Proxy, Secret};

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

async fn measure(client: &reqwest::Client, url: &str, n: usize) -> (f64, f64) {
    for _ in 0..50 {
        client.get(url).send().await.unwrap().bytes().await.unwrap();
    }
    let mut t = Vec::with_capacity(n);
    for _ in 0..n {
        let s = Instant::now();
        let res = client.get(url).send().await.unwrap();
        assert!(res.status().is_success());
        res.bytes().await.unwrap();
        t.push(s.elapsed());
    }
    t.sort();
    (pct(&t, 0.5), pct(&t, 0.99))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n: usize = std::env::var("EGRESS_BENCH_N").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let app = Router::new().fallback(get(|| async { r#"{"today":"sunny","high":24}"# }));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    let api = Api::new(
        "weather",
        &format!("http://127.0.0.1:{port}/v1"),
        Secret::new("bench-key-123456"),
        KeyPlacement::query("weather", "appid").unwrap(),
    )
    .unwrap();
    let allow = AllowList::parse(&[format!("127.0.0.1:{port}")]).unwrap();
    let limits = Limits { max_requests: u64::MAX, max_bytes: u64::MAX };
    let dir = tempfile::tempdir().unwrap();
    let proxy =
        Proxy::start(EgressPolicy::new(allow, vec![api], limits).unwrap(), dir.path(), Arc::new(|_| {})).unwrap();
    let direct = reqwest::Client::builder().no_proxy().build().unwrap();
    let proxied = reqwest::Client::builder().proxy(reqwest::Proxy::http(proxy.proxy_url()).unwrap()).build().unwrap();
    let mut token = reqwest::header::HeaderMap::new();
    token.insert(reqwest::header::PROXY_AUTHORIZATION, format!("Bearer {}", proxy.token()).parse().unwrap());
    let with_token = reqwest::Client::builder().no_proxy().default_headers(token).build().unwrap();
    let target = format!("http://127.0.0.1:{port}/forecast");
    let (d50, d99) = measure(&direct, &target, n).await;
    let (p50, p99) = measure(&proxied, &target, n).await;
    let (a50, a99) = measure(&with_token, &format!("http://{}/_api/weather/forecast", proxy.tcp_addr()), n).await;
    println!("egress proxy overhead, {n} sequential GETs on loopback (µs):");
    println!("  direct              p50 {d50:7.0}  p99 {d99:7.0}");
    println!("  forward proxy       p50 {p50:7.0}  p99 {p99:7.0}  (+{:.0} at p50)", p50 - d50);
    println!("  named API (+ key)   p50 {a50:7.0}  p99 {a99:7.0}  (+{:.0} at p50)", a50 - d50);
}
