/**
 * sjournal bridge for Pi (the pi coding agent; verified with @earendil-works/pi-coding-agent
 * 1.6.0 by tests/real_hosts/pi.rs).
 *
 * Pi has no stdin-JSON hooks, only in-process TypeScript extensions, so this extension turns
 * Pi's events into Claude-Code-shaped hook payloads for `sjournal hook --host pi`. sjournal journals each
 * and, for SessionStart and UserPromptSubmit, answers with what the model has not seen yet
 * (after a compaction, the recovery block; otherwise only what is new, usually nothing).
 * sjournal counts on what it injected staying in the conversation until the next compaction,
 * as it does in Claude Code. Where the context goes:
 * - a prompt's: with the prompt, as a custom message (`before_agent_start`'s `message`,
 *   `customType: "sjournal"`, not displayed), stored in the session;
 * - a session start's: the same custom message, stored at once (`pi.sendMessage` while Pi is
 *   idle, which starts nothing);
 * - the recovery block after a compaction: Pi compacts by itself in the middle of its work
 *   (the context is full), where a message sent to the session would be delivered as one more
 *   turn nobody asked for — which fills the context again, and compacts again, without end.
 *   So nothing is sent: the block is kept in the session file as an entry the model never sees
 *   (`pi.appendEntry`), and added to every model request after that compaction, right after
 *   Pi's summary (`context`, which runs before each request), until the next compaction. It
 *   reaches the session's next request whenever that comes: in the same run, at the next
 *   prompt, or in another Pi process that reopens the session.
 * Pi sends custom messages to the model with the rest of the conversation and summarises them
 * away at the next compaction, exactly when sjournal resets what the model has seen.
 *
 * Each prompt says who wrote it (`prompt_source`: Pi's input source, interactive, rpc or
 * extension, or template when a prompt template or skill expanded it): sjournal accepts a
 * "remember: …" only from what a person typed.
 *
 * Faithful to what Pi reports:
 * - a session reopened with `--session-id` (it has entries already) starts as "resume";
 * - PreCompact carries Pi's reason (manual, or auto for threshold/overflow) and is sent only
 *   when the compaction happened (`session_compact`); a failed or cancelled one is journaled as
 *   `CompactionFailed`, which is no compaction;
 * - a failed tool is PostToolUseFailure, with its error text;
 * - the session's end says why: `prompt_input_exit` only when a user quit an interactive Pi,
 *   else Pi's reason (reload, new, resume, fork) or "other".
 * sjournal's notices for the user (`systemMessage`) go to Pi's UI where it has one.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent"
import { hook, type HookPayload } from "../bridge-common/sjournal-hook.ts"

const BRIDGE = "pi"

/** Pi's reasons for a session start, as Claude Code's SessionStart sources. */
const SOURCE: Record<string, string> = { startup: "startup", reload: "resume", new: "startup", resume: "resume", fork: "fork" }

/** The custom message that carries sjournal's context into the conversation. */
const message = (content: string) => ({ customType: "sjournal", content, display: false })

/** The session entry that keeps a compaction's recovery block (the model never sees it). */
const RECOVERY = "sjournal-recovery"

type Recovery = { compaction: string; text: string; at: number }

/**
 * The recovery block of the session's latest compaction, if sjournal gave one: the last
 * `RECOVERY` entry after that compaction on the current branch.
 */
function recovery(ctx: ExtensionContext): Recovery | undefined {
  const branch = ctx.sessionManager.getBranch()
  let found: Recovery | undefined
  for (const e of branch as Array<{ type: string; id: string; customType?: string; data?: any; timestamp: string }>) {
    if (e.type === "compaction") {
      found = undefined
    } else if (e.type === "custom" && e.customType === RECOVERY && typeof e.data?.text === "string") {
      found = { compaction: String(e.data.compaction ?? ""), text: e.data.text, at: Date.parse(e.timestamp) || 0 }
    }
  }
  return found
}

export default function sjournal(pi: ExtensionAPI) {
  /** session id -> the trigger of the compaction under way. */
  const compacting = new Map<string, string>()
  const sid = (ctx: ExtensionContext) => ctx.sessionManager.getSessionId()
  const send = async (ctx: ExtensionContext, event: string, fields: Record<string, unknown> = {}) => {
    const payload = { hook_event_name: event, session_id: sid(ctx), ...fields } as HookPayload
    const r = await hook(payload, ctx.cwd, BRIDGE, BRIDGE)
    if (r.notice && ctx.hasUI) ctx.ui.notify(r.notice, "info")
    return r
  }
  /** Sends a SessionStart and adds its context to the conversation now. */
  const start = async (ctx: ExtensionContext, source: string) => {
    const r = await send(ctx, "SessionStart", { source })
    if (r.context) pi.sendMessage(message(r.context))
  }

  pi.on("session_start", async (event, ctx) => {
    // Reopening a session by id is reported as a startup; its messages tell it was resumed.
    const resumed =
      event.reason === "startup" && ctx.sessionManager.getEntries().some((e) => e.type === "message")
    await start(ctx, resumed ? "resume" : SOURCE[event.reason] ?? "startup")
  })

  /** The last input Pi received: its text as typed and who sent it (interactive, rpc, extension). */
  let input: { text: string; source: string } | undefined
  pi.on("input", async (event) => {
    input = { text: event.text, source: event.source }
  })

  pi.on("before_agent_start", async (event, ctx) => {
    // Who wrote the prompt, for sjournal's memory (a "remember: …" is accepted only from what
    // a person typed): Pi's input source, or "template" when a prompt template or skill
    // expanded the input (the prompt is then not the text typed).
    const typed = input && input.text === event.prompt
    const prompt_source = input ? (typed ? input.source : "template") : undefined
    input = undefined
    const r = await send(ctx, "UserPromptSubmit", { prompt: event.prompt, prompt_source })
    return r.context ? { message: message(r.context) } : undefined
  })

  pi.on("tool_call", async (event, ctx) => {
    await send(ctx, "PreToolUse", { tool_name: event.toolName, tool_input: event.input, tool_use_id: event.toolCallId })
  })

  pi.on("tool_result", async (event, ctx) => {
    const output = event.content.map((c) => (c.type === "text" ? c.text : "")).join("")
    const common = { tool_name: event.toolName, tool_input: event.input, tool_use_id: event.toolCallId }
    if (event.isError) {
      await send(ctx, "PostToolUseFailure", { ...common, error: output || "error" })
    } else {
      await send(ctx, "PostToolUse", { ...common, tool_response: { output } })
    }
  })

  pi.on("agent_end", async (_event, ctx) => {
    await send(ctx, "Stop")
  })

  pi.on("session_before_compact", async (event, ctx) => {
    compacting.set(sid(ctx), event.reason === "manual" ? "manual" : "auto")
  })

  pi.on("session_compact", async (event, ctx) => {
    const trigger = compacting.get(sid(ctx)) ?? (event.reason === "manual" ? "manual" : "auto")
    compacting.delete(sid(ctx))
    await send(ctx, "PreCompact", { trigger, pi_reason: event.reason })
    // The model's view was just summarised: the recovery block goes with every request from
    // now on (`context` below). Kept in the session file, so that a Pi process that exits
    // before the next request leaves it to the one that makes it.
    const r = await send(ctx, "SessionStart", { source: "compact" })
    if (r.context) pi.appendEntry(RECOVERY, { compaction: event.compactionEntry.id, text: r.context })
  })

  // Before each model request: the latest compaction's recovery block, right after Pi's
  // summary (where the conversation now begins), so it stays in one place from request to
  // request.
  pi.on("context", (event, ctx) => {
    const block = recovery(ctx)
    if (!block) return undefined
    const messages = [...event.messages]
    const at = messages.findIndex((m) => m.role === "compactionSummary")
    const custom = { role: "custom", ...message(block.text), details: undefined, timestamp: block.at }
    messages.splice(at + 1, 0, custom as (typeof messages)[number])
    return { messages }
  })

  pi.on("session_compact_failed", async (event, ctx) => {
    compacting.delete(sid(ctx))
    await send(ctx, "CompactionFailed", {
      trigger: event.reason === "manual" ? "manual" : "auto",
      reason: event.aborted ? "cancelled" : "failed",
      error: event.errorMessage,
    })
  })

  pi.on("session_shutdown", async (event, ctx) => {
    const reason = event.reason === "quit" ? (ctx.mode === "tui" ? "prompt_input_exit" : "other") : event.reason
    await send(ctx, "SessionEnd", { reason })
  })
}
