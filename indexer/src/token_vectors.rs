//! Query vectors without the model: one vector per word piece of the
//! embedding model's vocabulary, distilled from the model once, summed
//! over a prompt's pieces in a hook.
//!
//! Loading the sentence-embedding model costs a hook half a second; this
//! table costs it a few page faults. Each row is the model's own output
//! for its token alone (`[CLS] token [SEP]`, the token's position), so a
//! weighted sum of a prompt's rows lives in the same space as the stored
//! event vectors and is compared with them directly: no second projection.
//!
//! A piece weighs `ln(1 + id)` (a WordPiece vocabulary lists its tokens by
//! falling frequency, after the specials and single characters: a
//! Zipf-style weight, the form of model2vec's) times what the caller says
//! its word is worth (the hook: how rare the word is in the memory, from
//! the full-text index); specials and punctuation weigh nothing. On the
//! shared LoCoMo set, such a query has an evidence turn among its ten
//! nearest events for 0.61 of the questions, the model's own embedding of
//! the question for 0.52, the table's weights alone for 0.48.
//!
//! The table is made for BERT-style WordPiece tokenizers (what the default
//! MiniLM uses); [`distill`] refuses others, and hooks then rank without it.
//!
//! File layout (little-endian), `$MEMLOG_HOME/token-vectors/<model>.bin`,
//! written once to a temporary name and renamed, never changed in place
//! (so mapping it is safe):
//!
//! ```text
//! magic "MLTOKV01" | dim u32 | rows u32 | flags u32 | max_word_chars u32 | reserved 2 × u32
//! offsets (rows + 1) u32   start of each token's text, by id
//! sorted  rows u32         ids in byte order of their text (binary search)
//! weights rows f32
//! scales  rows f32         row = scale × i8 values
//! vectors rows × dim i8
//! text    the tokens' bytes
//! ```

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::embed::{ModelFiles, memlog_home};
use crate::{Error, Result};

const MAGIC: &[u8; 8] = b"MLTOKV01";
const HEADER: usize = 8 + 6 * 4;
/// Flag: the tokenizer lowercases (and, as BERT's does, strips accents).
const LOWERCASE: u32 = 1;
/// Word pieces after the first of a word carry this prefix in the vocabulary.
const CONTINUATION: &str = "##";

/// A distilled table, mapped read-only.
pub struct TokenVectors {
    map: memmap2::Mmap,
    dim: usize,
    rows: usize,
    lowercase: bool,
    max_word_chars: usize,
    offsets: usize,
    sorted: usize,
    weights: usize,
    scales: usize,
    vectors: usize,
    text: usize,
}

/// Where the table of the model `model_id` lives.
pub fn path_for(model_id: &str) -> PathBuf {
    let name: String = model_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    memlog_home()
        .join("token-vectors")
        .join(format!("{name}.bin"))
}

impl TokenVectors {
    /// The table of the model `model_id`, if distilled.
    pub fn for_model(model_id: &str) -> Result<Option<TokenVectors>> {
        TokenVectors::open(&path_for(model_id))
    }

    /// Opens a table; `Ok(None)` when the file does not exist.
    pub fn open(path: &Path) -> Result<Option<TokenVectors>> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        // SAFETY: the file is only ever replaced by a rename, never written
        // in place, so the mapped bytes cannot change or shrink under us.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        let corrupt = |message: &str| Error::Corrupt {
            what: path.display().to_string(),
            message: message.to_string(),
        };
        if map.len() < HEADER || &map[..8] != MAGIC {
            return Err(corrupt("not a token-vector table"));
        }
        let word = |i: usize| u32_at(&map, 8 + 4 * i) as usize;
        let (dim, rows, flags, max_word_chars) = (word(0), word(1), word(2) as u32, word(3));
        let offsets = HEADER;
        let sorted = offsets + 4 * (rows + 1);
        let weights = sorted + 4 * rows;
        let scales = weights + 4 * rows;
        let vectors = scales + 4 * rows;
        let text = vectors + rows * dim;
        if dim == 0 || text > map.len() {
            return Err(corrupt("truncated"));
        }
        let t = TokenVectors {
            dim,
            rows,
            lowercase: flags & LOWERCASE != 0,
            max_word_chars,
            offsets,
            sorted,
            weights,
            scales,
            vectors,
            text,
            map,
        };
        if t.text + t.text_offset(rows) > t.map.len() {
            return Err(corrupt("truncated"));
        }
        Ok(Some(t))
    }

    /// Dimensions of the vectors.
    pub fn dim(&self) -> usize {
        self.dim
    }

    fn text_offset(&self, id: usize) -> usize {
        u32_at(&self.map, self.offsets + 4 * id) as usize
    }

    fn token(&self, id: usize) -> &[u8] {
        let (a, b) = (self.text_offset(id), self.text_offset(id + 1));
        self.map.get(self.text + a..self.text + b).unwrap_or(&[])
    }

    /// The id of the token spelled `text`.
    fn id(&self, text: &[u8]) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.rows);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let id = u32_at(&self.map, self.sorted + 4 * mid) as usize;
            if id >= self.rows {
                // a damaged table: no token rather than a bad row
                return None;
            }
            match self.token(id).cmp(text) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(id),
            }
        }
        None
    }

    /// The words of `text` as the model's tokenizer sees them (BERT's
    /// normalisation and pre-tokenisation).
    pub fn words(&self, text: &str) -> Vec<String> {
        words(text, self.lowercase)
    }

    /// The word-piece ids of `word`, as WordPiece splits it (greedy, longest
    /// first); empty for a word with a piece the vocabulary lacks.
    pub fn pieces(&self, word: &str) -> Vec<usize> {
        let mut ids = Vec::new();
        if word.chars().count() > self.max_word_chars {
            return ids;
        }
        let mut piece = String::new();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while end > start {
                piece.clear();
                if start > 0 {
                    piece.push_str(CONTINUATION);
                }
                piece.push_str(&word[start..end]);
                if let Some(id) = self.id(piece.as_bytes()) {
                    found = Some(id);
                    break;
                }
                end = word[..end]
                    .char_indices()
                    .next_back()
                    .map_or(start, |(i, _)| i);
            }
            match found {
                Some(id) => {
                    ids.push(id);
                    start = end;
                }
                None => return Vec::new(),
            }
        }
        ids
    }

    /// The query vector of a prompt's words, given as their pieces (from
    /// [`TokenVectors::pieces`]), each word weighted by `weights` (a hook:
    /// how rare it is in the memory), unit length; `None` when nothing
    /// carries weight.
    pub fn embed(&self, pieces: &[Vec<usize>], weights: &[f32]) -> Option<Vec<f32>> {
        let mut sum = vec![0f32; self.dim];
        for (ids, r) in pieces.iter().zip(weights) {
            if *r <= 0.0 {
                continue;
            }
            for &id in ids {
                let w = f32_at(&self.map, self.weights + 4 * id);
                if w <= 0.0 {
                    continue;
                }
                let scale = r * w * f32_at(&self.map, self.scales + 4 * id);
                let row =
                    &self.map[self.vectors + id * self.dim..self.vectors + (id + 1) * self.dim];
                for (s, q) in sum.iter_mut().zip(row) {
                    *s += scale * f32::from(*q as i8);
                }
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm <= f32::EPSILON {
            return None;
        }
        for s in &mut sum {
            *s /= norm;
        }
        Some(sum)
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_bits(u32_at(b, at))
}

/// BERT's normalisation and pre-tokenisation: control characters dropped,
/// CJK ideographs and punctuation split off as words of their own, and,
/// when the model is uncased, accents stripped and everything lowercased.
pub fn words(text: &str, lowercase: bool) -> Vec<String> {
    use unicode_normalization::UnicodeNormalization;
    let mut out = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            out.push(std::mem::take(word));
        }
    };
    let push = |c: char, word: &mut String, out: &mut Vec<String>| {
        if c.is_whitespace() {
            flush(word, out);
        } else if is_punctuation(c) || is_cjk(c) {
            flush(word, out);
            out.push(c.to_string());
        } else {
            word.push(c);
        }
    };
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || (c.is_control() && !c.is_whitespace()) {
            continue;
        }
        if lowercase {
            for d in c.to_string().nfd() {
                if unicode_normalization::char::is_combining_mark(d) {
                    continue;
                }
                for l in d.to_lowercase() {
                    push(l, &mut word, &mut out);
                }
            }
        } else {
            push(c, &mut word, &mut out);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// ASCII punctuation and the Unicode punctuation blocks (BERT splits on
/// every `P*` character; these cover what prompts contain).
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(c as u32,
            0x00A1..=0x00BF | 0x2010..=0x2027 | 0x2030..=0x205E | 0x3001..=0x3003
            | 0x3008..=0x3011 | 0xFF01..=0xFF0F | 0xFF1A..=0xFF20)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// What [`distill`] made.
#[derive(Clone, Debug)]
pub struct Distilled {
    /// The table's file.
    pub path: PathBuf,
    /// Tokens in it.
    pub rows: usize,
    /// Their dimensions.
    pub dim: usize,
}

/// The tokenizer facts a table needs, read from `tokenizer.json`.
struct Vocabulary {
    /// Tokens by id.
    tokens: Vec<String>,
    lowercase: bool,
    max_word_chars: usize,
    cls: usize,
    sep: usize,
}

fn vocabulary(model_dir: &Path) -> Result<Vocabulary> {
    let path = model_dir.join("tokenizer.json");
    let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
    let json: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt {
        what: path.display().to_string(),
        message: e.to_string(),
    })?;
    let refuse = |why: &str| {
        Error::Model(format!(
            "{}: {why}; token vectors need a BERT WordPiece tokenizer",
            path.display()
        ))
    };
    let model = &json["model"];
    if model["type"] != "WordPiece" {
        return Err(refuse("the tokenizer is not WordPiece"));
    }
    if model["continuing_subword_prefix"]
        .as_str()
        .is_some_and(|p| p != CONTINUATION)
    {
        return Err(refuse("its continuation prefix is not ##"));
    }
    let normalizer = &json["normalizer"];
    if normalizer["type"] != "BertNormalizer" {
        return Err(refuse("its normalizer is not BERT's"));
    }
    let lowercase = normalizer["lowercase"].as_bool().unwrap_or(true);
    // BERT strips accents when it lowercases unless told otherwise; a table
    // knows one switch for both
    if normalizer["strip_accents"]
        .as_bool()
        .is_some_and(|s| s != lowercase)
    {
        return Err(refuse(
            "it strips accents without lowercasing, or the reverse",
        ));
    }
    let vocab = model["vocab"]
        .as_object()
        .ok_or_else(|| refuse("it has no vocabulary"))?;
    let mut tokens = vec![String::new(); vocab.len()];
    for (token, id) in vocab {
        let id = id
            .as_u64()
            .map(|i| i as usize)
            .filter(|i| *i < tokens.len())
            .ok_or_else(|| refuse("its vocabulary ids are not 0..n"))?;
        tokens[id] = token.clone();
    }
    let id_of = |t: &str| vocab.get(t).and_then(|v| v.as_u64()).map(|v| v as usize);
    Ok(Vocabulary {
        cls: id_of("[CLS]").ok_or_else(|| refuse("it has no [CLS]"))?,
        sep: id_of("[SEP]").ok_or_else(|| refuse("it has no [SEP]"))?,
        max_word_chars: model["max_input_chars_per_word"].as_u64().unwrap_or(100) as usize,
        lowercase,
        tokens,
    })
}

/// A piece's weight in a query: nothing for specials (`[CLS]`,
/// `[unused7]`) and punctuation, `ln(1 + id)` otherwise.
fn weight(id: usize, token: &str) -> f32 {
    let piece = token.strip_prefix(CONTINUATION).unwrap_or(token);
    let special = token.starts_with('[') && token.ends_with(']') && token.len() > 2;
    if special || piece.is_empty() || piece.chars().all(is_punctuation) {
        0.0
    } else {
        (1.0 + id as f32).ln()
    }
}

/// Tokens run through the model per call.
const DISTILL_BATCH: usize = 512;

/// Distills the table of the model in `files` (whose id, as
/// [`crate::embed::ModelEmbedder`] names it, is `model_id`): every token
/// through the model once, about 30,000 of them for MiniLM, a minute of
/// CPU. `progress(done, total)` is called after each batch. `Ok(None)`
/// when another process is distilling it, or just did.
pub fn distill(
    files: &ModelFiles,
    model_id: &str,
    mut progress: impl FnMut(usize, usize),
) -> Result<Option<Distilled>> {
    let path = path_for(model_id);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let lock_path = dir.join(".distill.lock");
    let lock = File::create(&lock_path).map_err(|e| Error::io(&lock_path, e))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
        Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&lock_path, e)),
    }
    if path.exists() {
        return Ok(None);
    }
    let vocab = vocabulary(&files.model_dir)?;
    let onnx_path = files.model_dir.join("model.onnx");
    let onnx = std::fs::read(&onnx_path).map_err(|e| Error::io(&onnx_path, e))?;
    let env = crate::embed::environment(&files.runtime)?;
    let model_error = |e: ort::Error| Error::Model(format!("{}: {e}", onnx_path.display()));
    let mut session = ort::session::Session::builder(&env)
        .map_err(model_error)?
        .commit_from_memory(&onnx)
        .map_err(|e| Error::Model(format!("{}: {e}", onnx_path.display())))?;
    let token_types = session
        .inputs()
        .iter()
        .any(|i| i.name() == "token_type_ids");
    let rows = vocab.tokens.len();
    let mut dim = 0;
    let mut scales = Vec::with_capacity(rows);
    let mut vectors: Vec<i8> = Vec::new();
    let mut start = 0;
    while start < rows {
        let n = DISTILL_BATCH.min(rows - start);
        let ids: Vec<i64> = (start..start + n)
            .flat_map(|id| [vocab.cls as i64, id as i64, vocab.sep as i64])
            .collect();
        let tensor = |v: Vec<i64>| ort::value::Tensor::from_array(([n, 3], v)).map_err(model_error);
        let mut inputs = ort::inputs![
            "input_ids" => tensor(ids)?,
            "attention_mask" => tensor(vec![1; n * 3])?,
        ];
        if token_types {
            inputs.push(("token_type_ids".into(), tensor(vec![0; n * 3])?.into()));
        }
        let outputs = session.run(inputs).map_err(model_error)?;
        let (shape, data) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(model_error)?;
        let d = shape.get(2).copied().unwrap_or(0) as usize;
        if shape.len() != 3 || d == 0 || data.len() != n * 3 * d {
            return Err(Error::Model(format!(
                "{}: expected token outputs [batch, 3, dim], got {shape:?}",
                onnx_path.display()
            )));
        }
        dim = d;
        for i in 0..n {
            // the token's own position, between [CLS] and [SEP]
            let row = &data[(i * 3 + 1) * d..(i * 3 + 2) * d];
            let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
            let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
            scales.push(scale);
            vectors.extend(
                row.iter()
                    .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8),
            );
        }
        start += n;
        progress(start, rows);
    }
    let out = encode(&vocab, dim, &scales, &vectors);
    write_replacing(&path, &out)?;
    Ok(Some(Distilled { path, rows, dim }))
}

/// The table's bytes (the layout in the module's documentation).
fn encode(vocab: &Vocabulary, dim: usize, scales: &[f32], vectors: &[i8]) -> Vec<u8> {
    let rows = vocab.tokens.len();
    let mut sorted: Vec<u32> = (0..rows as u32).collect();
    sorted.sort_by(|a, b| vocab.tokens[*a as usize].cmp(&vocab.tokens[*b as usize]));
    let mut out = Vec::with_capacity(HEADER + rows * (dim + 16) + rows * 8);
    out.extend_from_slice(MAGIC);
    let flags = if vocab.lowercase { LOWERCASE } else { 0 };
    for w in [dim, rows, flags as usize, vocab.max_word_chars, 0, 0] {
        out.extend_from_slice(&(w as u32).to_le_bytes());
    }
    let mut offset = 0u32;
    for t in &vocab.tokens {
        out.extend_from_slice(&offset.to_le_bytes());
        offset += t.len() as u32;
    }
    out.extend_from_slice(&offset.to_le_bytes());
    for id in &sorted {
        out.extend_from_slice(&id.to_le_bytes());
    }
    for (id, t) in vocab.tokens.iter().enumerate() {
        out.extend_from_slice(&weight(id, t).to_le_bytes());
    }
    for s in scales {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out.extend(vectors.iter().map(|v| *v as u8));
    for t in &vocab.tokens {
        out.extend_from_slice(t.as_bytes());
    }
    out
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a
/// reader maps either the old table or the new one, whole.
fn write_replacing(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("table"),
        std::process::id()
    ));
    let mut f = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_bert() {
        assert_eq!(
            words("Héllo, wörld! kubectl's  deploy", true),
            ["hello", ",", "world", "!", "kubectl", "'", "s", "deploy"]
        );
        assert_eq!(words("a中b", true), ["a", "中", "b"]);
        assert_eq!(words("Keep\u{0}Case", false), ["KeepCase"]);
    }

    /// A table of eight tokens whose vectors are unit axes.
    fn tiny() -> (tempfile::TempDir, TokenVectors) {
        let tokens = [
            "[UNK]", "[CLS]", "[SEP]", "!", "deploy", "##ment", "kube", "##ctl",
        ];
        let vocab = Vocabulary {
            tokens: tokens.iter().map(|t| t.to_string()).collect(),
            lowercase: true,
            max_word_chars: 100,
            cls: 1,
            sep: 2,
        };
        let dim = tokens.len();
        let mut vectors = vec![0i8; dim * dim];
        for i in 0..dim {
            vectors[i * dim + i] = 127;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bin");
        write_replacing(
            &path,
            &encode(&vocab, dim, &vec![1.0 / 127.0; dim], &vectors),
        )
        .unwrap();
        let table = TokenVectors::open(&path).unwrap().unwrap();
        (dir, table)
    }

    #[test]
    fn pieces_follow_wordpiece() {
        let (_dir, t) = tiny();
        assert_eq!(t.pieces("deployment"), [4, 5]);
        assert_eq!(t.pieces("kubectl"), [6, 7]);
        assert_eq!(t.pieces("deploy"), [4]);
        // a piece the vocabulary lacks makes the word unknown
        assert!(t.pieces("kubernetes").is_empty());
        assert_eq!(t.words("Deployment!"), ["deployment", "!"]);
    }

    #[test]
    fn embed_weighs_words_and_skips_punctuation() {
        let (_dir, t) = tiny();
        let pieces: Vec<Vec<usize>> = t
            .words("deploy kubectl !")
            .iter()
            .map(|w| t.pieces(w))
            .collect();
        let v = t.embed(&pieces, &[1.0, 0.0, 1.0]).unwrap();
        // only "deploy" counts: kubectl weighs 0, "!" is punctuation
        assert!((v[4] - 1.0).abs() < 1e-6, "{v:?}");
        assert!(t.embed(&pieces, &[0.0, 0.0, 1.0]).is_none());
        let both = t.embed(&pieces[..2], &[1.0, 1.0]).unwrap();
        assert!(both[6] > 0.0 && both[7] > 0.0 && both[4] > 0.0);
        let norm: f32 = both.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-5);
    }

    #[test]
    fn a_damaged_table_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bin");
        std::fs::write(&path, b"MLTOKV01\x01").unwrap();
        assert!(TokenVectors::open(&path).is_err());
        assert!(
            TokenVectors::open(&dir.path().join("absent.bin"))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn weights_skip_specials_and_punctuation() {
        assert_eq!(weight(101, "[CLS]"), 0.0);
        assert_eq!(weight(5, "[unused4]"), 0.0);
        assert_eq!(weight(1000, "!"), 0.0);
        assert!(weight(2000, "the") > 0.0);
        assert!(weight(20000, "##ment") > weight(2000, "the"));
    }
}
