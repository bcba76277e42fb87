//! `memlog scan`: secret-shaped content already stored in the log. The
//! privacy filter keeps secrets out of new events; logs written before a
//! rule existed (or by an earlier memlog) may hold some. The scan runs the
//! filter's rules over every stored event (sealed segments and journals,
//! forgotten events included: their bytes stay in git history until
//! `memlog purge`) and reports, by rule, which events hold what, never the
//! secret itself (with `privacy.pii: true`, personal data too; what the
//! allow-list keeps is not reported). [`flagged_ids`] names the events for
//! `memlog forget --secrets`.

use std::collections::BTreeMap;

use memlog_format::privacy::PrivacyFilter;
use memlog_format::visibility::Forgets;
use memlog_format::{Event, EventId};
use memlog_store::Repo;
use memlog_store::log::{Log, journal_events};
use serde::Serialize;
use serde_json::Value;

use crate::error::{Context, Result};

/// One event holding secret-shaped content.
#[derive(Clone, Debug, Serialize)]
pub struct Flagged {
    /// Its id.
    pub id: EventId,
    /// Its kind.
    pub kind: String,
    /// Its session.
    pub session: String,
    /// When it was recorded.
    pub ts: String,
    /// Whether it is still in a journal (not yet sealed into git).
    pub in_journal: bool,
    /// Whether a `forget` already hides it (`memlog purge` erases it).
    pub forgotten: bool,
    /// The rules that found something in it, one entry per secret.
    pub rules: Vec<String>,
}

/// What one rule found.
#[derive(Clone, Debug, Serialize)]
pub struct RuleFindings {
    /// The rule's id.
    pub rule: String,
    /// Its family.
    pub family: String,
    /// Secrets it found.
    pub secrets: usize,
    /// The events holding them.
    pub events: Vec<EventId>,
}

/// What `memlog scan` found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ScanReport {
    /// Events read (sealed and in journals).
    pub events_scanned: usize,
    /// Findings by rule, the rule finding most first.
    pub rules: Vec<RuleFindings>,
    /// The events holding secret-shaped content, in log order.
    pub flagged: Vec<Flagged>,
}

impl ScanReport {
    /// Whether some flagged event is not forgotten yet.
    pub fn has_live(&self) -> bool {
        self.flagged.iter().any(|f| !f.forgotten)
    }
}

/// Scans every stored event with the privacy filter's rules (the
/// configured patterns included).
pub fn scan(repo: &Repo) -> Result<ScanReport> {
    let (mut sealed, _) = Log::new(repo).events().context("reading the memlog ref")?;
    let journal = journal_events(repo).context("reading journals")?;
    let sealed_count = sealed.len();
    sealed.extend(journal);
    let events = sealed;
    let forgets = Forgets::from_events(events.iter());
    // what the filter of `.memlog.yaml` would redact today: its patterns
    // and allow-list, and personal data when it opts in
    let filter = PrivacyFilter::configured(&repo.config.privacy)?;
    let mut report = ScanReport {
        events_scanned: events.len(),
        ..ScanReport::default()
    };
    let mut by_rule: BTreeMap<&'static str, (usize, Vec<EventId>)> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for (i, event) in events.iter().enumerate() {
        if !seen.insert(event.id.clone()) {
            continue;
        }
        let rules = secrets_in(&filter, event);
        if rules.is_empty() {
            continue;
        }
        for rule in &rules {
            let entry = by_rule.entry(rule).or_default();
            entry.0 += 1;
            if entry.1.last() != Some(&event.id) {
                entry.1.push(event.id.clone());
            }
        }
        report.flagged.push(Flagged {
            id: event.id.clone(),
            kind: event.kind.as_str().to_string(),
            session: event.session.clone(),
            ts: event.ts.clone(),
            in_journal: i >= sealed_count,
            forgotten: forgets.hides(event),
            rules: rules.iter().map(|r| r.to_string()).collect(),
        });
    }
    let families: BTreeMap<&str, &str> = filter
        .rules()
        .iter()
        .map(|r| (r.id, r.family.as_str()))
        .collect();
    report.rules = by_rule
        .into_iter()
        .map(|(rule, (secrets, events))| RuleFindings {
            rule: rule.to_string(),
            family: families.get(rule).copied().unwrap_or("custom").to_string(),
            secrets,
            events,
        })
        .collect();
    report
        .rules
        .sort_by(|a, b| b.secrets.cmp(&a.secrets).then(a.rule.cmp(&b.rule)));
    Ok(report)
}

/// The rules finding secrets in an event's body and metadata.
fn secrets_in(filter: &PrivacyFilter, event: &Event) -> Vec<&'static str> {
    let mut rules = Vec::new();
    for part in [&event.body, &event.meta] {
        let mut copy = Value::Object(part.clone());
        rules.extend(filter.filter_value(&mut copy).rules);
    }
    rules
}

/// Ids of the events the scan flags that no `forget` hides yet: what
/// `memlog forget --secrets` forgets.
pub fn flagged_ids(repo: &Repo) -> Result<Vec<String>> {
    Ok(scan(repo)?
        .flagged
        .into_iter()
        .filter(|f| !f.forgotten)
        .map(|f| f.id.to_string())
        .collect())
}
