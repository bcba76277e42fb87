//! `.memlog.yaml`: the per-repository configuration, at the root of the
//! working tree. Every field is optional; unknown fields are an error so a
//! typo does not silently keep a secret pattern from applying.
//!
//! ```yaml
//! ref: refs/heads/memlog      # where sealed sessions are committed
//! project: my-service         # default: origin's repository name, else the directory's
//! privacy:
//!   patterns: ["ACME-[0-9]{6}"]  # extra secret regexes, masked as [REDACTED:custom-pattern:…]
//!   allow: ["^sk_test_", "support@acme\\.io"]  # kept when one matches what a rule found
//!   pii: true                 # emails, phone numbers and IP addresses too (default false)
//!   names: ["Jane Doe", "김민수"]  # always redacted, ignoring case
//! tools:
//!   exclude: [TodoRead]       # tool calls that are not recorded
//!   max_output_bytes: 10000   # tool outputs are cut to this many bytes…
//!   max_output_lines: 100     # …and this many lines (head + tail)
//! ranking:                    # weights of the search signals
//!   semantic: 0.4
//!   fts: 0.25
//!   recency: 0.2
//!   importance: 0.15
//!   half_life_days: 30
//!   levels:                   # memory levels (importance's inputs)
//!     reinforced_successes: 10  # L3 needs this many successes…
//!     reinforced_rate: 0.8      # …and this success rate
//!     active_recalls: 3         # L4: an L3 memory recalled this often
//!     vitality_decay: 0.95      # vitality kept per day without recall
//!   fusion: weighted          # or rrf: reciprocal-rank fusion of the lists
//!   rrf_k: 60
//!   spread: 0.6               # share of a better session neighbour's lead
//! embedding:                  # semantic search (see `memlog doctor`)
//!   enabled: true             # false: full-text search only
//!   model_dir: ~/models/mini  # default: $MEMLOG_HOME/models/minilm-l6-int8
//!   runtime: /usr/lib/libonnxruntime.so  # default: $MEMLOG_HOME/onnxruntime/…
//!   batch_size: 16
//! context:
//!   budget_tokens: 1000       # size of injected context
//!   min_relevance: 0.35       # full-text coverage under which nothing is injected
//! hooks:
//!   inject: true              # memories at SessionStart / UserPromptSubmit
//!   inject_budget_ms: 300     # past it, injection is skipped
//!   record_budget_ms: 100
//!   seal_idle_minutes: 120    # orphaned journals sealed at SessionStart
//!   briefing_sessions: 5
//!   warm_watcher_idle_minutes: 30 # SessionStart starts `memlog watch --idle-exit N`; 0: never
//!   max_text_bytes: 65536     # longer texts keep head and tail, cut marked; 0: no cap
//! sync:
//!   remotes: [origin]         # where `memlog sync` may push memory: remote
//!                             # names, or URLs of a private memory repository
//! personal:                   # events that never leave this machine
//!   sessions: [diary, "me-*"] # these sessions (a trailing * matches a prefix)
//!   agents: [gemini-cli]      # sessions of these agents (meta.client)
//!   tag: true                 # a <personal> tag in a text (default on)
//! learn:                      # memory that learns (docs/DESIGN.md §12)
//!   extract_after_events: 20  # Stop asks the agent for facts after this many new events; 0: never
//!   rule_unused_days: 180     # a rule neither recalled nor reinforced this long is retired
//!   rule_contradictions: 2    # a rule contradicted this often is retired
//!   review: false             # agents' facts and rules wait for `memlog review accept`
//!   reflect_every_minutes: 60 # SessionEnd reflects in the background at most this often
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// File name of the configuration, at the root of the working tree.
pub const CONFIG_FILE: &str = ".memlog.yaml";

/// Default ref holding the log.
pub const DEFAULT_REF: &str = "refs/heads/memlog";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
/// `.memlog.yaml`: every setting, with its default when absent.
pub struct Config {
    /// Full name of the ref that holds sealed sessions.
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// Project name recorded in events; default: the repository's name.
    pub project: Option<String>,
    /// Extra secret patterns, personal data, names.
    pub privacy: PrivacyConfig,
    /// Which tool calls are recorded, and how much of their output.
    pub tools: ToolsConfig,
    /// Search ranking (docs/DESIGN.md §7).
    pub ranking: RankingConfig,
    /// Context assembly for prompts.
    pub context: ContextConfig,
    /// What hooks inject, and their time budgets.
    pub hooks: HooksConfig,
    /// The remotes `memlog sync` may use.
    pub sync: SyncConfig,
    /// Which events stay on this machine (FORMAT.md §9).
    pub personal: PersonalConfig,
    /// The embedding model of semantic search.
    pub embedding: EmbeddingConfig,
    /// When the agent is asked for facts, and when rules retire.
    pub learn: LearnConfig,
}

/// Memory that learns (docs/DESIGN.md §12): when the Stop hook asks the
/// agent to extract the session's facts, and when promoted rules retire.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LearnConfig {
    /// The Stop hook asks for facts once a session has this many new
    /// events since it last asked; 0 never asks.
    pub extract_after_events: usize,
    /// A rule neither recalled nor reinforced for this many days is retired.
    pub rule_unused_days: u32,
    /// A rule contradicted this many times is retired.
    pub rule_contradictions: u32,
    /// Facts and rules proposed by agents wait in `memlog review` and are
    /// not injected until a person accepts them.
    pub review: bool,
    /// SessionEnd starts `memlog reflect` in the background at most this
    /// often (minutes; 0: after every session).
    pub reflect_every_minutes: u64,
}

impl Default for LearnConfig {
    fn default() -> Self {
        LearnConfig {
            extract_after_events: 20,
            rule_unused_days: 180,
            rule_contradictions: 2,
            review: false,
            reflect_every_minutes: 60,
        }
    }
}

/// Semantic search: the sentence-embedding model and ONNX Runtime, both
/// local files (`scripts/install-assets` puts them under `$MEMLOG_HOME`,
/// default `~/.cache/memlog`). Absent files turn vectors off, nothing else.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingConfig {
    /// False: no vectors, full-text search only.
    pub enabled: bool,
    /// A directory with `model.onnx` and `tokenizer.json` (the small
    /// tokenizer configs are optional); `~` is the home directory.
    pub model_dir: Option<PathBuf>,
    /// The ONNX Runtime shared library (1.24 or later).
    pub runtime: Option<PathBuf>,
    /// Texts per model run: small batches keep ONNX Runtime's memory low.
    pub batch_size: usize,
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        EmbeddingConfig {
            enabled: true,
            model_dir: None,
            runtime: None,
            batch_size: 16,
        }
    }
}

/// How the full-text and semantic lists are combined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fusion {
    /// Weighted sum of the normalised signals.
    #[default]
    Weighted,
    /// Reciprocal-rank fusion: sum of 1 / (k + rank) over the lists.
    Rrf,
}

/// Claude Code hooks (`memlog hook …`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    /// Inject memories at SessionStart and UserPromptSubmit.
    pub inject: bool,
    /// Hard time budget of a hook that injects context, in milliseconds:
    /// past it, injection is skipped (the event is still recorded).
    pub inject_budget_ms: u64,
    /// Time budget of a hook that only records.
    pub record_budget_ms: u64,
    /// At SessionStart, journals idle for this many minutes are sealed
    /// (sessions that ended without a SessionEnd).
    pub seal_idle_minutes: u64,
    /// Recent sessions listed in the SessionStart briefing.
    pub briefing_sessions: usize,
    /// When not 0 (the default is 30), SessionStart starts `memlog watch
    /// --idle-exit N` in the background unless one answers already: it
    /// keeps the embedding model loaded, so prompts are ranked by their own
    /// embedding (the warm path) and each session's events are embedded as
    /// they are written, and exits after N minutes without a request or a
    /// change. Idle it costs no CPU; it holds about 250 MB with the model.
    pub warm_watcher_idle_minutes: u64,
    /// Longest text stored, in bytes (a prompt, an answer, a tool's input;
    /// 0: no cap): a longer one keeps its head and tail halves, cut as tool
    /// outputs are, with `\n...[TRUNCATED]...\n` in between, and its event
    /// gets `body.truncated: true`. Every write applies it (hooks, record,
    /// note, imports), after the privacy filter.
    pub max_text_bytes: usize,
}

/// Default of [`HooksConfig::max_text_bytes`]: 64 KB, what MCP accepts as
/// one memory.
pub const DEFAULT_MAX_TEXT_BYTES: usize = 64 * 1024;

impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig {
            inject: true,
            inject_budget_ms: 300,
            record_budget_ms: 100,
            seal_idle_minutes: 120,
            briefing_sessions: 5,
            warm_watcher_idle_minutes: 30,
            max_text_bytes: DEFAULT_MAX_TEXT_BYTES,
        }
    }
}

/// `memlog sync`: the remotes memory may be pushed to. Memory can hold
/// private context, so there is no default: a remote is used only when it is
/// listed here or named on the command line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyncConfig {
    /// Names of git remotes, or URLs (a private repository for memory
    /// only), that `memlog sync` uses when given none. A URL must be listed
    /// here to be used: one typed on the command line may be a mistake.
    pub remotes: Vec<String>,
}

/// Personal scope (FORMAT.md §9): the rules that keep events on this
/// machine, besides a writer's explicit mark. A session that recorded one
/// personal event keeps the rest personal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PersonalConfig {
    /// Session ids whose events are personal; an entry ending in `*`
    /// matches every id with that prefix.
    pub sessions: Vec<String>,
    /// Agents (`meta.client`: `claude-code`, `codex`, `gemini-cli`…) whose
    /// sessions are personal.
    pub agents: Vec<String>,
    /// A `<personal>` tag in an event's text makes it personal.
    pub tag: bool,
}

impl Default for PersonalConfig {
    fn default() -> Self {
        PersonalConfig {
            sessions: Vec::new(),
            agents: Vec::new(),
            tag: true,
        }
    }
}

/// Weights of the ranking signals (each normalised to [0, 1]); when a signal
/// is unavailable (no vectors), its weight is shared out among the others in
/// proportion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankingConfig {
    /// Weight of semantic similarity (0.4).
    pub semantic: f32,
    /// Weight of full-text relevance (0.25).
    pub fts: f32,
    /// Weight of recency (0.2).
    pub recency: f32,
    /// Weight of importance (0.15).
    pub importance: f32,
    /// Age at which the recency signal has halved.
    pub half_life_days: f32,
    /// Memory levels and vitality, which feed the importance signal.
    pub levels: LevelsConfig,
    /// How the two relevance signals combine: weighted or reciprocal-rank fusion.
    pub fusion: Fusion,
    /// The k of reciprocal-rank fusion.
    pub rrf_k: f32,
    /// Share of what the best of an event's session neighbours (the events
    /// just before and after it) has over it in relevance that the event
    /// receives: depth-1 spreading activation, which lifts an event toward
    /// its neighbours and never past them. 0 turns it off; full-text-only
    /// searches never spread.
    pub spread: f32,
}

impl Default for RankingConfig {
    fn default() -> Self {
        RankingConfig {
            semantic: 0.4,
            fts: 0.25,
            recency: 0.2,
            importance: 0.15,
            half_life_days: 30.0,
            fusion: Fusion::Weighted,
            rrf_k: 60.0,
            spread: 0.6,
            levels: LevelsConfig::default(),
        }
    }
}

/// Thresholds of the memory levels (docs/DESIGN.md §8): L3
/// "reinforced" needs at least `reinforced_successes` successful uses and a
/// success rate of at least `reinforced_rate`; L4 "active" is an L3 memory
/// recalled at least `active_recalls` times. Vitality is multiplied by
/// `vitality_decay` for every day without a recall.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LevelsConfig {
    /// Successful uses an L3 memory needs (10).
    pub reinforced_successes: u32,
    /// Success rate an L3 memory needs (0.8).
    pub reinforced_rate: f32,
    /// Recalls that make an L3 memory L4 (3).
    pub active_recalls: u32,
    /// Factor of vitality per day without a recall (0.95).
    pub vitality_decay: f32,
}

impl Default for LevelsConfig {
    fn default() -> Self {
        LevelsConfig {
            reinforced_successes: 10,
            reinforced_rate: 0.8,
            active_recalls: 3,
            vitality_decay: 0.95,
        }
    }
}

/// Context assembly (`memlog context`, prompt injection).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    /// Token budget of the assembled context.
    pub budget_tokens: usize,
    /// Without the prompt's embedding (no warm process), nothing is
    /// injected unless the best full-text relevance (normalised BM25: about
    /// the share of the prompt's words an event covers) reaches this. With
    /// it, a confidence that also weighs the best cosine decides.
    pub min_relevance: f32,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            budget_tokens: 1000,
            min_relevance: 0.35,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
/// Privacy settings beyond the built-in rules (docs/DESIGN.md §3).
pub struct PrivacyConfig {
    /// Extra secret patterns (regular expressions), masked as
    /// `[REDACTED:custom-pattern:…]`.
    pub patterns: Vec<String>,
    /// Allow-list: regular expressions; what a rule would redact is kept
    /// when one of them matches it (a test fixture's fake key, a team's
    /// public support address).
    pub allow: Vec<String>,
    /// Whether personal data is redacted too: email addresses, phone
    /// numbers and IP addresses (off by default).
    pub pii: bool,
    /// Names of people (or anything else) redacted wherever they appear,
    /// ignoring case, as `[REDACTED:name:…]`.
    pub names: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
/// Tool calls: which are left out, and how much output is kept.
pub struct ToolsConfig {
    /// Tools whose calls are not recorded.
    pub exclude: Vec<String>,
    /// Tool outputs longer than this are cut (head and tail halves).
    pub max_output_bytes: usize,
    /// Tool outputs with more lines than this are cut (head and tail halves).
    pub max_output_lines: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ref_name: DEFAULT_REF.to_string(),
            project: None,
            privacy: PrivacyConfig::default(),
            tools: ToolsConfig::default(),
            ranking: RankingConfig::default(),
            context: ContextConfig::default(),
            hooks: HooksConfig::default(),
            sync: SyncConfig::default(),
            personal: PersonalConfig::default(),
            embedding: EmbeddingConfig::default(),
            learn: LearnConfig::default(),
        }
    }
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            // docs/DESIGN.md §3 excludes TodoWrite and TodoRead; memlog turns
            // TodoWrite into task events instead, so only TodoRead is dropped.
            exclude: vec!["TodoRead".to_string()],
            max_output_bytes: 10_000,
            max_output_lines: 100,
        }
    }
}

impl Config {
    /// Reads `dir/.memlog.yaml`; a missing file gives the defaults.
    pub fn load_from_dir(dir: &Path) -> Result<Config> {
        Config::load(&dir.join(CONFIG_FILE))
    }

    /// Reads a configuration file; a missing file gives the defaults.
    pub fn load(path: &Path) -> Result<Config> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(e) => return Err(Error::io(path, e)),
        };
        Config::parse(&text, path)
    }

    /// Parses configuration text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Config> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        let config: Config = serde_yaml::from_str(text).map_err(|e| Error::Config {
            path: PathBuf::from(path),
            message: e.to_string(),
        })?;
        config.validate(path)?;
        Ok(config)
    }

    fn validate(&self, path: &Path) -> Result<()> {
        let bad = |message: String| Error::Config {
            path: path.to_path_buf(),
            message,
        };
        if !self.ref_name.starts_with("refs/") || !is_valid_ref_name(&self.ref_name) {
            return Err(bad(format!(
                "ref {:?} is not a full ref name like refs/heads/memlog",
                self.ref_name
            )));
        }
        let r = &self.ranking;
        let weights = [r.semantic, r.fts, r.recency, r.importance];
        if weights.iter().any(|w| !w.is_finite() || *w < 0.0) || weights.iter().sum::<f32>() <= 0.0
        {
            return Err(bad(
                "ranking weights must be non-negative and not all zero".into()
            ));
        }
        if r.half_life_days.is_nan() || r.half_life_days <= 0.0 {
            return Err(bad("ranking.half_life_days must be positive".into()));
        }
        let l = &r.levels;
        if !(0.0..=1.0).contains(&l.reinforced_rate) || !(0.0..=1.0).contains(&l.vitality_decay) {
            return Err(bad(
                "ranking.levels.reinforced_rate and vitality_decay must be between 0 and 1".into(),
            ));
        }
        if !(r.rrf_k.is_finite() && r.rrf_k >= 0.0) {
            return Err(bad("ranking.rrf_k must be a non-negative number".into()));
        }
        if !(0.0..=1.0).contains(&r.spread) {
            return Err(bad("ranking.spread must be between 0 and 1".into()));
        }
        if self.embedding.batch_size == 0 {
            return Err(bad("embedding.batch_size must be at least 1".into()));
        }
        for p in &self.privacy.patterns {
            regex::Regex::new(p).map_err(|e| bad(format!("privacy pattern {p:?}: {e}")))?;
        }
        Ok(())
    }
}

/// Whether `name` is a ref name git accepts (the rules of
/// `git check-ref-format`): no empty component, none starting with `.` or
/// ending with `.lock`, no `..`, `@{`, control characters, space or any of
/// `~^:?*[\`, and no `/` or `.` at the end.
fn is_valid_ref_name(name: &str) -> bool {
    const FORBIDDEN: &[char] = &[' ', '~', '^', ':', '?', '*', '[', '\\', '\x7f'];
    !name.is_empty()
        && name != "@"
        && !name.ends_with('.')
        && !name.contains("..")
        && !name.contains("@{")
        && !name
            .chars()
            .any(|c| c.is_control() || FORBIDDEN.contains(&c))
        && name
            .split('/')
            .all(|c| !c.is_empty() && !c.starts_with('.') && !c.ends_with(".lock"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let p = Path::new(".memlog.yaml");
        assert_eq!(Config::parse("", p).unwrap(), Config::default());
        let c = Config::parse(
            "ref: refs/heads/agent-memory\nprivacy:\n  patterns: ['X-[0-9]+']\ntools:\n  max_output_lines: 20\n",
            p,
        )
        .unwrap();
        assert_eq!(c.ref_name, "refs/heads/agent-memory");
        assert_eq!(c.tools.max_output_lines, 20);
        assert_eq!(c.tools.max_output_bytes, 10_000);
        let c = Config::parse("sync:\n  remotes: [origin, backup]\n", p).unwrap();
        assert_eq!(c.sync.remotes, ["origin", "backup"]);
        let c = Config::parse("personal:\n  sessions: [diary]\n  tag: false\n", p).unwrap();
        assert_eq!(c.personal.sessions, ["diary"]);
        assert!(!c.personal.tag && Config::default().personal.tag);
        let typo = Config::parse("sync:\n  remote: [origin]\n", p).unwrap_err();
        assert!(typo.to_string().contains("remote"), "{typo}");
    }

    #[test]
    fn errors_name_the_file_and_the_problem() {
        let p = Path::new("/repo/.memlog.yaml");
        let typo = Config::parse("privcy: {}\n", p).unwrap_err().to_string();
        assert!(
            typo.contains("/repo/.memlog.yaml") && typo.contains("privcy"),
            "{typo}"
        );
        let regex = Config::parse("privacy:\n  patterns: ['(']\n", p)
            .unwrap_err()
            .to_string();
        assert!(regex.contains("\"(\""), "{regex}");
        let r = Config::parse("ref: memlog\n", p).unwrap_err().to_string();
        assert!(r.contains("full ref name"), "{r}");
    }

    #[test]
    fn ref_names_follow_git_check_ref_format() {
        for good in [
            "refs/heads/memlog",
            "refs/heads/agent-memory",
            "refs/memlog/x.y",
        ] {
            assert!(is_valid_ref_name(good), "{good}");
        }
        for bad in [
            "refs/heads/",
            "refs//x",
            "refs/heads/.x",
            "refs/heads/x.lock",
            "refs/heads/a..b",
            "refs/heads/a@{1}",
            "refs/heads/a b",
            "refs/heads/a~1",
            "refs/heads/a:b",
            "refs/heads/a.",
            "refs/heads/a\tb",
        ] {
            assert!(!is_valid_ref_name(bad), "{bad}");
        }
    }
}
