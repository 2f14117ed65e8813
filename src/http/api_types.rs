//! The web's API types, generated from the Rust types the routes answer with and take
//! (`ts-rs`): `cargo test --lib export_bindings` writes one file per type, and an
//! `index.ts` naming them all, to `web/src/api/generated/` (or to `SKALD_API_TYPES_DIR`).
//! `./test.sh` writes them to a temporary folder and fails when the committed ones differ,
//! so a changed Rust type cannot reach the page with stale TypeScript.

use std::path::{Path, PathBuf};

use ts_rs::TS;

/// Every type the page reads or sends, with what they contain (exported with them).
fn export_all(cfg: &ts_rs::Config) -> Result<(), ts_rs::ExportError> {
    macro_rules! export {
        ($($ty:ty),* $(,)?) => {{ $( <$ty as TS>::export_all(cfg)?; )* }};
    }
    export!(
        super::error::ErrorBody,
        super::meta::Health,
        super::meta::Instance,
        super::people::UnlockedBody,
        super::people::Enrolment,
        super::people::Locked,
        super::me::MeView,
        super::me::SpaceKey,
        super::me::PrivacyProvider,
        super::me::PrivacyAgent,
        super::me::PrivacyReport,
        crate::mcp::admin::NewServerBody,
        crate::mcp::admin::PatchBody,
        crate::mcp::admin::ServerView,
        crate::mcp::admin::Imported,
        super::mcp::Added,
        super::mcp::ImportBody,
        super::mcp::ApproveBody,
        super::mcp::Approved,
        super::mcp::OwnToken,
        super::mcp::PromptFill,
        super::mcp::PromptText,
        crate::mcp::PromptView,
        crate::mcp::ResourceView,
        crate::store::notices::Notice,
        crate::jobs::NewJob,
        crate::jobs::JobChange,
        crate::jobs::JobView,
        crate::jobs::PreviewRequest,
        crate::jobs::Preview,
        crate::jobs::SnoozeRequest,
        crate::store::jobs::RunRow,
        crate::store::roles::Role,
        crate::store::audit::Entry,
        crate::store::usage::PersonUsage,
        crate::store::approvals::PersonalRule,
        crate::secrets::Status,
        crate::providers::catalogue::CatalogueModel,
        crate::providers::detect::Found,
        crate::providers::admin::ProviderView,
        crate::providers::admin::Added,
        crate::providers::admin::NewProviderBody,
        super::providers::ProviderPatch,
        super::providers::Refreshed,
        crate::providers::library::Installed,
        crate::providers::library::DownloadRequest,
        crate::providers::local::download::Status,
        crate::store::local_models::LocalModel,
        super::local_models::LocalModels,
        super::local_models::ImportBody,
        super::local_models::Catalogue,
        super::local_models::DownloadStarted,
        super::agents::AgentList,
        super::agents::AgentDetail,
        super::agents::Edit,
        super::agents::HoldDecided,
        super::agents::MarkedSeen,
        super::chat::NextModel,
        super::chat::SessionDetail,
        crate::store::chat::Conversation,
        crate::store::chat::Message,
        crate::store::chat::Versions,
        super::chat::NewMessage,
        super::chat::TurnChoice,
        super::chat::ActivePath,
        super::chat::TurnStarted,
        super::chat::Rebuilt,
        super::chat::Stopped,
        super::chat::SessionHits,
        crate::store::chat::RequestRow,
        super::rules::RuleAdded,
        crate::store::approval_rules::StoredRule,
        crate::rules::Rule,
        crate::agent::events::LiveEvent,
        crate::agent::inbox::CardView,
        super::inbox::Answer,
        super::inbox::Decided,
        super::notes::NoteList,
        crate::store::notes::Note,
        crate::store::documents::Document,
        crate::store::documents::Hit,
        crate::store::documents::PageText,
        super::voice::VoiceOverview,
        super::voice::Transcription,
        super::voice::AddModelBody,
        crate::voice::SpeechModel,
        crate::voice::Transcript,
        super::voice::Speech,
        super::voice::AddVoiceBody,
        super::voice::SpeakBody,
        crate::voice::SpeechVoice,
        crate::voice::SpeechEngine,
        super::voice::VoiceCatalogue,
        super::voice::DownloadBody,
        crate::providers::voice_catalogue::Offered,
        crate::providers::voice_catalogue::Entry,
        crate::providers::voice_catalogue::File,
        crate::providers::voice_catalogue::Kind,
        crate::store::memories::Memory,
        super::memories::NewMemoryBody,
        super::memories::Created,
        super::memories::Change,
        super::memories::Erase,
        super::memories::Erased,
        super::memories::Search,
        super::backups::NewBackup,
        super::backups::Started,
        super::backups::BackupList,
        super::backups::ScheduleBody,
        crate::backup::Done,
        crate::backup::PersonRestored,
        super::backups::RestorePerson,
        crate::store::supervision::Edge,
        crate::store::supervision::AccessEntry,
        super::supervision::NewEdge,
        super::supervision::Mine,
        super::supervision::EnrolmentChecked,
    );
    Ok(())
}

/// `index.ts`: each generated type, re-exported by its name, in name order.
fn index(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the generated folder")
        .map(|entry| entry.expect("an entry").file_name().to_string_lossy().into_owned())
        .filter_map(|file| file.strip_suffix(".ts").map(str::to_owned))
        .filter(|name| name != "index")
        .collect();
    names.sort();
    let mut out =
        String::from("// Generated by `cargo test --lib export_bindings` (src/http/api_types.rs). Do not edit.\n");
    for name in names {
        out.push_str(&format!("export type {{ {name} }} from './{name}.js';\n"));
    }
    out
}

#[test]
fn export_bindings() {
    let dir = std::env::var_os("SKALD_API_TYPES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("web/src/api/generated"));
    // A type that is gone must not leave its file behind.
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("the old generated folder goes");
    }
    // Numbers, not `bigint`: JSON gives the page numbers, and no count or id here nears 2^53.
    let cfg = ts_rs::Config::new().with_large_int("number").with_import_extension(Some("js")).with_out_dir(&dir);
    export_all(&cfg).expect("the API types export");
    std::fs::write(dir.join("index.ts"), index(&dir)).expect("the index is written");
}
