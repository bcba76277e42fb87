//! The embedding cache: vectors keyed by blake3(text) and model id.
//!
//! It lives beside the index (`<memlog dir>/embeddings.sqlite`), not in it,
//! so that `memlog rebuild`, which derives the index again from scratch,
//! embeds nothing that was embedded before. Only the indexer writes it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};

use crate::embed::{Embedder, embedded_text};
use crate::{Error, Result};

/// blake3 of an embedded text, as the model sees it
/// ([`embedded_text`]: fenced blocks cut, clipped).
pub type TextHash = [u8; 32];

/// Vectors by text hash and model, in `embeddings.sqlite`: a rebuild never embeds again.
pub struct EmbeddingCache {
    conn: Connection,
    path: PathBuf,
}

/// What filling a batch of texts cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheUse {
    /// Texts the model had to embed.
    pub embedded: usize,
    /// Texts whose vector came from the cache.
    pub cached: usize,
}

/// The cache key of `text`.
pub fn text_hash(text: &str) -> TextHash {
    *blake3::hash(embedded_text(text).as_bytes()).as_bytes()
}

impl EmbeddingCache {
    /// Opens (creating if needed) the cache at `path`.
    pub fn open(path: &Path) -> Result<EmbeddingCache> {
        let err = |e| Error::sql(path, e);
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(err)?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             CREATE TABLE IF NOT EXISTS embeddings (
                 model  TEXT NOT NULL,
                 hash   BLOB NOT NULL,
                 vector BLOB NOT NULL,
                 PRIMARY KEY (model, hash)
             ) WITHOUT ROWID;",
        )
        .map_err(err)?;
        Ok(EmbeddingCache {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The vector `model` made for the text, if cached.
    pub fn get(&self, model: &str, hash: &TextHash) -> Result<Option<Vec<f32>>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT vector FROM embeddings WHERE model = ?1 AND hash = ?2")
            .map_err(|e| Error::sql(&self.path, e))?;
        let mut rows = stmt
            .query(params![model, &hash[..]])
            .map_err(|e| Error::sql(&self.path, e))?;
        match rows.next().map_err(|e| Error::sql(&self.path, e))? {
            Some(row) => {
                let blob: Vec<u8> = row.get(0).map_err(|e| Error::sql(&self.path, e))?;
                Ok(Some(from_bytes(&blob)))
            }
            None => Ok(None),
        }
    }

    /// Stores vectors `model` made, in one transaction.
    pub fn put_many(&mut self, model: &str, items: &[(TextHash, &[f32])]) -> Result<()> {
        let tx = self
            .conn
            .transaction()
            .map_err(|e| Error::sql(&self.path, e))?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO embeddings(model, hash, vector) VALUES (?1, ?2, ?3)",
                )
                .map_err(|e| Error::sql(&self.path, e))?;
            for (hash, v) in items {
                stmt.execute(params![model, &hash[..], to_bytes(v)])
                    .map_err(|e| Error::sql(&self.path, e))?;
            }
        }
        tx.commit().map_err(|e| Error::sql(&self.path, e))
    }

    /// Deletes the vectors of `texts` under every model, overwriting the
    /// freed pages (for purged events); returns how many rows went.
    pub fn forget(&mut self, texts: &[&str]) -> Result<usize> {
        let err = |e| Error::sql(&self.path, e);
        self.conn
            .execute_batch("PRAGMA secure_delete = ON")
            .map_err(err)?;
        let tx = self.conn.transaction().map_err(err)?;
        let mut removed = 0;
        {
            let models: Vec<String> = tx
                .prepare("SELECT DISTINCT model FROM embeddings")
                .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
                .map_err(err)?;
            let mut stmt = tx
                .prepare("DELETE FROM embeddings WHERE model = ?1 AND hash = ?2")
                .map_err(err)?;
            for text in texts {
                let hash = text_hash(text);
                for model in &models {
                    removed += stmt.execute(params![model, &hash[..]]).map_err(err)?;
                }
            }
        }
        tx.commit().map_err(err)?;
        // the write-ahead log still holds the old pages until checkpointed
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(err)?;
        Ok(removed)
    }

    /// Vectors of `texts`, from the cache where it has them, from the
    /// embedder otherwise (in batches of `batch`), caching what was made.
    pub fn embed(
        &mut self,
        embedder: &mut dyn Embedder,
        texts: &[&str],
        batch: usize,
    ) -> Result<(Vec<Vec<f32>>, CacheUse)> {
        let model = embedder.model_id().to_string();
        let hashes: Vec<TextHash> = texts.iter().map(|t| text_hash(t)).collect();
        let mut found: HashMap<TextHash, Vec<f32>> = HashMap::new();
        // the first of each text the cache lacks (duplicates within the
        // batch count as cached)
        let mut missing: Vec<usize> = Vec::new();
        let mut queued: std::collections::HashSet<TextHash> = Default::default();
        for (i, h) in hashes.iter().enumerate() {
            if found.contains_key(h) || queued.contains(h) {
                continue;
            }
            match self.get(&model, h)? {
                Some(v) if v.len() == embedder.dim() => {
                    found.insert(*h, v);
                }
                _ => {
                    queued.insert(*h);
                    missing.push(i);
                }
            }
        }
        let usage = CacheUse {
            embedded: missing.len(),
            cached: texts.len() - missing.len(),
        };
        // Texts of similar length batched together: the model pads each
        // batch to its longest text, so a batch mixing a long answer with
        // short prompts cost as many long ones.
        missing.sort_by_cached_key(|&i| embedded_text(texts[i]).len());
        for chunk in missing.chunks(batch.max(1)) {
            let batch_texts: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            let vectors = embedder.embed(&batch_texts)?;
            let items: Vec<(TextHash, &[f32])> = chunk
                .iter()
                .zip(&vectors)
                .map(|(&i, v)| (hashes[i], v.as_slice()))
                .collect();
            self.put_many(&model, &items)?;
            for (&i, v) in chunk.iter().zip(vectors) {
                found.insert(hashes[i], v);
            }
        }
        let out = hashes
            .iter()
            .map(|h| found.get(h).cloned().unwrap_or_default())
            .collect();
        Ok((out, usage))
    }
}

pub(crate) fn to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn from_bytes(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::HashEmbedder;

    #[test]
    fn second_pass_embeds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = EmbeddingCache::open(&dir.path().join("e.sqlite")).unwrap();
        let mut e = HashEmbedder::new(16);
        let texts = ["alpha beta", "gamma", "alpha beta"];
        let (v1, u1) = cache.embed(&mut e, &texts, 2).unwrap();
        assert_eq!(
            u1,
            CacheUse {
                embedded: 2,
                cached: 1
            }
        );
        let (v2, u2) = cache.embed(&mut e, &texts, 2).unwrap();
        assert_eq!(
            u2,
            CacheUse {
                embedded: 0,
                cached: 3
            }
        );
        assert_eq!(v1, v2);
        // another model does not share vectors
        let mut other = HashEmbedder::new(8);
        let (_, u3) = cache.embed(&mut other, &texts, 2).unwrap();
        assert_eq!(u3.embedded, 2);
    }
}
