//! Task entities (docs/DESIGN.md §5): the fold of every task event into tasks, the
//! conditions and artifacts that block them, their aliases and the edges
//! between them, written into the `entities`, `entity_aliases` and `edges`
//! tables.
//!
//! The fold is a pure function of the task events in log order (`ts`,
//! `session`, `seq`, `id`), so an incremental update and a rebuild give the
//! same rows: whenever a batch brings task events (or hides some), the task
//! rows are derived again from all of them ([`refold`]). Task events are few
//! next to the rest of the log, which keeps this cheap.
//!
//! Which task an event is about: its `task` (an entity id, written by the
//! CLI), else its canonical `key` (`task:` + key, FORMAT.md §6) or an alias
//! of one; a `task_created` whose key is unknown is matched against the
//! open tasks of the project ([`crate::matcher`]): confirmed, it becomes an
//! alias of that task; suggested, a new task remembering the suggestions;
//! otherwise a new task. Tasks a session already touched are not candidates
//! for that session's new titles: within one session, the agent's own list
//! tells its todos apart.
//!
//! A `task_created` for a task that exists is an update when its session
//! already touched the task (the agent's list again, its `oldTodos` lost).
//! From another session (a teammate's own `task add` merged by a sync, a
//! later session's todo of the same title) it joins the task, and its
//! status counts only when it moves the task on: it never sends a task
//! back to pending and never reopens a done or cancelled one.
//!
//! State changes go through [`memlog_format::task`]'s state machine; a
//! change it refuses leaves the task as it was and is kept in the task's
//! history as rejected (a `task_transition_rejected` event, written by the
//! CLI when it refuses a change, is shown the same way).

pub(crate) mod fold;
pub(crate) mod query;
pub(crate) mod refold;

pub use fold::{
    Artifact, Condition, Edge, HistoryEntry, Task, TaskEvent, TaskGraph, fold, offline_ref,
};
pub use query::{TaskSummary, find_task, open_tasks, resolve_blockers, tasks};
pub use refold::{TASK_KINDS, load_events, refold};

#[cfg(test)]
mod tests {
    use memlog_format::Kind;
    use memlog_format::task::{BlockerKind, Status};
    use serde_json::{Value, json};

    use super::*;

    fn ev(n: usize, session: &str, kind: Kind, body: Value) -> TaskEvent {
        TaskEvent {
            id: memlog_format::EventId::unchecked(format!("e{n:03}")),
            session: session.into(),
            ts: format!("2026-01-01T00:00:{:02}.000Z", n % 60),
            kind,
            project: "p".into(),
            body: body.as_object().cloned().unwrap_or_default(),
        }
    }

    #[test]
    fn the_same_task_in_several_sessions_is_one_entity() {
        let g = fold(&[
            ev(
                1,
                "s1",
                Kind::TaskCreated,
                json!({"key": "p::fix the login loop", "title": "Fix the login loop", "status": "pending", "source": "TodoWrite"}),
            ),
            ev(
                2,
                "s2",
                Kind::TaskCreated,
                json!({"key": "p::fix the login loop", "title": "Fix the login loop!", "status": "in_progress", "source": "TodoWrite"}),
            ),
            // reworded in a third session: confirmed by the matcher
            ev(
                3,
                "s3",
                Kind::TaskCreated,
                json!({"key": "p::fix the login loops", "title": "Fix the login loops", "status": "in_progress", "source": "TodoWrite"}),
            ),
            ev(
                4,
                "s3",
                Kind::TaskStatusChanged,
                json!({"key": "p::fix the login loops", "to": "done", "source": "TodoWrite"}),
            ),
        ]);
        assert_eq!(g.tasks.len(), 1, "{:?}", g.tasks.keys());
        let t = &g.tasks["task:p::fix the login loop"];
        assert_eq!(t.state.status, Status::Done);
        assert_eq!(t.sessions, ["s1", "s2", "s3"]);
        assert_eq!(t.aliases, ["task:p::fix the login loops"]);
        assert_eq!(
            g.aliases["task:p::fix the login loops"],
            "task:p::fix the login loop"
        );
    }

    /// The repository's name changed (its folder renamed, `origin` added
    /// later, a team remote not named origin): the agent's later creation
    /// of the same task, under the new project name, is the task, which it
    /// then finishes (field test 12b: a second task, the first left open
    /// in every briefing).
    #[test]
    fn the_same_task_under_a_new_project_name_is_one_entity() {
        let renamed = |mut e: TaskEvent| {
            e.project = "shop-renamed".into();
            e
        };
        let g = fold(&[
            ev(
                1,
                "s1",
                Kind::TaskCreated,
                json!({"key": "p::migrate the billing tables", "title": "Migrate the billing tables"}),
            ),
            renamed(ev(
                2,
                "s2",
                Kind::TaskCreated,
                json!({"key": "shop-renamed::migrate the billing tables",
                       "title": "Migrate the billing tables", "status": "in_progress"}),
            )),
            renamed(ev(
                3,
                "s2",
                Kind::TaskStatusChanged,
                json!({"key": "shop-renamed::migrate the billing tables", "to": "done"}),
            )),
        ]);
        assert_eq!(g.tasks.len(), 1, "{:?}", g.tasks.keys());
        let t = &g.tasks["task:p::migrate the billing tables"];
        assert_eq!(t.state.status, Status::Done);
    }

    #[test]
    fn refused_changes_stay_in_the_history_and_change_nothing() {
        let g = fold(&[
            ev(
                1,
                "s1",
                Kind::TaskCreated,
                json!({"key": "p::ship", "title": "Ship"}),
            ),
            ev(
                2,
                "s1",
                Kind::TaskStatusChanged,
                json!({"key": "p::ship", "to": "done", "source": "cli"}),
            ),
            ev(
                3,
                "s1",
                Kind::TaskStatusChanged,
                json!({"key": "p::ship", "to": "blocked"}),
            ),
            ev(
                4,
                "s1",
                Kind::TaskTransitionRejected,
                json!({"key": "p::ship", "to": "done", "reason": "pending → done"}),
            ),
        ]);
        let t = &g.tasks["task:p::ship"];
        assert_eq!(t.state.status, Status::Pending);
        let rejected: Vec<_> = t
            .history
            .iter()
            .filter_map(|h| h.rejected.as_deref())
            .collect();
        assert_eq!(rejected.len(), 3, "{rejected:?}");
        assert!(rejected[0].contains("start it first"));
        assert!(rejected[1].contains("at least one blocker"));
    }

    #[test]
    fn todo_write_completions_of_pending_tasks_imply_the_start() {
        let g = fold(&[ev(
            1,
            "s1",
            Kind::TaskCreated,
            json!({"key": "p::a", "title": "A", "status": "done", "source": "TodoWrite"}),
        )]);
        let t = &g.tasks["task:p::a"];
        assert_eq!(t.state.status, Status::Done);
        let steps: Vec<_> = t
            .history
            .iter()
            .map(|h| (h.from, h.status, h.implied))
            .collect();
        assert_eq!(
            steps,
            [
                (Some(Status::Pending), Status::InProgress, true),
                (Some(Status::InProgress), Status::Done, false)
            ]
        );
    }

    /// Another agent's plan tool sends its whole list each call, every
    /// item created again with its status: within the session that is an
    /// update of the task, and a pending step completed implies its start.
    #[test]
    fn plan_tools_update_their_sessions_tasks_by_creating_them_again() {
        let plan = |n, title: &str, status: &str| {
            let key = format!("p::{}", title.to_lowercase());
            ev(
                n,
                "s1",
                Kind::TaskCreated,
                json!({"key": key, "title": title, "status": status, "source": "update_plan"}),
            )
        };
        let g = fold(&[
            plan(1, "A", "in_progress"),
            plan(2, "B", "pending"),
            plan(3, "A", "done"),
            plan(4, "B", "done"),
        ]);
        assert_eq!(g.tasks.len(), 2);
        for key in ["task:p::a", "task:p::b"] {
            let t = &g.tasks[key];
            assert_eq!(t.state.status, Status::Done, "{key}");
            assert!(t.history.iter().all(|h| h.rejected.is_none()), "{key}");
        }
        assert!(g.tasks["task:p::b"].history.iter().any(|h| h.implied));
    }

    #[test]
    fn blockers_replace_or_suggest_and_conditions_resolve_to_tasks() {
        let url = offline_ref("https://ci.example.com/run/7", "p");
        let cond = offline_ref("staging database migrated", "p");
        assert_eq!(url.kind, BlockerKind::Artifact);
        assert_eq!(cond.entity_id, "cond:p::staging database migrated");
        let g = fold(&[
            ev(
                1,
                "s1",
                Kind::TaskCreated,
                json!({"key": "p::deploy", "title": "Deploy", "status": "in_progress"}),
            ),
            ev(
                2,
                "s1",
                Kind::TaskBlockersSet,
                json!({"key": "p::deploy", "mode": "replace", "blockers": [url, cond]}),
            ),
            ev(
                3,
                "s1",
                Kind::TaskStatusChanged,
                json!({"key": "p::deploy", "to": "blocked"}),
            ),
            ev(
                4,
                "s1",
                Kind::TaskBlockersSet,
                json!({"key": "p::deploy", "mode": "suggest", "blockers": ["ACME-9"]}),
            ),
            ev(
                5,
                "s2",
                Kind::TaskCreated,
                json!({"key": "p::migrate staging database", "title": "Staging database migrated", "status": "pending"}),
            ),
        ]);
        let edges = g.edges();
        let rel = |r: &str| -> Vec<(String, String)> {
            edges
                .iter()
                .filter(|e| e.rel == r)
                .map(|e| (e.src.clone(), e.dst.clone()))
                .collect()
        };
        assert_eq!(rel("blocked_by").len(), 2);
        assert_eq!(
            rel("blocked_by_suggested"),
            [("task:p::deploy".to_string(), "art:jira:ACME-9".to_string())]
        );
        assert_eq!(
            rel("resolves_to"),
            [(
                "cond:p::staging database migrated".to_string(),
                "task:p::migrate staging database".to_string()
            )]
        );
        assert_eq!(g.artifacts.len(), 2, "the URL and the JIRA key");
        assert_eq!(g.tasks["task:p::deploy"].state.status, Status::Blocked);
    }

    #[test]
    fn a_task_named_by_id_blocks_until_it_closes_then_its_dependant_resumes() {
        let url = offline_ref("https://ci.example.com/run/7", "p");
        let g = |extra: &[TaskEvent]| {
            let mut events = vec![
                ev(
                    1,
                    "s1",
                    Kind::TaskCreated,
                    json!({"key": "p::migrate", "title": "Migrate", "status": "in_progress"}),
                ),
                ev(
                    2,
                    "s1",
                    Kind::TaskCreated,
                    json!({"key": "p::deploy", "title": "Deploy", "status": "in_progress"}),
                ),
                ev(
                    3,
                    "s1",
                    Kind::TaskCreated,
                    json!({"key": "p::announce", "title": "Announce", "status": "in_progress"}),
                ),
                // a bare id from another writer names the task, not a condition
                ev(
                    4,
                    "s1",
                    Kind::TaskBlockersSet,
                    json!({"key": "p::deploy", "mode": "replace", "blockers": ["task:p::migrate"]}),
                ),
                ev(
                    5,
                    "s1",
                    Kind::TaskStatusChanged,
                    json!({"key": "p::deploy", "to": "blocked"}),
                ),
                ev(
                    6,
                    "s1",
                    Kind::TaskBlockersSet,
                    json!({"key": "p::announce", "mode": "replace", "blockers": ["task:p::migrate", url]}),
                ),
                ev(
                    7,
                    "s1",
                    Kind::TaskStatusChanged,
                    json!({"key": "p::announce", "to": "blocked"}),
                ),
            ];
            events.extend_from_slice(extra);
            fold(&events)
        };
        let blocked = g(&[]);
        let deploy = &blocked.tasks["task:p::deploy"];
        assert_eq!(deploy.state.blockers[0].kind, BlockerKind::Task);
        assert_eq!(deploy.state.blockers[0].entity_id, "task:p::migrate");
        assert!(blocked.conditions.is_empty(), "{:?}", blocked.conditions);

        let done = g(&[ev(
            8,
            "s2",
            Kind::TaskStatusChanged,
            json!({"key": "p::migrate", "to": "done"}),
        )]);
        let deploy = &done.tasks["task:p::deploy"];
        assert_eq!(deploy.state.status, Status::InProgress, "unblocked");
        assert!(deploy.state.blockers.is_empty());
        let last = deploy.history.last().unwrap();
        assert_eq!(
            (last.kind.as_str(), last.from, last.event.as_str()),
            ("unblocked", Some(Status::Blocked), "e008")
        );
        // another blocker remains: still blocked, by that one only
        let announce = &done.tasks["task:p::announce"];
        assert_eq!(announce.state.status, Status::Blocked);
        assert_eq!(announce.state.blockers.len(), 1);
        assert_eq!(announce.state.blockers[0].kind, BlockerKind::Artifact);
        assert!(
            !done
                .edges()
                .iter()
                .any(|e| e.rel == "blocked_by" && e.dst == "task:p::migrate")
        );
    }

    /// A creation from another session never sends a task back: a
    /// teammate's duplicate `task add` merged after the task was finished,
    /// or a later session's todo of the same title, leaves it done (found
    /// by a field test: both reopened it as pending on every clone).
    #[test]
    fn another_sessions_creation_of_a_task_never_sends_it_back() {
        let key = json!("p::upgrade node to 22");
        let created = |n, session: &str, status: &str, source: &str| {
            ev(
                n,
                session,
                Kind::TaskCreated,
                json!({"key": key, "title": "Upgrade Node to 22", "status": status, "source": source}),
            )
        };
        let to = |n, session: &str, status: &str| {
            ev(
                n,
                session,
                Kind::TaskStatusChanged,
                json!({"key": key, "to": status, "source": "cli"}),
            )
        };
        let g = fold(&[
            created(1, "alice", "pending", "cli"),
            to(2, "alice", "in_progress"),
            to(3, "alice", "done"),
            created(4, "bob", "pending", "cli"),
            created(5, "later", "pending", "TodoWrite"),
        ]);
        assert_eq!(g.tasks.len(), 1, "{:?}", g.tasks.keys());
        let t = &g.tasks["task:p::upgrade node to 22"];
        assert_eq!(t.state.status, Status::Done, "{:#?}", t.history);
        assert_eq!(t.sessions, ["alice", "bob", "later"]);
        assert!(t.history[3..].iter().all(|h| h.from.is_none()));

        // in progress: a duplicate does not reset it to pending
        let g = fold(&[
            created(1, "alice", "in_progress", "cli"),
            created(2, "bob", "pending", "cli"),
        ]);
        assert_eq!(
            g.tasks["task:p::upgrade node to 22"].state.status,
            Status::InProgress
        );

        // another session's list that moves the task on still counts, and
        // within one session a repeated creation is the list again
        let g = fold(&[
            created(1, "alice", "pending", "cli"),
            created(2, "s2", "in_progress", "TodoWrite"),
            created(3, "s2", "pending", "TodoWrite"),
        ]);
        let t = &g.tasks["task:p::upgrade node to 22"];
        let steps: Vec<_> = t.history.iter().map(|h| (h.from, h.status)).collect();
        assert_eq!(
            steps,
            [
                (None, Status::Pending),
                (Some(Status::Pending), Status::InProgress),
                (Some(Status::InProgress), Status::Pending),
            ]
        );
    }

    #[test]
    fn similar_titles_from_the_same_session_stay_apart() {
        let g = fold(&[
            ev(
                1,
                "s1",
                Kind::TaskCreated,
                json!({"key": "p::add test", "title": "Add test", "status": "pending"}),
            ),
            ev(
                2,
                "s1",
                Kind::TaskCreated,
                json!({"key": "p::add tests", "title": "Add tests", "status": "pending"}),
            ),
        ]);
        assert_eq!(g.tasks.len(), 2);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn event() -> impl Strategy<Value = (usize, usize, usize, usize)> {
            (0..5usize, 0..4usize, 0..6usize, 0..3usize)
        }

        proptest! {
            /// Whatever task events the log holds, every folded task keeps
            /// the invariants of docs/DESIGN.md §5.
            #[test]
            fn no_fold_breaks_an_invariant(events in proptest::collection::vec(event(), 0..60)) {
                let titles = ["Fix login", "Fix logins", "Write docs", "Deploy"];
                let statuses = ["pending", "in_progress", "blocked", "done", "cancelled", "completed"];
                let kinds = [Kind::TaskCreated, Kind::TaskStatusChanged, Kind::TaskBlockersSet, Kind::TaskBlockersSet, Kind::TaskTransitionRejected];
                let rows: Vec<TaskEvent> = events
                    .iter()
                    .enumerate()
                    .map(|(n, &(k, t, s, session))| {
                        let title = titles[t];
                        let body = match kinds[k] {
                            Kind::TaskBlockersSet => json!({
                                "title": title,
                                "mode": if s % 2 == 0 { "replace" } else { "suggest" },
                                "blockers": (0..s % 3).map(|i| format!("blocker {i}")).collect::<Vec<_>>(),
                            }),
                            _ => json!({"title": title, "status": statuses[s], "to": statuses[s],
                                        "source": if session == 0 { "TodoWrite" } else { "cli" }}),
                        };
                        ev(n, &format!("s{session}"), kinds[k].clone(), body)
                    })
                    .collect();
                let g = fold(&rows);
                for t in g.tasks.values() {
                    prop_assert!(t.state.check().is_ok(), "{:?}", t);
                }
                for (alias, id) in &g.aliases {
                    prop_assert!(g.tasks.contains_key(id), "{alias} -> {id}");
                }
            }
        }
    }
}
