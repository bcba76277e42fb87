//! Codex's file edits: the `apply_patch` tool, called as Codex's own
//! freeform tool or as a shell command (`apply_patch <<'EOF' …`), and what
//! the rollout says it changed (`FileChange` items, `patch_apply_end`
//! events).
//!
//! An edit is recorded as a `tool_observation` of tool `apply_patch`, from
//! hooks and import alike, whose response object (read by
//! `tool.rs` through [`render`] and [`metadata`]) is
//! `{"output": <what the tool printed>, "changes": <the rollout's changes,
//! by path>, "success": bool, "stderr"}`. Its `output` is the change as
//! diffs (the tool's text when it failed, or when the changes are
//! unknown); `metadata` names the files: `file_paths`, `file_path` (one
//! file), `changes` (`path`, `kind`: add, delete or update, `move_path`),
//! `lines_added` and `lines_removed`. Without the rollout's changes (older
//! rollouts) the files are read from the patch text itself.

use serde_json::{Map, Value};

/// One file an edit touched.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileEdit {
    /// The file, as Codex names it.
    pub path: String,
    /// `add`, `delete` or `update`.
    pub kind: String,
    /// Where an update moved the file.
    pub move_path: Option<String>,
    /// The change as a diff (for an added file, its lines as additions).
    pub diff: Option<String>,
}

/// The patch a command applies, when it runs `apply_patch` (a freeform
/// call's input is the patch itself; a shell call passes it in a heredoc
/// or an argument).
pub fn patch_text(command: &str) -> Option<&str> {
    let start = command.find("*** Begin Patch")?;
    let trimmed = command.trim_start();
    let runs_it = trimmed.starts_with("*** Begin Patch")
        || trimmed.starts_with("apply_patch")
        || trimmed.contains(" apply_patch")
        || trimmed.contains("\napply_patch");
    runs_it.then(|| &command[start..])
}

/// The files of a rollout's `changes` (`{path: {"type": "update",
/// "unified_diff", "move_path"}}`, or `{path: {"update": {…}}}` in older
/// versions), in path order.
pub fn from_changes(changes: &Value) -> Vec<FileEdit> {
    let Some(map) = changes.as_object() else {
        return Vec::new();
    };
    let mut edits: Vec<FileEdit> = map
        .iter()
        .map(|(path, change)| {
            let (kind, fields) = match change.get("type").and_then(Value::as_str) {
                Some(kind) => (kind.to_string(), change),
                None => change
                    .as_object()
                    .and_then(|c| c.iter().next())
                    .map(|(k, v)| (k.clone(), v))
                    .unwrap_or_else(|| (String::new(), change)),
            };
            let text = |key: &str| fields.get(key).and_then(Value::as_str);
            let diff = match kind.as_str() {
                "add" => text("content").map(added_lines),
                "delete" => None,
                _ => text("unified_diff").map(str::to_string),
            };
            FileEdit {
                path: path.clone(),
                kind,
                move_path: text("move_path").map(str::to_string),
                diff,
            }
        })
        .collect();
    edits.sort_by(|a, b| a.path.cmp(&b.path));
    edits
}

/// The files a patch text names (`*** Add File: p`, `*** Delete File: p`,
/// `*** Update File: p` with an optional `*** Move to: q`), each with its
/// lines as a diff.
pub fn from_patch_text(patch: &str) -> Vec<FileEdit> {
    let mut edits: Vec<FileEdit> = Vec::new();
    for line in patch.lines() {
        let header = [
            ("*** Add File: ", "add"),
            ("*** Delete File: ", "delete"),
            ("*** Update File: ", "update"),
        ]
        .iter()
        .find_map(|(prefix, kind)| line.strip_prefix(prefix).map(|p| (p.trim(), *kind)));
        if let Some((path, kind)) = header {
            edits.push(FileEdit {
                path: path.to_string(),
                kind: kind.to_string(),
                ..FileEdit::default()
            });
            continue;
        }
        let Some(edit) = edits.last_mut() else {
            continue;
        };
        if let Some(to) = line.strip_prefix("*** Move to: ") {
            edit.move_path = Some(to.trim().to_string());
        } else if line.starts_with("*** End Patch") || line.starts_with("*** End of File") {
            continue;
        } else if edit.kind != "delete" {
            let diff = edit.diff.get_or_insert_with(String::new);
            diff.push_str(line);
            diff.push('\n');
        }
    }
    edits
}

/// An added file's content as diff lines.
fn added_lines(content: &str) -> String {
    content.lines().map(|l| format!("+{l}\n")).collect()
}

/// The edits of an `apply_patch` response: its `changes`, else the patch
/// in the call's `input.command`.
fn edits_of(input: &Map<String, Value>, response: &Map<String, Value>) -> Vec<FileEdit> {
    if let Some(changes) = response.get("changes") {
        let edits = from_changes(changes);
        if !edits.is_empty() {
            return edits;
        }
    }
    input
        .get("command")
        .and_then(Value::as_str)
        .and_then(patch_text)
        .map(from_patch_text)
        .unwrap_or_default()
}

/// The readable output of an `apply_patch` response: each file's diff
/// under `A|D|M path` (`M path -> new` for a move) when it succeeded, else
/// (or when no diff is known) the tool's own text.
pub fn render(input: &Map<String, Value>, response: &Map<String, Value>) -> Option<String> {
    let own = response
        .get("output")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty());
    if response.get("success").and_then(Value::as_bool) == Some(false) {
        return own.map(str::to_string);
    }
    let edits = edits_of(input, response);
    if edits.is_empty() {
        return own.map(str::to_string);
    }
    let mut out = String::new();
    for edit in &edits {
        let letter = match edit.kind.as_str() {
            "add" => "A",
            "delete" => "D",
            _ => "M",
        };
        out.push_str(letter);
        out.push(' ');
        out.push_str(&edit.path);
        if let Some(to) = &edit.move_path {
            out.push_str(" -> ");
            out.push_str(to);
        }
        out.push('\n');
        if let Some(diff) = &edit.diff {
            out.push_str(diff);
            if !diff.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    Some(out.trim_end().to_string())
}

/// The metadata of an `apply_patch` call (see the module docs).
pub fn metadata(input: &Map<String, Value>, response: &Map<String, Value>) -> Map<String, Value> {
    let edits = edits_of(input, response);
    let mut meta = Map::new();
    if edits.is_empty() {
        return meta;
    }
    let paths: Vec<Value> = edits
        .iter()
        .map(|e| Value::String(e.path.clone()))
        .collect();
    if let [only] = paths.as_slice() {
        meta.insert("file_path".into(), only.clone());
    }
    meta.insert("file_paths".into(), Value::Array(paths));
    let changes = edits
        .iter()
        .map(|e| {
            let mut change = Map::new();
            change.insert("path".into(), Value::String(e.path.clone()));
            change.insert("kind".into(), Value::String(e.kind.clone()));
            if let Some(to) = &e.move_path {
                change.insert("move_path".into(), Value::String(to.clone()));
            }
            Value::Object(change)
        })
        .collect();
    meta.insert("changes".into(), Value::Array(changes));
    let (mut added, mut removed) = (0u64, 0u64);
    for line in edits
        .iter()
        .filter_map(|e| e.diff.as_deref())
        .flat_map(str::lines)
    {
        if line.starts_with('+') && !line.starts_with("+++") {
            added += 1;
        } else if line.starts_with('-') && !line.starts_with("---") {
            removed += 1;
        }
    }
    meta.insert("lines_added".into(), Value::from(added));
    meta.insert("lines_removed".into(), Value::from(removed));
    meta
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const PATCH: &str = "*** Begin Patch\n*** Update File: src/app.js\n@@\n-let x = 1;\n+let x = 2;\n*** Add File: NOTES.md\n+freeze\n*** Delete File: old.txt\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-a\n+b\n*** End Patch\n";

    #[test]
    fn a_patch_text_names_its_files() {
        let edits = from_patch_text(PATCH);
        let kinds: Vec<(&str, &str)> = edits
            .iter()
            .map(|e| (e.path.as_str(), e.kind.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("src/app.js", "update"),
                ("NOTES.md", "add"),
                ("old.txt", "delete"),
                ("a.txt", "update")
            ]
        );
        assert_eq!(
            edits[0].diff.as_deref(),
            Some("@@\n-let x = 1;\n+let x = 2;\n")
        );
        assert_eq!(edits[3].move_path.as_deref(), Some("b.txt"));
        assert_eq!(edits[2].diff, None);
    }

    #[test]
    fn the_patch_of_a_command() {
        assert!(patch_text(PATCH).is_some());
        let shell = format!("apply_patch <<'EOF'\n{PATCH}EOF\n");
        assert_eq!(
            patch_text(&shell),
            Some(&shell[shell.find("***").unwrap()..])
        );
        assert!(patch_text("cd x && apply_patch <<'EOF'\n*** Begin Patch\n").is_some());
        assert_eq!(patch_text("cat notes.txt"), None);
        assert_eq!(patch_text("grep '*** Begin Patch' log.txt"), None);
    }

    #[test]
    fn rollout_changes_in_both_shapes() {
        let new = from_changes(&json!({
            "/r/b.txt": {"type": "add", "content": "x\ny\n"},
            "/r/a.txt": {"type": "update", "unified_diff": "@@ -1 +1 @@\n-a\n+b\n", "move_path": null}
        }));
        assert_eq!(new[0].path, "/r/a.txt");
        assert_eq!(new[0].kind, "update");
        assert_eq!(new[1].diff.as_deref(), Some("+x\n+y\n"));
        let old = from_changes(&json!({"/r/c.txt": {"delete": {"content": "gone"}}}));
        assert_eq!(old[0].kind, "delete");
    }

    #[test]
    fn output_and_metadata() {
        let input = json!({"command": PATCH});
        let input = input.as_object().unwrap();
        let ok = json!({"output": "Success.", "success": true,
            "changes": {"/r/a.txt": {"type": "update", "unified_diff": "@@ -1 +1 @@\n-a\n+b\n"}}});
        let ok = ok.as_object().unwrap();
        assert_eq!(
            render(input, ok).unwrap(),
            "M /r/a.txt\n@@ -1 +1 @@\n-a\n+b"
        );
        let meta = metadata(input, ok);
        assert_eq!(meta["file_path"], "/r/a.txt");
        assert_eq!(
            meta["changes"],
            json!([{"path": "/r/a.txt", "kind": "update"}])
        );
        assert_eq!(
            (meta["lines_added"].clone(), meta["lines_removed"].clone()),
            (json!(1), json!(1))
        );
        // Without the rollout's changes: the patch's own files.
        let meta = metadata(input, &Map::new());
        assert_eq!(meta["file_paths"].as_array().unwrap().len(), 4);
        assert!(
            render(input, &Map::new())
                .unwrap()
                .starts_with("M src/app.js\n@@")
        );
        let failed =
            json!({"output": "apply_patch verification failed: no such file", "success": false});
        assert_eq!(
            render(input, failed.as_object().unwrap()).unwrap(),
            "apply_patch verification failed: no such file"
        );
    }
}
