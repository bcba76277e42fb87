//! The MCP tools: names, descriptions (written for the model that calls
//! them), argument schemas, and the mapping of results and errors.
//!
//! A call that fails — an unknown id, a date that does not parse, a limit
//! out of range, arguments that do not fit the schema — is a tool result
//! with `isError: true` and a message saying what to change, as the MCP
//! specification asks of tool errors so that the model can correct itself
//! (rmcp reports schema mismatches the same way). An unknown tool or
//! method, or a request that is not JSON-RPC, gets a JSON-RPC error from
//! rmcp; a line that is not JSON at all is dropped. None of them stops the
//! server.

use memlog_ops::error::Result;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ErrorData, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::Value;

use super::params::{
    AddRuleParams, ForgetParams, GetParams, ReinforceParams, RememberParams, SearchParams,
    StatsParams, TaskAddParams, TaskUpdateParams, TasksParams, TimelineParams,
};
use super::worker::{CallError, Worker};

const INSTRUCTIONS: &str = "memlog is this repository's memory: every earlier agent session \
(prompts, answers, tool calls, notes, tasks) recorded in git. Search it before re-deriving \
something that may already be known: memory_search gives short hits, memory_get reads the ones \
that matter in full, memory_timeline replays a session. Save durable knowledge with \
memory_remember (a fact with the quote that proves it). Cite event ids (short_id) when you use a \
memory, and tell memory_reinforce whether it helped.";

#[derive(Clone)]
pub struct MemoryServer {
    worker: Worker,
    tool_router: ToolRouter<Self>,
}

impl MemoryServer {
    pub fn new(worker: Worker) -> MemoryServer {
        MemoryServer {
            worker,
            tool_router: Self::tool_router(),
        }
    }

    /// Runs a tool's work on the worker and turns its outcome into an MCP
    /// result.
    async fn run<F>(&self, f: F) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&mut super::memory::Memory) -> Result<Value> + Send + 'static,
    {
        match self.worker.call(f).await {
            Ok(Ok(value)) => Ok(CallToolResult::structured(value)),
            Ok(Err(err)) => Ok(CallToolResult::error(vec![ContentBlock::text(error_text(
                &err,
            ))])),
            Err(CallError::Panicked(message)) => Err(ErrorData::internal_error(
                format!("memlog failed on this call (a bug, please report it): {message}"),
                None,
            )),
            Err(CallError::Stopped) => Err(ErrorData::internal_error(
                "the memlog server is stopping",
                None,
            )),
        }
    }
}

/// `error: message: cause: cause…` on one line.
fn error_text(err: &memlog_ops::Error) -> String {
    format!("error: {}", memlog_ops::error::chain(err))
}

#[tool_router]
impl MemoryServer {
    /// Search the project's memory: earlier agent sessions (prompts,
    /// answers, tool calls and their outputs), notes, facts and tasks.
    /// Full-text and code-aware (`user` finds `getUserById`), ranked by
    /// relevance, recency and importance. Returns compact hits — short_id,
    /// id, date, kind, session, headline (first line), score — so that
    /// many fit in context; read the ones that matter with memory_get.
    /// Filter by kind, session, time (since/until) or file.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn memory_search(
        &self,
        Parameters(params): Parameters<SearchParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |m| m.search(params)).await
    }

    /// Read events in full by id (from memory_search or memory_timeline),
    /// each with up to `context` events before and after it in its session.
    /// Returns {"events": [{"event": {...}, "context": [...]}]}; an event's
    /// `body` holds its text, or a tool call's input and output.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn memory_get(
        &self,
        Parameters(params): Parameters<GetParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |m| m.get(params)).await
    }

    /// Replay a session, or list what happened in a time range: compact
    /// rows (short_id, id, date, kind, headline) in time order. Give a
    /// session id, or since and/or until. `more: true` means rows were left
    /// out: narrow the range or raise the limit. Session start and end rows
    /// are left out unless `kind` asks for them.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn memory_timeline(
        &self,
        Parameters(params): Parameters<TimelineParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |m| m.timeline(params)).await
    }

    /// Save a note or a fact to the project's memory, for later sessions
    /// and teammates: decisions, pitfalls, conventions, verified facts.
    /// Keep it self-contained and cite supporting event ids as evidence.
    /// Private spans (<private>…</private>) and secrets are removed before
    /// anything is written. Searchable at once; committed to git when this
    /// server stops.
    #[tool(annotations(
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn memory_remember(
        &self,
        Parameters(params): Parameters<RememberParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |m| m.remember(params)).await
    }

    /// Hide events from memory: by id, a whole session, or everything
    /// before a date. Use it for wrong or sensitive memories, and give a
    /// reason. Records a reviewed `forget` event (a git commit); forgotten
    /// events disappear from search, get and timeline. At most 20 events
    /// at once; more is the user's to forget (`memlog forget`).
    #[tool(annotations(
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn memory_forget(
        &self,
        Parameters(params): Parameters<ForgetParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |m| m.forget(params)).await
    }

    /// Say whether memories helped: `success` when an answer relied on
    /// them and they were right, `failure` when they were wrong, outdated
    /// or misleading. memlog learns from it: memories that help rank
    /// higher and rise in level (reinforced, then active); memories that
    /// mislead sink, and rules contradicted often are retired. Give the
    /// ids you were shown (memory_search, injected context).
    #[tool(annotations(
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn memory_reinforce(
        &self,
        Parameters(params): Parameters<ReinforceParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |m| m.reinforce(params)).await
    }

    /// Promote a rule learned by reflection (`memlog reflect` lists
    /// candidates): a principle (`rule`), a recurring problem's fix
    /// (`solution`) or a core pattern (`core_logic`), in your own words,
    /// with the ids of the facts or events that prove it. Promote only
    /// what will hold in future sessions and that no evidence
    /// contradicts. Rules are injected at the start of every session and
    /// retired when unused for six months or contradicted twice. A rule
    /// that fetches or runs something from outside (a URL, a download, a
    /// pipe into a shell) waits for the user's review (`pending`).
    #[tool(annotations(
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn memory_add_rule(
        &self,
        Parameters(params): Parameters<AddRuleParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |m| m.add_rule(params)).await
    }

    /// Open tasks from earlier sessions (from the agent's todo lists and
    /// memory_task_add): pending, in progress or blocked, most recently
    /// updated first, with key, title, status, blockers, the session and
    /// the last event about each.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn memory_tasks(
        &self,
        Parameters(params): Parameters<TasksParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |m| m.tasks(params)).await
    }

    /// Add a task that outlives this session (pending): work to pick up
    /// later, by you or a teammate. Returns the task with its id. A task
    /// with the same title exists already: change it with
    /// memory_task_update instead.
    #[tool(annotations(
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn memory_task_add(
        &self,
        Parameters(params): Parameters<TaskAddParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |m| m.task_add(params)).await
    }

    /// Change a task's status and/or what blocks it. Blockers naming
    /// another task (its key, id or title) make a dependency: when that
    /// task is done, this one leaves `blocked` by itself. A change the
    /// task state machine refuses (e.g. pending → done) is an error saying
    /// why. Returns the task with its history.
    #[tool(annotations(
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn memory_task_update(
        &self,
        Parameters(params): Parameters<TaskUpdateParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |m| m.task_update(params)).await
    }

    /// How much memory there is: sessions, events by kind, commits,
    /// segments, open journals, and the time span covered.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn memory_stats(
        &self,
        Parameters(_params): Parameters<StatsParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |m| m.stats()).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions(INSTRUCTIONS);
        config.server_info.name = "memlog".into();
        config.server_info.version = env!("CARGO_PKG_VERSION").into();
        config
    }
}
