/**
 * sjournal bridge for OpenCode (verified with 1.18.33 by tests/real_hosts/opencode.rs).
 *
 * OpenCode has no stdin-JSON hooks, only in-process plugins, so this plugin turns OpenCode's
 * plugin hooks and bus events into Claude-Code-shaped hook payloads for `sjournal hook`.
 * sjournal journals each and, for SessionStart and UserPromptSubmit, answers with the
 * session's context, which the plugin caches per session and adds to the system prompt of the
 * session's model requests (`experimental.chat.system.transform`, which only reads the cache)
 * — but not to the title generator's request, and not to the compaction request's system
 * prompt (the compaction prompt gets it once, through `experimental.session.compacting`).
 *
 * What OpenCode does not report, the plugin completes:
 * - a session continued with `--session ID` fires no `session.created`: its first event sends
 *   SessionStart with source "resume";
 * - a failed tool never reaches `tool.execute.after`: its part turning to status "error" sends
 *   PostToolUseFailure;
 * - `opencode run` never deletes its session and exits right after the last event: every
 *   session still open when the process exits gets SessionEnd, sent synchronously (so is the
 *   SessionEnd of `session.deleted`, after which OpenCode exits at once);
 * - the compaction's trigger is its part's `auto` flag (auto or manual), not a constant.
 * sjournal's notices for the user (`systemMessage`) are shown as toasts in the TUI.
 */
import type { Plugin } from "@opencode-ai/plugin"
import { hook, hookSync, type HookPayload } from "../bridge-common/sjournal-hook.ts"

const BRIDGE = "opencode"

export const SjournalPlugin: Plugin = async ({ directory, client }) => {
  /** sessionID -> the latest context sjournal gave for it. */
  const context = new Map<string, string>()
  /** Sessions this process has started (or resumed) and not ended. */
  const open = new Set<string>()
  /** sessionID -> trigger of the compaction under way. */
  const trigger = new Map<string, string>()
  /** Tool calls already closed (a failed part may be updated more than once). */
  const closed = new Set<string>()

  const notify = (message: string) => {
    if (!message) return
    // Only the TUI shows toasts; elsewhere this fails, harmlessly.
    Promise.resolve(client?.tui?.showToast?.({ body: { message, variant: "info" } })).catch(() => {})
  }
  const send = async (payload: HookPayload) => {
    const r = await hook(payload, directory, BRIDGE, BRIDGE)
    notify(r.notice)
    if (r.context) context.set(payload.session_id, r.context)
    return r
  }
  const start = async (sessionID: string, source: string) => {
    if (open.has(sessionID)) return
    open.add(sessionID)
    await send({ hook_event_name: "SessionStart", session_id: sessionID, source })
  }
  /** Any event of a session this process has not started: a continuation (`--session`). */
  const ensure = (sessionID: string | undefined) => (sessionID ? start(sessionID, "resume") : undefined)
  const end = (sessionID: string, reason: string) => {
    if (!open.delete(sessionID)) return
    context.delete(sessionID)
    hookSync({ hook_event_name: "SessionEnd", session_id: sessionID, reason }, directory, BRIDGE, BRIDGE)
  }
  process.once("exit", () => {
    for (const id of [...open]) end(id, "other")
  })

  return {
    event: async ({ event }) => {
      const e = event as { type: string; properties: any }
      switch (e.type) {
        case "session.created":
          // A child session (subagent) is journaled under its own id.
          await start(e.properties.info.id, "startup")
          break
        case "session.compacted":
          // The model's view of the session was just rewritten: fetch the context again.
          trigger.delete(e.properties.sessionID)
          await send({ hook_event_name: "SessionStart", session_id: e.properties.sessionID, source: "compact" })
          break
        case "session.idle":
          await ensure(e.properties.sessionID)
          await send({ hook_event_name: "Stop", session_id: e.properties.sessionID })
          break
        case "session.deleted":
          end(e.properties.info.id, "other")
          break
        case "message.part.updated": {
          const part = e.properties.part
          if (part?.type === "compaction") {
            trigger.set(part.sessionID, part.auto ? "auto" : "manual")
          } else if (part?.type === "tool" && part.state?.status === "error" && !closed.has(part.callID)) {
            closed.add(part.callID)
            await ensure(part.sessionID)
            await send({
              hook_event_name: "PostToolUseFailure",
              session_id: part.sessionID,
              tool_name: part.tool,
              tool_input: part.state.input,
              tool_use_id: part.callID,
              error: String(part.state.error ?? "error"),
            })
          }
          break
        }
      }
    },

    "chat.message": async (input, output) => {
      await ensure(input.sessionID)
      const prompt = output.parts
        .map((p) => (p.type === "text" && !(p as { synthetic?: boolean }).synthetic ? p.text : ""))
        .filter((t) => t.length > 0)
        .join("\n")
      await send({ hook_event_name: "UserPromptSubmit", session_id: input.sessionID, prompt })
    },

    "tool.execute.before": async (input, output) => {
      await ensure(input.sessionID)
      await send({
        hook_event_name: "PreToolUse",
        session_id: input.sessionID,
        tool_name: input.tool,
        tool_input: output.args,
        tool_use_id: input.callID,
      })
    },

    "tool.execute.after": async (input, output) => {
      closed.add(input.callID)
      await send({
        hook_event_name: "PostToolUse",
        session_id: input.sessionID,
        tool_name: input.tool,
        tool_input: (input as { args?: unknown }).args,
        tool_use_id: input.callID,
        tool_response: { title: output.title, output: output.output },
      })
    },

    // Called for every model request: only reads the cache, and leaves alone the requests
    // that are not the session's conversation (title generation, compaction).
    "experimental.chat.system.transform": async (input, output) => {
      const ctx = input.sessionID ? context.get(input.sessionID) : undefined
      if (!ctx) return
      const system = output.system.join("\n")
      if (/title generator|summarization|summarize the conversation/i.test(system)) return
      output.system.push(ctx)
    },

    "experimental.session.compacting": async (input, output) => {
      await ensure(input.sessionID)
      await send({
        hook_event_name: "PreCompact",
        session_id: input.sessionID,
        trigger: trigger.get(input.sessionID) ?? "auto",
      })
      const ctx = context.get(input.sessionID)
      if (ctx) output.context.push(ctx)
    },
  }
}

export default SjournalPlugin
