//! `core.sharedRepository`: the modes of what memlog creates in a
//! repository several users share.
//!
//! In a repository made with `git init --shared=group` (or configured with
//! `core.sharedRepository`), git widens the mode of every file and
//! directory it creates, whatever the umask, so that the other users of the
//! group can work in the same checkout. memlog's files live in the same
//! git directory and are written by every user's hooks: the packs and
//! loose objects of its seals, its ref and reflog, and its folder
//! (journals, locks, the index, `privacy.key`). Made with the umask's or a
//! temporary file's mode (0600, 0400), they locked the second user out:
//! every hook of theirs failed, their `git gc` failed on memlog's pack,
//! and each user's read took the other's index for damaged (field test
//! 12b). [`Sharing`] is the setting as git reads it, and the modes it
//! gives, as git's `adjust_shared_perm` computes them.
//!
//! Without the setting (or with `umask`/`false`), nothing is changed.

use std::path::Path;

/// How `core.sharedRepository` says to widen the modes of new files
/// (git's `git_config_perm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// `umask`, `false`, `0` or unset: the modes the umask gives.
    Umask,
    /// `group`/`true`/`1` (0660) or `all`/`world`/`everybody`/`2`
    /// (0664): these bits are added to a new file's mode.
    Widen(u32),
    /// An octal mode (`0640`): a new file gets exactly these bits.
    Exactly(u32),
}

/// The bits `group` adds.
const GROUP: u32 = 0o660;
/// The bits `all` adds.
const EVERYBODY: u32 = 0o664;

impl Sharing {
    /// The setting of the repository whose common git directory is
    /// `common_dir`, read from its `config` (where `git init --shared` and
    /// `git config core.sharedRepository` put it). A value git itself
    /// refuses counts as unset: git works in no such repository.
    pub fn of_git_dir(common_dir: &Path) -> Sharing {
        match crate::repo::config_value(common_dir, "core", "sharedrepository") {
            Some(value) => Sharing::parse(&value).unwrap_or(Sharing::Umask),
            None => Sharing::Umask,
        }
    }

    /// The setting of the repository whose memlog folder is `memlog_dir`
    /// (`<common dir>/memlog`), for code that knows only that folder.
    pub fn of_memlog_dir(memlog_dir: &Path) -> Sharing {
        match memlog_dir.parent() {
            Some(common_dir) => Sharing::of_git_dir(common_dir),
            None => Sharing::Umask,
        }
    }

    /// The setting a value of `core.sharedRepository` means, as git reads
    /// it; `None` for a value git refuses (not a boolean, a name or an
    /// octal mode, or a mode that denies its owner reading or writing).
    pub fn parse(value: &str) -> Option<Sharing> {
        let value = value.trim();
        match value.to_ascii_lowercase().as_str() {
            "umask" => return Some(Sharing::Umask),
            "group" => return Some(Sharing::Widen(GROUP)),
            "all" | "world" | "everybody" => return Some(Sharing::Widen(EVERYBODY)),
            _ => {}
        }
        let Ok(number) = u32::from_str_radix(value, 8) else {
            return match value.to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" => Some(Sharing::Widen(GROUP)),
                "false" | "no" | "off" | "" => Some(Sharing::Umask),
                _ => None,
            };
        };
        match number {
            0 => Some(Sharing::Umask),
            1 => Some(Sharing::Widen(GROUP)),
            2 => Some(Sharing::Widen(EVERYBODY)),
            mode if mode & 0o600 == 0o600 => Some(Sharing::Exactly(mode & 0o666)),
            _ => None,
        }
    }

    /// Whether the setting changes any mode.
    pub fn is_shared(self) -> bool {
        self != Sharing::Umask
    }

    /// The mode a file created with `mode` gets (git's `calc_shared_perm`):
    /// a file its owner may not write (a pack, an object) is not made
    /// writable for others either.
    pub fn file_mode(self, mode: u32) -> u32 {
        let mut tweak = match self {
            Sharing::Umask => return mode,
            Sharing::Widen(bits) | Sharing::Exactly(bits) => bits,
        };
        if mode & 0o200 == 0 {
            tweak &= !0o222;
        }
        if mode & 0o100 != 0 {
            tweak |= (tweak & 0o444) >> 2;
        }
        match self {
            Sharing::Exactly(_) => (mode & !0o777) | tweak,
            _ => mode | tweak,
        }
    }

    /// The mode a directory created with `mode` gets: a file's, searchable
    /// wherever readable, and set-group-id when the group gains access, so
    /// that what is made in it belongs to the repository's group.
    pub fn dir_mode(self, mode: u32) -> u32 {
        if !self.is_shared() {
            return mode;
        }
        let mut shared = self.file_mode(mode);
        shared |= (shared & 0o444) >> 2;
        if shared & 0o060 != 0 {
            shared |= SET_GROUP_ID;
        }
        shared
    }

    /// The mode of `privacy.key` (0600 alone): shared with the group that
    /// may write the repository, whose hooks mark secrets with it, never
    /// with the world (`all` makes the log readable by everyone, not
    /// writable), nor writable by anyone.
    pub fn key_mode(self) -> u32 {
        self.file_mode(0o600) & 0o740
    }

    /// Gives `path` the mode the setting asks for (a file's or a
    /// directory's), if it has not got it. A path another user owns is
    /// left alone: only its owner may change its mode (it did when it
    /// made it).
    pub fn apply(self, path: &Path) -> std::io::Result<()> {
        if !self.is_shared() {
            return Ok(());
        }
        let meta = std::fs::symlink_metadata(path)?;
        if !is_mine(&meta) {
            return Ok(());
        }
        let wanted = if meta.is_dir() {
            self.dir_mode(mode_of(&meta))
        } else if meta.is_symlink() {
            return Ok(());
        } else {
            // a file, or a socket (`memlog watch`'s, which the group's
            // hooks connect to)
            self.file_mode(mode_of(&meta))
        };
        set_mode(path, &meta, wanted)
    }

    /// [`Sharing::apply`] to `path` and everything under it that this
    /// user owns: for folders a library writes (the full-text index, the
    /// databases), whose files it creates with its own modes. Files of
    /// other users are theirs to fix, and skipped.
    pub fn apply_tree(self, path: &Path) {
        if !self.is_shared() {
            return;
        }
        let _ = self.apply(path);
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
            && let Ok(entries) = std::fs::read_dir(path)
        {
            for entry in entries.flatten() {
                self.apply_tree(&entry.path());
            }
        }
    }

    /// Creates `dir` and the missing directories above it, each with the
    /// shared mode.
    pub fn create_dir_all(self, dir: &Path) -> std::io::Result<()> {
        if dir.is_dir() {
            return Ok(());
        }
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.create_dir_all(parent)?;
        }
        match std::fs::create_dir(dir) {
            Ok(()) => self.apply(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// The set-group-id bit of a directory.
const SET_GROUP_ID: u32 = 0o2000;

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_of(_meta: &std::fs::Metadata) -> u32 {
    0o644
}

#[cfg(unix)]
fn set_mode(path: &Path, meta: &std::fs::Metadata, wanted: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if mode_of(meta) == wanted {
        return Ok(());
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(wanted))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _meta: &std::fs::Metadata, _wanted: u32) -> std::io::Result<()> {
    Ok(())
}

/// Whether this process's user owns the file (only the owner may change
/// its mode).
#[cfg(unix)]
fn is_mine(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.uid() == this_user()
}

#[cfg(not(unix))]
fn is_mine(_meta: &std::fs::Metadata) -> bool {
    true
}

/// The user this process runs as.
#[cfg(unix)]
pub fn this_user() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The owner of `path` when it is another user than this process's: what
/// a message about a file this user may not open names.
#[cfg(unix)]
pub fn other_owner(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(path).ok()?.uid();
    (owner != this_user()).then_some(owner)
}

/// The owner of `path` when it is another user than this process's.
#[cfg(not(unix))]
pub fn other_owner(_path: &Path) -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_git_reads_them() {
        for (value, sharing) in [
            ("umask", Some(Sharing::Umask)),
            ("false", Some(Sharing::Umask)),
            ("0", Some(Sharing::Umask)),
            ("", Some(Sharing::Umask)),
            ("group", Some(Sharing::Widen(0o660))),
            ("true", Some(Sharing::Widen(0o660))),
            ("1", Some(Sharing::Widen(0o660))),
            ("all", Some(Sharing::Widen(0o664))),
            ("World", Some(Sharing::Widen(0o664))),
            ("everybody", Some(Sharing::Widen(0o664))),
            ("2", Some(Sharing::Widen(0o664))),
            ("0640", Some(Sharing::Exactly(0o640))),
            ("0660", Some(Sharing::Exactly(0o660))),
            ("0777", Some(Sharing::Exactly(0o666))),
            // the owner must keep reading and writing
            ("0440", None),
            ("sometimes", None),
        ] {
            assert_eq!(Sharing::parse(value), sharing, "{value:?}");
        }
    }

    #[test]
    fn modes_are_gits() {
        let group = Sharing::Widen(0o660);
        let all = Sharing::Widen(0o664);
        let exactly = Sharing::Exactly(0o640);
        // a pack or an object (0400 or 0444): readable, never writable
        assert_eq!(group.file_mode(0o400), 0o440);
        assert_eq!(all.file_mode(0o400), 0o444);
        assert_eq!(exactly.file_mode(0o444), 0o440);
        // a ref, a journal, a lock made under umask 077
        assert_eq!(group.file_mode(0o600), 0o660);
        assert_eq!(all.file_mode(0o600), 0o664);
        assert_eq!(exactly.file_mode(0o664), 0o640);
        // a directory made under umask 077, as git's own (drwxrws---)
        assert_eq!(group.dir_mode(0o700), 0o2770);
        assert_eq!(all.dir_mode(0o700), 0o2775);
        assert_eq!(exactly.dir_mode(0o755), 0o2750);
        // privacy.key: the group reads it, the world never
        assert_eq!(group.key_mode(), 0o640);
        assert_eq!(all.key_mode(), 0o640);
        assert_eq!(Sharing::Exactly(0o600).key_mode(), 0o600);
    }

    #[test]
    fn unset_changes_nothing() {
        let umask = Sharing::Umask;
        assert_eq!(umask.file_mode(0o400), 0o400);
        assert_eq!(umask.dir_mode(0o700), 0o700);
        assert_eq!(umask.key_mode(), 0o600);
        assert!(!umask.is_shared());
    }

    #[cfg(unix)]
    #[test]
    fn read_from_the_repository_config() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Sharing::of_git_dir(dir.path()), Sharing::Umask);
        std::fs::write(
            dir.path().join("config"),
            "[core]\n\tbare = false\n\tsharedrepository = 1\n",
        )
        .unwrap();
        let sharing = Sharing::of_memlog_dir(&dir.path().join("memlog"));
        assert_eq!(sharing, Sharing::Widen(0o660));
        let made = dir.path().join("memlog/journal");
        sharing.create_dir_all(&made).unwrap();
        let file = made.join("x.jsonl");
        std::fs::write(&file, b"").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        sharing.apply_tree(&dir.path().join("memlog"));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&file), 0o660);
        assert_eq!(mode(&made) & 0o2070, 0o2070, "{:o}", mode(&made));
    }
}
