//! Who may call a route. Every `/api` route names its [`Access`] in the route table and
//! this layer enforces it before the handler runs. Bearers arrive only in the
//! `Authorization` header — or, for the WebSocket, which a browser cannot give headers, in
//! the subprotocol list (`skald.bearer.<base64url>`). A token in a URL is refused: URLs
//! end up in histories, logs and `Referer`s.

use std::sync::Arc;

use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use zeroize::Zeroizing;

use super::AppState;
use super::error::ApiError;
use super::serve::Connection;
use crate::store::audit::Actor;
use crate::store::{roles, users};
use crate::users::sessions::Session;

/// The subprotocol the server answers a WebSocket handshake with.
pub const WS_PROTOCOL: &str = "skald.v1";
/// The prefix of the subprotocol entry that carries the bearer.
pub const WS_BEARER_PREFIX: &str = "skald.bearer.";

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Whoever holds this run's launch token: the webview, or a script that read the
    /// ready line or `run/api-token`.
    Launch,
    /// A person with an unlocked session.
    Session,
    /// Either; a session bearer additionally identifies the person (the WebSocket: the
    /// page opens it before login, and again with the session to receive its events).
    LaunchOrSession,
    /// A person with an unlocked session whose role manages the instance, checked on
    /// every request against the stored role (roles are data and can change).
    Admin,
}

/// The unlocked caller of a session route, put in the request by [`require`].
#[derive(Clone)]
pub struct Caller {
    pub session: Arc<Session>,
    /// The bearer this request came with, so logout can end exactly this session.
    pub token: Arc<Zeroizing<Vec<u8>>>,
}

/// The administrator calling an `Admin` route, read with their role by [`require`].
#[derive(Clone)]
pub struct AdminActor(pub Actor);

impl<S: Send + Sync> FromRequestParts<S> for AdminActor {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts.extensions.get::<AdminActor>().cloned().ok_or_else(|| {
            ApiError::Internal("an administrator route is missing its access check in the route table".into())
        })
    }
}

impl<S: Send + Sync> axum::extract::OptionalFromRequestParts<S> for Caller {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Option<Self>, Self::Rejection> {
        Ok(parts.extensions.get::<Caller>().cloned())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| ApiError::Internal("a session route is missing its access check in the route table".into()))
    }
}

/// Where the bearer travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    AuthorizationHeader,
    WebSocketProtocol,
}

/// Query parameter names that look like a bearer; present at all, the request is refused.
const URL_TOKEN_PARAMS: [&str; 5] = ["token", "access_token", "bearer", "auth", "authorization"];

/// The route layer: checks the caller against the route's access, then runs the handler.
pub async fn require(
    state: &AppState,
    access: Access,
    credential: Credential,
    mut req: Request,
    next: Next,
) -> Response {
    if carries_token_in_query(req.uri().query()) {
        return ApiError::Unauthorized {
            code: "token_in_url",
            message: "tokens in the URL are refused; send the bearer in the Authorization header (or the WebSocket subprotocol)",
        }
        .into_response();
    }
    let presented = match credential {
        Credential::AuthorizationHeader => bearer_from_header(req.headers()),
        Credential::WebSocketProtocol => bearer_from_ws_protocols(req.headers()),
    };
    let Some(token) = presented else {
        return ApiError::unauthorized().into_response();
    };
    match access {
        Access::Launch | Access::LaunchOrSession if state.launch_token.matches(&token) => {}
        Access::Launch => return ApiError::unauthorized().into_response(),
        Access::Session | Access::Admin | Access::LaunchOrSession => {
            let Some(session) = state.accounts.sessions().resolve(&token).await else {
                return ApiError::unauthorized().into_response();
            };
            if access == Access::Admin {
                match managing_actor(state, &session).await {
                    Ok(Some(actor)) => {
                        req.extensions_mut().insert(AdminActor(actor));
                    }
                    Ok(None) => {
                        return ApiError::Forbidden {
                            code: "admin_only",
                            message: "only an administrator can do this",
                        }
                        .into_response();
                    }
                    Err(err) => return err.into_response(),
                }
            }
            req.extensions_mut().insert(Caller { session, token: Arc::new(token) });
        }
    }
    // A connection that has shown a bearer is never closed to make room for one that has
    // not (see `serve`).
    if let Some(connection) = req.extensions().get::<Connection>() {
        connection.mark_authenticated();
    }
    next.run(req).await
}

/// The caller as the audit trail records them, if they may manage the instance. Reads
/// the role now, not from the session: a demotion takes effect at once.
pub(super) async fn managing_actor(state: &AppState, session: &Session) -> Result<Option<Actor>, ApiError> {
    let system = state.accounts.system();
    let Some(user) = users::find(system, &session.user_id).await? else {
        return Ok(None);
    };
    if user.status != "active" || !roles::get(system, &user.role_id).await?.is_some_and(|r| r.manage_instance) {
        return Ok(None);
    }
    Ok(Some(Actor { id: user.id, name: user.name }))
}

fn carries_token_in_query(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        q.split('&')
            .map(|pair| pair.split('=').next().unwrap_or(""))
            .any(|name| URL_TOKEN_PARAMS.iter().any(|t| t.eq_ignore_ascii_case(name)))
    })
}

/// `Authorization: Bearer <token>`; the scheme is case-insensitive (RFC 7235).
pub fn bearer_from_header(headers: &HeaderMap) -> Option<Zeroizing<Vec<u8>>> {
    let value = headers.get(header::AUTHORIZATION)?.as_bytes();
    let (scheme, rest) = value.split_at_checked(7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let token = rest.trim_ascii();
    (!token.is_empty()).then(|| Zeroizing::new(token.to_vec()))
}

/// Every subprotocol the client offered, across repeated headers.
pub fn offered_protocols(headers: &HeaderMap) -> impl Iterator<Item = &str> {
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
}

/// The bearer carried as `skald.bearer.<token in base64url, no padding>`.
pub fn bearer_from_ws_protocols(headers: &HeaderMap) -> Option<Zeroizing<Vec<u8>>> {
    let encoded = offered_protocols(headers).find_map(|p| p.strip_prefix(WS_BEARER_PREFIX))?;
    URL_SAFE_NO_PAD.decode(encoded).ok().map(Zeroizing::new)
}

/// How a client puts a bearer into the subprotocol list.
pub fn ws_bearer_protocol(token: &str) -> String {
    format!("{WS_BEARER_PREFIX}{}", URL_SAFE_NO_PAD.encode(token))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn a_bearer_header_is_read_whatever_the_scheme_case() {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("bEaReR abc"));
        assert_eq!(bearer_from_header(&headers).as_deref().map(Vec::as_slice), Some(&b"abc"[..]));
    }

    #[test]
    fn basic_auth_or_an_empty_bearer_is_no_bearer() {
        for value in ["Basic abc", "Bearer ", "Bearer", "abc"] {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, HeaderValue::from_static(value));
            assert!(bearer_from_header(&headers).is_none(), "{value}");
        }
    }

    #[test]
    fn the_ws_bearer_round_trips_through_the_subprotocol_list() {
        let mut headers = HeaderMap::new();
        let offered = format!("skald.v1, {}", ws_bearer_protocol("tok"));
        headers.insert(header::SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_str(&offered).unwrap());
        assert_eq!(bearer_from_ws_protocols(&headers).as_deref().map(Vec::as_slice), Some(&b"tok"[..]));
        assert!(offered_protocols(&headers).any(|p| p == WS_PROTOCOL));
    }

    #[test]
    fn token_like_query_parameters_are_spotted() {
        assert!(carries_token_in_query(Some("token=abc")));
        assert!(carries_token_in_query(Some("a=1&Access_Token=x")));
        assert!(!carries_token_in_query(Some("tokens=1&page=2")));
        assert!(!carries_token_in_query(None));
    }
}
