//! The loopback boundary (§7). Every local account and every web page in every browser on
//! the machine can reach a loopback port, so before any route runs this layer refuses:
//! - a `Host` (or absolute-form authority) that is not exactly `127.0.0.1:PORT` or
//!   `localhost:PORT` — DNS rebinding points a foreign name at 127.0.0.1;
//! - an `Origin` that is present and not our own — CSRF and WebSocket hijacking;
//! - an `/api` request a browser marks `Sec-Fetch-Site: cross-site`;
//! - a request with two `Host`, `Origin` or `Authorization` headers (RFC 9112 §3.2: 400),
//!   which different parts of a stack could read differently.
//!
//! It also stamps security headers on every response, refusals included, and never sends
//! a CORS allowance. Pure checks ([`Boundary::check`]) are separate from the middleware.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::error::ApiError;

/// What this server accepts as its own name, fixed once the port is known.
#[derive(Clone)]
pub struct Boundary(Arc<Inner>);

struct Inner {
    port: u16,
    hosts: [String; 2],
    origins: [String; 2],
    csp: HeaderValue,
}

/// Why a request was refused at the boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    ForeignHost,
    ForeignOrigin,
    CrossSite,
    /// The header named came more than once.
    Repeated(&'static str),
}

impl Boundary {
    pub fn new(port: u16) -> Self {
        let hosts = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
        let origins = hosts.clone().map(|h| format!("http://{h}"));
        // No 'unsafe-eval' and no inline script; the page may talk only to this origin.
        let csp = format!(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; \
             connect-src 'self' ws://127.0.0.1:{port} ws://localhost:{port}; manifest-src 'self'; \
             base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"
        );
        let csp = HeaderValue::from_str(&csp).expect("the CSP is ASCII");
        Self(Arc::new(Inner { port, hosts, origins, csp }))
    }

    pub fn port(&self) -> u16 {
        self.0.port
    }

    /// Whether `origin` (as a browser serialises it, `http://host:port`) is ours.
    pub fn is_own_origin(&self, origin: &str) -> bool {
        self.0.origins.iter().any(|own| own.eq_ignore_ascii_case(origin))
    }

    /// Decides whether a request may pass. Pure: reads only the URI and headers.
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
        for (name, said) in
            [(header::HOST, "Host"), (header::ORIGIN, "Origin"), (header::AUTHORIZATION, "Authorization")]
        {
            if headers.get_all(name).iter().nth(1).is_some() {
                return Err(Refusal::Repeated(said));
            }
        }
        let host_ok = match headers.get(header::HOST).map(HeaderValue::to_str) {
            Some(Ok(host)) => self.is_own_host(host),
            _ => false,
        };
        // An absolute-form request line names its own authority; it must agree too.
        let authority_ok = uri.authority().is_none_or(|a| self.is_own_host(a.as_str()));
        if !host_ok || !authority_ok {
            return Err(Refusal::ForeignHost);
        }
        for origin in headers.get_all(header::ORIGIN) {
            let own = origin.to_str().is_ok_and(|o| self.is_own_origin(o));
            if !own {
                return Err(Refusal::ForeignOrigin);
            }
        }
        let cross_site = headers
            .get(HeaderName::from_static("sec-fetch-site"))
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"cross-site"));
        if cross_site && uri.path().starts_with("/api") {
            return Err(Refusal::CrossSite);
        }
        Ok(())
    }

    fn is_own_host(&self, host: &str) -> bool {
        self.0.hosts.iter().any(|own| own.eq_ignore_ascii_case(host))
    }

    fn stamp(&self, headers: &mut HeaderMap, is_api: bool) {
        let fixed = [
            (header::CONTENT_SECURITY_POLICY, self.0.csp.clone()),
            (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (HeaderName::from_static("cross-origin-opener-policy"), HeaderValue::from_static("same-origin")),
            (HeaderName::from_static("cross-origin-resource-policy"), HeaderValue::from_static("same-origin")),
            // The page's own origin may use the microphone (voice input, §15); nothing else
            // may, and nothing may use the rest.
            (
                HeaderName::from_static("permissions-policy"),
                HeaderValue::from_static("camera=(), microphone=(self), geolocation=(), payment=(), usb=()"),
            ),
        ];
        for (name, value) in fixed {
            headers.insert(name, value);
        }
        if is_api {
            // Private answers must not linger in any cache, the webview's included.
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        }
        // Belt and braces: nothing we serve grants cross-origin access.
        headers.remove(header::ACCESS_CONTROL_ALLOW_ORIGIN);
        headers.remove(header::ACCESS_CONTROL_ALLOW_CREDENTIALS);
    }
}

impl Refusal {
    fn into_error(self) -> ApiError {
        let (code, message) = match self {
            Self::ForeignHost => {
                ("forbidden_host", "this server answers only to 127.0.0.1 and localhost on its own port")
            }
            Self::ForeignOrigin => ("forbidden_origin", "requests from other origins are refused"),
            Self::CrossSite => ("forbidden_origin", "cross-site requests are refused"),
            Self::Repeated(name) => {
                return ApiError::BadRequest {
                    code: "repeated_header",
                    message: format!("a request may carry one {name} header, and this one has more"),
                };
            }
        };
        ApiError::Forbidden { code, message }
    }
}

/// The middleware: refuse at the door, otherwise pass through; stamp headers either way.
pub async fn guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let is_api = req.uri().path().starts_with("/api");
    let mut response = match state.boundary.check(req.uri(), req.headers()) {
        Ok(()) => next.run(req).await,
        Err(refusal) => {
            tracing::warn!(?refusal, path = %req.uri().path(), "refused at the loopback boundary");
            refusal.into_error().into_response()
        }
    };
    state.boundary.stamp(response.headers_mut(), is_api);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(HeaderName::from_static(k), HeaderValue::from_static(v));
        }
        map
    }

    fn check(pairs: &[(&'static str, &'static str)]) -> Result<(), Refusal> {
        Boundary::new(4242).check(&Uri::from_static("/api/health"), &headers(pairs))
    }

    #[test]
    fn own_host_on_own_port_passes() {
        assert_eq!(check(&[("host", "127.0.0.1:4242")]), Ok(()));
        assert_eq!(check(&[("host", "localhost:4242")]), Ok(()));
    }

    #[test]
    fn a_rebinding_name_or_another_port_is_a_foreign_host() {
        for host in ["evil.example", "127.0.0.1.nip.io:4242", "127.0.0.1:4243", "127.0.0.1", "[::1]:4242"] {
            let map = {
                let mut m = HeaderMap::new();
                m.insert(header::HOST, HeaderValue::from_str(host).unwrap());
                m
            };
            assert_eq!(Boundary::new(4242).check(&Uri::from_static("/"), &map), Err(Refusal::ForeignHost), "{host}");
        }
    }

    #[test]
    fn a_missing_host_is_refused() {
        assert_eq!(check(&[]), Err(Refusal::ForeignHost));
    }

    #[test]
    fn an_absolute_form_authority_must_agree_with_host() {
        let uri = Uri::from_static("http://evil.example/api/health");
        let result = Boundary::new(4242).check(&uri, &headers(&[("host", "127.0.0.1:4242")]));
        assert_eq!(result, Err(Refusal::ForeignHost));
    }

    #[test]
    fn a_foreign_or_null_origin_is_refused_and_our_own_passes() {
        assert_eq!(
            check(&[("host", "127.0.0.1:4242"), ("origin", "https://evil.example")]),
            Err(Refusal::ForeignOrigin)
        );
        assert_eq!(check(&[("host", "127.0.0.1:4242"), ("origin", "null")]), Err(Refusal::ForeignOrigin));
        assert_eq!(
            check(&[("host", "127.0.0.1:4242"), ("origin", "http://127.0.0.1:4243")]),
            Err(Refusal::ForeignOrigin)
        );
        assert_eq!(check(&[("host", "127.0.0.1:4242"), ("origin", "http://localhost:4242")]), Ok(()));
    }

    #[test]
    fn a_second_origin_header_cannot_hide_behind_a_good_first_one() {
        let pairs =
            [("host", "127.0.0.1:4242"), ("origin", "http://127.0.0.1:4242"), ("origin", "https://evil.example")];
        assert_eq!(check(&pairs), Err(Refusal::Repeated("Origin")));
    }

    #[test]
    fn a_header_that_names_who_or_where_comes_once() {
        let host = ("host", "127.0.0.1:4242");
        assert_eq!(check(&[host, host]), Err(Refusal::Repeated("Host")));
        assert_eq!(check(&[host, ("host", "evil.example")]), Err(Refusal::Repeated("Host")));
        assert_eq!(
            check(&[host, ("authorization", "Bearer a"), ("authorization", "Bearer b")]),
            Err(Refusal::Repeated("Authorization"))
        );
        assert_eq!(check(&[host, ("authorization", "Bearer a")]), Ok(()));
    }

    #[test]
    fn cross_site_fetches_of_the_api_are_refused() {
        assert_eq!(check(&[("host", "127.0.0.1:4242"), ("sec-fetch-site", "cross-site")]), Err(Refusal::CrossSite));
        assert_eq!(check(&[("host", "127.0.0.1:4242"), ("sec-fetch-site", "same-origin")]), Ok(()));
    }
}
