//! The repository's key for redaction markers: `[REDACTED:<rule>:<hex>]`
//! carries the start of a hash of the secret keyed with it, so the same
//! secret is recognisable within this repository and nowhere else. It is
//! 32 random bytes in `<memlog dir>/privacy.key`, made on first use, and
//! never leaves the machine: it is not in the memlog ref, and neither sync
//! nor purge touches it (a clone has a key of its own).
//!
//! It is the owner's alone (0600), except in a repository shared by a group
//! (`core.sharedRepository`): there every user's hooks record with it, and
//! the group, which reads the whole log anyway, may read it (0640); the
//! world never may ([`crate::shared::Sharing::key_mode`]). A key made
//! 0600 before is opened up by its owner's next use.

use std::io::Write;
use std::path::Path;

use crate::layout::Layout;
use crate::shared::Sharing;
use crate::{Error, Result};

/// Length of a new key.
const KEY_LEN: usize = 32;

/// The key, made (atomically: two hooks starting at once agree on one)
/// when there is none yet.
pub fn load_or_create(layout: &Layout) -> Result<Vec<u8>> {
    load_or_create_shared(layout, layout.sharing())
}

/// [`load_or_create`] in a repository shared as `sharing` says.
pub fn load_or_create_shared(layout: &Layout, sharing: Sharing) -> Result<Vec<u8>> {
    let path = layout.privacy_key();
    match std::fs::read(&path) {
        Ok(key) if !key.is_empty() => {
            // a key made before the repository was shared, or by a memlog
            // that kept it 0600 there: the group's hooks failed on it
            let _ = share(&path, sharing);
            return Ok(key);
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&path, e)),
    }
    let dir = layout.dir();
    sharing.create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
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
        .and_then(|()| share(file.path(), sharing))
        .map_err(|e| Error::io(file.path(), e))?;
    match file.persist_noclobber(&path) {
        Ok(_) => Ok(key.to_vec()),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::read(&path).map_err(|e| Error::io(&path, e))
        }
        Err(e) => Err(Error::io(&path, e.error)),
    }
}

/// Gives the key at `path` the mode of a shared repository's key, if this
/// user owns it.
fn share(path: &Path, sharing: Sharing) -> std::io::Result<()> {
    if !sharing.is_shared() || crate::shared::other_owner(path).is_some() {
        return Ok(());
    }
    set_mode(path, sharing.key_mode())
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if std::fs::metadata(path)?.permissions().mode() & 0o7777 == mode {
        return Ok(());
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
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

    #[cfg(unix)]
    #[test]
    fn readable_by_the_group_in_a_shared_repository() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path().join("memlog"));
        let mode = || {
            std::fs::metadata(layout.privacy_key())
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        let key = load_or_create(&layout).unwrap();
        assert_eq!(mode(), 0o600);
        // the repository is shared later: the owner's next use opens it up
        let group = Sharing::Widen(0o660);
        assert_eq!(load_or_create_shared(&layout, group).unwrap(), key);
        assert_eq!(mode(), 0o640);
        let fresh = Layout::new(dir.path().join("other"));
        load_or_create_shared(&fresh, Sharing::Widen(0o664)).unwrap();
        let fresh_mode = std::fs::metadata(fresh.privacy_key())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            fresh_mode & 0o777,
            0o640,
            "never the world's: {fresh_mode:o}"
        );
    }
}
