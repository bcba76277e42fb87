//! The HTTP side of `memlog serve`: who may ask, which route answers, and
//! how answers are written.
//!
//! Every request first passes [`host_allowed`]: a page on another site can
//! make a browser send requests to 127.0.0.1 under its own host name (DNS
//! rebinding), so only a local name or an IP address is accepted in
//! `Host`. A forget also needs the run's token in `X-Memlog-Token`, which
//! no other site can know, and a same-host `Origin` when the browser sends
//! one.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use super::State;
use super::api::{self, ApiError};

pub type Body = UnsyncBoxBody<Bytes, Infallible>;

const INDEX_HTML: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const STYLE_CSS: &str = include_str!("assets/style.css");

/// Largest request body read (a forget's JSON).
const MAX_BODY_BYTES: usize = 64 * 1024;
/// A comment line on idle event streams, so that a closed page is noticed.
const HEARTBEAT: Duration = Duration::from_secs(15);

/// Answers one request.
pub async fn handle(
    state: Arc<State>,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    if !host_allowed(req.headers().get(header::HOST)) {
        return Ok(error(&ApiError::new(
            StatusCode::FORBIDDEN,
            "this server answers only requests addressed to localhost or an IP address",
        )));
    }
    let path = req.uri().path().to_string();
    let query = parse_query(req.uri().query().unwrap_or(""));
    let response = match (req.method(), path.as_str()) {
        (&Method::GET, "/" | "/index.html") => asset(INDEX_HTML, "text/html; charset=utf-8"),
        (&Method::GET, "/app.js") => asset(APP_JS, "text/javascript; charset=utf-8"),
        (&Method::GET, "/style.css") => asset(STYLE_CSS, "text/css; charset=utf-8"),
        (&Method::GET, "/api/live") => live_stream(&state),
        (&Method::GET, "/api/config") => {
            let allow_forget = state.forget_token.is_some();
            blocking(&state, move |site| api::config(site, allow_forget)).await
        }
        (&Method::POST, "/api/forget") => forget(&state, req).await,
        (&Method::GET, p) if p.starts_with("/api/") => {
            let segments: Vec<String> = p["/api/".len()..]
                .split('/')
                .filter(|s| !s.is_empty())
                .map(percent_decode)
                .collect();
            blocking(&state, move |site| api::get(site, &segments, &query)).await
        }
        (_, p) if p.starts_with("/api/") => error(&ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("{} {p} is not supported", req.method()),
        )),
        _ => error(&ApiError::not_found(format!("no page at {path}"))),
    };
    Ok(response)
}

/// Whether the `Host` header names this machine in a way no other site can
/// borrow: `localhost` or an IP address literal (a DNS rebinding attack
/// needs a host name of its own).
pub fn host_allowed(host: Option<&HeaderValue>) -> bool {
    let Some(host) = host.and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let host = host.trim();
    // Strip the port: `[::1]:8080`, `127.0.0.1:8080`, `localhost:8080`.
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, port)) if port.is_empty() || port.starts_with(':') => ip,
            _ => return false,
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            Some(_) => return false,
            None => host,
        }
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok()
}

/// `POST /api/forget`: `{"ids": [...], "session": ..., "before": ...,
/// "reason": ...}` with the run's token; answers what `memlog forget
/// --json` prints.
async fn forget(state: &State, req: Request<Incoming>) -> Response<Body> {
    let Some(token) = &state.forget_token else {
        return error(&ApiError::new(
            StatusCode::FORBIDDEN,
            "this viewer is read-only: start it with `memlog serve --allow-forget` to forget from the browser",
        ));
    };
    let given = req
        .headers()
        .get("x-memlog-token")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !same_secret(given, token) {
        return error(&ApiError::new(
            StatusCode::FORBIDDEN,
            "a forget needs the token `memlog serve --allow-forget` printed (header X-Memlog-Token)",
        ));
    }
    if let (Some(origin), Some(host)) = (
        req.headers().get(header::ORIGIN),
        req.headers().get(header::HOST),
    ) && origin.as_bytes() != format!("http://{}", host.to_str().unwrap_or("")).as_bytes()
    {
        return error(&ApiError::new(
            StatusCode::FORBIDDEN,
            "a forget must come from the viewer's own pages",
        ));
    }
    let body = match Limited::new(req.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => return error(&ApiError::bad_request(format!("reading the request: {e}"))),
    };
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return error(&ApiError::bad_request(format!("the body is not JSON: {e}"))),
    };
    blocking(state, move |site| api::forget(site, &request)).await
}

/// Runs `f` on a blocking thread's site and answers its JSON, with the
/// server's own time in `Server-Timing` (for the browser's devtools and
/// `memlog-bench --serve`).
async fn blocking(
    state: &State,
    f: impl FnOnce(&mut api::Site) -> Result<Value, ApiError> + Send + 'static,
) -> Response<Body> {
    let dir = state.dir.clone();
    let started = Instant::now();
    let answer = tokio::task::spawn_blocking(move || api::with_site(&dir, f))
        .await
        .unwrap_or_else(|e| Err(ApiError::internal(format!("the request failed: {e}"))));
    let mut response = match answer {
        Ok(value) => json_response(StatusCode::OK, &value),
        Err(e) => error(&e),
    };
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    if let Ok(v) = HeaderValue::from_str(&format!("app;dur={ms:.2}")) {
        response.headers_mut().insert("server-timing", v);
    }
    response
}

/// Compares in time independent of where the two differ.
fn same_secret(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// `GET /api/live`: server-sent events, one `index` event each time memory
/// moved (see `live.rs`); pages fetch again when they get one.
fn live_stream(state: &State) -> Response<Body> {
    let rx = state.live.subscribe();
    let stream = futures_util::stream::unfold((rx, true), |(mut rx, first)| async move {
        let chunk = if first {
            // Reconnect quickly after the server restarts.
            "retry: 1000\n: memlog live\n\n".to_string()
        } else {
            tokio::select! {
                changed = rx.changed() => {
                    changed.ok()?;
                    let n = *rx.borrow_and_update();
                    format!("event: index\ndata: {n}\n\n")
                }
                () = tokio::time::sleep(HEARTBEAT) => ": ping\n\n".to_string(),
            }
        };
        Some((
            Ok::<_, Infallible>(Frame::data(Bytes::from(chunk))),
            (rx, false),
        ))
    });
    let mut response = Response::new(StreamBody::new(stream).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn asset(text: &'static str, content_type: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // Scripts and styles from this server only; no framing by other sites.
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    let mut response = Response::new(Full::new(Bytes::from(bytes)).boxed_unsync());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// `{"error": message}` with the error's status.
fn error(e: &ApiError) -> Response<Body> {
    json_response(e.status, &json!({ "error": e.message }))
}

/// `a=1&b=x%20y&b=z` → `{"a": ["1"], "b": ["x y", "z"]}`.
pub fn parse_query(query: &str) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        out.entry(form_decode(k)).or_default().push(form_decode(v));
    }
    out
}

fn form_decode(s: &str) -> String {
    percent_decode(&s.replace('+', " "))
}

/// Decodes `%xx` escapes; invalid ones and invalid UTF-8 are kept as they
/// are (lossily).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(host: &str) -> bool {
        host_allowed(Some(&HeaderValue::from_str(host).expect("header value")))
    }

    #[test]
    fn local_names_and_addresses_pass_the_host_check() {
        for host in [
            "127.0.0.1:7840",
            "localhost:7840",
            "LOCALHOST",
            "[::1]:7840",
            "[::1]",
            "192.168.1.5:80",
        ] {
            assert!(allowed(host), "{host}");
        }
    }

    #[test]
    fn other_names_fail_the_host_check() {
        for host in [
            "evil.example",
            "evil.example:7840",
            "localhost.evil.example",
            "127.0.0.1.nip.io:7840",
            "[::1]evil",
            "",
        ] {
            assert!(!allowed(host), "{host}");
        }
        assert!(!host_allowed(None));
    }

    #[test]
    fn queries_are_decoded() {
        let q = parse_query("q=get+user%20id&kind=note&kind=fact&bad=%zz&e=%E2%9C%93");
        assert_eq!(q["q"], ["get user id"]);
        assert_eq!(q["kind"], ["note", "fact"]);
        assert_eq!(q["bad"], ["%zz"]);
        assert_eq!(q["e"], ["✓"]);
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abd", "abc"));
        assert!(!same_secret("ab", "abc"));
    }
}
