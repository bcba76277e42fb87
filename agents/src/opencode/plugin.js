// memlog's hooks for OpenCode (memlog-opencode-plugin), written by
// `memlog install opencode`; `memlog install opencode --uninstall` removes
// it. Each event runs `memlog hook --agent opencode <Event>` with a payload
// of memlog's shared hook protocol on stdin. Errors are ignored: memlog
// never breaks the agent.
import { spawn } from "node:child_process";

const MEMLOG = __MEMLOG__;

function hook(event, payload) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(MEMLOG, ["hook", "--agent", "opencode", event], {
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      resolve(null);
      return;
    }
    child.on("error", () => resolve(null));
    child.stdout.on("data", (data) => {
      out += data;
    });
    child.on("close", () => {
      try {
        resolve(out.trim() ? JSON.parse(out) : null);
      } catch {
        resolve(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

const contextOf = (output) => output?.hookSpecificOutput?.additionalContext ?? "";

// OpenCode's hidden agents (title, summary, compaction; 1.18.33) run model
// calls of their own in the session, through the same system transform:
// memory is no help to them, costs their tokens, and could end up in a
// session's title. Their prompts open the system text.
const SIDE_PROMPTS = [
  "You are a title generator",
  "Summarize what was done in this conversation",
  "You are a context summarization agent",
];
const isSideCall = (system) =>
  SIDE_PROMPTS.some((prompt) => String(system?.[0] ?? "").startsWith(prompt));

export const MemlogPlugin = async ({ directory }) => {
  const cwd = directory;
  // Context for a session's model calls until its turn ends.
  const context = new Map();
  // The last text the agent wrote in a session, and who wrote each message.
  const answers = new Map();
  const roles = new Map();
  let latest = null;
  const remember = (session, text) => {
    if (!text) return;
    context.set(session, [context.get(session), text].filter(Boolean).join("\n\n"));
    latest = session;
  };
  return {
    event: async ({ event }) => {
      const p = event.properties ?? {};
      if (event.type === "session.created" && p.info?.id) {
        const out = await hook("SessionStart", { session_id: p.info.id, cwd, source: "startup" });
        remember(p.info.id, contextOf(out));
      } else if (event.type === "message.updated" && p.info?.id) {
        roles.set(p.info.id, p.info.role);
      } else if (event.type === "message.part.updated") {
        const part = p.part;
        if (part?.type === "text" && !part.synthetic && roles.get(part.messageID) === "assistant") {
          answers.set(part.sessionID, part.text);
        }
      } else if (event.type === "session.idle" && p.sessionID) {
        const answer = answers.get(p.sessionID) ?? "";
        answers.delete(p.sessionID);
        context.delete(p.sessionID);
        await hook("Stop", { session_id: p.sessionID, cwd, last_assistant_message: answer });
      } else if (event.type === "session.deleted" && p.info?.id) {
        await hook("SessionEnd", { session_id: p.info.id, cwd, reason: "deleted" });
      }
    },
    "chat.message": async (input, output) => {
      const prompt = (output.parts ?? [])
        .filter((part) => part.type === "text" && !part.synthetic)
        .map((part) => part.text)
        .join("\n");
      if (!prompt.trim()) return;
      const out = await hook("UserPromptSubmit", { session_id: input.sessionID, cwd, prompt });
      remember(input.sessionID, contextOf(out));
    },
    "experimental.chat.system.transform": async (input, output) => {
      const text = context.get(input.sessionID ?? latest);
      if (text && !isSideCall(output.system)) output.system.push(text);
    },
    "tool.execute.after": async (input, output) => {
      const out = await hook("PostToolUse", {
        session_id: input.sessionID,
        cwd,
        tool_name: input.tool,
        tool_input: input.args ?? {},
        // a shell's exit code is in the metadata: with it, a command
        // that failed is recorded as failed
        tool_response:
          typeof output?.metadata?.exit === "number"
            ? { output: output?.output ?? "", exit_code: output.metadata.exit }
            : output?.output ?? "",
        tool_use_id: input.callID,
      });
      // file-aware recall: what memory knows about the file, read by the
      // model with the tool's result
      const recalled = contextOf(out);
      if (recalled && typeof output?.output === "string") {
        output.output = `${output.output}\n\n${recalled}`;
      }
    },
  };
};
