//! What readers of the memory see: the shared log and this machine's
//! personal log as one.
//!
//! Personal events are sealed on a ref of their own ([`PERSONAL_REF`]) that
//! no sync or push of the memlog ref carries (FORMAT.md §9), yet search and
//! injection must find them like the rest. So readers (the indexer, `cat`)
//! do not read one ref but a [`View`]: the tips of both. A view names
//! itself with one key (the shared tip, then `+<personal tip>`), and its
//! trees with one watermark string, so an index keeps a single watermark;
//! without personal events both are exactly what they were before
//! personal scope existed, and an index made then stays current.

use gix::ObjectId;
use memlog_format::Event;

use crate::log::{Log, SegmentProblem, SegmentRef};
use crate::{Repo, Result};

/// The tips of the shared and the personal log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct View {
    /// The memlog ref's tip.
    pub shared: Option<ObjectId>,
    /// The personal ref's tip.
    pub personal: Option<ObjectId>,
}

/// The root trees of a [`View`]'s tips.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ViewTrees {
    /// The shared tip's tree.
    pub shared: Option<ObjectId>,
    /// The personal tip's tree.
    pub personal: Option<ObjectId>,
}

/// What changed in the log since an indexed watermark.
#[derive(Clone, Debug)]
pub enum Changes {
    /// Only these segments were added (none: nothing changed).
    Added(Vec<SegmentRef>),
    /// Segments went away or the history is unknown: read everything again.
    Rewritten(String),
}

impl View {
    /// The tips, read through git.
    pub fn read(repo: &Repo) -> Result<View> {
        Ok(View {
            shared: Log::new(repo).tip()?,
            personal: Log::personal(repo).tip()?,
        })
    }

    /// The tips as the refs' files say (a freshness check; see
    /// [`Log::peek_tip`]).
    pub fn peek(repo: &Repo) -> Result<View> {
        Ok(View {
            shared: Log::new(repo).peek_tip()?,
            personal: Log::personal(repo).peek_tip()?,
        })
    }

    /// One string naming both tips: the shared tip, then `+<personal>`
    /// when there are personal events; `None` when neither log exists.
    pub fn key(&self) -> Option<String> {
        match (self.shared, self.personal) {
            (None, None) => None,
            (Some(s), None) => Some(s.to_string()),
            (s, Some(p)) => Some(format!(
                "{}+{p}",
                s.map(|s| s.to_string()).unwrap_or_default()
            )),
        }
    }

    /// The root trees of the tips.
    pub fn trees(&self, repo: &Repo) -> Result<ViewTrees> {
        let tree = |log: Log, tip: Option<ObjectId>| -> Result<Option<ObjectId>> {
            tip.map(|t| log.commit(t).map(|c| c.tree)).transpose()
        };
        Ok(ViewTrees {
            shared: tree(Log::new(repo), self.shared)?,
            personal: tree(Log::personal(repo), self.personal)?,
        })
    }

    /// Every sealed event of both logs (forgotten ones included), with the
    /// problems of segments whose lines did not decode.
    pub fn events(&self, repo: &Repo) -> Result<(Vec<Event>, Vec<SegmentProblem>)> {
        let mut events = Vec::new();
        let mut problems = Vec::new();
        for (tip, log) in [
            (self.shared, Log::new(repo)),
            (self.personal, Log::personal(repo)),
        ] {
            if let Some(t) = tip {
                let (e, p) = log.events_at(t)?;
                events.extend(e);
                problems.extend(p);
            }
        }
        Ok((events, problems))
    }
}

impl ViewTrees {
    /// The watermark form: the shared tree's id, then a space and the
    /// personal tree's id when there is one (`-` for a missing shared
    /// tree); empty when neither exists.
    pub fn watermark(&self) -> String {
        match (self.shared, self.personal) {
            (None, None) => String::new(),
            (Some(s), None) => s.to_string(),
            (s, Some(p)) => format!(
                "{} {p}",
                s.map(|s| s.to_string()).unwrap_or_else(|| "-".into())
            ),
        }
    }

    /// Reads a watermark; `None` when it is not one.
    pub fn parse(watermark: &str) -> Option<ViewTrees> {
        let id = |s: &str| -> Option<Option<ObjectId>> {
            if s == "-" {
                Some(None)
            } else {
                ObjectId::from_hex(s.as_bytes()).ok().map(Some)
            }
        };
        let mut parts = watermark.split_whitespace();
        let trees = match (parts.next(), parts.next(), parts.next()) {
            (None, _, _) => ViewTrees::default(),
            (Some(s), None, _) => ViewTrees {
                shared: id(s)?,
                personal: None,
            },
            (Some(s), Some(p), None) => ViewTrees {
                shared: id(s)?,
                personal: id(p)?,
            },
            _ => return None,
        };
        Some(trees)
    }

    /// Every segment of both trees.
    pub fn segments(&self, repo: &Repo) -> Result<Vec<SegmentRef>> {
        let mut out = Vec::new();
        for (tree, log) in self.logs(repo) {
            if let Some(tree) = tree {
                out.extend(log.segments_in_tree(tree)?);
            }
        }
        Ok(out)
    }

    /// Each tree with the log it is of.
    fn logs<'r>(&self, repo: &'r Repo) -> [(Option<ObjectId>, Log<'r>); 2] {
        [
            (self.shared, Log::new(repo)),
            (self.personal, Log::personal(repo)),
        ]
    }

    /// What changed from the `indexed` trees (a watermark, `None` for
    /// nothing indexed yet) to these: the segments added, or
    /// [`Changes::Rewritten`] when some went away (a purge) or the indexed
    /// trees are unknown here (a rewritten history, a damaged watermark).
    pub fn changes_since(&self, repo: &Repo, indexed: Option<&str>) -> Result<Changes> {
        let Some(indexed) = indexed else {
            return Ok(Changes::Added(self.segments(repo)?));
        };
        let Some(old) = ViewTrees::parse(indexed) else {
            return Ok(Changes::Rewritten(
                "the index watermark is unreadable".into(),
            ));
        };
        let mut added = Vec::new();
        for ((before, _), (after, log)) in old.logs(repo).into_iter().zip(self.logs(repo)) {
            let name = log.ref_name();
            match (before, after) {
                (None, None) => {}
                (None, Some(new)) => added.extend(log.segments_in_tree(new)?),
                (Some(_), None) => {
                    return Ok(Changes::Rewritten(format!("{name} was deleted")));
                }
                (Some(old), Some(new)) => {
                    if !log.has_tree(old) {
                        return Ok(Changes::Rewritten(format!(
                            "the history of {name} was rewritten"
                        )));
                    }
                    let diff = log.diff_trees(old, new)?;
                    if !diff.removed.is_empty() {
                        return Ok(Changes::Rewritten(format!(
                            "segments were removed from {name} (purge)"
                        )));
                    }
                    added.extend(diff.added);
                }
            }
        }
        Ok(Changes::Added(added))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watermarks_read_back_and_old_ones_still_read() {
        let a = ObjectId::from_hex(b"1111111111111111111111111111111111111111").unwrap();
        let b = ObjectId::from_hex(b"2222222222222222222222222222222222222222").unwrap();
        for trees in [
            ViewTrees::default(),
            ViewTrees {
                shared: Some(a),
                personal: None,
            },
            ViewTrees {
                shared: Some(a),
                personal: Some(b),
            },
            ViewTrees {
                shared: None,
                personal: Some(b),
            },
        ] {
            assert_eq!(ViewTrees::parse(&trees.watermark()), Some(trees));
        }
        // A watermark written before personal scope: one tree id.
        assert_eq!(ViewTrees::parse(&a.to_string()).unwrap().shared, Some(a));
        assert_eq!(ViewTrees::parse("zz"), None);
        let view = View {
            shared: Some(a),
            personal: None,
        };
        assert_eq!(view.key(), Some(a.to_string()));
        let both = View {
            shared: Some(a),
            personal: Some(b),
        };
        assert_eq!(both.key(), Some(format!("{a}+{b}")));
    }
}
