//! One POST of an event to a webhook, with ureq: rustls with the bundled Mozilla roots (or the
//! webhook's `ca_file`), the proxy from `HTTPS_PROXY`/`HTTP_PROXY` if set, no redirects
//! followed (a 3xx is a failure: a redirected POST would reach another URL than the one
//! configured), and one timeout for the whole attempt, connect to last byte.

use std::io::Read;
use std::time::{Duration, Instant};

use crate::config::webhook::{Template, WebhookHandler};
use crate::limits::WEBHOOK_RESPONSE_KEPT_BYTES;
use crate::webhook::redact::Redactor;

/// A webhook ready to send: its URL and headers expanded from the environment.
pub struct Endpoint {
    agent: ureq::Agent,
    url: String,
    headers: Vec<(String, String)>,
    timeout_ms: u64,
    pub redactor: Redactor,
}

/// Why an endpoint could not be prepared: a missing variable, an unreadable `ca_file`. A
/// retry cannot fix it; the message says what to do.
#[derive(Debug)]
pub struct Unprepared {
    pub error: String,
}

/// The headers that tell the receiver which event this is.
pub struct Meta<'a> {
    pub key: &'a str,
    pub webhook: &'a str,
    pub session_stem: &'a str,
    pub seq: u64,
    pub kind: &'a str,
    pub record_hash: &'a str,
    pub attempt: u32,
}

/// How one attempt went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub delivered: bool,
    pub status: Option<u16>,
    /// Redacted.
    pub error: Option<String>,
    /// The start of a failed response's body, redacted.
    pub response: Option<String>,
    pub duration_ms: u64,
}

impl Endpoint {
    pub fn new(
        hook: &WebhookHandler,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Endpoint, Unprepared> {
        let mut secrets = Vec::new();
        let expand = |what: &str, raw: &str, secrets: &mut Vec<String>| {
            Template::parse(raw)
                .and_then(|t| t.expand(env, secrets))
                .map_err(|e| Unprepared {
                    error: format!("{what}: {e}"),
                })
        };
        let url = expand("url", &hook.url, &mut secrets)?;
        let mut headers = Vec::new();
        for (name, raw) in &hook.headers {
            let value = expand(&format!("header {name}"), raw, &mut secrets)?;
            secrets.push(value.clone());
            headers.push((name.clone(), value));
        }
        let redactor = Redactor::new(secrets);
        let mut tls = ureq::tls::TlsConfig::builder();
        if let Some(path) = &hook.ca_file {
            let certs = read_roots(path).map_err(|error| Unprepared { error })?;
            tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&certs));
        }
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_millis(hook.timeout_ms)))
            .max_redirects(0)
            .http_status_as_error(false)
            .user_agent(format!("sjournal/{}", env!("CARGO_PKG_VERSION")))
            .tls_config(tls.build())
            .build()
            .new_agent();
        Ok(Endpoint {
            agent,
            url,
            headers,
            timeout_ms: hook.timeout_ms,
            redactor,
        })
    }

    /// POSTs `body` (the event's JSON) once. Delivered means a 2xx answer.
    pub fn post(&self, body: &[u8], m: &Meta<'_>) -> Sent {
        let start = Instant::now();
        let mut req = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", m.key)
            .header("X-Sjournal-Webhook", m.webhook)
            .header("X-Sjournal-Session", m.session_stem)
            .header("X-Sjournal-Seq", m.seq.to_string())
            .header("X-Sjournal-Event", m.kind)
            .header("X-Sjournal-Record-Hash", m.record_hash)
            .header("X-Sjournal-Attempt", m.attempt.to_string());
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        let result = req.send(body);
        let mut sent = Sent {
            delivered: false,
            status: None,
            error: None,
            response: None,
            duration_ms: 0,
        };
        match result {
            Ok(mut resp) => {
                let status = resp.status();
                sent.status = Some(status.as_u16());
                sent.delivered = status.is_success();
                let mut kept = Vec::new();
                let reader = resp.body_mut().as_reader();
                let _ = reader
                    .take(WEBHOOK_RESPONSE_KEPT_BYTES as u64)
                    .read_to_end(&mut kept);
                if !sent.delivered {
                    sent.error = Some(format!("the endpoint answered {status}"));
                    let text = String::from_utf8_lossy(&kept);
                    let text: String = text.chars().filter(|c| !c.is_control()).collect();
                    if !text.trim().is_empty() {
                        sent.response = Some(self.redactor.clean(text.trim()));
                    }
                }
            }
            Err(e) => sent.error = Some(self.redactor.clean(&describe(&e, self.timeout_ms))),
        }
        sent.duration_ms = start.elapsed().as_millis() as u64;
        sent
    }
}

fn describe(e: &ureq::Error, timeout_ms: u64) -> String {
    match e {
        ureq::Error::Timeout(_) => format!("no complete answer within timeout_ms = {timeout_ms}"),
        ureq::Error::Io(io) => format!("connection: {io}"),
        ureq::Error::HostNotFound => "host not found (DNS)".into(),
        ureq::Error::ConnectionFailed => "connection failed".into(),
        other => other.to_string(),
    }
}

fn read_roots(path: &std::path::Path) -> Result<Vec<ureq::tls::Certificate<'static>>, String> {
    let pem = crate::storage::read_regular(path, crate::storage::Owner::Anyone, 16 << 20).map_err(
        |e| {
            format!(
            "ca_file {}: {e}; point it at a readable PEM file of CA certificates, or remove it \
             to use the bundled roots",
            path.display()
        )
        },
    )?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => return Err(format!("ca_file {}: {e}", path.display())),
        }
    }
    if certs.is_empty() {
        return Err(format!(
            "ca_file {} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
            path.display()
        ));
    }
    Ok(certs)
}
