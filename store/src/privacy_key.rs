//! The repository's key for redaction markers: `[REDACTED:<rule>:<hex>]`
//! carries the start of a hash of the secret keyed with it, so the same
//! secret is recognisable within this repository and nowhere else. It is
//! 32 random bytes in `<memlog dir>/privacy.key`, made on first use, and
//! never leaves the machine: it is not in the memlog ref, and neither sync
//! nor purge touches it (a clone has a key of its own).

use std::io::Write;

use crate::layout::Layout;
use crate::{Error, Result};

/// Length of a new key.
const KEY_LEN: usize = 32;

/// The key, made (atomically: two hooks starting at once agree on one)
/// when there is none yet.
pub fn load_or_create(layout: &Layout) -> Result<Vec<u8>> {
    let path = layout.privacy_key();
    match std::fs::read(&path) {
        Ok(key) if !key.is_empty() => return Ok(key),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&path, e)),
    }
    let dir = layout.dir();
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut key = [0u8; KEY_LEN];
    getrandom::fill(&mut key).map_err(|e| Error::Invalid {
        what: "the system's random source".into(),
        message: e.to_string(),
    })?;
    // A temporary file (mode 0600) renamed into place only if no other
    // process put a key there first.
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(dir, e))?;
    file.write_all(&key)
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| Error::io(file.path(), e))?;
    match file.persist_noclobber(&path) {
        Ok(_) => Ok(key.to_vec()),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::read(&path).map_err(|e| Error::io(&path, e))
        }
        Err(e) => Err(Error::io(&path, e.error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_once_then_kept() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path().join("memlog"));
        let key = load_or_create(&layout).unwrap();
        assert_eq!(key.len(), KEY_LEN);
        assert_eq!(load_or_create(&layout).unwrap(), key);
        let other = Layout::new(dir.path().join("other"));
        assert_ne!(load_or_create(&other).unwrap(), key);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(layout.privacy_key())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
    }
}
