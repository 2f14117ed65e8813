//! The route table: every `/api` route, its method and who may call it, in one list.
//! The router is built from it ([`super::router`]) and the tests walk it, so a route
//! cannot exist without an access rule, nor be added without the tests seeing it.

use axum::extract::Request;
use axum::handler::Handler;
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::routing::{MethodFilter, MethodRouter, on};

use super::auth::{self, Access, Credential};
use super::{
    AppState, admin, agents, backups, chat, documents, inbox, jobs, local_models, mcp, me, memories, meta, notes,
    people, providers, rules, supervision, voice, ws,
};

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
    use Access::{Admin, Launch, LaunchOrSession, Session};
    use Credential::{AuthorizationHeader as Header, WebSocketProtocol};
    use Method as M;
    vec![
        route(M::GET, "/api/health", Launch, Header, meta::health),
        route(M::GET, "/api/instance", Launch, Header, meta::instance),
        route(M::GET, "/api/ws", LaunchOrSession, WebSocketProtocol, ws::upgrade),
        route(M::POST, "/api/client/events", Launch, Header, meta::client_event),
        // people and keys
        route(M::POST, "/api/setup", Launch, Header, people::setup),
        route(M::GET, "/api/users", Launch, Header, people::directory),
        route(M::POST, "/api/users", Admin, Header, people::add),
        route(M::POST, "/api/enrol", Launch, Header, people::enrol),
        route(M::POST, "/api/enrol/check", Launch, Header, supervision::enrolment_check),
        route(M::POST, "/api/login", Launch, Header, people::login),
        route(M::POST, "/api/recover", Launch, Header, people::recover),
        route(M::POST, "/api/logout", Session, Header, people::logout),
        route(M::POST, "/api/lock", Session, Header, people::lock),
        route(M::POST, "/api/lock-all", Launch, Header, people::lock_all),
        // administration
        route(M::GET, "/api/people", Admin, Header, admin::people),
        route(M::PATCH, "/api/users/{id}", Admin, Header, admin::update_person),
        route(M::DELETE, "/api/users/{id}", Admin, Header, admin::delete_person),
        route(M::POST, "/api/users/{id}/deactivate", Admin, Header, admin::deactivate),
        route(M::POST, "/api/users/{id}/reactivate", Admin, Header, admin::reactivate),
        route(M::POST, "/api/users/{id}/enrolment-code", Admin, Header, admin::reissue_enrolment),
        route(M::GET, "/api/roles", Admin, Header, admin::list_roles),
        route(M::POST, "/api/roles", Admin, Header, admin::create_role),
        route(M::PATCH, "/api/roles/{id}", Admin, Header, admin::update_role),
        route(M::DELETE, "/api/roles/{id}", Admin, Header, admin::delete_role),
        route(M::GET, "/api/audit", Admin, Header, admin::audit_trail),
        route(M::GET, "/api/instance/secrets", Admin, Header, admin::secrets_status),
        route(M::POST, "/api/supervision", Admin, Header, supervision::request),
        route(M::GET, "/api/supervision", Admin, Header, supervision::list),
        route(M::POST, "/api/supervision/{id}/accept", Session, Header, supervision::accept),
        route(M::DELETE, "/api/supervision/{id}", Session, Header, supervision::end),
        route(M::GET, "/api/me/supervision", Session, Header, supervision::mine),
        route(M::GET, "/api/me/access-log", Session, Header, supervision::access_log),
        route(M::POST, "/api/me/rotate-key", Session, Header, supervision::rotate_key),
        route(M::GET, "/api/supervised/{user}/sessions", Session, Header, supervision::sessions),
        route(M::GET, "/api/supervised/{user}/sessions/{id}/messages", Session, Header, supervision::messages),
        route(M::GET, "/api/supervised/{user}/notes", Session, Header, supervision::notes_list),
        route(M::GET, "/api/supervised/{user}/notes/{id}", Session, Header, supervision::note),
        route(M::GET, "/api/supervised/{user}/memories", Session, Header, supervision::memories),
        route(M::GET, "/api/supervised/{user}/cards", Session, Header, supervision::cards),
        route(M::POST, "/api/supervised/{user}/cards/{id}", Session, Header, supervision::decide_card),
        route(M::POST, "/api/backups", Admin, Header, backups::start),
        route(M::GET, "/api/backups", Admin, Header, backups::list),
        route(M::POST, "/api/backups/restore-person", Admin, Header, backups::restore_person),
        route(M::PUT, "/api/backups/schedule", Admin, Header, backups::set_schedule),
        route(M::DELETE, "/api/backups/schedule", Admin, Header, backups::clear_schedule),
        route(M::GET, "/api/usage", Admin, Header, admin::usage),
        route(M::GET, "/api/approval-rules", Admin, Header, rules::list),
        route(M::POST, "/api/approval-rules", Admin, Header, rules::add),
        route(M::PUT, "/api/approval-rules/{id}", Admin, Header, rules::replace),
        route(M::DELETE, "/api/approval-rules/{id}", Admin, Header, rules::delete),
        // the caller's own account and space
        route(M::GET, "/api/me", Session, Header, me::me),
        route(M::DELETE, "/api/me", Session, Header, me::delete_account),
        route(M::GET, "/api/me/privacy", Session, Header, me::privacy),
        route(M::PUT, "/api/me/tool-servers/{id}/token", Session, Header, mcp::put_own_token),
        route(M::GET, "/api/me/tool-prompts", Session, Header, mcp::my_prompts),
        route(M::GET, "/api/me/tool-resources", Session, Header, mcp::my_resources),
        route(M::POST, "/api/me/tool-prompts/{server}/{name}", Session, Header, mcp::my_prompt),
        route(M::DELETE, "/api/me/tool-servers/{id}/token", Session, Header, mcp::delete_own_token),
        route(M::GET, "/api/me/export", Session, Header, me::export),
        route(M::POST, "/api/me/password", Session, Header, me::change_password),
        route(M::GET, "/api/me/audit", Session, Header, me::audit),
        route(M::GET, "/api/me/settings", Session, Header, me::settings),
        route(M::PUT, "/api/me/settings/{key}", Session, Header, me::put_setting),
        route(M::DELETE, "/api/me/settings/{key}", Session, Header, me::delete_setting),
        route(M::GET, "/api/me/rules", Session, Header, me::rules),
        route(M::DELETE, "/api/me/rules/{id}", Session, Header, me::delete_rule),
        // models
        route(M::POST, "/api/providers", Admin, Header, providers::add),
        route(M::GET, "/api/providers", Admin, Header, providers::list),
        route(M::GET, "/api/providers/detect", Admin, Header, providers::detect),
        route(M::PATCH, "/api/providers/{id}", Admin, Header, providers::update),
        route(M::DELETE, "/api/providers/{id}", Admin, Header, providers::delete),
        route(M::POST, "/api/providers/{id}/refresh", Admin, Header, providers::refresh),
        route(M::GET, "/api/models", Session, Header, providers::models),
        route(M::POST, "/api/mcp/servers", Admin, Header, mcp::add),
        route(M::GET, "/api/mcp/servers", Admin, Header, mcp::list),
        route(M::POST, "/api/mcp/import", Admin, Header, mcp::import),
        route(M::GET, "/api/mcp/servers/{id}", Admin, Header, mcp::get),
        route(M::PATCH, "/api/mcp/servers/{id}", Admin, Header, mcp::update),
        route(M::DELETE, "/api/mcp/servers/{id}", Admin, Header, mcp::delete),
        route(M::POST, "/api/mcp/servers/{id}/approve", Admin, Header, mcp::approve),
        route(M::POST, "/api/mcp/servers/{id}/restart", Admin, Header, mcp::restart),
        route(M::POST, "/api/local-models", Admin, Header, local_models::import),
        route(M::POST, "/api/local-models/upload", Admin, Header, local_models::upload),
        route(M::POST, "/api/local-models/downloads", Admin, Header, local_models::download),
        route(M::GET, "/api/local-models/downloads", Admin, Header, local_models::downloads),
        route(M::GET, "/api/local-models/catalogue", Admin, Header, local_models::catalogue),
        route(M::GET, "/api/local-models", Admin, Header, local_models::list),
        route(M::DELETE, "/api/local-models/{id}", Admin, Header, local_models::delete),
        route(M::POST, "/api/local-models/{id}/retry", Admin, Header, local_models::retry),
        // agents
        route(M::GET, "/api/agents", Session, Header, agents::list),
        route(M::GET, "/api/agents/{id}", Session, Header, agents::get),
        route(M::PUT, "/api/agents/{id}", Admin, Header, agents::save),
        // conversations
        route(M::POST, "/api/sessions", Session, Header, chat::create),
        route(M::GET, "/api/sessions", Session, Header, chat::list),
        // before `{id}` in the list for the reader; the router itself prefers the fixed
        // segment, so no conversation id is ever read as "search"
        route(M::GET, "/api/sessions/search", Session, Header, chat::search),
        route(M::GET, "/api/sessions/{id}", Session, Header, chat::get),
        route(M::PATCH, "/api/sessions/{id}", Session, Header, chat::rename),
        route(M::DELETE, "/api/sessions/{id}", Session, Header, chat::delete),
        route(M::POST, "/api/sessions/{id}/messages", Session, Header, chat::send),
        route(M::GET, "/api/sessions/{id}/messages", Session, Header, chat::messages),
        route(M::GET, "/api/sessions/{id}/requests", Session, Header, chat::requests),
        route(M::GET, "/api/sessions/{id}/requests/{request}/rebuild", Session, Header, chat::rebuild),
        route(M::POST, "/api/sessions/{id}/stop", Session, Header, chat::stop),
        route(M::POST, "/api/sessions/{id}/retry", Session, Header, chat::retry),
        route(M::POST, "/api/sessions/{id}/regenerate", Session, Header, chat::regenerate),
        route(M::PUT, "/api/sessions/{id}/active", Session, Header, chat::choose_version),
        // what waits on me
        route(M::GET, "/api/inbox", Session, Header, inbox::list),
        route(M::POST, "/api/inbox/{id}", Session, Header, inbox::decide),
        route(M::GET, "/api/notices", Session, Header, agents::notices),
        route(M::POST, "/api/notices/seen", Session, Header, agents::seen),
        route(M::POST, "/api/notices/{id}/accept", Session, Header, agents::decide),
        // scheduled jobs (§11); `preview` before `{id}` for the reader, as for sessions
        route(M::POST, "/api/jobs", Session, Header, jobs::create),
        route(M::GET, "/api/jobs", Session, Header, jobs::list),
        route(M::POST, "/api/jobs/preview", Session, Header, jobs::preview),
        route(M::GET, "/api/jobs/{id}/runs", Session, Header, jobs::runs),
        route(M::POST, "/api/jobs/{id}/snooze", Session, Header, jobs::snooze),
        route(M::PATCH, "/api/jobs/{id}", Session, Header, jobs::update),
        route(M::DELETE, "/api/jobs/{id}", Session, Header, jobs::delete),
        route(M::GET, "/api/memories", Session, Header, memories::list),
        route(M::POST, "/api/memories", Session, Header, memories::create),
        route(M::GET, "/api/memories/recall", Session, Header, memories::recall),
        route(M::GET, "/api/memories/search", Session, Header, memories::search),
        route(M::POST, "/api/memories/erase", Session, Header, memories::erase),
        route(M::GET, "/api/memories/{id}", Session, Header, memories::get),
        route(M::PATCH, "/api/memories/{id}", Session, Header, memories::update),
        route(M::DELETE, "/api/memories/{id}", Session, Header, memories::delete),
        route(M::GET, "/api/documents", Session, Header, documents::list),
        route(M::POST, "/api/documents", Session, Header, documents::upload),
        route(M::GET, "/api/documents/search", Session, Header, documents::search),
        route(M::GET, "/api/documents/{id}", Session, Header, documents::get),
        route(M::GET, "/api/documents/{id}/text", Session, Header, documents::text),
        route(M::GET, "/api/documents/{id}/content", Session, Header, documents::content),
        route(M::DELETE, "/api/documents/{id}", Session, Header, documents::delete),
        // voice (§15): the engines here, speech models and voices, a recording written down, words read aloud
        route(M::GET, "/api/voice", Session, Header, voice::overview),
        route(M::POST, "/api/voice/models", Admin, Header, voice::add_model),
        route(M::GET, "/api/voice/catalogue", Admin, Header, voice::catalogue),
        route(M::POST, "/api/voice/downloads", Admin, Header, voice::download),
        route(M::GET, "/api/voice/downloads", Admin, Header, voice::downloads),
        route(M::POST, "/api/voice/transcriptions", Session, Header, voice::transcribe),
        route(M::POST, "/api/voice/voices", Admin, Header, voice::add_voice),
        route(M::POST, "/api/voice/speech", Session, Header, voice::speak),
        route(M::GET, "/api/notes", Session, Header, notes::list),
        route(M::POST, "/api/notes", Session, Header, notes::create),
        route(M::GET, "/api/notes/{id}", Session, Header, notes::get),
        route(M::PUT, "/api/notes/{id}", Session, Header, notes::update),
        route(M::DELETE, "/api/notes/{id}", Session, Header, notes::delete),
    ]
}

fn route<H, T>(method: Method, path: &'static str, access: Access, credential: Credential, handler: H) -> Route
where
    H: Handler<T, AppState>,
    T: 'static,
{
    let filter = MethodFilter::try_from(method.clone()).expect("the table uses standard methods");
    Route { method, path, access, credential, handler: on(filter, handler) }
}

impl Route {
    /// The handler behind this row's access check.
    pub(super) fn into_method_router(self, state: &AppState) -> MethodRouter<AppState> {
        let (access, credential, state) = (self.access, self.credential, state.clone());
        self.handler.route_layer(middleware::from_fn(move |req: Request, next: Next| {
            let state = state.clone();
            async move { auth::require(&state, access, credential, req, next).await }
        }))
    }
}
