//! One file per command, or one directory per group of subcommands
//! (`task/`, `install/`): each holds its clap `Args` (whose doc comments
//! are the help text) and one `cmd_*` function. Plumbing that other
//! programs run (`hook`, `textconv`) is hidden from the main help, and so
//! is `tasks`, the old spelling of `task list`.

use std::path::Path;
use std::process::ExitCode;

use clap::Subcommand;

mod cat;
mod concepts;
mod context;
pub mod diff;
mod doctor;
mod entity;
mod extract;
pub mod forget;
mod fsck;
mod graph;
pub mod hook;
mod import;
mod index;
mod init;
mod install;
pub mod log;
mod mcp;
mod native;
mod note;
mod purge;
mod rebuild;
mod record;
mod reflect;
mod reinforce;
mod review;
mod rules;
mod scan;
mod seal;
pub mod search;
mod serve;
pub mod show;
mod sql;
pub mod stats;
mod sync;
mod task;
mod textconv;
mod verify;
mod watch;

/// Each subcommand's arguments are built only when it runs (`defer`; see
/// `parse` in main.rs).
#[derive(Subcommand)]
#[command(defer = true)]
pub enum Command {
    Init(init::InitArgs),
    Record(record::RecordArgs),
    Note(note::NoteArgs),
    Seal(seal::SealArgs),
    Log(log::LogArgs),
    Show(show::ShowArgs),
    Cat(cat::CatArgs),
    Import(import::ImportArgs),
    Index(index::IndexArgs),
    Rebuild(rebuild::RebuildArgs),
    Search(search::SearchArgs),
    Context(context::ContextArgs),
    Sql(sql::SqlArgs),
    Forget(forget::ForgetArgs),
    /// Same as `memlog task list` (kept for scripts).
    #[command(hide = true)]
    Tasks(task::list::ListArgs),
    Extract(extract::ExtractArgs),
    Concepts(concepts::ConceptsArgs),
    Reflect(reflect::ReflectArgs),
    Rules(rules::RulesArgs),
    Native(native::NativeArgs),
    Review(review::ReviewArgs),
    Verify(verify::VerifyArgs),
    Task(task::TaskArgs),
    Entity(entity::EntityArgs),
    Graph(graph::GraphArgs),
    Reinforce(reinforce::ReinforceArgs),
    Fsck(fsck::FsckArgs),
    Uninstall(install::UninstallArgs),
    #[command(hide = true)]
    Hook(hook::HookArgs),
    Stats(stats::StatsArgs),
    Watch(watch::WatchArgs),
    Sync(sync::SyncArgs),
    Diff(diff::DiffArgs),
    Doctor(doctor::DoctorArgs),
    Purge(purge::PurgeArgs),
    Scan(scan::ScanArgs),
    #[command(hide = true)]
    Textconv(textconv::TextconvArgs),
    Mcp(mcp::McpArgs),
    Install(install::InstallArgs),
    Serve(serve::ServeArgs),
}

/// The commands an agent runs at every prompt and tool call, as a command
/// line of their own (`Cli<HotCommand>` in main.rs). Their arguments and
/// help are the same structs as in [`Command`].
#[derive(Subcommand)]
#[command(defer = true)]
pub enum HotCommand {
    Record(record::RecordArgs),
    Show(show::ShowArgs),
    Search(search::SearchArgs),
    Context(context::ContextArgs),
    #[command(hide = true)]
    Hook(hook::HookArgs),
}

impl From<HotCommand> for Command {
    fn from(hot: HotCommand) -> Self {
        match hot {
            HotCommand::Record(args) => Command::Record(args),
            HotCommand::Show(args) => Command::Show(args),
            HotCommand::Search(args) => Command::Search(args),
            HotCommand::Context(args) => Command::Context(args),
            HotCommand::Hook(args) => Command::Hook(args),
        }
    }
}

impl Command {
    /// Whether the command works through the whole log or serves for long
    /// (indexing from several threads): it gets the bulk allocator.
    pub fn is_bulk(&self) -> bool {
        matches!(
            self,
            Command::Import(_)
                | Command::Index(_)
                | Command::Rebuild(_)
                | Command::Sync(_)
                | Command::Purge(_)
                | Command::Scan(_)
                | Command::Fsck(_)
                | Command::Watch(_)
                | Command::Serve(_)
                | Command::Mcp(_)
        )
    }
}

pub fn run(command: Command, dir: &Path) -> anyhow::Result<ExitCode> {
    match command {
        Command::Init(args) => init::cmd_init(dir, args),
        Command::Record(args) => record::cmd_record(dir, args),
        Command::Note(args) => note::cmd_note(dir, args),
        Command::Seal(args) => seal::cmd_seal(dir, args),
        Command::Log(args) => log::cmd_log(dir, args),
        Command::Show(args) => show::cmd_show(dir, args),
        Command::Cat(args) => cat::cmd_cat(dir, args),
        Command::Import(args) => import::cmd_import(dir, args),
        Command::Index(args) => index::cmd_index(dir, args),
        Command::Rebuild(args) => rebuild::cmd_rebuild(dir, args),
        Command::Search(args) => search::cmd_search(dir, args),
        Command::Context(args) => context::cmd_context(dir, args),
        Command::Sql(args) => sql::cmd_sql(dir, args),
        Command::Forget(args) => forget::cmd_forget(dir, args),
        Command::Tasks(args) => task::list::cmd_list(dir, args),
        Command::Extract(args) => extract::cmd_extract(dir, args),
        Command::Concepts(args) => concepts::cmd_concepts(dir, args),
        Command::Reflect(args) => reflect::cmd_reflect(dir, args),
        Command::Rules(args) => rules::cmd_rules(dir, args),
        Command::Native(args) => native::cmd_native(dir, args),
        Command::Review(args) => review::cmd_review(dir, args),
        Command::Verify(args) => verify::cmd_verify(dir, args),
        Command::Task(args) => task::cmd_task(dir, args),
        Command::Entity(args) => entity::cmd_entity(dir, args),
        Command::Graph(args) => graph::cmd_graph(dir, args),
        Command::Reinforce(args) => reinforce::cmd_reinforce(dir, args),
        Command::Fsck(args) => fsck::cmd_fsck(dir, args),
        Command::Uninstall(args) => install::cmd_uninstall(dir, args),
        Command::Hook(args) => hook::cmd_hook(dir, args),
        Command::Stats(args) => stats::cmd_stats(dir, args),
        Command::Watch(args) => watch::cmd_watch(dir, args),
        Command::Sync(args) => sync::cmd_sync(dir, args),
        Command::Diff(args) => diff::cmd_diff(dir, args),
        Command::Doctor(args) => doctor::cmd_doctor(dir, args),
        Command::Purge(args) => purge::cmd_purge(dir, args),
        Command::Scan(args) => scan::cmd_scan(dir, args),
        Command::Textconv(args) => textconv::cmd_textconv(args),
        Command::Mcp(args) => mcp::cmd_mcp(dir, args),
        Command::Install(args) => install::cmd_install(dir, args),
        Command::Serve(args) => serve::cmd_serve(dir, args),
    }
}
