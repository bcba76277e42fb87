//! Claude Code's TodoWrite tool, its task tools (TaskCreate,
//! TaskUpdate), and the other agents' plan tools, as memlog task events.
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
//!
//! Other agents plan with tools of the same kind, the whole list each
//! call, but with no previous list to compare with: Codex CLI's
//! `update_plan`, Gemini CLI's `write_todos`, OpenCode's `todowrite`,
//! Copilot CLI's `update_todo` (a markdown checklist). Each of their calls
//! creates every item with its current status ([`plan_tool_events`]).

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
    parse_items(list, "content")
}

/// The todos of a list of objects whose text is at `text_key` (TodoWrite's
/// `content`, Codex's `step`, Gemini's `description`).
fn parse_items(list: &Value, text_key: &str) -> Option<Vec<Todo>> {
    let items = list.as_array()?;
    let text = |item: &Value, key: &str| text_of(item.get(key));
    Some(
        items
            .iter()
            .filter_map(|item| {
                Some(Todo {
                    content: text(item, text_key)?,
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
                .or_else(|| text_of(change.and_then(|c| c.get("to"))));
            let ids = |field: &str| -> Vec<String> {
                match input.and_then(|i| i.get(field)) {
                    Some(Value::Array(items)) => {
                        items.iter().filter_map(|v| text_of(Some(v))).collect()
                    }
                    _ => Vec::new(),
                }
            };
            let (blocked_by, blocks) = (ids("addBlockedBy"), ids("addBlocks"));
            if to.is_none() && blocked_by.is_empty() && blocks.is_empty() {
                return None;
            }
            let subject = subject_of(&id)?;
            let mut events = Vec::new();
            if let Some(to) = to.clone() {
                let from = text_of(change.and_then(|c| c.get("from")));
                let before = todo(subject.clone(), from, Some(id.clone()));
                events = task_events(
                    &[todo(subject.clone(), Some(to), Some(id))],
                    Some(&[before]),
                    project,
                );
            }
            // `addBlockedBy` blocks this task on others; `addBlocks` blocks
            // others on this one: both name tasks by their session's ids.
            let blockers: Vec<String> = blocked_by.iter().filter_map(|b| subject_of(b)).collect();
            events.extend(blockers_added(&subject, &blockers, project, 1));
            for (n, other) in blocks.iter().filter_map(|b| subject_of(b)).enumerate() {
                let index = 2 + n;
                events.extend(blockers_added(
                    &other,
                    std::slice::from_ref(&subject),
                    project,
                    index,
                ));
            }
            if events.is_empty() && to.is_none() {
                return None;
            }
            events
        }
        _ => return None,
    };
    Some(from_source(events, tool))
}

/// The `task_blockers_set` event (mode `add`) that makes the tasks titled
/// `blockers` block the task titled `subject`; none for no blocker. Each
/// blocker is a task, named by its canonical key: the fold resolves it to
/// the entity that key reached.
fn blockers_added(
    subject: &str,
    blockers: &[String],
    project: &str,
    index: usize,
) -> Option<TaskEvent> {
    if blockers.is_empty() {
        return None;
    }
    let refs: Vec<Value> = blockers
        .iter()
        .map(|title| {
            let key = canonical_key(title, Some(project));
            serde_json::json!({
                "kind": "task",
                "entity_id": format!("task:{key}"),
                "raw_text": title,
                "confidence": "high",
            })
        })
        .collect();
    let mut body = Map::new();
    body.insert(
        "key".into(),
        Value::String(canonical_key(subject, Some(project))),
    );
    body.insert("title".into(), Value::String(subject.to_string()));
    body.insert("mode".into(), Value::String("add".into()));
    body.insert("blockers".into(), Value::Array(refs));
    Some(TaskEvent {
        kind: Kind::TaskBlockersSet,
        body,
        index,
        implied: false,
    })
}

/// `events` with `tool` as their `source`.
fn from_source(events: Vec<TaskEvent>, tool: &str) -> Vec<TaskEvent> {
    events
        .into_iter()
        .map(|mut e| {
            e.body.insert("source".into(), Value::String(tool.into()));
            e
        })
        .collect()
}

/// How another agent's plan tool sends its list.
enum ListShape {
    /// Objects in the input's `list`, each with its text at `text` and a
    /// `status` (`pending`, `in_progress`, `completed`, …).
    Items {
        list: &'static str,
        text: &'static str,
    },
    /// A markdown checklist, as text, in the input's `field`.
    Checklist { field: &'static str },
}

/// Other agents' plan tools: like TodoWrite, each call sends the whole
/// list, but no previous one (checked against the CLIs' own tool schemas:
/// Codex CLI 0.169, Gemini CLI 0.61, OpenCode 1.18, Copilot CLI 1.0.102).
const PLAN_TOOLS: [(&str, ListShape); 4] = [
    // {"explanation"?, "plan": [{"step", "status"}]}
    (
        "update_plan",
        ListShape::Items {
            list: "plan",
            text: "step",
        },
    ),
    // {"todos": [{"description", "status"}]}, statuses adding
    // `cancelled` and `blocked`
    (
        "write_todos",
        ListShape::Items {
            list: "todos",
            text: "description",
        },
    ),
    // TodoWrite's shape: {"todos": [{"content", "status", "priority", "id"?}]}
    (
        "todowrite",
        ListShape::Items {
            list: "todos",
            text: "content",
        },
    ),
    // {"todos": "- [x] done\n- [ ] next"}
    ("update_todo", ListShape::Checklist { field: "todos" }),
];

/// The todos of a markdown checklist, as Copilot CLI's `update_todo`
/// reads one: a list item (`-`, `*`, `+` or `1.`/`1)`) whose text starts
/// with a box. `[ ]` is pending and `[x]` completed (the two Copilot
/// counts); the other boxes it accepts (`[-]`, `[~]`, `[/]`) are neither,
/// so a step under way: `in_progress`. Other lines (headings, notes) are
/// left out.
fn parse_checklist(text: &str) -> Vec<Todo> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let rest = if let Some(rest) = line.strip_prefix(['-', '*', '+']) {
                rest
            } else {
                let digits =
                    line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                if digits == 0 {
                    return None;
                }
                line[digits..].strip_prefix(['.', ')'])?
            };
            let rest = rest.trim_start_matches([' ', '\t']);
            let mut chars = rest.chars();
            let (Some('['), Some(mark), Some(']')) = (chars.next(), chars.next(), chars.next())
            else {
                return None;
            };
            let status = match mark {
                ' ' => "pending",
                'x' | 'X' => "completed",
                '-' | '~' | '/' => "in_progress",
                _ => return None,
            };
            let content = chars.as_str().trim();
            (!content.is_empty()).then(|| Todo {
                content: content.to_string(),
                status: Some(status.to_string()),
                priority: None,
                id: None,
                active_form: None,
            })
        })
        .collect()
}

/// The task events of one call of another agent's plan tool (Codex CLI's
/// `update_plan`, Gemini CLI's `write_todos`, OpenCode's `todowrite`,
/// Copilot CLI's `update_todo`), read from its input as TodoWrite's would
/// be without a previous list: every item a `task_created` with its
/// current status (`source` the tool's name). The fold reads a repeated
/// creation within one session as an update, so the next call's list
/// moves the tasks on. `None` for any other tool, and for an input that
/// holds no list (then the call is the plain observation it is).
pub(crate) fn plan_tool_events(
    tool: &str,
    input: Option<&Value>,
    project: &str,
) -> Option<Vec<TaskEvent>> {
    let (_, shape) = PLAN_TOOLS.iter().find(|(name, _)| *name == tool)?;
    let todos = match shape {
        ListShape::Items { list, text } => parse_items(input?.get(*list)?, text)?,
        ListShape::Checklist { field } => parse_checklist(input?.get(*field)?.as_str()?),
    };
    Some(from_source(task_events(&todos, None, project), tool))
}

/// [`plan_tool_events`] for a call an importer read, given its observation
/// body (`tool`, `input`, `success`): `None` as well when the call failed,
/// since a refused list changed nothing (a hook sees such a call as
/// PostToolUseFailure, a plain observation).
pub(crate) fn observed_plan_events(
    body: &Map<String, Value>,
    project: &str,
) -> Option<Vec<TaskEvent>> {
    let tool = body.get("tool").and_then(Value::as_str)?;
    if body.get("success") == Some(&Value::Bool(false)) {
        return None;
    }
    plan_tool_events(tool, body.get("input"), project)
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

    /// (kind, title, status, source) of each event.
    fn summary(events: &[TaskEvent]) -> Vec<(&str, &str, &str, &str)> {
        fn text<'e>(e: &'e TaskEvent, k: &str) -> &'e str {
            e.body.get(k).and_then(Value::as_str).unwrap_or("")
        }
        events
            .iter()
            .map(|e| {
                (
                    e.kind.as_str(),
                    text(e, "title"),
                    text(e, "status"),
                    text(e, "source"),
                )
            })
            .collect()
    }

    #[test]
    fn the_plan_tools_are_the_formats_sources() {
        let names: Vec<&str> = PLAN_TOOLS.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, memlog_format::task::PLAN_TOOL_SOURCES);
    }

    #[test]
    fn other_agents_plans_create_every_item_with_its_status() {
        // Codex CLI's update_plan
        let codex = plan_tool_events(
            "update_plan",
            Some(&json!({"explanation": "Two steps", "plan": [
                {"step": "Write the parser", "status": "completed"},
                {"step": "Add tests", "status": "in_progress"},
                {"status": "pending"}
            ]})),
            "p",
        )
        .unwrap();
        assert_eq!(
            summary(&codex),
            [
                ("task_created", "Write the parser", "done", "update_plan"),
                ("task_created", "Add tests", "in_progress", "update_plan")
            ]
        );
        assert_eq!(codex[0].body["key"], "p::write the parser");
        assert_eq!(codex[0].body["todo_status"], "completed");
        // Gemini CLI's write_todos, with its `cancelled`
        let gemini = plan_tool_events(
            "write_todos",
            Some(&json!({"todos": [
                {"description": "Read the code", "status": "cancelled"},
                {"description": "Fix it", "status": "pending"}
            ]})),
            "p",
        )
        .unwrap();
        assert_eq!(
            summary(&gemini),
            [
                ("task_created", "Read the code", "cancelled", "write_todos"),
                ("task_created", "Fix it", "pending", "write_todos")
            ]
        );
        // OpenCode's todowrite: TodoWrite's shape, its priority kept
        let opencode = plan_tool_events(
            "todowrite",
            Some(&json!({"todos": [{"content": "Ship", "status": "pending", "priority": "high"}]})),
            "p",
        )
        .unwrap();
        assert_eq!(
            summary(&opencode),
            [("task_created", "Ship", "pending", "todowrite")]
        );
        assert_eq!(opencode[0].body["priority"], "high");
        // an emptied list says nothing; no list is a plain call
        let empty = plan_tool_events("write_todos", Some(&json!({"todos": []})), "p");
        assert!(empty.unwrap().is_empty());
        assert!(plan_tool_events("update_plan", Some(&json!({"explanation": "x"})), "p").is_none());
        assert!(plan_tool_events("update_plan", None, "p").is_none());
        assert!(plan_tool_events("Bash", Some(&json!({"todos": []})), "p").is_none());
        // TodoWrite keeps its own path, which knows the previous list
        assert!(plan_tool_events("TodoWrite", Some(&json!({"todos": []})), "p").is_none());
    }

    #[test]
    fn copilots_checklist_is_read_line_by_line() {
        let events = plan_tool_events(
            "update_todo",
            Some(&json!({"todos": "## Plan\n- [x] Read the code\n  * [ ] Fix the bug\n                1. [/] Run the tests\n2) [X] Lint\n- [?] odd\n- [ ]\nnotes - [ ] not an item"})),
            "p",
        )
        .unwrap();
        assert_eq!(
            summary(&events),
            [
                ("task_created", "Read the code", "done", "update_todo"),
                ("task_created", "Fix the bug", "pending", "update_todo"),
                (
                    "task_created",
                    "Run the tests",
                    "in_progress",
                    "update_todo"
                ),
                ("task_created", "Lint", "done", "update_todo")
            ]
        );
        assert!(plan_tool_events("update_todo", Some(&json!({"todos": []})), "p").is_none());
    }

    #[test]
    fn an_imported_plan_call_that_failed_is_a_plain_call() {
        let mut body = Map::new();
        body.insert("tool".into(), json!("write_todos"));
        body.insert(
            "input".into(),
            json!({"todos": [{"description": "A", "status": "pending"}]}),
        );
        assert_eq!(observed_plan_events(&body, "p").unwrap().len(), 1);
        body.insert("success".into(), json!(false));
        assert!(observed_plan_events(&body, "p").is_none());
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
    fn task_updates_that_add_blockers_are_blocker_events() {
        let subjects = |id: &str| match id {
            "1" => Some("Tag the release".to_string()),
            "2" => Some("Announce the release".to_string()),
            "3" => Some("Write the notes".to_string()),
            _ => None,
        };
        let update = |input: Value| {
            task_tool_events(TASK_UPDATE, Some(&input), None, "p", &subjects).unwrap()
        };
        let blockers = |e: &TaskEvent| -> Vec<String> {
            e.body["blockers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| format!("{} {}", b["entity_id"].as_str().unwrap(), b["raw_text"]))
                .collect()
        };
        // 2 waits on 1 (and on 9, which this session never made)
        let added = update(json!({"taskId": "2", "addBlockedBy": ["1", "9"]}));
        assert_eq!(added.len(), 1);
        assert_eq!(added[0].kind, Kind::TaskBlockersSet);
        assert_eq!(added[0].body["title"], "Announce the release");
        assert_eq!(added[0].body["mode"], "add");
        assert_eq!(added[0].body["source"], "TaskUpdate");
        let tag = canonical_key("Tag the release", Some("p"));
        assert_eq!(
            blockers(&added[0]),
            [format!("task:{tag} \"Tag the release\"")]
        );
        // 3 blocks 1 and 2, with a status change: one event per task
        let both = update(json!({"taskId": "3", "status": "in_progress", "addBlocks": ["1", "2"]}));
        let kinds: Vec<(&Kind, &Value)> =
            both.iter().map(|e| (&e.kind, &e.body["title"])).collect();
        assert_eq!(
            kinds,
            [
                (&Kind::TaskStatusChanged, &json!("Write the notes")),
                (&Kind::TaskBlockersSet, &json!("Tag the release")),
                (&Kind::TaskBlockersSet, &json!("Announce the release")),
            ]
        );
        let references: HashSet<String> = both.iter().map(|e| e.reference("c")).collect();
        assert_eq!(references.len(), 3, "each event its own reference");
        // blockers the session cannot name are a plain call
        assert!(
            task_tool_events(
                TASK_UPDATE,
                Some(&json!({"taskId": "2", "addBlockedBy": ["9"]})),
                None,
                "p",
                &subjects
            )
            .is_none()
        );
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
