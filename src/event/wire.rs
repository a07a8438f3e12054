//! The wire view: one struct holding every field any host sends that the fold uses, read in a
//! single pass with borrowed strings. Unknown keys are skipped, and every field is permissive
//! (see `lenient`), so any JSON object deserializes. The adapters turn it into an `Event`.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::lenient::{Bool, FirstStr, Num, Obj, Present, Str};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Wire<'a> {
    // Claude Code, Codex, Gemini, Cursor (snake_case).
    #[serde(borrow)]
    pub hook_event_name: Str<'a>,
    #[serde(borrow)]
    pub event: Str<'a>,
    #[serde(borrow)]
    pub session_id: Str<'a>,
    #[serde(borrow)]
    pub transcript_path: Str<'a>,
    #[serde(borrow)]
    pub sjournal_bridge: Str<'a>,
    #[serde(borrow)]
    pub cwd: Str<'a>,
    #[serde(borrow)]
    pub model: Str<'a>,
    #[serde(borrow)]
    pub permission_mode: Str<'a>,
    #[serde(borrow)]
    pub prompt_id: Str<'a>,
    #[serde(borrow)]
    pub turn_id: Str<'a>,
    #[serde(borrow)]
    pub agent_id: Str<'a>,
    #[serde(borrow)]
    pub agent_type: Str<'a>,
    #[serde(borrow)]
    pub tool_name: Str<'a>,
    #[serde(borrow)]
    pub tool_input: Option<&'a RawValue>,
    #[serde(borrow)]
    pub tool_response: Option<&'a RawValue>,
    #[serde(borrow)]
    pub tool_use_id: Str<'a>,
    pub duration_ms: Num,
    #[serde(borrow)]
    pub error: Str<'a>,
    pub is_interrupt: Bool,
    #[serde(borrow)]
    pub prompt: Str<'a>,
    #[serde(borrow)]
    pub prompt_response: Str<'a>,
    #[serde(borrow)]
    pub source: Str<'a>,
    #[serde(borrow)]
    pub trigger: Str<'a>,
    #[serde(borrow)]
    pub reason: Str<'a>,
    #[serde(borrow)]
    pub custom_instructions: Str<'a>,
    #[serde(borrow)]
    pub compact_summary: Str<'a>,
    #[serde(borrow)]
    pub last_assistant_message: Str<'a>,
    #[serde(borrow)]
    pub message: Str<'a>,
    #[serde(borrow)]
    pub file_path: Str<'a>,
    #[serde(borrow)]
    pub new_cwd: Str<'a>,
    #[serde(borrow)]
    pub to_model: Str<'a>,
    #[serde(borrow)]
    pub parent_session_id: Str<'a>,
    pub timestamp: Present,
    // Gemini CLI BeforeModel / AfterModel: the model of the request (the rest is skipped).
    #[serde(borrow)]
    pub llm_request: Obj<LlmRequest<'a>>,
    #[serde(borrow)]
    pub background_tasks: Option<&'a RawValue>,
    #[serde(borrow, rename = "task_id")]
    pub task_id_snake: Str<'a>,
    #[serde(borrow)]
    pub task_subject: Str<'a>,
    // Cursor.
    #[serde(borrow)]
    pub conversation_id: Str<'a>,
    pub generation_id: Present,
    pub cursor_version: Present,
    #[serde(borrow)]
    pub workspace_roots: FirstStr<'a>,
    #[serde(borrow)]
    pub command: Str<'a>,
    #[serde(borrow)]
    pub status: Str<'a>,
    // Cline (camelCase, the event's data nested under its own key).
    #[serde(borrow, rename = "hookName")]
    pub hook_name: Str<'a>,
    #[serde(rename = "clineVersion")]
    pub cline_version: Present,
    #[serde(borrow, rename = "taskId")]
    pub task_id: Str<'a>,
    #[serde(borrow, rename = "workspaceRoots")]
    pub workspace_roots_cc: FirstStr<'a>,
    #[serde(borrow, rename = "preToolUse")]
    pub cline_pre_tool: Obj<ClineTool<'a>>,
    #[serde(borrow, rename = "postToolUse")]
    pub cline_post_tool: Obj<ClineTool<'a>>,
    #[serde(borrow, rename = "userPromptSubmit")]
    pub cline_prompt: Obj<ClinePrompt<'a>>,
    // The Cline SDK (CLI 3.x): the session, the agent's parent, and the tool call in full.
    #[serde(borrow, rename = "sessionContext")]
    pub cline_session: Obj<ClineSession<'a>>,
    #[serde(borrow)]
    pub parent_agent_id: Str<'a>,
    #[serde(borrow)]
    pub tool_call: Obj<ClineCall<'a>>,
    #[serde(borrow)]
    pub tool_result: Obj<ClineCall<'a>>,
    // OpenClaw RFC 001 (camelCase).
    #[serde(borrow, rename = "sessionKey")]
    pub session_key: Str<'a>,
    #[serde(borrow, rename = "sessionKind")]
    pub session_kind: Str<'a>,
    #[serde(borrow, rename = "parentSession")]
    pub parent_session: Str<'a>,
    #[serde(rename = "contextUsagePercent")]
    pub context_usage_percent: Num,
    #[serde(rename = "messageCount")]
    pub message_count: Num,
    #[serde(borrow, rename = "userMessage")]
    pub user_message: Str<'a>,
    #[serde(borrow, rename = "assistantMessage")]
    pub assistant_message: Str<'a>,
    #[serde(borrow, rename = "toolCalls")]
    pub tool_calls: Option<&'a RawValue>,
    #[serde(rename = "durationMs")]
    pub duration_ms_cc: Num,
    // Who wrote a prompt (`Host::prompt_author`): the bridges' `prompt_source`, a top-level
    // `senderIsOwner`, OpenClaw's hook context.
    #[serde(borrow)]
    pub prompt_source: Str<'a>,
    #[serde(rename = "senderIsOwner")]
    pub sender_is_owner: Bool,
    #[serde(borrow)]
    pub ctx: Obj<OpenClawCtx<'a>>,
}

/// The parts of OpenClaw's hook context (`ctx`, as the plugin passes it) that tell who started
/// a run and who sent its prompt.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct OpenClawCtx<'a> {
    #[serde(borrow)]
    pub trigger: Str<'a>,
    #[serde(borrow, rename = "sessionKey")]
    pub session_key: Str<'a>,
    #[serde(borrow, rename = "inputProvenance")]
    pub input_provenance: Obj<Provenance<'a>>,
    #[serde(borrow, rename = "senderId")]
    pub sender_id: Str<'a>,
    #[serde(rename = "channelContext")]
    pub channel_context: Obj<ChannelContext>,
    #[serde(rename = "senderIsOwner")]
    pub sender_is_owner: Bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Provenance<'a> {
    #[serde(borrow)]
    pub kind: Str<'a>,
    #[serde(borrow, rename = "sourceRole")]
    pub source_role: Str<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ChannelContext {
    pub sender: Present,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ClineTool<'a> {
    #[serde(borrow, rename = "toolName")]
    pub tool_name: Str<'a>,
    #[serde(borrow)]
    pub parameters: Option<&'a RawValue>,
    #[serde(borrow)]
    pub result: Option<&'a RawValue>,
    pub success: Bool,
    #[serde(rename = "executionTimeMs")]
    pub execution_time_ms: Num,
}

/// The Cline SDK's `sessionContext`: the session `cline --id` resumes.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ClineSession<'a> {
    #[serde(borrow, rename = "rootSessionId")]
    pub root_session_id: Str<'a>,
}

/// The Cline SDK's `tool_call` / `tool_result`: the call's id, its input as the model sent it
/// (`preToolUse.parameters` has every value stringified), and the result's `output` and
/// `error`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ClineCall<'a> {
    #[serde(borrow)]
    pub id: Str<'a>,
    #[serde(borrow)]
    pub input: Option<&'a RawValue>,
    #[serde(borrow)]
    pub output: Option<&'a RawValue>,
    #[serde(borrow)]
    pub error: Option<&'a RawValue>,
    #[serde(rename = "durationMs")]
    pub duration_ms: Num,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ClinePrompt<'a> {
    #[serde(borrow)]
    pub prompt: Str<'a>,
}

impl<'a> Wire<'a> {
    /// What the payload says about who wrote its prompt (`Event::origin`); takes the fields
    /// only it reads.
    pub fn origin(&mut self) -> super::Origin<'a> {
        let mut ctx = self.ctx.0.take().unwrap_or_default();
        let mut prov = ctx.input_provenance.0.take().unwrap_or_default();
        super::Origin {
            parent_agent: self
                .parent_agent_id
                .as_deref()
                .is_some_and(|p| !p.is_empty()),
            session_key: self.session_key.0.clone(),
            ctx_session_key: ctx.session_key.take(),
            prompt_source: self.prompt_source.take(),
            trigger: ctx.trigger.take(),
            provenance: prov.kind.take(),
            provenance_role: prov.source_role.take(),
            sender: ctx.sender_id.as_deref().is_some_and(|s| !s.is_empty())
                || ctx.channel_context.0.is_some_and(|c| c.sender.0),
            sender_is_owner: self.sender_is_owner.0.or(ctx.sender_is_owner.0),
        }
    }
}

/// `llm_request` of BeforeModel/AfterModel: the model, and the messages as one raw slice
/// (borrowed, not parsed); the rest is skipped.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(crate) struct LlmRequest<'a> {
    #[serde(borrow)]
    pub model: Str<'a>,
    #[serde(borrow)]
    pub messages: Option<&'a RawValue>,
}
