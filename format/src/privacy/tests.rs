//! The filter's tests: private spans, every rule's true positives (its
//! samples) and true negatives (its format filled with a placeholder, and
//! glued to a word), the syntaxes of assignments, and ordinary code that
//! must come through unchanged.

use super::sample::{SplitMix, expand, placeholder};
use super::*;

fn filter(text: &str) -> (String, Report) {
    PrivacyFilter::new(&[]).unwrap().filter_text(text)
}

/// The text filtered, with markers shortened to `[R:<rule>]` for reading.
fn redacted(text: &str) -> String {
    filter(text).0.replace("[REDACTED:", "[R:")
}

#[test]
fn all_three_tag_forms() {
    let (t, _) = filter("a <private>x</private> b [private]c[/private]");
    assert_eq!(t, "a [PRIVATE] b [PRIVATE]");
    let (t, r) = filter(
        "a <private>x</private> b [PRIVATE]c[/private] d <!-- private -->y<!-- /private --> e",
    );
    assert_eq!(t, "a [PRIVATE] b [PRIVATE] d [PRIVATE] e");
    assert_eq!(r.private_spans, 3);
    let (t, _) = filter("<PRIVATE>Upper</Private> [Private]b[/PRIVATE]");
    assert_eq!(t, "[PRIVATE] [PRIVATE]");
    let (t, _) = filter("multi <private>line\nsecret\n</private> end");
    assert_eq!(t, "multi [PRIVATE] end");
}

#[test]
fn code_blocks_keep_literal_tags() {
    let text = "see:\n```xml\n<private>example</private>\n```\nbut <private>this</private> goes";
    let (t, r) = filter(text);
    assert_eq!(
        t,
        "see:\n```xml\n<private>example</private>\n```\nbut [PRIVATE] goes"
    );
    assert_eq!(r.private_spans, 1);
}

#[test]
fn nested_tags_are_absorbed_by_the_outer_span() {
    let (t, _) = filter("<private>outer <private>inner</private> still outer</private> after");
    assert_eq!(t, "[PRIVATE] after");
}

#[test]
fn unclosed_tag_leaves_text_and_warns() {
    let (t, r) = filter("ok <private>closed</private> then <private>open forever");
    assert_eq!(t, "ok [PRIVATE] then <private>open forever");
    assert_eq!(r.warnings.len(), 1);
    assert!(!r.warnings[0].contains("open forever"));
}

/// HTML allows blanks and attributes in a tag: `<private >` and
/// `<private data-x=1>` open a span as `<private>` does (field test 12c
/// found them stored silently).
#[test]
fn angle_tags_with_blanks_or_attributes_are_tags() {
    for (text, want) in [
        ("a <private >P2</private> b", "a [PRIVATE] b"),
        ("a <private data-x=1>P15</private> b", "a [PRIVATE] b"),
        ("a <private class=\"x\">P3</private > b", "a [PRIVATE] b"),
        ("a <PRIVATE\tlevel=high>P4</Private> b", "a [PRIVATE] b"),
    ] {
        let (out, report) = filter(text);
        assert_eq!(out, want, "{text}");
        assert_eq!(report.private_spans, 1, "{text}");
    }
    // not tags: a self-closing one, one broken across lines, another word
    for text in [
        "a <private /> b",
        "a <private\ndata=1>x</private> b",
        "a <privateer>x</privateer> b",
        "a <private-note>x</private-note> b",
    ] {
        let (out, report) = filter(text);
        assert_eq!((out.as_str(), report.private_spans), (text, 0), "{text}");
    }
    // an unclosed one warns as `<private>` does
    let (_, report) = filter("a <private data-x=1>open forever");
    assert_eq!(report.warnings.len(), 1);
}

#[test]
fn broken_tags_are_not_tags() {
    // docs/DESIGN.md §3: only the exact tag form counts
    let (t, r) = filter("<private\n>x</private> <pri\nvate>y</private>");
    assert_eq!(r.private_spans, 0);
    assert!(t.contains('x') && t.contains('y'));
}

#[test]
fn rule_ids_are_unique_and_expressions_compile() {
    let f = PrivacyFilter::new(&[]).unwrap();
    let mut ids: Vec<&str> = f.rules().iter().map(|r| r.id).collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "duplicate rule ids");
    assert!(count >= 220, "{count} rules");
    for (i, rule) in f.rules().iter().enumerate() {
        if matches!(rule.detect, Detect::Token { .. } | Detect::Assigned { .. }) {
            assert!(f.regex(i).is_some(), "{} does not compile", rule.id);
        }
        assert!(!rule.keywords.is_empty(), "{} has no keyword", rule.id);
    }
}

/// True positives: every rule finds every sample of its format, alone, in
/// a sentence and on a line of a file, and no byte of the secret is left.
#[test]
fn every_rule_finds_its_samples() {
    let f = PrivacyFilter::new(&[]).unwrap().keyed(b"test key");
    let mut rng = SplitMix::new(28);
    let mut failures = Vec::new();
    for rule in f.rules() {
        for round in 0..12 {
            let s = expand(rule.sample, &mut rng);
            let text = match round % 3 {
                0 => s.text.clone(),
                1 => format!("I got this back:\n{}\nwhat now?", s.text),
                _ => format!("# config\n{}\n# end\n", s.text),
            };
            let (out, report) = f.filter_text(&text);
            if out.contains(&s.secret) || !report.rules.contains(&rule.id) {
                failures.push(format!("{}: {text:?} -> {out:?}", rule.id));
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// True negatives: the format filled with a placeholder (`xxxx…`) is not
/// redacted by its rule, and a self-naming token glued to a word is not
/// that token (unless its expression has no word boundary: GitHub's, as in
/// gitleaks).
#[test]
fn every_rule_spares_placeholders_and_glued_words() {
    let f = PrivacyFilter::new(&[]).unwrap();
    let mut rng = SplitMix::new(29);
    let mut failures = Vec::new();
    for rule in f.rules() {
        let p = placeholder(rule.sample);
        let (out, report) = f.filter_text(&p.text);
        if report.rules.contains(&rule.id) {
            failures.push(format!("{} placeholder: {:?} -> {out:?}", rule.id, p.text));
        }
        if let Detect::Token { pattern, .. } = rule.detect
            && (pattern.starts_with(r"\b(") || pattern.starts_with(r"(?i)\b("))
        {
            let s = expand(rule.sample, &mut rng);
            if s.secret == s.text && s.text.as_bytes()[0].is_ascii_alphanumeric() {
                let glued = format!("x{}", s.text);
                let (out, report) = f.filter_text(&glued);
                if report.rules.contains(&rule.id) {
                    failures.push(format!("{} glued: {glued:?} -> {out:?}", rule.id));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn markers_name_the_rule_and_a_keyed_hash() {
    let token = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";
    let text = format!("bot token {token} here");
    let a = PrivacyFilter::new(&[]).unwrap().keyed(b"repo a");
    let b = PrivacyFilter::new(&[]).unwrap().keyed(b"repo b");
    let (out_a, _) = a.filter_text(&text);
    let re =
        regex::Regex::new(r"^bot token \[REDACTED:slack-bot-token:[0-9a-f]{4}\] here$").unwrap();
    assert!(re.is_match(&out_a), "{out_a}");
    // the same secret, the same marker; another repository, another hash
    assert_eq!(a.filter_text(&text).0, out_a);
    let other = "xoxb-123456789012-1234567890123-ZyXwVuTsRqPoNmLkJiHgFeDc";
    assert_ne!(a.filter_text(&format!("bot token {other} here")).0, out_a);
    assert_ne!(b.filter_text(&text).0, out_a);
    // without a key, the rule alone
    assert_eq!(filter(&text).0, "bot token [REDACTED:slack-bot-token] here");
    // filtering twice changes nothing more
    assert_eq!(a.filter_text(&out_a).0, out_a);
}

#[test]
fn the_issue_cases() {
    for (text, want) in [
        // the keyword need not stand before `=`
        (
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9Lr2t1Kc",
            "AWS_SECRET_ACCESS_KEY=[R:aws-secret-access-key]",
        ),
        // the whole value, slashes and padding included
        (
            "Authorization: Bearer q8Vt2mZk/9XyL+pR4w==",
            "Authorization: Bearer [R:bearer-token]",
        ),
        (
            "apiToken := \"q8Vt2mZk9XyLpR4wEeT7\"",
            "apiToken := \"[R:generic-token]\"",
        ),
        (
            "{\"x_token\": \"q8Vt2mZk9XyLpR4wEeT7\"}",
            "{\"x_token\": \"[R:generic-token]\"}",
        ),
        (
            "curl -u admin:Pq8Vt2mZk9 https://api.internal.net",
            "curl -u admin:[R:curl-auth-user] https://api.internal.net",
        ),
        (
            "DATABASE_URL=postgres://app:Pq8Vt2mZk9XyL@db:5432/app",
            "DATABASE_URL=postgres://app:[R:database-url-password]@db:5432/app",
        ),
        ("password=hunter2", "password=[R:generic-password]"),
        (
            "PASSWORD: 'hunter2' ok",
            "PASSWORD: '[R:generic-password]' ok",
        ),
        // leaks the bench found: base32 without a digit, in backticks
        (
            "config loaded: `AKIAQRBFIPSLYEQDQPQQ`",
            "config loaded: `[R:aws-access-token]`",
        ),
        // and a provider's key in a properties file
        (
            "new.relic.user.id=b5tnhuas9snjrtp4gzv316nm4mrqfp21ml8mf828hbgjnmlmt1loyody9wut62n7",
            "new.relic.user.id=[R:new-relic-user-api-id]",
        ),
    ] {
        assert_eq!(redacted(text), want, "{text}");
    }
    // ordinary code is left alone
    for text in [
        "deployment/risk-assessment-engine-worker",
        "def f(password: str) -> None:",
        "if token == None:",
        "pub token: Option<String>,",
        "The API uses Bearer authentication.",
        "fn get_token_by_id() {}",
        "the api key rotates",
        "Secrets manager",
        // one-case words joined by separators are not tokens
        "MAX_CONNECTIONS_PER_HOST_LIMIT AKIA",
        "see AKIA-DOCUMENTATION-PAGES-HERE",
    ] {
        assert_eq!(filter(text).0, text);
    }
}

/// Secrets told in words rather than assigned, as a field test wrote them
/// to an agent; and the sentences and ids near the same words that are not.
#[test]
fn secrets_told_in_words() {
    let secret = "XxQPplH8ACyjkz4jmBQlm7knI4pShZFC8ZrXbeg+";
    for text in [
        "aws secret key: {s}",
        "AWS secret access key is {s}",
        "key AKIAQUMPMHS6PJARB7LM / {s}",
        "AKIAQUMPMHS6PJARB7LM:{s}",
        "credentials: AKIAQUMPMHS6PJARB7LM {s}",
        "my aws creds are `{s}` until Friday",
    ] {
        let text = text.replace("{s}", secret);
        let out = filter(&text).0;
        assert!(!out.contains(secret), "{text} -> {out}");
        assert!(!out.contains("AKIAQUMPMHS6PJARB7LM"), "{text} -> {out}");
    }
    assert_eq!(
        redacted("the password is bWitsITvNsUHbDwx, do not share"),
        "the password is [R:password-in-text], do not share"
    );
    assert_eq!(
        redacted("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9Lr2t1Kc"),
        "AWS_SECRET_ACCESS_KEY=[R:aws-secret-access-key]",
        "an assignment keeps its provider rule's name"
    );
    for text in [
        "the password is required",
        "the password is stored in the vault",
        "aws deploy ran at 3f2a9c81d04e5b7a6c9e8f1d2b3a4c5d6e7f8091 today",
        "aws s3 cp s3://prod-assets/reports/2026/daily-summary.csv .",
        "AWS keys rotate every ninety days according to the security policy",
    ] {
        assert_eq!(filter(text).0, text);
    }
}

#[test]
fn every_syntax_of_an_assignment() {
    let v = "q8Vt2mZk9XyLpR4wEeT7";
    for template in [
        "{\"api_key\": \"V\"}",
        "api_key: V",
        "api_key = \"V\"",
        "[auth]\napi_key = V",
        "API_KEY=V",
        "export API_KEY=\"V\"",
        "<credentials password=\"V\"/>",
        "<password>V</password>",
        "<add key=\"ApiKey\" value=\"V\" />",
        "apiKey := \"V\"",
        "API_KEY ?= V",
        "API_KEY := V",
        "$api_key = 'V';",
        "'api_key' => 'V',",
        "define('API_KEY', 'V');",
        "X-Api-Key: V",
        "Authorization: Basic V",
        "Server=db;User Id=app;Password=V;",
        "https://api.internal.net/v1?api_key=V&page=2",
        "deploy --token V --force",
        "deploy --token=V",
        "client_secret = b\"V\"",
        "{\\\"secret\\\":\\\"V\\\"}",
    ] {
        let text = template.replace('V', v);
        let (out, report) = filter(&text);
        assert!(!out.contains(v), "{text:?} -> {out:?}");
        assert_eq!(report.redactions, 1, "{text:?} -> {out:?}");
    }
}

/// A tool's free-form object can be keyed by the secret itself (an MCP
/// vault's entries): field test 9a found it verbatim on the remote.
#[test]
fn a_secret_that_is_a_json_key_is_redacted() {
    let f = PrivacyFilter::new(&[]).unwrap();
    let key = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
    let mut v = serde_json::json!({
        "entries": {key: "stripe live", "plain": "kept"},
        "note": "nothing here"
    });
    let report = f.filter_value(&mut v);
    let text = v.to_string();
    assert!(!text.contains("4eC39HqLyjWDarjtT1zdp7dc"), "{text}");
    assert_eq!(v["entries"]["plain"], "kept");
    assert!(report.redactions >= 1, "{report:?}");
    assert!(
        v["entries"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.starts_with("[REDACTED:stripe")),
        "{text}"
    );
}

#[test]
fn json_values_under_secret_keys() {
    let f = PrivacyFilter::new(&["ACME-[0-9]{4}".to_string()]).unwrap();
    let mut v = serde_json::json!({
        "command": "curl -H 'Authorization: Bearer q8Vt2mZk9XyLpR4wEeT7' x",
        "env": {"password": "hunter2", "user": "ann", "token_type": "Bearer"},
        "headers": {"Authorization": "Bearer q8Vt2mZk/9XyL+pR4w=="},
        "config": {"TWILIO_AUTH_TOKEN": "0123456789abcdef0123456789abcdef"},
        "list": ["ACME-1234", 3]
    });
    let report = f.filter_value(&mut v);
    assert_eq!(v["env"]["password"], "[REDACTED:generic-password]");
    assert_eq!(v["env"]["user"], "ann");
    assert_eq!(v["env"]["token_type"], "Bearer");
    assert_eq!(
        v["headers"]["Authorization"],
        "Bearer [REDACTED:bearer-token]"
    );
    assert_eq!(
        v["config"]["TWILIO_AUTH_TOKEN"],
        "[REDACTED:twilio-auth-token]"
    );
    assert_eq!(v["list"][0], "[REDACTED:custom-pattern]");
    assert!(
        !v["command"]
            .as_str()
            .unwrap()
            .contains("q8Vt2mZk9XyLpR4wEeT7")
    );
    assert_eq!(report.redactions, 5);
}

#[test]
fn bad_extra_pattern_is_named() {
    let err = PrivacyFilter::new(&["(".to_string()]).err().unwrap();
    assert!(err.to_string().contains("\"(\""), "{err}");
}

#[test]
fn truncation_head_and_tail() {
    let text: String = (0..300).map(|i| format!("line {i}\n")).collect();
    let (t, cut) = truncate_output(&text, 10_000, 100);
    assert!(cut);
    assert!(t.starts_with("line 0\n") && t.contains("line 49\n...[TRUNCATED]...\n"));
    assert!(!t.contains("line 50\n") && t.contains("line 299"));
    let long = "é".repeat(20_000);
    let (t, cut) = truncate_output(&long, 10_000, 100);
    assert!(cut && t.len() <= 10_000 + TRUNCATION_MARKER.len());
    assert_eq!(
        truncate_output("short", 10_000, 100),
        ("short".to_string(), false)
    );
}

/// The ordinary texts of `fixtures/privacy/ordinary/` (code, lockfiles,
/// UUIDs, SHAs, digests, public keys, placeholders): at most one may be
/// altered.
#[test]
fn ordinary_code_comes_through() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/privacy/ordinary");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    assert!(entries.len() >= 28, "{} texts", entries.len());
    let f = PrivacyFilter::new(&[]).unwrap();
    let altered: Vec<String> = entries
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let (out, _) = f.filter_text(&text);
            (out != text).then(|| format!("{}:\n{out}", p.display()))
        })
        .collect();
    assert!(altered.len() <= 1, "{}", altered.join("\n---\n"));
}

#[test]
fn a_provider_is_named_by_a_word_of_the_key() {
    for (key, part, starts) in [
        ("TWILIO_AUTH_TOKEN", "twilio", true),
        ("twilioAuthToken", "auth", true),
        ("X-Twilio-Key", "twilio", true),
        ("GLOBAL_TOKEN", "lob", false),
        ("globalToken", "lob", false),
        ("new.relic.user.id", "new_relic", true),
    ] {
        assert_eq!(super::starts_a_word(key, part), starts, "{key} {part}");
    }
}

fn with_pii(names: &[&str]) -> PrivacyFilter {
    let config = crate::config::PrivacyConfig {
        pii: true,
        names: names.iter().map(|n| n.to_string()).collect(),
        ..Default::default()
    };
    PrivacyFilter::configured(&config).unwrap()
}

/// Personal data is masked only when asked, and ordinary text that looks
/// a little like it (versions, dates, times, ids, paths) is kept.
#[test]
fn pii_is_masked_when_asked_and_ordinary_text_kept() {
    let text = "Ping jane.doe@acme-corp.io or +1 415 555 0123 (office 010-1234-5678); \
                the VM is 10.20.0.7, the proxy 2001:db8::8a2e:370:7334. Jane Doe and 김민수가 agreed.";
    assert_eq!(filter(text).0, text, "personal data is kept unless asked");
    let (out, report) = with_pii(&["Jane Doe", "김민수"]).filter_text(text);
    assert_eq!(
        out.replace("[REDACTED:", "[R:"),
        "Ping [R:email] or [R:phone-number] (office [R:phone-number]); \
         the VM is [R:ip-address], the proxy [R:ip-address]. [R:name] and [R:name]가 agreed."
    );
    assert_eq!(report.redactions, 7);
    // names ignore case, and match whole words only
    let f = with_pii(&["Ann", "x"]);
    assert_eq!(
        f.filter_text("ANN said: Annual report, by ann_b and Ann.")
            .0,
        "[REDACTED:name] said: Annual report, by ann_b and [REDACTED:name]."
    );
    for ordinary in [
        "version 1.22.3, build 10.0.19041.1, tag v1.2.3.4, semver ^4.17.21",
        "2026-03-04T10:15:00Z, 04-03-2026, 2026.03.04, took 1.234s at 10:15:00",
        "id 550e8400-e29b-41d4-a716-446655440000, commit 8bb2aab9f1c3, issue #1234",
        "listening on 0.0.0.0:8080 and 127.0.0.1:3000, ::1, netmask 255.255.255.0",
        "npm i lodash@4.17.21 @types/node; @app.route('/'); y = x@w.transpose()",
        "std::fmt::Display, Vec::<u8>::new(), mac 00:1a:2b:3c:4d:5e",
        "git clone git@github.com:org/repo.git; see admin@example.com",
        "ports 8080-9090, rows 123 456 7890, serial 1234-5678-9012",
        "test result: ok. 73 passed; 0 failed; finished in 1.38s",
    ] {
        assert_eq!(with_pii(&[]).filter_text(ordinary).0, ordinary);
    }
}

/// The ordinary fixtures with personal data on: only the one holding an
/// email (a `git log`) changes, and only there.
#[test]
fn ordinary_code_comes_through_with_pii() {
    let f = with_pii(&[]);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/privacy/ordinary");
    let mut altered = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let (out, report) = f.filter_text(&text);
        if out != text {
            assert_eq!(report.rules, ["email"], "{}:\n{out}", path.display());
            altered.push(path);
        }
    }
    assert!(altered.len() <= 1, "{altered:?}");
}

/// The configured allow-list keeps what a rule would redact, and nothing
/// else changes; an invalid pattern is named.
#[test]
fn the_allow_list_keeps_what_it_matches() {
    let config = crate::config::PrivacyConfig {
        allow: vec!["^sk_test_".into(), r"^support@acme\.io$".into()],
        pii: true,
        ..Default::default()
    };
    let f = PrivacyFilter::configured(&config).unwrap();
    let text = "STRIPE_KEY=sk_test_4eC39HqLyjWDarjtT1zdp7dc, live sk_live_4eC39HqLyjWDarjtT1zdp7dcXyZ, \
                mail support@acme.io or jane@acme.io";
    let (out, report) = f.filter_text(text);
    assert_eq!(
        out.replace("[REDACTED:", "[R:"),
        "STRIPE_KEY=sk_test_4eC39HqLyjWDarjtT1zdp7dc, live [R:stripe-access-token], \
         mail support@acme.io or [R:email]"
    );
    assert_eq!(report.rules, ["stripe-access-token", "email"]);
    let bad = crate::config::PrivacyConfig {
        allow: vec!["(".into()],
        ..Default::default()
    };
    let err = PrivacyFilter::configured(&bad).err().unwrap().to_string();
    assert!(err.contains("privacy allow pattern \"(\""), "{err}");
}

#[test]
fn a_key_made_from_a_filtered_text_is_made_again_from_it() {
    use crate::key::canonical_key;
    let f = PrivacyFilter::new(&[]).unwrap();
    let title =
        "rotate twilio key SKeaed46725a2a7b860dcd6c8a1f8b4628 for <private>Dr Okafor</private>";
    let blocker = "waiting on AKIAUJZDEGXDNCF32EPF to be revoked";
    let mut body = serde_json::json!({
        "key": canonical_key(title, Some("shop")),
        "title": title,
        "status": "pending",
        "blockers": [{
            "kind": "condition",
            "entity_id": format!("cond:{}", canonical_key(blocker, Some("shop"))),
            "raw_text": blocker,
        }],
        // not made from the title: left as it is
        "source": "cli",
    });
    f.filter_value(&mut body);
    let title_now = body["title"].as_str().unwrap();
    assert!(!title_now.contains("SKeaed"), "{title_now}");
    assert_eq!(body["key"], canonical_key(title_now, Some("shop")));
    let key = body["key"].as_str().unwrap();
    assert!(!key.contains("skeaed") && !key.contains("okafor"), "{key}");
    let raw_now = body["blockers"][0]["raw_text"].as_str().unwrap();
    assert_eq!(
        body["blockers"][0]["entity_id"],
        format!("cond:{}", canonical_key(raw_now, Some("shop")))
    );
    assert!(!body.to_string().contains("akiaujzdegxdncf32epf"), "{body}");
    assert_eq!(body["source"], "cli");
    assert_eq!(body["status"], "pending");
}

#[test]
fn encoded_secrets_are_read_decoded_and_redacted_whole() {
    let b64 = "Z2hvX2lTMkc4TlBSVmRENTNYODNSWkp6enp6Z0VPemRtZW5Da2h2TQ==";
    let out = redacted(&format!("the CI secret (base64) is {b64}"));
    assert_eq!(out.matches("[R:").count(), 1, "{out}");
    assert!(!out.contains("Z2hv"), "{out}");
    let url = "https%3A%2F%2Fhooks.slack.com%2Fservices%2F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TWmE4";
    let out = redacted(&format!("curl -d url={url} https://api.example.com"));
    assert!(out.contains("[R:slack-webhook-url"), "{out}");
    assert!(!out.contains("MVN2FEN5"), "{out}");
    // in hex, and in base64 of base64 (gitleaks decodes as deep)
    for encoded in [
        "746f6b656e3d67686f5f69533247384e50525664443533583833525a4a7a7a7a7a67454f7a646d656e436b68764d",
        "WjJodlgybFRNa2M0VGxCU1ZtUkVOVE5ZT0ROU1drcDZlbnA2WjBWUGVtUnRaVzVEYTJoMlRRPT0=",
    ] {
        let out = redacted(&format!("the value is {encoded}"));
        assert!(out.contains("[R:github-oauth"), "{out}");
    }
    // what decodes to no secret, or to no text, is left as it is
    for plain in [
        "6a75737420736f6d65206f7264696e6172792074657874",
        "commit 1fa1c257c6f561c5cb347611a3ce9d97dcbee500",
        // "hello world, nothing to see here" in base64
        "aGVsbG8gd29ybGQsIG5vdGhpbmcgdG8gc2VlIGhlcmU=",
        // a PNG header
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
        "search?q=rust%20traits%20and%20generics",
    ] {
        assert_eq!(redacted(plain), plain);
    }
}

/// JSON writers print `/` as `\/` and may write `@` as `\u0040`: the
/// credentials of such a URL are redacted as their unescaped twin's are,
/// in place (field test 12c).
#[test]
fn json_escaped_urls_are_read_unescaped() {
    for (text, want) in [
        (
            r"postgres:\/\/app:Tq8Wm3Zr6Kp1Lx4N@db.internal:5432\/prod",
            r"postgres:\/\/app:[R:database-url-password]@db.internal:5432\/prod",
        ),
        (
            r#"{"DATABASE_URL":"mysql:\/\/root:Tq8Wm3Zr6Kp1Lx4N@db:3306\/app"}"#,
            r#"{"DATABASE_URL":"mysql:\/\/root:[R:database-url-password]@db:3306\/app"}"#,
        ),
        (
            r#"{"remote":"https:\/\/deploy:Hv2Bn7Qc5Rt9Yw3E@git.example.org\/acme\/shop.git"}"#,
            r#"{"remote":"https:\/\/deploy:[R:url-basic-auth]@git.example.org\/acme\/shop.git"}"#,
        ),
        (
            r#"{"url":"postgres://app:Tq8Wm3Zr6Kp1Lx4N\u0040db.internal/prod"}"#,
            r#"{"url":"postgres://app:[R:database-url-password]\u0040db.internal/prod"}"#,
        ),
        // escaped twice (JSON in a JSON string)
        (
            r#"{\"url\":\"postgres:\\\/\\\/app:Tq8Wm3Zr6Kp1Lx4N@db\\\/prod\"}"#,
            r#"{\"url\":\"postgres:\\\/\\\/app:[R:database-url-password]@db\\\/prod\"}"#,
        ),
    ] {
        assert_eq!(redacted(text), want, "{text}");
    }
    let webhook =
        r"https:\/\/hooks.slack.com\/services\/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";
    let out = redacted(&format!("hook: {webhook}"));
    assert!(out.contains("[R:slack-webhook-url"), "{out}");
    assert!(!out.contains("Zx9Qw8Er7Ty6Ui5Op4As3Df2"), "{out}");
    // escaped JSON with no secret is left as it is
    for plain in [
        r#"{"homepage":"https:\/\/example.org\/docs","name":"caf\u00e9"}"#,
        r#"{"repo":"git@github.com:org\/repo.git","path":"C:\\Users\\me"}"#,
    ] {
        assert_eq!(redacted(plain), plain);
    }
}

/// Session cookies are credentials: the secret-shaped values of `Cookie:`,
/// `Set-Cookie:`, `curl -b` and `--cookie` are redacted, and prose about
/// cookies and short values are not (field test 12c).
#[test]
fn session_cookies_are_redacted() {
    for (text, want) in [
        (
            "Cookie: sessionid=8f3a9c1d7e2b4f6a0c5d9e8b7a6f5e4d; theme=dark",
            "Cookie: sessionid=[R:http-cookie]; theme=dark",
        ),
        (
            "Set-Cookie: session=eyJ1c2VyIjoxMjN9.Zk3aBc.Xy7_QwErTyUiOp9AsDfGhJkL; HttpOnly; Path=/",
            "Set-Cookie: session=[R:http-cookie]; HttpOnly; Path=/",
        ),
        (
            "curl -b 'sessionid=8f3a9c1d7e2b4f6a0c5d9e8b7a6f5e4d' https://app.internal/",
            "curl -b 'sessionid=[R:http-cookie]' https://app.internal/",
        ),
        (
            "curl --cookie \"sid=Zk3aBcXy7QwErTyUiOp9AsDf; lang=en\" https://app.internal/",
            "curl --cookie \"sid=[R:http-cookie]; lang=en\" https://app.internal/",
        ),
        (
            "curl -sS -H 'Cookie: a=1; sessionid=db71abb96aa42bba6a82bf1774f1b92f' http://127.0.0.1:9/api",
            "curl -sS -H 'Cookie: a=1; sessionid=[R:http-cookie]' http://127.0.0.1:9/api",
        ),
        (
            "{\"headers\": {\"Cookie\": \"connect.sid=s%3AZk3aBcXy7QwErTyUiOp9AsDfGhJkL\"}}",
            "{\"headers\": {\"Cookie\": \"connect.sid=[R:http-cookie]\"}}",
        ),
    ] {
        assert_eq!(redacted(text), want, "{text}");
    }
    for text in [
        "The Cookie: header carries the session; see the docs.",
        "Set-Cookie: theme=dark; Path=/; Max-Age=3600",
        "cookies = load_cookies(); cookie_jar.save(); curl -b cookies.txt https://x.org",
        "document.cookie = \"lang=en-US\";",
        "a cookie banner asks for consent",
    ] {
        assert_eq!(filter(text).0, text);
    }
}

/// An agent that cuts an output itself may cut a token in two and say
/// nothing (Claude Code keeps 30 000 characters of a Bash output): a token
/// cut short where the text or a line ends is redacted, from its start
/// (field test 12c).
#[test]
fn a_token_cut_short_at_the_end_is_redacted() {
    let pad = "a".repeat(200);
    for text in [
        format!("{pad} ghp_Q7w3E9r5T1y8U4i6O2p0A5s7"),
        format!("{pad} ghp_Q7w3E9r5T1y8U4i6O2p0A5s7\nstderr: warning"),
        format!("{pad} ghp_Q7w3E9r5"),
        "export SLACK=xoxb-123456789012-12345678".to_string(),
        "key AKIAQRBFIP".to_string(),
    ] {
        let out = filter(&text).0;
        for piece in ["Q7w3E9r5", "12345678", "QRBFIP"] {
            assert!(!out.contains(piece), "{text:?} -> {out:?}");
        }
        assert!(out.contains("[REDACTED:"), "{text:?} -> {out:?}");
    }
    // whole tokens keep their own rule; a prefix said in words, a word
    // that merely starts like one, a token's prefix alone, and a
    // placeholder are left alone
    assert_eq!(
        redacted("ghp_Q7w3E9r5T1y8U4i6O2p0A5s7D3f9G1h4J6k8"),
        "[R:github-pat]"
    );
    for text in [
        "GitHub tokens start with ghp_",
        "see ghp_abc",
        "a sentence that ends in ghp_Q7w3E9r5T1y8U4i6O2p0A5s7, then goes on",
        "token: ghp_xxxxxxxxxxxxxxxx",
        "the AKIA prefix marks an access key id",
        "run dapi",
        "paths: src/skills/pattern_matching",
    ] {
        assert_eq!(filter(text).0, text);
    }
}

/// An agent that keeps an output's end may cut a private key's BEGIN line
/// off: its body lines and END line are redacted, from the text's start or
/// its first body line (field test 12c).
#[test]
fn a_private_key_without_its_begin_line_is_redacted() {
    let body = [
        "OCPEMrF91QQlUI7p5rEiHvQspaKUEUvxj6eZxrNWcuz07esXpZwRqHFQgesZ/n8S",
        "OCPEMPxTbsWhBS42op6371XDWfe55KfgPt7QGOy8Zgq+oDxsonGHixeRGS6Ab2z+",
        "Zk3aBcXy7QwErTyUiOp9AsDfGhJkL==",
    ];
    let tail = format!("{}\n-----END RSA PRIVATE KEY-----", body.join("\n"));
    for (text, kept) in [
        // the output starts inside the key
        (
            format!("{tail}\nlog line 1016 ok\n"),
            "\nlog line 1016 ok\n",
        ),
        // after lines of its own
        (format!("log line 984 ok\n{tail}\n"), "log line 984 ok\n"),
        // escaped in a JSON string, the key's name before its first line
        (
            format!(
                "{{\"key\": \"{}\\n-----END PRIVATE KEY-----\\n\"}}",
                body.join("\\n")
            ),
            "{\"key\": \"",
        ),
        // quoted in a reply, indented
        (
            format!(
                "> {}\n> -----END OPENSSH PRIVATE KEY-----",
                body.join("\n> ")
            ),
            "",
        ),
    ] {
        let out = filter(&text).0;
        for line in body {
            assert!(!out.contains(&line[..20]), "{text:?} -> {out:?}");
        }
        assert!(out.contains(kept), "{text:?} -> {out:?}");
        assert!(
            out.contains("[REDACTED:private-key-tail]"),
            "{text:?} -> {out:?}"
        );
    }
    // a whole block keeps its rule; a public key's END is no private key
    let whole = format!("-----BEGIN RSA PRIVATE KEY-----\n{tail}");
    assert_eq!(redacted(&whole), "[R:private-key]");
    let public = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----";
    assert_eq!(filter(public).0, public);
}

/// A GitHub token glued to a word by `_` or a letter is still the token,
/// as gitleaks reads it (field test 12c).
#[test]
fn a_github_token_glued_to_a_word_is_redacted() {
    let token = "ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c";
    for (text, want) in [
        (
            format!("cp creds backup_{token}.txt"),
            "cp creds backup_[R:github-pat].txt",
        ),
        (format!("{token}_old"), "[R:github-pat]_old"),
        (format!("tok{token}"), "tok[R:github-pat]"),
        (
            "x_gho_16C7e42F292c6912E7710c838347Ae178B4a".to_string(),
            "x_[R:github-oauth]",
        ),
    ] {
        assert_eq!(redacted(&text), want, "{text}");
    }
    // not a token: too short, or an identifier
    for text in ["fn fetch_ghp_token_for_user() {}", "ghp_short_name"] {
        assert_eq!(filter(text).0, text);
    }
}

/// A YAML value on the line below its key, as a block scalar or a plain
/// one, is redacted as the same value on the key's line (field test 12c).
#[test]
fn a_yaml_value_below_its_key_is_redacted() {
    for (text, want) in [
        (
            "password: |\n  Tq8Wm3Zr6Kp1Lx4N\n",
            "password: |\n  [R:generic-password]\n",
        ),
        (
            "api_key:\n  Zx9Qw8Er7Ty6Ui5OpAs3Df2",
            "api_key:\n  [R:generic-api-key]",
        ),
    ] {
        assert_eq!(redacted(text), want, "{text}");
    }
    for text in [
        "password:\n  min_length: 12\n  require_digit: true",
        "token:\n  - read\n  - write",
        "secret: |\n  not a single word of it is shaped like a secret",
    ] {
        assert_eq!(filter(text).0, text);
    }
}

/// A password under a label in another language is redacted where the
/// English word's would be (field test 12c: `Пароль: …` from a mixed
/// Korean and Cyrillic prompt was stored).
#[test]
fn password_labels_in_other_languages() {
    let v = "qIpbYAFOOaRvTECg5a";
    for label in [
        "Пароль: V",
        "пароль=V",
        "비밀번호: V",
        "제 비밀번호: 'V'",
        "パスワード：V",
        "密码 = V",
        "密碼：V",
        "contraseña: V",
        "mot de passe : V",
        "mot_de_passe=V",
        "Passwort: V",
        "DB_KENNWORT=V",
        "contrasena: V",
    ] {
        let text = label.replace('V', v);
        let (out, report) = filter(&text);
        assert!(!out.contains(v), "{text:?} -> {out:?}");
        assert_eq!(report.rules, ["generic-password"], "{text:?} -> {out:?}");
    }
    let f = PrivacyFilter::new(&[]).unwrap();
    let mut json = serde_json::json!({"пароль": v, "비밀번호": v});
    f.filter_value(&mut json);
    assert!(!json.to_string().contains(v), "{json}");
    // prose, and words of the label's script after it, are left alone
    for text in [
        "Пароль: обязательное поле",
        "비밀번호를 잊으셨나요?",
        "パスワードを忘れた場合",
        "mot de passe oublié",
        "Passwort vergessen? Kennwort ändern",
        "les passes: 3",
    ] {
        assert_eq!(filter(text).0, text);
    }
}
