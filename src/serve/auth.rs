//! Who may talk to the viewer: a page of this viewer, opened from the URL `sjournal serve`
//! printed, in a browser of this machine. Every request passes [`guard`]:
//!
//! - **Host** must be `127.0.0.1:PORT` or `localhost:PORT`: a name that resolves here only
//!   through DNS rebinding (an attacker's domain pointed at 127.0.0.1) is refused, so a page of
//!   that domain cannot read the viewer as "its own origin".
//! - **Origin**, when the browser sends one, must be this viewer's; `Sec-Fetch-Site` must be
//!   `same-origin` or `none` (typed or opened from the terminal): a page of another site,
//!   or of another port on this machine (same-site), is refused.
//! - **The token** (32 bytes from the operating system's generator, in the printed URL) on
//!   every request: in the cookie set when the URL is first opened (HttpOnly, SameSite=Strict,
//!   named after the port), or in the `X-Sjournal-Token` header. Compared in constant time.
//! - **Writes** (memory review) are POSTs that carry the token in the header (which a page of
//!   another origin cannot set without a CORS preflight, which is refused), an Origin of this
//!   viewer, and a JSON body. Every other method is refused.
//!
//! Every answer, refusals included, carries a Content-Security-Policy that allows script and
//! style from the viewer only (no inline script, no eval, nothing from elsewhere), no framing
//! and no referrer (the first URL holds the token).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

/// The header a page sends its token in.
pub(crate) const TOKEN_HEADER: &str = "x-sjournal-token";

pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// The viewer's access check.
pub struct Guard {
    token: String,
    port: u16,
}

impl Guard {
    /// A guard with a fresh token from the operating system's generator.
    pub fn new(port: u16) -> std::io::Result<Guard> {
        use rand_core::{OsRng, RngCore};
        let mut b = [0u8; 32];
        OsRng
            .try_fill_bytes(&mut b)
            .map_err(|e| std::io::Error::other(format!("no random bytes: {e}")))?;
        Ok(Guard::with_token(
            port,
            b.iter().map(|x| format!("{x:02x}")).collect(),
        ))
    }

    pub fn with_token(port: u16, token: String) -> Guard {
        Guard { token, port }
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    pub fn cookie_name(&self) -> String {
        format!("sjournal_{}", self.port)
    }

    fn token_ok(&self, given: &str) -> bool {
        // Lengths are not secret (every token is 64 hex digits); the bytes are compared in
        // constant time.
        given.len() == self.token.len() && bool::from(given.as_bytes().ct_eq(self.token.as_bytes()))
    }

    fn host_ok(&self, host: &str) -> bool {
        host == format!("127.0.0.1:{}", self.port) || host == format!("localhost:{}", self.port)
    }

    fn origin_ok(&self, origin: &str) -> bool {
        origin == format!("http://127.0.0.1:{}", self.port)
            || origin == format!("http://localhost:{}", self.port)
    }

    fn cookie<'a>(&self, headers: &'a HeaderMap) -> Option<&'a str> {
        let name = self.cookie_name();
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }
}

fn get(h: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// A refusal, said plainly (the page shows it; a person opening a stale URL reads it).
fn refuse(status: StatusCode, why: &str) -> Response {
    let mut r = (status, format!("sjournal serve: refused: {why}\n")).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The query's `token` parameter.
fn query_token(req: &Request) -> Option<String> {
    req.uri().query()?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == "token").then(|| v.to_owned())
    })
}

/// Checks a request as the module says, then adds the security headers to the answer.
pub async fn guard(State(g): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let mut resp = check(&g, req, next).await;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    resp
}

async fn check(g: &Guard, req: Request, next: Next) -> Response {
    let h = req.headers();
    match get(h, header::HOST) {
        Some(host) if g.host_ok(host) => {}
        _ => {
            return refuse(
                StatusCode::MISDIRECTED_REQUEST,
                "the Host header is not 127.0.0.1 or localhost with this port",
            )
        }
    }
    let origin = get(h, header::ORIGIN);
    if origin.is_some_and(|o| !g.origin_ok(o)) {
        return refuse(StatusCode::FORBIDDEN, "a request from another origin");
    }
    if get(h, "sec-fetch-site").is_some_and(|s| s != "same-origin" && s != "none") {
        return refuse(StatusCode::FORBIDDEN, "a request from another site");
    }
    let header_token = get(h, TOKEN_HEADER);
    match *req.method() {
        Method::GET | Method::HEAD => {
            let given = header_token.or_else(|| g.cookie(h));
            if given.is_some_and(|t| g.token_ok(t)) {
                return next.run(req).await;
            }
            // The printed URL: set the cookie and go to the same page without the token in
            // the address bar (or the browser's history).
            if req.uri().path() == "/" {
                if let Some(t) = query_token(&req).filter(|t| g.token_ok(t)) {
                    let cookie =
                        format!("{}={t}; Path=/; HttpOnly; SameSite=Strict", g.cookie_name());
                    let mut r = Response::new(Body::empty());
                    *r.status_mut() = StatusCode::SEE_OTHER;
                    let h = r.headers_mut();
                    h.insert(header::LOCATION, HeaderValue::from_static("/"));
                    if let Ok(v) = HeaderValue::from_str(&cookie) {
                        h.insert(header::SET_COOKIE, v);
                    }
                    return r;
                }
            }
            refuse(
                StatusCode::UNAUTHORIZED,
                "no valid access token: open the URL `sjournal serve` printed (it holds the token)",
            )
        }
        Method::POST => {
            if !header_token.is_some_and(|t| g.token_ok(t)) {
                return refuse(
                    StatusCode::UNAUTHORIZED,
                    "a write needs the access token in the X-Sjournal-Token header",
                );
            }
            if origin.is_none() {
                return refuse(StatusCode::FORBIDDEN, "a write without an Origin header");
            }
            let json = get(h, header::CONTENT_TYPE)
                .is_some_and(|c| c.split(';').next() == Some("application/json"));
            if !json {
                return refuse(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "a write must send application/json",
                );
            }
            next.run(req).await
        }
        _ => refuse(StatusCode::METHOD_NOT_ALLOWED, "only GET and POST"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_host_origin_cookie() {
        let g = Guard::with_token(8123, "ab".repeat(32));
        assert!(g.token_ok(&"ab".repeat(32)));
        assert!(!g.token_ok(&"ab".repeat(31)));
        assert!(!g.token_ok(&format!("{}ac", "ab".repeat(31))));
        assert!(g.host_ok("127.0.0.1:8123") && g.host_ok("localhost:8123"));
        assert!(!g.host_ok("evil.example:8123") && !g.host_ok("127.0.0.1:8124"));
        assert!(g.origin_ok("http://localhost:8123"));
        assert!(!g.origin_ok("http://localhost:8124") && !g.origin_ok("null"));
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; sjournal_8123=xyz; sjournal_1=no"),
        );
        assert_eq!(g.cookie(&h), Some("xyz"));
        let fresh = Guard::new(1).unwrap();
        assert_eq!(fresh.token().len(), 64);
        assert_ne!(fresh.token(), Guard::new(1).unwrap().token());
    }
}
