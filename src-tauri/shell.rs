//! The desktop shell (§13): one window on the core's loopback page, a tray icon, a single
//! instance, lock on close, and OS notifications. Thin: the page talks to the core over
//! HTTP exactly as in serve mode, and the window gets no IPC permissions; everything the
//! shell does to the core goes through `CoreHandle`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use skald::app::{App, CoreHandle, StartOptions};
use skald::ids::JobId;
use skald::jobs::Snooze;
use skald::notify::FromJob;
use tauri::menu::{Menu, MenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::webview::PageLoadEvent;
use tauri::{AppHandle, Manager, RunEvent, Url, WebviewUrl, WebviewWindow, WebviewWindowBuilder, WindowEvent};
use tauri_plugin_notification::{Action, ActionPerformed, ActionType, NotificationExt};
use tauri_plugin_opener::OpenerExt;

const WINDOW: &str = "main";
/// The initialization script; placeholders are filled with JSON string literals.
const INIT_SCRIPT: &str = include_str!("init.js");

/// Debug-build hooks for the desktop smoke test; release builds never have them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct TestHooks {
    /// After the first page load, navigate the window here (to test the navigation guard).
    navigate_to: Option<String>,
    /// After the first page load, run this script in the page (`SKALD_TEST_SCRIPT` names
    /// its file): the smoke test drives the page inside WebKit with it, and it reports back
    /// by navigating to another origin, which reaches the system opener.
    script: Option<String>,
}

/// `SKALD_TEST_HOOKS=1` turns the hooks on — in a debug build only. With them the app also
/// writes `run/api-token` and the ready line as `serve` does, and SIGUSR2 acts as the
/// tray's Lock.
fn test_hooks(var: impl Fn(&str) -> Option<String>, debug_build: bool) -> Option<TestHooks> {
    if !debug_build || var("SKALD_TEST_HOOKS").as_deref() != Some("1") {
        return None;
    }
    let script = var("SKALD_TEST_SCRIPT")
        .map(|path| std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("SKALD_TEST_SCRIPT {path}: {err}")));
    Some(TestHooks { navigate_to: var("SKALD_TEST_NAVIGATE_TO"), script })
}

/// The initialization script for a window on `origin`, carrying `token`.
fn init_script(origin: &str, token: &str) -> String {
    let quote = |s: &str| serde_json::to_string(s).expect("strings serialise");
    INIT_SCRIPT.replace("__SKALD_ORIGIN__", &quote(origin)).replace("__SKALD_TOKEN__", &quote(token))
}

/// The serialised origin of a URL, as `location.origin` would give it.
fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Opens the window and the tray, with the core on Tauri's runtime. Returns when the app quits.
pub fn run(data_dir: Option<PathBuf>) -> ExitCode {
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        eprintln!(
            "skald: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset); run `skald serve` for the headless server"
        );
        return ExitCode::FAILURE;
    }
    let hooks = test_hooks(|name| std::env::var(name).ok(), cfg!(debug_assertions));
    let quitting = Arc::new(AtomicBool::new(false));
    let app = tauri::Builder::default()
        // First: a second launch hands over to this one and exits before touching anything.
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            tracing::info!("a second launch: focusing this window");
            show(app);
        }))
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_opener::init())
        .setup({
            let quitting = quitting.clone();
            move |app| {
                if let Err(err) = setup(app.handle(), data_dir, hooks, quitting) {
                    eprintln!("skald: {err}");
                    std::process::exit(1);
                }
                Ok(())
            }
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(err) => {
            eprintln!("skald: cannot start the desktop shell: {err}");
            return ExitCode::FAILURE;
        }
    };
    app.run(move |handle, event| {
        if let RunEvent::ExitRequested { api, .. } = event
            && !quitting.load(Ordering::SeqCst)
        {
            // Something other than our own Quit asked to exit: stop the core cleanly
            // first; it calls exit again when done, and the flag lets that one through.
            api.prevent_exit();
            quit(handle, &quitting);
        }
    });
    ExitCode::SUCCESS
}

fn setup(
    handle: &AppHandle,
    data_dir: Option<PathBuf>,
    hooks: Option<TestHooks>,
    quitting: Arc<AtomicBool>,
) -> Result<(), Box<dyn std::error::Error>> {
    let crate::Prepared { listener, data_dir, _log } = crate::prepare(data_dir, 0)?;
    let options = StartOptions { write_token_file: hooks.is_some(), web: crate::web::file };
    let app = tauri::async_runtime::block_on(App::start(listener, data_dir, options))?;
    let core = app.handle();
    handle.manage(core.clone());
    handle.manage(quitting.clone());
    // Signal handlers need the runtime's reactor, and go in before the ready line.
    let stop = tauri::async_runtime::block_on(async { crate::termination() })?;
    if hooks.is_some() {
        tauri::async_runtime::block_on(async { spawn_lock_on_sigusr2(core.clone()) })?;
        crate::ready_line(&app);
    }

    // The core runs until Quit or a signal; then the app exits.
    let exit_handle = handle.clone();
    let signal_core = core.clone();
    tauri::async_runtime::spawn(async move {
        stop.await;
        signal_core.shut_down();
    });
    tauri::async_runtime::spawn(async move {
        let served = app.run(std::future::pending()).await;
        // The log guard flushes when the process ends; keep it alive until the core stops.
        drop(_log);
        if let Err(err) = served {
            eprintln!("skald: {err}");
        }
        exit_handle.state::<Arc<AtomicBool>>().store(true, Ordering::SeqCst);
        exit_handle.exit(0);
    });
    open_window(handle, &core, hooks.unwrap_or_default())?;
    build_tray(handle)?;
    forward_notifications(handle, &core);
    Ok(())
}

fn open_window(handle: &AppHandle, core: &CoreHandle, hooks: TestHooks) -> tauri::Result<()> {
    let url: Url = format!("{}/", core.url()).parse().expect("the core's URL parses");
    let origin = origin_of(&url);
    let script = init_script(&origin, core.launch_token().expose());
    let guard = core.clone();
    let opener = handle.clone();
    let new_window_opener = handle.clone();
    let first_load = Arc::new(AtomicBool::new(true));
    let permission_guard = core.clone();
    let mock_devices = hooks.script.is_some();
    let window = WebviewWindowBuilder::new(handle, WINDOW, WebviewUrl::External(url))
        .title("Skald")
        .inner_size(1100.0, 760.0)
        .min_inner_size(360.0, 480.0)
        .visible(false)
        // WebKit keeps nothing on disk: no cache, cookies or storage outside our control.
        .incognito(true)
        // Tauri's own file-drop handler takes every drop (on Linux too) before the page sees
        // it; the Files page takes dropped files itself, as HTML5 drops.
        .disable_drag_drop_handler()
        .initialization_script(&script)
        .on_navigation(move |url| {
            if guard.is_own_origin(&origin_of(url)) {
                return true;
            }
            // Another origin never loads in Skald's window; the system browser gets it.
            tracing::info!(origin = %origin_of(url), "navigation to another origin handed to the system opener");
            if let Err(err) = opener.opener().open_url(url.as_str(), None::<&str>) {
                tracing::warn!(%err, "the system opener failed");
            }
            false
        })
        // A link meant for a new window (`target=_blank`) never opens one inside Skald: a
        // web address goes to the system browser, anything else nowhere.
        .on_new_window(move |url, _| {
            if matches!(url.scheme(), "http" | "https" | "mailto") {
                tracing::info!(origin = %origin_of(&url), "a new-window link handed to the system opener");
                if let Err(err) = new_window_opener.opener().open_url(url.as_str(), None::<&str>) {
                    tracing::warn!(%err, "the system opener failed");
                }
            }
            tauri::webview::NewWindowResponse::Deny
        })
        // WebKitGTK denies the microphone unless the window decides; Skald's own page gets
        // it (the composer's voice input, docs/architecture.md §15), anything else nothing:
        // the camera and every other permission are refused whatever asks.
        .on_permission_request(move |webview, kind| {
            let origin = webview.url().map(|url| origin_of(&url)).unwrap_or_default();
            let ours = permission_guard.is_own_origin(&origin);
            let allow = matches!(kind, tauri::webview::PermissionKind::Microphone) && ours;
            tracing::info!(?kind, %origin, allow, "the page asked for a permission");
            if allow { tauri::webview::PermissionResponse::Allow } else { tauri::webview::PermissionResponse::Deny }
        })
        .on_page_load(move |window, payload| {
            if payload.event() != PageLoadEvent::Finished {
                return;
            }
            let _ = window.show();
            if !first_load.swap(false, Ordering::SeqCst) {
                return;
            }
            if let Some(target) = &hooks.navigate_to {
                let target = serde_json::to_string(target).expect("strings serialise");
                let _ = window.eval(format!("window.location.href = {target};"));
            }
            if let Some(script) = &hooks.script {
                let _ = window.eval(script);
            }
        })
        .build()?;
    enable_microphone(&window, mock_devices);
    let core = core.clone();
    let hidden = window.clone();
    window.on_window_event(move |event| {
        if let WindowEvent::CloseRequested { api, .. } = event {
            // Closing hides to the tray; on a shared computer a hidden window must not
            // stay unlocked, so the sessions whose role asks for it are locked.
            api.prevent_close();
            let core = core.clone();
            tauri::async_runtime::spawn(async move {
                let locked = core.lock_for_closed_window().await;
                tracing::info!(locked, "window closed: sessions locked");
            });
            let _ = hidden.hide();
        }
    });
    Ok(())
}

/// WebKitGTK offers `getUserMedia` only with its media-stream setting on (off by default).
/// Under the smoke test's hooks, WebKit's own mock devices stand in for a microphone the
/// headless display does not have, so the permission handler is reached as with a real one.
fn enable_microphone(window: &WebviewWindow, mock_devices: bool) {
    #[cfg(target_os = "linux")]
    {
        let done = window.with_webview(move |webview| {
            use webkit2gtk::{SettingsExt, WebViewExt};
            if let Some(settings) = webview.inner().settings() {
                settings.set_enable_media_stream(true);
                if mock_devices {
                    settings.set_enable_mock_capture_devices(true);
                }
            }
        });
        if let Err(err) = done {
            tracing::warn!(%err, "voice input stays off in this window: its media setting could not be changed");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (window, mock_devices);
}

fn build_tray(handle: &AppHandle) -> tauri::Result<()> {
    let open = MenuItem::with_id(handle, "open", "Open", true, None::<&str>)?;
    let new_chat = MenuItem::with_id(handle, "new-chat", "New chat", true, None::<&str>)?;
    let lock = MenuItem::with_id(handle, "lock", "Lock", true, None::<&str>)?;
    let quit_item = MenuItem::with_id(handle, "quit", "Quit", true, None::<&str>)?;
    let menu = Menu::with_items(handle, &[&open, &new_chat, &lock, &quit_item])?;
    let mut tray = TrayIconBuilder::with_id("skald").tooltip("Skald").menu(&menu).show_menu_on_left_click(false);
    if let Some(icon) = handle.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.on_menu_event(|app, event| match event.id.as_ref() {
        "open" => show(app),
        "new-chat" => {
            show(app);
            if let Some(window) = window(app) {
                let _ = window.eval("window.dispatchEvent(new CustomEvent('skald-new-chat'))");
            }
        }
        "lock" => {
            let core = app.state::<CoreHandle>().inner().clone();
            tauri::async_runtime::spawn(async move {
                let locked = core.lock_all().await;
                tracing::info!(locked, "tray: locked");
            });
        }
        "quit" => quit(app, &app.state::<Arc<AtomicBool>>()),
        _ => {}
    })
    .on_tray_icon_event(|tray, event| {
        if let TrayIconEvent::Click { button: MouseButton::Left, button_state: MouseButtonState::Up, .. } = event {
            toggle(tray.app_handle());
        }
    })
    .build(handle)?;
    Ok(())
}

fn window(app: &AppHandle) -> Option<WebviewWindow> {
    app.get_webview_window(WINDOW)
}

fn show(app: &AppHandle) {
    if let Some(window) = window(app) {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
}

fn toggle(app: &AppHandle) {
    match window(app) {
        Some(window) if window.is_visible().unwrap_or(false) => {
            let _ = window.hide();
        }
        Some(_) => show(app),
        None => {}
    }
}

/// Quit: shut the core down cleanly; when it is done, the app exits. Runs once.
fn quit(app: &AppHandle, quitting: &AtomicBool) {
    if quitting.load(Ordering::SeqCst) {
        return;
    }
    if let Some(window) = window(app) {
        let _ = window.hide();
    }
    app.state::<CoreHandle>().shut_down();
}

/// The action type of a reminder's notification: its snooze buttons.
const REMINDER_ACTIONS: &str = "reminder";

/// What an action's identifier starts with when it snoozes (`snooze-10m`, …).
const SNOOZE: &str = "snooze-";

/// Shows the core's notifications. A reminder's has snooze buttons; a click on a job's
/// opens the window where it belongs (the task's conversation, or the Reminders page).
/// Only ids ride on a notification's payload, never words.
fn forward_notifications(handle: &AppHandle, core: &CoreHandle) {
    let notifications = handle.notification();
    let snoozes =
        Snooze::ALL.iter().map(|(_, id)| Action::builder(format!("{SNOOZE}{id}"), snooze_label(id)).build()).collect();
    if let Err(err) =
        notifications.register_action_types(vec![ActionType::builder(REMINDER_ACTIONS).actions(snoozes).build()])
    {
        tracing::warn!(%err, "could not register the reminders' snooze buttons");
    }
    let acting = handle.clone();
    let acting_core = core.clone();
    let _ = notifications.on_action(move |performed| on_notification_action(&acting, &acting_core, performed));

    let mut posted = core.notifications();
    let handle = handle.clone();
    tauri::async_runtime::spawn(async move {
        while let Ok(n) = posted.recv().await {
            let mut shown = handle.notification().builder().title(&n.title).body(&n.body);
            if let Some(job) = &n.job {
                shown = shown.extra("job", &job.id).extra("open", open_target(job));
                if job.snooze {
                    shown = shown.action_type_id(REMINDER_ACTIONS);
                }
            }
            if let Err(err) = shown.show() {
                tracing::warn!(%err, "could not show a desktop notification");
            }
        }
    });
}

/// Where a click on a job's notification goes: the page's address fragment.
fn open_target(job: &FromJob) -> String {
    match &job.conversation {
        Some(conversation) => format!("#/?open={conversation}"),
        None => "#/reminders".to_owned(),
    }
}

fn snooze_label(id: &str) -> &'static str {
    match id {
        "10m" => "Snooze 10 minutes",
        "1h" => "Snooze 1 hour",
        _ => "Until tomorrow",
    }
}

/// A click on a notification (`tap`) or on one of its snooze buttons.
fn on_notification_action(app: &AppHandle, core: &CoreHandle, performed: &ActionPerformed) {
    let extra = performed.notification().map(|n| n.extra());
    let job = extra.and_then(|e| e.get("job")).and_then(|v| v.as_str()).map(|id| JobId::new(id.to_owned()));
    let action = performed.action_id();
    if let Some(length) = action.strip_prefix(SNOOZE).and_then(Snooze::named) {
        let Some(job) = job else { return };
        let core = core.clone();
        tauri::async_runtime::spawn(async move {
            if let Err(err) = core.snooze_job(&job, length).await {
                tracing::warn!(%err, job = %job, "could not snooze a reminder from its notification");
            }
        });
        return;
    }
    if action != "tap" {
        return;
    }
    show(app);
    // Only a fragment this shell made is followed: `#/reminders` or a conversation's id.
    let target = extra.and_then(|e| e.get("open")).and_then(|v| v.as_str()).filter(|t| is_open_target(t));
    if let (Some(target), Some(window)) = (target, window(app)) {
        tracing::info!(%target, "a notification opened the window");
        let target = serde_json::to_string(target).expect("strings serialise");
        let _ = window.eval(format!("window.location.hash = {target};"));
    }
}

/// Whether a fragment is one [`open_target`] makes.
fn is_open_target(target: &str) -> bool {
    target == "#/reminders"
        || target
            .strip_prefix("#/?open=chat_")
            .is_some_and(|id| id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Debug-build test hook: SIGUSR2 does what the tray's Lock does.
fn spawn_lock_on_sigusr2(core: CoreHandle) -> std::io::Result<()> {
    let mut usr1 = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined2())?;
    tauri::async_runtime::spawn(async move {
        while usr1.recv().await.is_some() {
            let locked = core.lock_all().await;
            tracing::info!(locked, "test hook: locked as the tray would");
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn release_builds_have_no_test_hooks_whatever_the_environment() {
        let env = vars(&[("SKALD_TEST_HOOKS", "1"), ("SKALD_TEST_NAVIGATE_TO", "https://example.com/")]);
        assert_eq!(test_hooks(&env, false), None);
        // A release build never reads the script hook's file, let alone runs it.
        let scripted = vars(&[("SKALD_TEST_HOOKS", "1"), ("SKALD_TEST_SCRIPT", "/nonexistent/probe.js")]);
        assert_eq!(test_hooks(&scripted, false), None);
        assert_eq!(
            test_hooks(&env, true),
            Some(TestHooks { navigate_to: Some("https://example.com/".into()), script: None })
        );
        assert_eq!(test_hooks(vars(&[]), true), None);
    }

    #[test]
    fn a_notification_opens_only_the_places_the_shell_names() {
        let conversation = skald::ids::ConversationId::generate().to_string();
        let task =
            FromJob { id: JobId::generate().to_string(), snooze: false, conversation: Some(conversation.clone()) };
        let reminder = FromJob { conversation: None, snooze: true, ..task.clone() };
        assert_eq!(open_target(&task), format!("#/?open={conversation}"));
        assert_eq!(open_target(&reminder), "#/reminders");
        assert!(is_open_target(&open_target(&task)) && is_open_target(&open_target(&reminder)));
        for foreign in ["javascript:alert(1)", "#/?open=chat_\"+alert(1)+\"", "#/admin/people", "https://example.com/"]
        {
            assert!(!is_open_target(foreign), "{foreign}");
        }
    }

    #[test]
    fn the_init_script_carries_origin_and_token_as_string_literals() {
        let script = init_script("http://127.0.0.1:4242", "ab\"c");
        assert!(script.contains(r#"const origin = "http://127.0.0.1:4242";"#));
        assert!(script.contains(r#"const token = "ab\"c";"#));
        assert!(!script.contains("__SKALD_"));
    }
}
