//! Making staged git objects durable.
//!
//! Seals build their blobs, trees and commits in memory first and write
//! them as one pack with a `.keep` file, fsynced, before the ref may point
//! at them (gix itself does not fsync); the `.keep` goes once the ref
//! moved. Objects no ref reaches yet are what `git gc --prune=now` deletes
//! (its `now` is every object, whatever its date): run while a seal wrote
//! them loose and moved the ref, it left the ref at a commit that was
//! gone, the session's journal deleted and every command failing (a field
//! test: 2 of 425 events lost for good). No prune or repack removes a kept
//! pack. A handful of objects (a live session's seal) is written loose as
//! well, unsynced and best-effort: another process reading the ref finds
//! a loose object at once, where a new pack its object database had not
//! listed yet failed ("Could not peel reference") with eight processes
//! sealing at once.

use std::io::Write;
use std::path::{Path, PathBuf};

use gix::objs::Write as _;
use gix::odb::memory::Storage;

use crate::journal::sync_dir;
use crate::shared::Sharing;
use crate::{Error, Repo, Result};

/// Up to this many objects are also written loose, after their pack.
const LOOSE_MAX: usize = 64;

/// Writes `objects` durably. Returns the `.keep` file of the new pack,
/// which the caller removes once a ref points at the objects.
pub fn persist(repo: &Repo, objects: &Storage) -> Result<Option<PathBuf>> {
    if objects.is_empty() {
        return Ok(None);
    }
    let keep = write_pack(repo, objects)?;
    if objects.len() <= LOOSE_MAX {
        // only for other readers to find them at once: the pack holds
        // them, and a gc that removes a fan-out directory under the write
        // (2-3 % of seals beside a gc loop) fails nothing
        let _ = write_loose(repo, objects);
    }
    Ok(keep)
}

/// What a seal writes in the `.keep` of its pack, until a ref points at it.
const SEALING: &[u8] = b"memlog: sealing\n";

/// Removes the `.keep` files seals left behind when killed before their
/// ref moved: git never prunes a kept pack, so a purge left the forgotten
/// words of such a seal's commit in the store for good (the crash bench).
/// Only for a caller that no seal can run beside (a purge, holding
/// `history.lock` exclusively). Returns how many were removed.
pub(crate) fn release_stale_keeps(repo: &Repo) -> Result<usize> {
    let pack_dir = objects_dir(repo).join("pack");
    let Ok(entries) = std::fs::read_dir(&pack_dir) else {
        return Ok(0);
    };
    let mut released = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "keep")
            && std::fs::read(&path).is_ok_and(|text| text == SEALING)
        {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            released += 1;
        }
    }
    Ok(released)
}

fn objects_dir(repo: &Repo) -> PathBuf {
    repo.common_dir.join("objects")
}

/// Writes `objects` loose too, unsynced: the pack is what makes them
/// durable.
fn write_loose(repo: &Repo, objects: &Storage) -> Result<()> {
    let git = repo.git()?;
    let sharing = repo.sharing();
    for (kind, data) in objects.values() {
        let id = git.objects.write_buf(*kind, data).map_err(Error::git)?;
        if sharing.is_shared() {
            // gix writes them with the umask's modes (0400 in a 0700
            // fan-out directory under umask 077)
            let hex = id.to_hex().to_string();
            let fan_out = objects_dir(repo).join(&hex[..2]);
            let _ = sharing.apply(&fan_out);
            let _ = sharing.apply(&fan_out.join(&hex[2..]));
        }
    }
    Ok(())
}

/// Pack type codes (git's pack format).
fn type_code(kind: gix::objs::Kind) -> u8 {
    match kind {
        gix::objs::Kind::Commit => 1,
        gix::objs::Kind::Tree => 2,
        gix::objs::Kind::Blob => 3,
        gix::objs::Kind::Tag => 4,
    }
}

/// Writes the objects as one version 2 pack (no deltas, fast compression)
/// with its version 2 index, both computed here: the ids, offsets and CRCs
/// are known, so nothing needs to be read back and hashed again. The pack is
/// renamed into place first, then its index (readers find packs by index).
fn write_pack(repo: &Repo, objects: &Storage) -> Result<Option<PathBuf>> {
    let mut entries: Vec<(&gix::ObjectId, u64, u32)> = Vec::with_capacity(objects.len());
    let capacity = objects
        .values()
        .map(|(_, d)| d.len() / 3 + 32)
        .sum::<usize>()
        + 32;
    let mut pack: Vec<u8> = Vec::with_capacity(capacity);
    pack.extend_from_slice(b"PACK");
    pack.extend_from_slice(&2u32.to_be_bytes());
    pack.extend_from_slice(&(objects.len() as u32).to_be_bytes());
    // One compressor for all entries, writing into the pack through a
    // shared buffer so that entry headers can go in between.
    let buffer = std::cell::RefCell::new(pack);
    let mut deflate = gix::zlib::stream::deflate::Write::new(
        SharedSink(&buffer),
        gix::zlib::Compression::BEST_SPEED,
    );
    for (id, (kind, data)) in objects.iter() {
        let offset = buffer.borrow().len();
        {
            let mut pack = buffer.borrow_mut();
            // 3 type bits and 4 size bits, then 7 size bits at a time
            let mut size = data.len();
            let mut byte = (type_code(*kind) << 4) | (size & 0x0f) as u8;
            size >>= 4;
            while size > 0 {
                pack.push(byte | 0x80);
                byte = (size & 0x7f) as u8;
                size >>= 7;
            }
            pack.push(byte);
        }
        deflate.reset();
        deflate
            .write_all(data)
            .and_then(|_| deflate.flush())
            .map_err(|e| Error::invalid("compressing a pack entry", e.to_string()))?;
        let crc = crc32fast::hash(&buffer.borrow()[offset..]);
        entries.push((id, offset as u64, crc));
    }
    drop(deflate);
    let mut pack = buffer.into_inner();
    let pack_sum = sha1(&pack)?;
    pack.extend_from_slice(pack_sum.as_bytes());

    entries.sort_by(|a, b| a.0.cmp(b.0));
    let mut idx: Vec<u8> = Vec::with_capacity(8 + 1024 + entries.len() * 28 + 40);
    idx.extend_from_slice(&[0xff, b't', b'O', b'c', 0, 0, 0, 2]);
    let mut fanout = [0u32; 256];
    for (id, _, _) in &entries {
        fanout[id.as_bytes()[0] as usize] += 1;
    }
    let mut running = 0u32;
    for count in fanout {
        running += count;
        idx.extend_from_slice(&running.to_be_bytes());
    }
    for (id, _, _) in &entries {
        idx.extend_from_slice(id.as_bytes());
    }
    for (_, _, crc) in &entries {
        idx.extend_from_slice(&crc.to_be_bytes());
    }
    let mut large: Vec<u64> = Vec::new();
    for (_, offset, _) in &entries {
        if *offset < 0x8000_0000 {
            idx.extend_from_slice(&(*offset as u32).to_be_bytes());
        } else {
            idx.extend_from_slice(&(0x8000_0000 | large.len() as u32).to_be_bytes());
            large.push(*offset);
        }
    }
    for offset in large {
        idx.extend_from_slice(&offset.to_be_bytes());
    }
    idx.extend_from_slice(pack_sum.as_bytes());
    let idx_sum = sha1(&idx)?;
    idx.extend_from_slice(idx_sum.as_bytes());

    let pack_dir = objects_dir(repo).join("pack");
    let sharing = repo.sharing();
    sharing
        .create_dir_all(&pack_dir)
        .map_err(|e| Error::io(&pack_dir, e))?;
    let base = pack_dir.join(format!("pack-{pack_sum}"));
    let keep = base.with_extension("keep");
    std::fs::write(&keep, SEALING)
        .and_then(|()| sharing.apply(&keep))
        .map_err(|e| Error::io(&keep, e))?;
    write_durably(&base.with_extension("pack"), &pack, sharing)?;
    write_durably(&base.with_extension("idx"), &idx, sharing)?;
    sync_dir(&pack_dir).map_err(|e| Error::io(&pack_dir, e))?;
    Ok(Some(keep))
}

fn sha1(bytes: &[u8]) -> Result<gix::ObjectId> {
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(bytes);
    hasher.try_finalize().map_err(Error::git)
}

/// Writes `bytes` to a temporary file beside `path`, fsyncs it and renames
/// it into place. Pack files are read-only, as git makes them; in a shared
/// repository readable by the group too (the temporary file's 0400 made
/// another user's `git gc` fail on memlog's pack, field test 12b).
fn write_durably(path: &Path, bytes: &[u8], sharing: Sharing) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(dir, e))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| Error::io(path, e))?;
    let mut perms = tmp
        .as_file()
        .metadata()
        .map_err(|e| Error::io(path, e))?
        .permissions();
    perms.set_readonly(true);
    let _ = std::fs::set_permissions(tmp.path(), perms);
    sharing.apply(tmp.path()).map_err(|e| Error::io(path, e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// An `io::Write` appending to a buffer that others may also append to
/// between writes.
struct SharedSink<'a>(&'a std::cell::RefCell<Vec<u8>>);

impl Write for SharedSink<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
