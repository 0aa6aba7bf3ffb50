//! The proxy against real servers on loopback: one allowed, one not; a CONNECT tunnel; the
//! key added on the way out and found nowhere on the way back; the limits.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use axum::Router;
use axum::extract::Request;
use axum::routing::{any, get};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use wright_egress::{AllowList, Api, EgressPolicy, KeyPlacement, Limits, OutsideRequest, Proxy, Secret, Sink};

const KEY: &str = "wk-5e1ect-7733-secret";

/// What an upstream saw: the path with its query, and the headers, per request.
type Seen = Arc<Mutex<Vec<(String, HashMap<String, String>)>>>;

async fn upstream(name: &'static str) -> (u16, Seen) {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let app = Router::new().route("/big", get(|| async { "x".repeat(50_000) })).fallback(any(move |req: Request| {
        let s = s.clone();
        async move {
            let path = req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
            let headers = req
                .headers()
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
                .collect::<HashMap<_, _>>();
            s.lock().unwrap().push((path.clone(), headers));
            // An echoing upstream, as error pages often are: it repeats the query back.
            format!("{name} answers {path}")
        }
    }));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    (port, seen)
}

fn collecting() -> (Sink, Arc<Mutex<Vec<OutsideRequest>>>) {
    let events: Arc<Mutex<Vec<OutsideRequest>>> = Arc::default();
    let e = events.clone();
    (Arc::new(move |r| e.lock().unwrap().push(r)), events)
}

fn start(policy: EgressPolicy) -> (Proxy, Arc<Mutex<Vec<OutsideRequest>>>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (sink, events) = collecting();
    let proxy = Proxy::start(policy, dir.path(), sink).unwrap();
    (proxy, events, dir)
}

/// A host-side client through the proxy's loopback port, with the build's token.
fn through(proxy: &Proxy) -> reqwest::Client {
    reqwest::Client::builder().proxy(reqwest::Proxy::http(proxy.proxy_url()).unwrap()).build().unwrap()
}

/// A client that calls the proxy's port directly (`/_api/…`) with the build's token.
fn with_token(proxy: &Proxy) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    let value = format!("Bearer {}", proxy.token());
    headers.insert(reqwest::header::PROXY_AUTHORIZATION, value.parse().unwrap());
    reqwest::Client::builder().default_headers(headers).build().unwrap()
}

#[tokio::test]
async fn allowed_hosts_pass_and_others_get_403_and_both_are_reported() {
    let (ok_port, ok_seen) = upstream("allowed").await;
    let (no_port, no_seen) = upstream("other").await;
    let allow = AllowList::parse(&[format!("127.0.0.1:{ok_port}")]).unwrap();
    let (proxy, events, _dir) = start(EgressPolicy::new(allow, vec![], Limits::default()).unwrap());
    let client = through(&proxy);

    let res = client.get(format!("http://127.0.0.1:{ok_port}/hello?x=1")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.unwrap(), "allowed answers /hello?x=1");

    let res = client.post(format!("http://127.0.0.1:{no_port}/steal")).body("data").send().await.unwrap();
    assert_eq!(res.status(), 403);
    let body = res.text().await.unwrap();
    assert!(body.contains("not on this build's list of allowed hosts"), "{body}");
    assert!(no_seen.lock().unwrap().is_empty(), "the refused server never heard of it");
    assert_eq!(ok_seen.lock().unwrap().len(), 1);

    let ev = events.lock().unwrap().clone();
    assert_eq!(ev.len(), 2, "{ev:?}");
    assert_eq!(
        (ev[0].host.clone(), ev[0].method.as_str(), ev[0].status, ev[0].allowed),
        (format!("127.0.0.1:{ok_port}"), "GET", 200, true)
    );
    assert_eq!(ev[0].bytes, "allowed answers /hello?x=1".len() as u64);
    assert_eq!((ev[1].method.as_str(), ev[1].status, ev[1].allowed), ("POST", 403, false));
    assert!(ev[1].reason.as_deref().unwrap().contains(&format!("127.0.0.1:{no_port}")));
}

#[tokio::test]
async fn a_connect_tunnel_reaches_an_allowed_host_over_the_unix_socket_and_others_are_refused() {
    let (ok_port, _) = upstream("tunnelled").await;
    let (no_port, _) = upstream("other").await;
    let allow = AllowList::parse(&[format!("127.0.0.1:{ok_port}")]).unwrap();
    let (proxy, events, _dir) = start(EgressPolicy::new(allow, vec![], Limits::default()).unwrap());
    let socket = proxy.short_socket_path();
    let ev = tokio::task::spawn_blocking(move || {
        let ask = |port: u16| {
            let mut s = std::os::unix::net::UnixStream::connect(&socket).unwrap();
            write!(s, "CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").unwrap();
            let mut head = [0u8; 12];
            s.read_exact(&mut head).unwrap();
            (s, String::from_utf8_lossy(&head).to_string())
        };
        let (mut s, head) = ask(ok_port);
        assert_eq!(head, "HTTP/1.1 200");
        // Skip the rest of the proxy's answer head.
        let mut tail = Vec::new();
        let mut b = [0u8; 1];
        while !tail.ends_with(b"\r\n\r\n") {
            s.read_exact(&mut b).unwrap();
            tail.push(b[0]);
        }
        write!(s, "GET /through HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert!(answer.ends_with("tunnelled answers /through"), "{answer}");
        let (_s, head) = ask(no_port);
        assert_eq!(head, "HTTP/1.1 403");
        answer.len()
    })
    .await
    .unwrap();
    // The tunnel is reported when it closes.
    for _ in 0..50 {
        if events.lock().unwrap().len() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let got = events.lock().unwrap().clone();
    let tunnel = got.iter().find(|e| e.allowed).unwrap();
    assert_eq!(tunnel.method, "CONNECT");
    assert!(tunnel.bytes as usize > ev, "both directions are counted: {} vs {ev}", tunnel.bytes);
    let refused = got.iter().find(|e| !e.allowed).unwrap();
    assert_eq!((refused.status, refused.host.clone()), (403, format!("127.0.0.1:{no_port}")));
}

#[tokio::test]
async fn a_named_api_gets_its_key_upstream_and_nobody_else_sees_it() {
    let (port, seen) = upstream("weather").await;
    let apis = vec![
        Api::new(
            "weather",
            &format!("http://127.0.0.1:{port}/v1"),
            Secret::new(KEY),
            KeyPlacement::query("weather", "appid").unwrap(),
        )
        .unwrap(),
        Api::new(
            "maps",
            &format!("http://127.0.0.1:{port}/maps/"),
            Secret::new(KEY),
            KeyPlacement::header("maps", "Authorization: Bearer {key}").unwrap(),
        )
        .unwrap(),
    ];
    // No host is allowed: the APIs are reachable only by name.
    let (proxy, events, _dir) = start(EgressPolicy::new(AllowList::default(), apis, Limits::default()).unwrap());
    let base = format!("http://{}", proxy.tcp_addr());
    let plain = with_token(&proxy);

    let res = plain.get(format!("{base}/_api/weather/forecast?city=Lisboa")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let body = res.text().await.unwrap();
    assert!(body.starts_with("weather answers /v1/forecast?city=Lisboa&appid="), "{body}");
    assert!(!body.contains(KEY), "the echoed key is taken out: {body}");
    assert!(body.contains("[redacted]"));

    let res = plain
        .get(format!("{base}/_api/maps/tiles/1"))
        .header("authorization", "Bearer forged-by-the-sandbox")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.unwrap(), "weather answers /maps/tiles/1");

    let res = plain.get(format!("{base}/_api/nope/x")).send().await.unwrap();
    assert_eq!(res.status(), 404);
    let res = plain.get(format!("{base}/_api/weather/../../admin")).send().await.unwrap();
    assert!(res.status() == 400 || res.status() == 200, "either refused, or normalised by the client under /v1");

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0].0, format!("/v1/forecast?city=Lisboa&appid={KEY}"), "the upstream got the key in the query");
    assert_eq!(seen[1].1["authorization"], format!("Bearer {KEY}"), "and in the header, replacing the forged one");
    let reported = format!("{:?}", events.lock().unwrap());
    assert!(!reported.contains(KEY), "{reported}");
    let ev = events.lock().unwrap().clone();
    assert_eq!(ev[0].api.as_deref(), Some("weather"));
    assert_eq!(ev[0].host, format!("127.0.0.1:{port}"));
    assert!(ev.iter().any(|e| e.api.as_deref() == Some("nope") && !e.allowed));
}

#[tokio::test]
async fn past_the_limits_requests_are_refused_and_reported() {
    let (port, seen) = upstream("limited").await;
    let allow = AllowList::parse(&[format!("127.0.0.1:{port}")]).unwrap();
    let limits = Limits { max_requests: 2, max_bytes: 20_000 };
    let (proxy, events, _dir) = start(EgressPolicy::new(allow.clone(), vec![], limits).unwrap());
    let client = through(&proxy);
    for _ in 0..2 {
        assert_eq!(client.get(format!("http://127.0.0.1:{port}/a")).send().await.unwrap().status(), 200);
    }
    let res = client.get(format!("http://127.0.0.1:{port}/a")).send().await.unwrap();
    assert_eq!(res.status(), 429);
    assert!(res.text().await.unwrap().contains("made its 2 outside requests"));
    assert_eq!(seen.lock().unwrap().len(), 2);
    let last = events.lock().unwrap().last().cloned().unwrap();
    assert!(!last.allowed && last.status == 429, "{last:?}");

    // Bytes: a 50 kB answer does not fit in 20 kB.
    let (proxy, events, _dir) = start(EgressPolicy::new(allow, vec![], limits).unwrap());
    let res = through(&proxy).get(format!("http://127.0.0.1:{port}/big")).send().await.unwrap();
    assert_eq!(res.status(), 502);
    assert!(res.text().await.unwrap().contains("budget"));
    let last = events.lock().unwrap().last().cloned().unwrap();
    assert!(!last.allowed && last.reason.unwrap().contains("budget"));
    // And once it is spent, nothing more goes out.
    let res = through(&proxy).get(format!("http://127.0.0.1:{port}/a")).send().await.unwrap();
    assert_eq!(res.status(), 429);
}

#[tokio::test]
async fn the_proxy_stops_when_dropped_and_a_long_folder_is_fine() {
    let top = tempfile::tempdir().unwrap();
    let mut long = top.path().to_path_buf();
    for _ in 0..5 {
        long.push("uma pasta de dados bem comprida 0123456789");
    }
    std::fs::create_dir_all(&long).unwrap();
    let (sink, _) = collecting();
    let proxy = Proxy::start(EgressPolicy::default(), &long, sink).unwrap();
    assert!(proxy.socket_path().as_os_str().len() > 200);
    assert!(proxy.socket_path().exists());
    let addr = proxy.tcp_addr();
    let res = with_token(&proxy).get(format!("http://{addr}/")).send().await.unwrap();
    assert_eq!(res.status(), 400, "origin-form requests are told what this is");
    let path = proxy.socket_path().to_path_buf();
    drop(proxy);
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(!path.exists());
    assert!(reqwest::get(format!("http://{addr}/")).await.is_err());
}

#[tokio::test]
async fn the_loopback_port_refuses_local_processes_without_the_build_token() {
    let (port, seen) = upstream("weather").await;
    let allow = AllowList::parse(&[format!("127.0.0.1:{port}")]).unwrap();
    let apis = vec![
        Api::new(
            "weather",
            &format!("http://127.0.0.1:{port}/v1"),
            Secret::new(KEY),
            KeyPlacement::query("weather", "appid").unwrap(),
        )
        .unwrap(),
    ];
    let (proxy, events, _dir) = start(EgressPolicy::new(allow, apis, Limits::default()).unwrap());
    let addr = proxy.tcp_addr();
    let api = format!("http://{addr}/_api/weather/forecast");
    let target = format!("http://127.0.0.1:{port}/direct");

    // Another local process: no token, a wrong one, the right one spelled wrong.
    let bare = reqwest::Client::new();
    let res = bare.get(&api).send().await.unwrap();
    assert_eq!(res.status(), 403);
    assert!(res.text().await.unwrap().contains("build's token"));
    for forged in ["Bearer 0123456789abcdef0123456789abcdef", "Basic d3JpZ2h0Og==", "token"] {
        let res = bare.get(&api).header("proxy-authorization", forged).send().await.unwrap();
        assert_eq!(res.status(), 403, "{forged}");
    }
    let proxied = |url: String| reqwest::Client::builder().proxy(reqwest::Proxy::http(url).unwrap()).build().unwrap();
    let res = proxied(format!("http://{addr}")).get(&target).send().await.unwrap();
    assert_eq!(res.status(), 403, "forward requests need it too");
    let res = proxied(format!("http://wright:nope@{addr}")).get(&target).send().await.unwrap();
    assert_eq!(res.status(), 403);
    // CONNECT without it is refused before any tunnel.
    let head = tokio::task::spawn_blocking(move || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(s, "CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").unwrap();
        let mut head = [0u8; 12];
        s.read_exact(&mut head).unwrap();
        String::from_utf8_lossy(&head).to_string()
    })
    .await
    .unwrap();
    assert_eq!(head, "HTTP/1.1 403");
    assert!(seen.lock().unwrap().is_empty(), "the key was never added for a stranger");
    assert!(events.lock().unwrap().is_empty(), "strangers are not the build's requests");

    // wright's own callers carry it: as Basic credentials of the proxy URL, or as Bearer.
    assert_eq!(through(&proxy).get(&target).send().await.unwrap().status(), 200);
    assert_eq!(with_token(&proxy).get(&api).send().await.unwrap().status(), 200);
    assert_eq!(seen.lock().unwrap().len(), 2);
    assert!(proxy.proxy_url().contains(proxy.token()) && proxy.token().len() == 32);
}

#[test]
fn starting_outside_a_runtime_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let (sink, _) = collecting();
    let err = Proxy::start(EgressPolicy::default(), dir.path(), sink).err().unwrap();
    assert!(err.to_string().contains("tokio runtime"));
}
