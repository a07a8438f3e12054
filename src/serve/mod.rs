//! `sjournal serve`: a local web viewer a person keeps open while agents work. Every session
//! under the root, live; one session's timeline with a replay slider; search; memory review;
//! verify and doctor. Built with the `viewer` feature.
//!
//! - **Where it listens**: 127.0.0.1 only, on the port asked for (any free one by default).
//!   Who may talk to it is `auth`'s: the token in the printed URL, on every request; this
//!   viewer's origin only; writes as POSTs with the token in a header.
//! - **What it reads**: the journals, as a reader (`index`): a shared lock while a file is
//!   mapped, never a writer's lock, no spool merged, no snapshot written. A page is built from
//!   the library (`views`) on a blocking thread; the HTTP side (axum on tokio) only routes.
//! - **What it writes**: memory review decisions, through `memory::ops`, as
//!   `sjournal memory accept|reject|edit|forget` writes them; and a search brings the search
//!   index (`<root>/search/`, a derived read model) up to date first, as `sjournal search`
//!   does.
//! - **Live**: inotify on `sessions/`; a change reads only what that journal gained since the
//!   last read, and is pushed to every open page as a server-sent event.
//! - **What the page is**: one HTML page, a script and a stylesheet, embedded in the binary
//!   (`assets/`; no CDN, no build step). The script puts every journal text into the page as
//!   a text node, never as markup, and the text is escaped as the command line escapes it
//!   (control characters, terminal escapes and bidi controls shown, not obeyed; `text`).

mod auth;
mod index;
mod search;
mod text;
mod views;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

pub use index::{Brief, Index, Live, Loaded, Summary, HOT_STATES};
#[cfg(feature = "search")]
pub use search::Engine as SearchEngine;
pub use search::{Hit, NotBuilt, Query as SearchQuery, Search, Status as SearchStatus};
pub use views::{Answer, CheckpointRequest, Failed, MemoryRequest, Views, WINDOW};

use crate::context::Policy;
use crate::error::{Error, Result};
use crate::journal::{Root, WriterOptions};

/// What `doctor` would say, as its JSON report (`sjournal doctor --json`); the command line
/// owns the checks and hands them in.
pub type Doctor = Arc<dyn Fn() -> Value + Send + Sync>;

/// How to serve.
pub struct Options {
    /// 0: any free port.
    pub port: u16,
    /// The injection policy the hook ran with (the root's config.toml), for the replay's
    /// re-derivation.
    pub policy: Policy,
    pub writer: WriterOptions,
    pub search: Arc<dyn Search>,
    pub doctor: Option<Doctor>,
}

/// The viewer, listening.
#[derive(Debug, Clone)]
pub struct Started {
    pub addr: SocketAddr,
    /// The URL to open: it holds the token.
    pub url: String,
}

const HTML: &str = include_str!("assets/index.html");
const JS: &str = include_str!("assets/app.js");
const CSS: &str = include_str!("assets/app.css");
const ICON: &str = include_str!("assets/icon.svg");

#[derive(Clone)]
struct App {
    views: Arc<Views>,
    index: Arc<Index>,
    search: Arc<dyn Search>,
    doctor: Option<Doctor>,
    token: Arc<str>,
}

/// Serves until the process is stopped. `started` is called once the socket listens, with
/// the URL to open.
pub fn serve(root: Root, opts: Options, started: impl FnOnce(&Started)) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("sjournal-serve")
        .build()
        .map_err(|e| Error::io("start", "the viewer's runtime", e))?;
    rt.block_on(run(root, opts, started))
}

async fn run(root: Root, opts: Options, started: impl FnOnce(&Started)) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", opts.port))
        .await
        .map_err(|e| Error::io("listen on", format!("127.0.0.1:{}", opts.port), e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("listen on", "127.0.0.1", e))?;
    let guard = Arc::new(
        auth::Guard::new(addr.port()).map_err(|e| Error::io("make", "the access token", e))?,
    );
    // `sessions/` must exist to be watched; a root that is not there yet is made as a writer
    // would make it (0700).
    root.ensure()?;
    let index = Arc::new(Index::new(root.clone(), opts.writer.clone()));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let _watcher = index::watch(&root, tx).map_err(|e| Error::InvalidInput {
        reason: format!(
            "cannot watch {} for changes: {e} (on Linux, raise fs.inotify.max_user_watches)",
            root.sessions_dir().display()
        ),
    })?;
    let live = index.clone();
    tokio::spawn(async move {
        while let Some(first) = rx.recv().await {
            let mut keys = std::collections::BTreeSet::from([first]);
            while let Ok(k) = rx.try_recv() {
                keys.insert(k);
            }
            let ix = live.clone();
            let _ = tokio::task::spawn_blocking(move || ix.changed(&keys)).await;
        }
    });
    let first = index.clone();
    tokio::task::spawn_blocking(move || first.load_all());
    let views = Arc::new(Views::new(index.clone(), opts.policy, opts.writer));
    let app = App {
        views,
        index,
        search: opts.search,
        doctor: opts.doctor,
        token: guard.token().into(),
    };
    let url = format!("http://127.0.0.1:{}/?token={}", addr.port(), guard.token());
    let router = router(app, guard);
    started(&Started { addr, url });
    axum::serve(listener, router)
        .await
        .map_err(|e| Error::io("serve on", addr.to_string(), e))
}

fn router(app: App, guard: Arc<auth::Guard>) -> Router {
    Router::new()
        .route("/", get(page))
        .route(
            "/app.js",
            get(|| async { asset(JS, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/app.css",
            get(|| async { asset(CSS, "text/css; charset=utf-8") }),
        )
        .route("/icon.svg", get(|| async { asset(ICON, "image/svg+xml") }))
        .route("/api/sessions", get(sessions))
        .route("/api/live", get(live))
        .route("/api/session/{key}", get(session))
        .route("/api/session/{key}/records", get(records))
        .route("/api/session/{key}/timeline", get(timeline))
        .route("/api/session/{key}/at/{seq}", get(at))
        .route("/api/search", get(search))
        .route("/api/memory", get(memory).post(memory_op))
        .route("/api/verify", get(verify))
        .route("/api/checkpoint", axum::routing::post(checkpoint))
        .route("/api/doctor", get(doctor))
        .with_state(app)
        .layer(axum::middleware::from_fn_with_state(guard, auth::guard))
}

fn asset(body: &'static str, ty: &'static str) -> Response {
    ([(header::CONTENT_TYPE, ty)], body).into_response()
}

/// The page, with the token for the page's own writes in a meta tag (no inline script).
async fn page(State(app): State<App>) -> Response {
    let html = HTML.replace("{{TOKEN}}", &app.token);
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

/// Runs a page's work on a blocking thread; the answer carries its server time
/// (`Server-Timing: app;dur=MS`).
async fn answer(work: impl FnOnce() -> Answer + Send + 'static) -> Response {
    let t0 = Instant::now();
    let r = tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(Failed(500, format!("the page failed: {e}"))));
    let ms = t0.elapsed().as_secs_f64() * 1000.0;
    let mut resp = match r {
        Ok(v) => Json(v).into_response(),
        Err(Failed(status, msg)) => (
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            Json(json!({"error": msg})),
        )
            .into_response(),
    };
    if let Ok(v) = HeaderValue::from_str(&format!("app;dur={ms:.2}")) {
        resp.headers_mut().insert("server-timing", v);
    }
    resp
}

async fn sessions(State(app): State<App>) -> Response {
    answer(move || app.views.sessions()).await
}

async fn session(State(app): State<App>, Path(key): Path<String>) -> Response {
    answer(move || app.views.session(&key)).await
}

#[derive(serde::Deserialize)]
struct TimelineQuery {
    before: Option<u64>,
}

async fn timeline(
    State(app): State<App>,
    Path(key): Path<String>,
    Query(q): Query<TimelineQuery>,
) -> Response {
    answer(move || app.views.timeline(&key, q.before)).await
}

#[derive(serde::Deserialize)]
struct RecordsQuery {
    from: Option<u64>,
    limit: Option<usize>,
}

async fn records(
    State(app): State<App>,
    Path(key): Path<String>,
    Query(q): Query<RecordsQuery>,
) -> Response {
    answer(move || {
        app.views
            .records(&key, q.from.unwrap_or(1), q.limit.unwrap_or(100))
    })
    .await
}

async fn at(State(app): State<App>, Path((key, seq)): Path<(String, u64)>) -> Response {
    answer(move || app.views.at(&key, seq)).await
}

async fn memory(State(app): State<App>) -> Response {
    answer(move || app.views.memory()).await
}

async fn memory_op(State(app): State<App>, Json(req): Json<MemoryRequest>) -> Response {
    answer(move || app.views.memory_op(&req)).await
}

async fn verify(State(app): State<App>) -> Response {
    answer(move || app.views.verify()).await
}

async fn checkpoint(State(app): State<App>, Json(req): Json<CheckpointRequest>) -> Response {
    answer(move || app.views.checkpoint(&req)).await
}

async fn doctor(State(app): State<App>) -> Response {
    answer(move || match &app.doctor {
        Some(d) => Ok(text::value(d())),
        None => Ok(json!({"unavailable": true})),
    })
    .await
}

#[derive(serde::Deserialize)]
struct SearchParams {
    #[serde(default)]
    q: String,
    project: Option<String>,
    session: Option<String>,
    kind: Option<String>,
    limit: Option<usize>,
}

async fn search(State(app): State<App>, Query(p): Query<SearchParams>) -> Response {
    answer(move || {
        let status = app.search.status();
        if !status.available || p.q.trim().is_empty() {
            return Ok(json!({"status": status, "hits": []}));
        }
        let q = SearchQuery {
            q: p.q,
            project: p.project,
            session: p.session,
            kinds: p
                .kind
                .map(|k| k.split(',').map(str::to_owned).collect())
                .unwrap_or_default(),
            since_ns: None,
            until_ns: None,
            limit: Some(p.limit.unwrap_or(50).min(200)),
        };
        let hits = app
            .search
            .search(&q)
            .map_err(|e| Failed(400, text::line(&e)))?;
        let hits: Vec<Value> = hits.iter().map(|h| shown_hit(&app.index, h)).collect();
        Ok(json!({"status": status, "hits": hits}))
    })
    .await
}

/// A hit as the page shows it: its snippet cut at the matches first, then each part escaped
/// on its own, so escaping never moves a highlight and no highlight is ever made of the
/// snippet's text (the page makes a `<mark>` element of each `hit` part, holding it as a text
/// node). Linked to its session at the record when the record is in a journal the index has.
fn shown_hit(index: &Index, h: &Hit) -> Value {
    let parts: Vec<Value> = cut(&h.snippet, &h.matches)
        .into_iter()
        .map(|(t, hit)| json!({"text": text::line(t), "hit": hit}))
        .collect();
    let key = crate::journal::paths::file_stem(&h.session)
        .ok()
        .filter(|k| h.in_journal && index.summary(k).is_some());
    json!({"session": text::line(&h.session), "key": key, "seq": h.seq, "ts": h.ts_unix_ns,
           "kind": text::line(&h.kind), "hash": h.hash, "parts": parts,
           "mark": text::opt(h.mark.as_deref())})
}

/// `s` cut at the byte ranges `matches` (in order; a range that overlaps the one before, or
/// does not fall on characters, is moved or dropped): the parts, each marked as a match or
/// not.
fn cut<'a>(s: &'a str, matches: &[(usize, usize)]) -> Vec<(&'a str, bool)> {
    let mut parts = Vec::new();
    let mut at = 0;
    for &(b, e) in matches {
        let (b, e) = (b.clamp(at, s.len()), e.clamp(at, s.len()));
        if e <= b || !s.is_char_boundary(b) || !s.is_char_boundary(e) {
            continue;
        }
        if b > at {
            parts.push((&s[at..b], false));
        }
        parts.push((&s[b..e], true));
        at = e;
    }
    if at < s.len() {
        parts.push((&s[at..], false));
    }
    parts
}

/// Server-sent events: every change the index reads, as it reads it.
async fn live(
    State(app): State<App>,
) -> Sse<impl futures_util::Stream<Item = std::result::Result<Event, Infallible>>> {
    use futures_util::StreamExt;
    let rx = app.index.subscribe();
    let hello =
        futures_util::stream::once(async { Ok(Event::default().data(r#"{"type":"hello"}"#)) });
    let changes = futures_util::stream::unfold(rx, |mut rx| async move {
        use tokio::sync::broadcast::error::RecvError;
        let data = match rx.recv().await {
            Ok(ev) => serde_json::to_string(&*ev).unwrap_or_default(),
            // Missed changes: the page loads again what it shows.
            Err(RecvError::Lagged(_)) => r#"{"type":"resync"}"#.to_owned(),
            Err(RecvError::Closed) => return None,
        };
        Some((Ok(Event::default().data(data)), rx))
    });
    Sse::new(hello.chain(changes)).keep_alive(KeepAlive::default())
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn a_snippet_is_cut_at_its_matches_before_anything_is_escaped() {
        let s = "é <b>axolotl</b> \x1b[2J axolotl";
        let b = s.find("axolotl").unwrap();
        let l = s.rfind("axolotl").unwrap();
        assert_eq!(
            cut(s, &[(b, b + 7), (l, l + 7)]),
            [
                ("é <b>", false),
                ("axolotl", true),
                ("</b> \x1b[2J ", false),
                ("axolotl", true)
            ]
        );
        // Ranges that overlap, run past the end or split a character are moved or dropped.
        assert_eq!(
            cut("éa", &[(1, 2), (0, 2), (1, 9)]),
            [("é", true), ("a", true)]
        );
        assert_eq!(cut("abc", &[(5, 9)]), [("abc", false)]);
    }
}
