//! What a compaction keeps of a Claude Code session, from either path.
//!
//! Claude Code compacts a conversation by asking a forked agent for an
//! `<analysis>` and a `<summary>`, then goes on from a user message that
//! starts "This session is being continued…" and holds both, as
//! "Analysis:" and "Summary:", followed by a pointer to the transcript
//! (checked against 2.1.328 and a 2.1 transcript). The hooks see the
//! fork's answer (a SubagentStop with an empty `agent_type`), the
//! transcript the continuation. Both become one `session_summary` holding
//! the summary alone: the analysis is the model's working, the rest
//! boilerplate, and the same text on both paths lets an import match what
//! the hooks recorded. Before, the hooks recorded the fork's answer as the
//! agent's answer to the user, and an import added the continuation whole.

/// Where the continuation's boilerplate starts, after the summary.
const POINTER: &str = "\n\nIf you need specific details from before compaction";

/// The summary of a compaction fork's answer: what its last
/// `<summary>…</summary>` holds; `None` for any other answer.
pub fn from_answer(answer: &str) -> Option<String> {
    let start = answer.rfind("<summary>")? + "<summary>".len();
    let end = start + answer[start..].find("</summary>")?;
    let summary = answer[start..end].trim();
    (!summary.is_empty()).then(|| summary.to_string())
}

/// The summary of a continuation message: from its "Summary:" line to the
/// pointer to the transcript; the whole text, trimmed, when it has no such
/// line (older versions wrote the summary alone).
pub fn from_continuation(text: &str) -> String {
    let Some(at) = text.find("\nSummary:\n") else {
        return text.trim().to_string();
    };
    let summary = &text[at + "\nSummary:\n".len()..];
    let summary = summary.find(POINTER).map_or(summary, |end| &summary[..end]);
    summary.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_paths_keep_the_same_summary() {
        let answer = "<analysis>\nThe user asked for the rotation.\n</analysis>\n\n<summary>\n1. Primary Request:\n   The rotation schedule.\n</summary>";
        let continuation = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nAnalysis:\nThe user asked for the rotation.\n\nSummary:\n1. Primary Request:\n   The rotation schedule.\n\nIf you need specific details from before compaction (like exact code snippets), read the full transcript at: /x.jsonl\nContinue the conversation from where it left off.";
        let summary = from_answer(answer).unwrap_or_default();
        assert_eq!(summary, "1. Primary Request:\n   The rotation schedule.");
        assert_eq!(from_continuation(continuation), summary);
    }

    #[test]
    fn other_answers_are_not_summaries() {
        assert_eq!(from_answer("Still fine after compaction."), None);
        assert_eq!(from_answer("<summary> </summary>"), None);
        assert_eq!(from_answer("a <summary> never closed"), None);
        assert_eq!(from_continuation("  just a summary \n"), "just a summary");
    }
}
