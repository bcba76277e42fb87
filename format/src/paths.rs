//! One name per file: a path inside the repository is named relative to
//! its root, whichever worktree or spelling (`/abs/repo/src/a.rs`,
//! `./src/a.rs`, `src/a.rs`) an event used. Paths outside every root stay
//! absolute. Applied when events are projected, so logs recorded before
//! this rule get the same entities on rebuild.

use crate::refs::normalize_path;

/// The directories the repository's files live under: its worktrees
/// (absolute, `/`-separated, without a trailing slash).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkRoots {
    /// Longest first, so that a nested worktree wins over its parent.
    roots: Vec<String>,
}

impl WorkRoots {
    /// Roots from absolute directory names; relative or empty ones are
    /// ignored.
    pub fn new<I, S>(roots: I) -> WorkRoots
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut out: Vec<String> = roots
            .into_iter()
            .filter_map(|r| {
                let r = lexical(&normalize_path(r.as_ref()));
                let r = r.trim_end_matches('/').to_string();
                (is_absolute(&r) && !r.is_empty()).then_some(r)
            })
            .collect();
        out.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        out.dedup();
        WorkRoots { roots: out }
    }

    /// The roots, longest first.
    pub fn roots(&self) -> &[String] {
        &self.roots
    }

    /// The name of `path` as a file entity: relative to the root it lies
    /// under, else relative to `cwd` (the event's working directory, which
    /// for a session recorded on another machine is the only root known),
    /// else as written (normalised: `./` dropped, `\` as `/`).
    pub fn file_name(&self, path: &str, cwd: Option<&str>) -> String {
        let p = normalize_path(path.trim());
        if !is_absolute(&p) {
            return p;
        }
        let p = lexical(&p);
        for root in &self.roots {
            if let Some(rest) = under(&p, root) {
                return rest.to_string();
            }
        }
        if let Some(cwd) = cwd {
            let cwd = lexical(&normalize_path(cwd));
            let cwd = cwd.trim_end_matches('/');
            // a cwd under a known root is that root's subdirectory: a path
            // not under the root is not under the cwd either
            if is_absolute(cwd)
                && cwd.len() > 1
                && !self.roots.iter().any(|r| under(cwd, r).is_some())
                && let Some(rest) = under(&p, cwd)
            {
                return rest.to_string();
            }
        }
        p
    }
}

/// `path` relative to `root` when strictly inside it.
fn under<'a>(path: &'a str, root: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(root)?.strip_prefix('/')?;
    (!rest.is_empty()).then_some(rest)
}

/// `/x` or `C:/x`.
fn is_absolute(p: &str) -> bool {
    let b = p.as_bytes();
    p.starts_with('/')
        || (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/')
}

/// `.` and `..` segments resolved and repeated slashes collapsed, on an
/// absolute path (a relative one is returned as it is: its base is unknown).
fn lexical(p: &str) -> String {
    if !is_absolute(p) {
        return p.to_string();
    }
    let (prefix, rest) = match p.strip_prefix('/') {
        Some(rest) => ("/", rest),
        None => p.split_at(3),
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in rest.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("{prefix}{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_a_root_become_relative_and_others_stay() {
        let roots = WorkRoots::new(["/w/repo/", "/w/repo-wt", "relative/ignored"]);
        assert_eq!(roots.roots(), ["/w/repo-wt", "/w/repo"]);
        let name = |p: &str| roots.file_name(p, None);
        assert_eq!(name("/w/repo/src/a.rs"), "src/a.rs");
        assert_eq!(name("/w/repo-wt/src/a.rs"), "src/a.rs");
        assert_eq!(name("/w/repo//src/./b/../a.rs"), "src/a.rs");
        assert_eq!(name("./src/a.rs"), "src/a.rs");
        assert_eq!(name("src\\a.rs"), "src/a.rs");
        assert_eq!(name("/w/repository/a.rs"), "/w/repository/a.rs");
        assert_eq!(name("/etc/hosts"), "/etc/hosts");
        assert_eq!(name("/w/repo"), "/w/repo");
    }

    #[test]
    fn an_unknown_cwd_is_the_root_of_a_session_from_elsewhere() {
        let roots = WorkRoots::new(["/here/repo"]);
        assert_eq!(
            roots.file_name("/there/repo/src/a.rs", Some("/there/repo")),
            "src/a.rs"
        );
        // a cwd inside a known root does not make paths relative to itself
        assert_eq!(
            roots.file_name("/here/repo/web/x.ts", Some("/here/repo/web")),
            "web/x.ts"
        );
        assert_eq!(roots.file_name("/tmp/x", Some("/")), "/tmp/x");
        assert_eq!(WorkRoots::default().file_name("/a/b", Some("/a")), "b");
    }
}
