//! Claude Code's TodoWrite tool, and its task tools (TaskCreate,
//! TaskUpdate), as memlog task events.
//!
//! Every TodoWrite call carries the agent's whole todo list. A call becomes,
//! for each todo (identified by the canonical key of its `content`, in the
//! project's namespace, FORMAT.md §6):
//!
//! - `task_created` when the todo was not in the previous list (or the
//!   previous list is unknown), with its current status;
//! - `task_status_changed` when it was, with a different status;
//! - nothing when it was, unchanged.
//!
//! A todo that went from `pending` straight to `completed` between two
//! calls gets the step the state machine requires recorded first: a
//! `task_status_changed` `pending → in_progress` marked `implied: true`
//! (the call proves the work happened; `memlog_format::task` explains the
//! rule), then `in_progress → done`.
//!
//! Todos that leave the list produce nothing: Claude Code drops finished
//! lists wholesale, so leaving says nothing about the task.

use std::collections::{HashMap, HashSet};

use memlog_format::Kind;
use memlog_format::key::canonical_key;
use serde_json::{Map, Value};

/// The tool whose calls become task events.
pub const TODO_TOOL: &str = memlog_format::task::TODO_WRITE_SOURCE;

/// One entry of a TodoWrite list.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Todo {
    pub content: String,
    pub status: Option<String>,
    pub priority: Option<String>,
    pub id: Option<String>,
    pub active_form: Option<String>,
}

/// A task event derived from a todo: its kind, body, and the todo's index
/// in the list (for stable references).
pub(crate) struct TaskEvent {
    pub kind: Kind,
    pub body: Map<String, Value>,
    pub index: usize,
    /// The implied `in_progress` step before a `pending → done` jump.
    pub implied: bool,
}

impl TaskEvent {
    /// A stable external reference for the event, from the call's: the
    /// todo's index, and `/implied` for an implied step.
    pub fn reference(&self, call: &str) -> String {
        let implied = if self.implied { "/implied" } else { "" };
        format!("{call}/todo/{}{implied}", self.index)
    }
}

/// The todos of a TodoWrite list (`tool_input.todos`, `newTodos`,
/// `oldTodos`); `None` when the value is not a list. Entries that are not
/// objects with a non-empty `content` are left out.
pub(crate) fn parse_todos(list: &Value) -> Option<Vec<Todo>> {
    let items = list.as_array()?;
    let text = |item: &Value, key: &str| {
        item.get(key)
            .and_then(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .filter(|s| !s.trim().is_empty())
    };
    Some(
        items
            .iter()
            .filter_map(|item| {
                Some(Todo {
                    content: text(item, "content")?,
                    status: text(item, "status"),
                    priority: text(item, "priority"),
                    id: text(item, "id"),
                    active_form: text(item, "activeForm"),
                })
            })
            .collect(),
    )
}

/// memlog's task status for a TodoWrite status: `completed` is `done`
/// (DESIGN.md §5's name), a task tool's `deleted` is `cancelled`; `pending`,
/// `in_progress` and anything else are kept.
pub(crate) fn task_status(todo_status: &str) -> &str {
    match todo_status {
        "completed" => "done",
        "deleted" => "cancelled",
        other => other,
    }
}

/// Claude Code's task tools, with which it plans since 2.1 (TodoWrite is
/// refused there): `TaskCreate` makes one task, whose id the response
/// gives; `TaskUpdate` changes one by that id, which only its session
/// knows.
pub const TASK_CREATE: &str = memlog_format::task::TASK_CREATE_SOURCE;
/// See [`TASK_CREATE`].
pub const TASK_UPDATE: &str = memlog_format::task::TASK_UPDATE_SOURCE;

/// A value given as text or as a number, as text.
fn text_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The task's id and subject a TaskCreate call made (its response's
/// `task`, else its input's `subject`).
pub(crate) fn created_task(
    input: Option<&Value>,
    response: Option<&Value>,
) -> Option<(Option<String>, String)> {
    let task = response.and_then(|r| r.get("task"));
    let subject = text_of(task.and_then(|t| t.get("subject")))
        .or_else(|| text_of(input.and_then(|i| i.get("subject"))))?;
    Some((text_of(task.and_then(|t| t.get("id"))), subject))
}

/// The task events of one TaskCreate or TaskUpdate call, as TodoWrite's
/// would be for the same change (`source` the tool's name); `None` when
/// the call changes nothing memlog tracks (an update of other fields) or
/// its task's subject is not found by `subject_of` (the session's task
/// id → subject): then it is recorded as the plain call it is.
pub(crate) fn task_tool_events(
    tool: &str,
    input: Option<&Value>,
    response: Option<&Value>,
    project: &str,
    subject_of: &dyn Fn(&str) -> Option<String>,
) -> Option<Vec<TaskEvent>> {
    let todo = |content: String, status: Option<String>, id: Option<String>| Todo {
        content,
        status,
        priority: None,
        id,
        active_form: text_of(input.and_then(|i| i.get("activeForm"))),
    };
    let events = match tool {
        TASK_CREATE => {
            let (id, subject) = created_task(input, response)?;
            let status = text_of(input.and_then(|i| i.get("status")))
                .unwrap_or_else(|| "pending".to_string());
            task_events(&[todo(subject, Some(status), id)], None, project)
        }
        TASK_UPDATE => {
            let id = text_of(input.and_then(|i| i.get("taskId")))?;
            let change = response.and_then(|r| r.get("statusChange"));
            let to = text_of(input.and_then(|i| i.get("status")))
                .or_else(|| text_of(change.and_then(|c| c.get("to"))))?;
            let from = text_of(change.and_then(|c| c.get("from")));
            let subject = subject_of(&id)?;
            let before = todo(subject.clone(), from, Some(id.clone()));
            task_events(
                &[todo(subject, Some(to), Some(id))],
                Some(&[before]),
                project,
            )
        }
        _ => return None,
    };
    Some(
        events
            .into_iter()
            .map(|mut e| {
                e.body.insert("source".into(), Value::String(tool.into()));
                e
            })
            .collect(),
    )
}

/// The task events of one TodoWrite call, given the list before it when
/// known. Deterministic: the same lists give the same events in the same
/// order (the list's order; a repeated todo counts once).
pub(crate) fn task_events(
    todos: &[Todo],
    previous: Option<&[Todo]>,
    project: &str,
) -> Vec<TaskEvent> {
    let key = |todo: &Todo| canonical_key(&todo.content, Some(project));
    let before: Option<HashMap<String, Option<&str>>> = previous.map(|list| {
        list.iter()
            .map(|t| (key(t), t.status.as_deref().map(task_status)))
            .collect()
    });
    let mut seen = HashSet::new();
    let mut events = Vec::new();
    for (index, todo) in todos.iter().enumerate() {
        let task_key = key(todo);
        if task_key.is_empty() || !seen.insert(task_key.clone()) {
            continue;
        }
        let status = todo.status.as_deref().map(task_status);
        let mut body = Map::new();
        body.insert("key".into(), Value::String(task_key.clone()));
        body.insert("title".into(), Value::String(todo.content.clone()));
        if let Some(s) = status {
            body.insert("status".into(), Value::String(s.to_string()));
        }
        if let Some(raw) = todo.status.as_deref().filter(|raw| Some(*raw) != status) {
            body.insert("todo_status".into(), Value::String(raw.to_string()));
        }
        body.insert("source".into(), Value::String(TODO_TOOL.into()));
        let prior = before.as_ref().and_then(|m| m.get(&task_key));
        let kind = match prior {
            None => {
                for (field, value) in [
                    ("priority", &todo.priority),
                    ("todo_id", &todo.id),
                    ("active_form", &todo.active_form),
                ] {
                    if let Some(v) = value {
                        body.insert(field.into(), Value::String(v.clone()));
                    }
                }
                Kind::TaskCreated
            }
            Some(from) if *from != status => {
                if *from == Some("pending") && status == Some("done") {
                    let mut step = body.clone();
                    step.insert("status".into(), Value::String("in_progress".into()));
                    step.remove("todo_status");
                    step.insert("from".into(), Value::String("pending".into()));
                    step.insert("to".into(), Value::String("in_progress".into()));
                    step.insert("implied".into(), Value::Bool(true));
                    events.push(TaskEvent {
                        kind: Kind::TaskStatusChanged,
                        body: step,
                        index,
                        implied: true,
                    });
                    body.insert("from".into(), Value::String("in_progress".into()));
                } else if let Some(from) = from {
                    body.insert("from".into(), Value::String(from.to_string()));
                }
                if let Some(to) = status {
                    body.insert("to".into(), Value::String(to.to_string()));
                }
                Kind::TaskStatusChanged
            }
            Some(_) => continue,
        };
        events.push(TaskEvent {
            kind,
            body,
            index,
            implied: false,
        });
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn todos(v: Value) -> Vec<Todo> {
        parse_todos(&v).unwrap()
    }

    #[test]
    fn claude_codes_task_tools_are_task_events() {
        let subjects = |id: &str| (id == "1").then(|| "Add the budget command".to_string());
        let kinds = |events: &[TaskEvent]| -> Vec<(Kind, Option<String>)> {
            events
                .iter()
                .map(|e| {
                    let status = e.body.get("status").and_then(Value::as_str);
                    (e.kind.clone(), status.map(str::to_string))
                })
                .collect()
        };
        let created = task_tool_events(
            TASK_CREATE,
            Some(&json!({"subject": "Add the budget command", "activeForm": "Adding it"})),
            Some(&json!({"task": {"id": "1", "subject": "Add the budget command"}})),
            "p",
            &subjects,
        )
        .unwrap();
        assert_eq!(
            kinds(&created),
            [(Kind::TaskCreated, Some("pending".into()))]
        );
        assert_eq!(created[0].body["todo_id"], "1");
        assert_eq!(created[0].body["source"], "TaskCreate");
        // pending straight to completed: the start it skipped comes first
        let done = task_tool_events(
            TASK_UPDATE,
            Some(&json!({"taskId": "1", "status": "completed"})),
            Some(&json!({"success": true, "statusChange": {"from": "pending", "to": "completed"}})),
            "p",
            &subjects,
        )
        .unwrap();
        assert_eq!(
            kinds(&done),
            [
                (Kind::TaskStatusChanged, Some("in_progress".into())),
                (Kind::TaskStatusChanged, Some("done".into()))
            ]
        );
        assert_eq!(done[1].body["key"], created[0].body["key"]);
        assert_eq!(done[1].body["source"], "TaskUpdate");
        // deleted is cancelled
        let deleted = task_tool_events(
            TASK_UPDATE,
            Some(&json!({"taskId": 1, "status": "deleted"})),
            None,
            "p",
            &subjects,
        )
        .unwrap();
        assert_eq!(
            kinds(&deleted),
            [(Kind::TaskStatusChanged, Some("cancelled".into()))]
        );
        // an update of other fields, or of a task whose subject is unknown,
        // is a plain call
        let update =
            |input: Value| task_tool_events(TASK_UPDATE, Some(&input), None, "p", &subjects);
        assert!(update(json!({"taskId": "1", "description": "more"})).is_none());
        assert!(update(json!({"taskId": "7", "status": "completed"})).is_none());
        assert!(task_tool_events("Bash", None, None, "p", &subjects).is_none());
    }

    #[test]
    fn new_todos_are_created_and_changes_are_status_events() {
        let old = todos(json!([
            {"content": "Write tests", "status": "pending"},
            {"content": "Fix bug", "status": "in_progress"},
            {"content": "Ship", "status": "pending"}
        ]));
        let new = todos(json!([
            {"content": "Write tests!", "status": "in_progress", "activeForm": "Writing tests"},
            {"content": "Fix bug", "status": "completed"},
            {"content": "Ship", "status": "pending"},
            {"content": "Announce", "status": "pending", "priority": "low", "id": "4"},
            "broken",
            {"status": "pending"}
        ]));
        let events = task_events(&new, Some(&old), "shop");
        let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["task_status_changed", "task_status_changed", "task_created"]
        );
        let first = &events[0].body;
        assert_eq!(first["key"], "shop::write tests");
        assert_eq!(
            (first["from"].as_str(), first["to"].as_str()),
            (Some("pending"), Some("in_progress"))
        );
        let done = &events[1].body;
        assert_eq!(done["to"], "done");
        assert_eq!(done["status"], "done");
        assert_eq!(done["todo_status"], "completed");
        let created = &events[2];
        assert_eq!(created.index, 3);
        assert_eq!(created.body["priority"], "low");
        assert_eq!(created.body["todo_id"], "4");
        assert_eq!(created.body["source"], "TodoWrite");
    }

    #[test]
    fn a_jump_from_pending_to_completed_records_the_implied_start() {
        let old = todos(json!([{"content": "Ship", "status": "pending"}]));
        let new = todos(json!([{"content": "Ship", "status": "completed"}]));
        let events = task_events(&new, Some(&old), "p");
        let steps: Vec<(&str, &str, bool)> = events
            .iter()
            .map(|e| {
                (
                    e.body["from"].as_str().unwrap(),
                    e.body["to"].as_str().unwrap(),
                    e.implied,
                )
            })
            .collect();
        assert_eq!(
            steps,
            [
                ("pending", "in_progress", true),
                ("in_progress", "done", false)
            ]
        );
        assert_eq!(events[0].body["implied"], true);
        assert_eq!(events[0].reference("u1"), "u1/todo/0/implied");
        assert_eq!(events[1].reference("u1"), "u1/todo/0");
    }

    #[test]
    fn without_a_previous_list_every_todo_is_created_once() {
        let new = todos(json!([
            {"content": "A", "status": "pending"},
            {"content": "a.", "status": "completed"},
            {"content": "B", "status": "completed"}
        ]));
        let events = task_events(&new, None, "p");
        assert_eq!(events.len(), 2);
        assert!(events.iter().all(|e| e.kind == Kind::TaskCreated));
        assert_eq!(events[1].body["status"], "done");
        assert!(parse_todos(&json!({"todos": []})).is_none());
    }
}
