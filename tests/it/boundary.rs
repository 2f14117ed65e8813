//! The loopback boundary (§7), probed over a real socket: tokens on every route in the
//! table, foreign hosts and origins, and the security headers.

use skald::http::auth::{Access, Credential};
use skald::http::routes;

use crate::support::{Server, raw};

/// The table's path with any `{param}` filled in, so the request reaches the route.
fn concrete(path: &str) -> String {
    path.split('/').map(|seg| if seg.starts_with('{') { "x" } else { seg }).collect::<Vec<_>>().join("/")
}

#[tokio::test]
async fn every_api_route_refuses_a_missing_or_wrong_token() {
    let server = Server::start();
    let table = routes::table();
    assert!(table.len() >= 3, "the table lists the routes");
    for route in &table {
        let path = concrete(route.path);
        let host = format!("Host: 127.0.0.1:{}", server.port);
        let bad_headers = [
            String::new(),
            "Authorization: Bearer wrong".to_owned(),
            format!("Authorization: Bearer {}x", server.token),
            format!("Authorization: Basic {}", server.token),
            "Sec-WebSocket-Protocol: skald.v1, skald.bearer.d3Jvbmc".to_owned(),
        ];
        // The launch token is no session: it opens only the routes marked Launch.
        let launch_token = format!("Authorization: Bearer {}", server.token);
        let bad_headers = bad_headers
            .into_iter()
            .chain((!matches!(route.access, Access::Launch | Access::LaunchOrSession)).then_some(launch_token));
        for bad in bad_headers {
            let head = format!("{} {path} HTTP/1.1\r\n{host}\r\nContent-Length: 0\r\n{bad}", route.method);
            let response = raw(server.port, &head).await;
            assert_eq!(response.status, 401, "{} {path} with {bad:?}", route.method);
            let body: serde_json::Value = serde_json::from_str(&response.body).expect("JSON error body");
            assert_eq!(body["error"]["code"], "unauthorized");
            assert!(response.header("www-authenticate").is_some_and(|v| v.starts_with("Bearer")));
        }
    }
}

#[tokio::test]
async fn the_launch_token_opens_the_launch_routes() {
    let server = Server::start();
    let launch_reads = routes::table().into_iter().filter(|r| {
        r.method == reqwest::Method::GET
            && r.access == Access::Launch
            && r.credential == Credential::AuthorizationHeader
    });
    for route in launch_reads {
        let response = server.get(route.path).await;
        assert_eq!(response.status(), 200, "{}", route.path);
    }
}

#[tokio::test]
async fn foreign_hosts_are_refused_even_with_the_right_token() {
    let server = Server::start();
    let wrong_port = format!("127.0.0.1:{}", server.port.wrapping_add(1));
    for host in [
        "evil.example",
        "127.0.0.1.nip.io",
        &format!("127.0.0.1.nip.io:{}", server.port),
        &wrong_port,
        "127.0.0.1",
        "0.0.0.0",
    ] {
        for path in ["/api/health", "/"] {
            let head = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}", server.token);
            let response = raw(server.port, &head).await;
            assert_eq!(response.status, 403, "Host: {host} {path}");
            assert!(response.body.contains("forbidden_host"), "{}", response.body);
            assert!(response.header("content-security-policy").is_some(), "headers on refusals too");
        }
    }
}

#[tokio::test]
async fn localhost_on_our_port_is_accepted() {
    let server = Server::start();
    let head = format!(
        "GET /api/health HTTP/1.1\r\nHost: localhost:{}\r\nAuthorization: Bearer {}",
        server.port, server.token
    );
    assert_eq!(raw(server.port, &head).await.status, 200);
}

#[tokio::test]
async fn a_foreign_origin_is_refused_on_get_post_and_websocket_upgrade() {
    let server = Server::start();
    let host = format!("Host: 127.0.0.1:{}", server.port);
    let auth = format!("Authorization: Bearer {}", server.token);
    let ws_bearer = skald::http::auth::ws_bearer_protocol(&server.token);
    let requests = [
        format!("GET /api/health HTTP/1.1\r\n{host}\r\n{auth}"),
        format!("POST /api/health HTTP/1.1\r\n{host}\r\n{auth}\r\nContent-Type: application/json\r\nContent-Length: 0"),
        format!("GET / HTTP/1.1\r\n{host}"),
        format!(
            "GET /api/ws HTTP/1.1\r\n{host}\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: skald.v1, {ws_bearer}"
        ),
    ];
    for request in &requests {
        for origin in ["https://evil.example", "null", &format!("http://127.0.0.1:{}", server.port + 1)] {
            let response = raw(server.port, &format!("{request}\r\nOrigin: {origin}")).await;
            assert_eq!(response.status, 403, "Origin {origin} on {}", request.lines().next().unwrap());
            assert!(response.body.contains("forbidden_origin"), "{}", response.body);
        }
    }
    // Our own origin passes.
    let own = format!("GET /api/health HTTP/1.1\r\n{host}\r\n{auth}\r\nOrigin: http://127.0.0.1:{}", server.port);
    assert_eq!(raw(server.port, &own).await.status, 200);
}

#[tokio::test]
async fn a_cross_site_fetch_of_the_api_is_refused() {
    let server = Server::start();
    let head = format!(
        "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\nSec-Fetch-Site: cross-site",
        server.port, server.token
    );
    assert_eq!(raw(server.port, &head).await.status, 403);
}

#[tokio::test]
async fn security_headers_are_on_every_response_and_no_cors_is_granted() {
    let server = Server::start();
    let host = format!("Host: 127.0.0.1:{}", server.port);
    let probes = [
        format!("GET / HTTP/1.1\r\n{host}"),
        format!("GET /api/health HTTP/1.1\r\n{host}\r\nAuthorization: Bearer {}", server.token),
        format!("GET /api/health HTTP/1.1\r\n{host}"),
        format!("GET /api/no-such-route HTTP/1.1\r\n{host}\r\nAuthorization: Bearer {}", server.token),
        format!(
            "OPTIONS /api/health HTTP/1.1\r\n{host}\r\nOrigin: http://127.0.0.1:{}\r\nAccess-Control-Request-Method: POST",
            server.port
        ),
    ];
    for probe in &probes {
        let response = raw(server.port, probe).await;
        let what = probe.lines().next().unwrap();
        let csp = response.header("content-security-policy").unwrap_or_else(|| panic!("CSP on {what}"));
        assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"), "{csp}");
        assert!(!csp.contains("unsafe-eval") && !csp.contains("unsafe-inline"), "{csp}");
        assert!(
            csp.contains(&format!(
                "connect-src 'self' ws://127.0.0.1:{port} ws://localhost:{port};",
                port = server.port
            )),
            "{csp}"
        );
        assert_eq!(response.header("x-content-type-options"), Some("nosniff"), "{what}");
        assert_eq!(response.header("referrer-policy"), Some("no-referrer"), "{what}");
        assert!(response.header("access-control-allow-origin").is_none(), "{what}");
        assert!(response.header("access-control-allow-credentials").is_none(), "{what}");
    }
}

#[tokio::test]
async fn api_answers_are_not_cached_and_unknown_api_routes_get_json_404() {
    let server = Server::start();
    let response = server.get("/api/health").await;
    assert_eq!(response.headers()["cache-control"], "no-store");
    let missing = server.get("/api/no-such-route").await;
    assert_eq!(missing.status(), 404);
    let body: serde_json::Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_found");
}

#[tokio::test]
async fn the_page_is_served_without_a_token() {
    let server = Server::start();
    let page = reqwest::get(server.url("/")).await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let html = page.text().await.unwrap();
    assert!(html.contains("<skald-app"), "the page mounts the app element");
    // A client-side route gets the page; a missing asset does not.
    assert_eq!(reqwest::get(server.url("/settings")).await.unwrap().status(), 200);
    assert_eq!(reqwest::get(server.url("/assets/missing.js")).await.unwrap().status(), 404);
}

#[tokio::test]
async fn a_token_in_the_query_string_is_refused() {
    let server = Server::start();
    let response = reqwest::get(server.url(&format!("/api/health?token={}", server.token))).await.unwrap();
    assert_eq!(response.status(), 401);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "token_in_url");
}

#[tokio::test]
async fn two_host_headers_are_a_bad_request_whichever_comes_first() {
    let server = Server::start();
    let own = format!("Host: 127.0.0.1:{}", server.port);
    for hosts in
        [format!("{own}\r\nHost: evil.example"), format!("Host: evil.example\r\n{own}"), format!("{own}\r\n{own}")]
    {
        let response = raw(server.port, &format!("GET /api/health HTTP/1.1\r\n{hosts}")).await;
        assert_eq!(response.status, 400, "{hosts:?}");
        assert!(response.body.contains("repeated_header"), "{}", response.body);
    }
    let auth = format!("Authorization: Bearer {}", server.token);
    let twice = format!("GET /api/instance HTTP/1.1\r\n{own}\r\n{auth}\r\nAuthorization: Bearer other");
    assert_eq!(raw(server.port, &twice).await.status, 400);
    assert_eq!(raw(server.port, &format!("GET /api/health HTTP/1.1\r\n{own}\r\n{auth}")).await.status, 200);
}
