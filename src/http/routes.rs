//! The route table: every `/api` route, its method and who may call it, in one list.
//! The router is built from it ([`super::router`]) and the tests walk it, so a route
//! cannot exist without an access rule, nor be added without the tests seeing it.

use axum::extract::Request;
use axum::handler::Handler;
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::routing::{MethodFilter, MethodRouter, on};

use super::auth::{self, Access, Credential};
use super::{AppState, meta, ws};

/// One row of the table.
pub struct Route {
    pub method: Method,
    pub path: &'static str,
    pub access: Access,
    pub credential: Credential,
    handler: MethodRouter<AppState>,
}

/// All `/api` routes.
pub fn table() -> Vec<Route> {
    use Access::Launch;
    use Credential::{AuthorizationHeader as Header, WebSocketProtocol};
    vec![
        route(Method::GET, "/api/health", Launch, Header, meta::health),
        route(Method::GET, "/api/instance", Launch, Header, meta::instance),
        route(Method::GET, "/api/ws", Launch, WebSocketProtocol, ws::upgrade),
    ]
}

fn route<H, T>(method: Method, path: &'static str, access: Access, credential: Credential, handler: H) -> Route
where
    H: Handler<T, AppState>,
    T: 'static,
{
    let filter = MethodFilter::try_from(method.clone()).expect("the table uses standard methods");
    Route {
        method,
        path,
        access,
        credential,
        handler: on(filter, handler),
    }
}

impl Route {
    /// The handler behind this row's access check.
    pub(super) fn into_method_router(self, state: &AppState) -> MethodRouter<AppState> {
        let (access, credential, state) = (self.access, self.credential, state.clone());
        self.handler
            .route_layer(middleware::from_fn(move |req: Request, next: Next| {
                let state = state.clone();
                async move { auth::require(&state, access, credential, req, next).await }
            }))
    }
}
