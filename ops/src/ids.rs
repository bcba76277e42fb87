//! The one resolver of event names: an id or a unique prefix of at least
//! [`IdPrefix::MIN`] hex digits, looked up among the live events (sealed or
//! still in a journal: both are indexed) with the indexer's prefix query.
//! The CLI (`show`, `forget`, `reinforce`, `extract`), the MCP tools and
//! the viewer all resolve through it, so they accept the same names and
//! fail with the same [`IdError`]s.

use memlog_format::{EventId, IdError, IdPrefix};
use memlog_indexer::Projections;
use memlog_indexer::lookup::ids_with_prefix;

use crate::error::Result;

/// How many ids an ambiguous prefix's error shows.
const EXAMPLES: usize = 3;

/// The live events whose ids start with `prefix`, at most `limit`.
pub fn matching(p: &Projections, prefix: &IdPrefix, limit: usize) -> Result<Vec<EventId>> {
    Ok(ids_with_prefix(p, prefix, limit)?)
}

/// The full id of the one live event `input` names.
pub fn resolve(p: &Projections, input: &str) -> Result<EventId> {
    let prefix = IdPrefix::parse(input)?;
    one_of(&prefix, matching(p, &prefix, EXAMPLES)?)
}

/// [`resolve`] for each input, in order.
pub fn resolve_all(p: &Projections, inputs: &[String]) -> Result<Vec<EventId>> {
    inputs.iter().map(|i| resolve(p, i)).collect()
}

/// The one id of `ids` (the matches of `prefix`), or why there is not one.
pub fn one_of(prefix: &IdPrefix, mut ids: Vec<EventId>) -> Result<EventId> {
    match ids.len() {
        1 => Ok(ids.remove(0)),
        0 => Err(IdError::Unknown {
            input: prefix.input().to_string(),
        }
        .into()),
        _ => Err(IdError::Ambiguous {
            input: prefix.input().to_string(),
            examples: ids
                .iter()
                .map(|id| id.get(..16).unwrap_or(id).to_string())
                .collect(),
        }
        .into()),
    }
}
