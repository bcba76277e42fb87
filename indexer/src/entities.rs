//! Reading the entity graph: one entity with its aliases and edges, and the
//! neighbourhood of an entity (`memlog entity show`, `memlog graph
//! neighbors`).

use std::collections::{BTreeSet, VecDeque};

use memlog_format::EventId;
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

use crate::projection::Projections;
use crate::{Error, Result};

/// How many edges of each direction [`entity`] lists.
pub const MAX_EDGES: usize = 100;
/// How many entities [`neighbors`] returns at most.
pub const MAX_NEIGHBORS: usize = 500;
/// The deepest neighbourhood asked for.
pub const MAX_DEPTH: usize = 4;

/// An entity row.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Entity {
    /// Its id (`task:…`, `file:…`, `session:…`, …).
    pub entity_id: String,
    /// `task`, `condition`, `artifact`, `file` or `session`.
    pub entity_type: String,
    /// Its canonical key (docs/DESIGN.md §4).
    pub canonical_key: String,
    /// What it is called.
    pub title: String,
    /// Its stage (tasks: whether someone works on it).
    pub stage: String,
    /// Its status (tasks).
    pub status: String,
    /// The folded state (`{}` for plain entities).
    pub current: Value,
    /// When it first appeared.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
}

/// An edge, seen from one end.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EdgeView {
    /// The relation (`touches`, `blocked_by`, …).
    pub rel_type: String,
    /// The entity at the other end.
    pub other: String,
    /// The event the edge comes from.
    pub evidence: EventId,
    /// When the edge was made.
    pub ts: String,
}

/// An entity with its aliases and edges.
#[derive(Clone, Debug, Serialize)]
pub struct EntityDetail {
    /// The entity.
    #[serde(flatten)]
    pub entity: Entity,
    /// Other keys that name it.
    pub aliases: Vec<String>,
    /// Edges from it.
    pub outgoing: Vec<EdgeView>,
    /// Edges to it.
    pub incoming: Vec<EdgeView>,
    /// More edges than listed exist.
    pub truncated: bool,
}

fn err(p: &Projections) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| Error::sql(&p.dir, e)
}

/// The entity id a key names: an entity id, or an alias (task keys).
pub fn resolve(p: &Projections, key: &str) -> Result<Option<String>> {
    let conn = &p.graph.conn;
    let direct: Option<String> = conn
        .query_row(
            "SELECT entity_id FROM entities WHERE entity_id = ?1",
            [key],
            |r| r.get(0),
        )
        .optional()
        .map_err(err(p))?;
    if direct.is_some() {
        return Ok(direct);
    }
    let alias: Option<String> = conn
        .query_row(
            "SELECT entity_id FROM entity_aliases WHERE canonical_key = ?1 ORDER BY entity_type LIMIT 1",
            [key],
            |r| r.get(0),
        )
        .optional()
        .map_err(err(p))?;
    if alias.is_some() || key.starts_with("file:") {
        return Ok(alias);
    }
    // a bare path names its file entity (`memlog entity show src/a.rs`)
    conn.query_row(
        "SELECT entity_id FROM entities WHERE entity_id = ?1",
        [format!("file:{}", memlog_format::refs::normalize_path(key))],
        |r| r.get(0),
    )
    .optional()
    .map_err(err(p))
}

/// One entity, by id or alias.
pub fn entity(p: &Projections, key: &str) -> Result<Option<EntityDetail>> {
    let Some(id) = resolve(p, key)? else {
        return Ok(None);
    };
    let conn = &p.graph.conn;
    let entity = conn
        .query_row(
            "SELECT entity_id, entity_type, canonical_key, title, stage, status, current_json, created_at, updated_at
             FROM entities WHERE entity_id = ?1",
            [&id],
            |r| {
                Ok(Entity {
                    entity_id: r.get(0)?,
                    entity_type: r.get(1)?,
                    canonical_key: r.get(2)?,
                    title: r.get(3)?,
                    stage: r.get(4)?,
                    status: r.get(5)?,
                    current: serde_json::from_str(&r.get::<_, String>(6)?).unwrap_or(Value::Null),
                    created_at: r.get(7)?,
                    updated_at: r.get(8)?,
                })
            },
        )
        .optional()
        .map_err(err(p))?;
    let Some(entity) = entity else {
        return Ok(None);
    };
    let mut aliases = Vec::new();
    {
        let mut stmt = conn
            .prepare_cached(
                "SELECT canonical_key FROM entity_aliases WHERE entity_id = ?1 AND canonical_key != ?1 ORDER BY canonical_key",
            )
            .map_err(err(p))?;
        let rows = stmt.query_map([&id], |r| r.get(0)).map_err(err(p))?;
        for row in rows {
            aliases.push(row.map_err(err(p))?);
        }
    }
    let edges = |sql: &str| -> Result<Vec<EdgeView>> {
        let mut stmt = conn.prepare_cached(sql).map_err(err(p))?;
        let rows = stmt
            .query_map(params![id, MAX_EDGES as i64 + 1], |r| {
                Ok(EdgeView {
                    rel_type: r.get(0)?,
                    other: r.get(1)?,
                    evidence: EventId::unchecked(r.get(2)?),
                    ts: r.get(3)?,
                })
            })
            .map_err(err(p))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(err(p))
    };
    let mut outgoing = edges(
        "SELECT rel_type, dst_id, evidence, ts FROM edges WHERE src_id = ?1 ORDER BY ts DESC, rel_type, dst_id LIMIT ?2",
    )?;
    let mut incoming = edges(
        "SELECT rel_type, src_id, evidence, ts FROM edges WHERE dst_id = ?1 ORDER BY ts DESC, rel_type, src_id LIMIT ?2",
    )?;
    let truncated = outgoing.len() > MAX_EDGES || incoming.len() > MAX_EDGES;
    outgoing.truncate(MAX_EDGES);
    incoming.truncate(MAX_EDGES);
    Ok(Some(EntityDetail {
        entity,
        aliases,
        outgoing,
        incoming,
        truncated,
    }))
}

/// An entity reached from the start.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Neighbor {
    /// The entity.
    pub entity_id: String,
    /// Its type, when it is in the entities table.
    pub entity_type: Option<String>,
    /// Its title, likewise.
    pub title: Option<String>,
    /// How many edges away.
    pub depth: usize,
    /// The entity it was reached from, the edge type, and its direction
    /// (`out`: from → this; `in`: this → from).
    pub via: String,
    /// The relation it was reached by.
    pub rel_type: String,
    /// `out` or `in`.
    pub direction: &'static str,
}

/// The entities within `depth` edges of `key`, in either direction,
/// nearest first (breadth first; ties by edge type and id).
pub fn neighbors(p: &Projections, key: &str, depth: usize) -> Result<Option<Vec<Neighbor>>> {
    let Some(start) = resolve(p, key)? else {
        return Ok(None);
    };
    let depth = depth.clamp(1, MAX_DEPTH);
    let conn = &p.graph.conn;
    let mut stmt = conn
        .prepare_cached(
            "SELECT DISTINCT rel_type, dst_id, 'out' FROM edges WHERE src_id = ?1
             UNION SELECT DISTINCT rel_type, src_id, 'in' FROM edges WHERE dst_id = ?1
             ORDER BY 1, 2",
        )
        .map_err(err(p))?;
    let mut title = conn
        .prepare_cached("SELECT entity_type, title FROM entities WHERE entity_id = ?1")
        .map_err(err(p))?;
    let mut seen = BTreeSet::from([start.clone()]);
    let mut queue = VecDeque::from([(start, 0usize)]);
    let mut out = Vec::new();
    while let Some((from, d)) = queue.pop_front() {
        if d == depth {
            continue;
        }
        let rows: Vec<(String, String, String)> = stmt
            .query_map([&from], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(err(p))?
            .collect::<std::result::Result<_, _>>()
            .map_err(err(p))?;
        for (rel, other, dir) in rows {
            if seen.contains(&other) {
                continue;
            }
            if out.len() >= MAX_NEIGHBORS {
                return Ok(Some(out));
            }
            seen.insert(other.clone());
            let known: Option<(String, String)> = title
                .query_row([&other], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
                .map_err(err(p))?;
            out.push(Neighbor {
                entity_type: known.as_ref().map(|k| k.0.clone()),
                title: known.map(|k| k.1),
                entity_id: other.clone(),
                depth: d + 1,
                via: from.clone(),
                rel_type: rel,
                direction: if dir == "out" { "out" } else { "in" },
            });
            queue.push_back((other, d + 1));
        }
    }
    Ok(Some(out))
}
