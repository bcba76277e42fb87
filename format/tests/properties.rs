//! Property tests: any event survives its canonical line; the privacy filter
//! never panics, never lets a closed private span through, and leaves no
//! piece of a secret of any rule's format put anywhere in any text;
//! canonical keys stay within bounds.

use memlog_format::privacy::sample::{SplitMix, expand};
use memlog_format::privacy::{PrivacyFilter, rules};
use memlog_format::{Draft, Event, Kind, key};
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    // ASCII with tag-ish characters, plus Korean and emoji
    prop::collection::vec(
        prop_oneof![
            Just("<private>".to_string()),
            Just("</private>".to_string()),
            Just("[private]".to_string()),
            Just("```\n".to_string()),
            Just("\n".to_string()),
            "[a-zA-Z0-9 _=:/.-]{0,12}",
            "[가-힣 ]{0,6}",
            Just("😀\u{0}\u{1f}\"\\".to_string()),
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn events_round_trip(t in text(), key in "[a-z_]{1,8}", n in any::<i64>(), f in any::<f64>(), seq in any::<u32>()) {
        let mut d = Draft::text("s", "2026-11-22T05:27:21.123Z", Kind::Note, "p", t);
        d.meta.insert(key, serde_json::json!({"n": n, "f": if f.is_finite() { f } else { 0.5 }}));
        let e = d.into_event(seq as u64);
        let back = Event::from_line(&e.canonical_line()).expect("decodes");
        prop_assert_eq!(&back, &e);
        prop_assert_eq!(back.canonical_line(), e.canonical_line());
    }

    #[test]
    fn privacy_filter_is_total(t in text(), secret in "[A-Z]{12}") {
        let f = PrivacyFilter::new(&[]).expect("filter");
        let (out, _) = f.filter_text(&t);
        // a closed span outside code blocks never survives
        let wrapped = format!("{t}\n<private>{secret}</private>");
        let (out2, report) = f.filter_text(&wrapped);
        if !t.contains("```") && report.warnings.is_empty() {
            prop_assert!(!out2.contains(&secret), "{:?}", out2);
        }
        let _ = out;
    }

    #[test]
    fn no_piece_of_a_secret_survives(
        before in text(),
        after in text(),
        rule in any::<prop::sample::Index>(),
        seed in any::<u64>(),
        joint in prop::sample::select(vec!["\n", "\n\n", "\n> ", "\n```\n"]),
    ) {
        let all = rules::builtin();
        let rule = all[rule.index(all.len())];
        let sample = expand(rule.sample, &mut SplitMix::new(seed));
        let text = format!("{before}{joint}{}{joint}{after}", sample.text);
        let f = PrivacyFilter::new(&[]).expect("filter").keyed(b"k");
        let (out, _) = f.filter_text(&text);
        prop_assert!(
            !sample.leaks_into(unmarked(&out).as_bytes()),
            "{}: {:?} -> {:?}", rule.id, text, out
        );
    }

    #[test]
    fn canonical_keys_are_bounded_and_stable(t in text(), p in "[a-z-]{0,10}") {
        let k = key::canonical_key(&t, Some(&p));
        prop_assert!(k.chars().count() <= key::MAX_KEY_LENGTH);
        prop_assert_eq!(&k, &key::canonical_key(&t, Some(&p)));
        // normalising a normalised title changes nothing
        let n = key::normalize(&t);
        prop_assert_eq!(key::normalize(&n), n);
    }
}

/// `out` without its markers, which name the rule (the token's prefix,
/// sometimes).
fn unmarked(out: &str) -> String {
    match regex::Regex::new(r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{4}\]") {
        Ok(markers) => markers.replace_all(out, "").into_owned(),
        Err(_) => out.to_string(),
    }
}
