/**
 * sjournal bridge for OpenCode (verified with 1.18.33 by tests/real_hosts/opencode.rs).
 *
 * OpenCode has no stdin-JSON hooks, only in-process plugins, so this plugin turns OpenCode's
 * plugin hooks and bus events into Claude-Code-shaped hook payloads for `sjournal hook`.
 * sjournal journals each and, for SessionStart and UserPromptSubmit, answers with what the
 * model has not seen yet (after a compaction, the recovery block; otherwise only what is new,
 * usually nothing). sjournal counts on what it injected staying in the conversation until the
 * next compaction, as in Claude Code, so the plugin stores it with the user's message as a
 * synthetic text part (`chat.message`), kept with the message across `opencode run`s until the
 * next compaction summarises it. Only the session's own model requests may carry it: OpenCode
 * also sends a session's first message to its title generator. So the part is stored marked
 * `ignored` (OpenCode leaves such parts out of every request it builds) and the session's own
 * requests — and only they call `experimental.chat.messages.transform` — get its text, as a
 * message of its own right after the user's (the title generator takes the conversation up to
 * the user's first message, never what a transform adds after it).
 *
 * A compaction is journaled as PreCompact (`experimental.session.compacting`, which OpenCode
 * awaits before the compaction request) and PostCompact (`session.compacted`, a bus event it
 * does not wait for). OpenCode has no message to carry a block then, so sjournal's fallback
 * gives the recovery block at the session's next prompt (or its SessionStart), once, and it
 * is stored with that message. Until then (OpenCode continues the turn after an automatic
 * compaction) the same block, as `sjournal context show` renders it, rides on the system
 * prompt of the session's requests (`experimental.chat.system.transform`, awaited before
 * each request; never the title generator's or a compaction's).
 *
 * What OpenCode does not report, the plugin completes:
 * - a session continued with `--session ID` fires no `session.created`: its first event sends
 *   SessionStart with source "resume";
 * - a failed tool never reaches `tool.execute.after`: its part turning to status "error" sends
 *   PostToolUseFailure;
 * - a shell command that exits non-zero does reach it, as a completed call: its exit code
 *   (`metadata.exit`) makes it PostToolUseFailure with "Exit code N", as Claude Code says it;
 * - `opencode run` never deletes its session and exits right after the last event: every
 *   session still open when the process exits gets SessionEnd, sent synchronously (so is the
 *   SessionEnd of `session.deleted`, after which OpenCode exits at once);
 * - the compaction's trigger is its part's `auto` flag (auto or manual), not a constant.
 * sjournal's notices for the user (`systemMessage`) are shown as toasts in the TUI.
 */
import type { Plugin } from "@opencode-ai/plugin"
import { hook, hookSync, nextPromptContext, type HookPayload } from "../bridge-common/sjournal-hook.ts"

const BRIDGE = "opencode"

/** Marks the text parts that carry sjournal's context (in `metadata`, stored with the part). */
const MARK = "sjournal"

type Stored = { info: { id: string; role: string; sessionID?: string }; parts: Array<Record<string, any>> }

/** The parts of `m` that carry sjournal's context. */
const ours = (m: Stored) => m.parts.filter((p) => p.type === "text" && p.metadata?.[MARK] === true)

export const SjournalPlugin: Plugin = async ({ directory, client }) => {
  /** sessionID -> context sjournal gave at a SessionStart, for the session's next message. */
  const pending = new Map<string, string[]>()
  /** Sessions compacted since a message last carried sjournal's context. */
  const compacted = new Set<string>()
  /** sessionID -> the recovery block due after a compaction, until a message carries it. */
  const preview = new Map<string, string>()
  /**
   * Sessions this process has started (or resumed) and not ended, each with its SessionStart
   * call. OpenCode does not wait for a bus event's handler (`session.created`) before it
   * hands the session's first message to `chat.message`, so that message may come while the
   * SessionStart call is still running; every later event of the session waits for it, so
   * that what SessionStart gave (a handoff, say) is in `pending` before the message is stored.
   */
  const open = new Map<string, Promise<void>>()
  /** sessionID -> trigger of the compaction under way. */
  const trigger = new Map<string, string>()
  /** Tool calls already closed (a failed part may be updated more than once). */
  const closed = new Set<string>()
  /** sessionID -> its parent session (a subagent's session), or null for a main session. */
  const parentOf = new Map<string, string | null>()
  /** The parent of a session (undefined when it cannot be told). */
  const parent = async (id: string): Promise<string | null | undefined> => {
    if (parentOf.has(id)) return parentOf.get(id)
    try {
      const r = (await client?.session?.get?.({ path: { id } })) as { data?: { parentID?: string } } | undefined
      if (!r?.data) return undefined
      const p = r.data.parentID ?? null
      parentOf.set(id, p)
      return p
    } catch {
      return undefined
    }
  }

  const notify = (message: string) => {
    if (!message) return
    // Only the TUI shows toasts; elsewhere this fails, harmlessly.
    Promise.resolve(client?.tui?.showToast?.({ body: { message, variant: "info" } })).catch(() => {})
  }
  const send = async (payload: HookPayload) => {
    const r = await hook(payload, directory, BRIDGE, BRIDGE)
    notify(r.notice)
    return r
  }
  const start = (sessionID: string, source: string): Promise<void> => {
    const started = open.get(sessionID)
    if (started) return started
    const call = send({ hook_event_name: "SessionStart", session_id: sessionID, source }).then((r) => {
      if (r.context) pending.set(sessionID, [...(pending.get(sessionID) ?? []), r.context])
    })
    open.set(sessionID, call)
    return call
  }
  /** Any event of a session this process has not started: a continuation (`--session`). */
  const ensure = (sessionID: string | undefined) => (sessionID ? start(sessionID, "resume") : undefined)
  const end = (sessionID: string, reason: string) => {
    if (!open.delete(sessionID)) return
    pending.delete(sessionID)
    compacted.delete(sessionID)
    preview.delete(sessionID)
    hookSync({ hook_event_name: "SessionEnd", session_id: sessionID, reason }, directory, BRIDGE, BRIDGE)
  }
  process.once("exit", () => {
    for (const id of [...open.keys()]) end(id, "other")
  })

  return {
    event: async ({ event }) => {
      const e = event as { type: string; properties: any }
      switch (e.type) {
        case "session.created":
          // A child session (subagent) is journaled under its own id.
          parentOf.set(e.properties.info.id, e.properties.info.parentID ?? null)
          await start(e.properties.info.id, "startup")
          break
        case "session.compacted": {
          // The model's view of the session was just rewritten. The recovery block is the
          // next prompt's (sjournal's fallback); until then, shown on the system prompt.
          const id = e.properties.sessionID
          await ensure(id)
          await send({ hook_event_name: "PostCompact", session_id: id, trigger: trigger.get(id) ?? "auto" })
          trigger.delete(id)
          break
        }
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
      const id = input.sessionID
      await ensure(id)
      const prompt = output.parts
        .map((p) => (p.type === "text" && !(p as { synthetic?: boolean }).synthetic ? p.text : ""))
        .filter((t) => t.length > 0)
        .join("\n")
      // Who wrote the prompt, for sjournal's memory (a "remember: …" is accepted only from the
      // user's own prompt in a main session): a subagent's task is its parent's model's.
      const p = await parent(id)
      const prompt_source = p === undefined ? undefined : p ? "subagent" : "user"
      const r = await send({
        hook_event_name: "UserPromptSubmit",
        session_id: id,
        prompt,
        prompt_source,
        parent_session_id: p ?? undefined,
      })
      // Stored with the message: in the conversation from now until the next compaction.
      const texts = [...(pending.get(id) ?? []), r.context].filter((t) => t)
      pending.delete(id)
      compacted.delete(id)
      preview.delete(id)
      const last = output.parts[output.parts.length - 1] as { id?: string } | undefined
      texts.forEach((text, i) => {
        output.parts.push({
          // A part id only has to start with "prt"; this one sorts right after the prompt's.
          id: `${last?.id ?? "prt_"}sj${i}`,
          sessionID: id,
          messageID: output.message.id,
          type: "text",
          text,
          synthetic: true,
          // Left out of what OpenCode sends; `experimental.chat.messages.transform` below puts
          // it in the session's own requests.
          ignored: true,
          metadata: { [MARK]: true },
        } as (typeof output.parts)[number])
      })
    },

    // Called before each of the session's own model requests (and the compaction's, which
    // summarises the conversation), never for the title generator's: each message that
    // stores sjournal's context is followed by that context, as a message of its own.
    "experimental.chat.messages.transform": async (_input, output) => {
      const messages = output.messages as unknown as Stored[]
      for (let i = messages.length - 1; i >= 0; i--) {
        const m = messages[i]
        const parts = m.info.role === "user" ? ours(m) : []
        const id = `${m.info.id}_sjournal`
        if (parts.length === 0 || messages[i + 1]?.info.id === id) continue
        messages.splice(i + 1, 0, {
          info: { ...m.info, id },
          parts: parts.map((p) => ({ ...p, messageID: id, ignored: false })),
        })
      }
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
      const common = {
        session_id: input.sessionID,
        tool_name: input.tool,
        tool_input: (input as { args?: unknown }).args,
        tool_use_id: input.callID,
      }
      // A shell command that failed: its exit code, or its time limit.
      const meta = (output.metadata ?? {}) as { exit?: unknown; timeout?: unknown }
      const code = typeof meta.exit === "number" ? meta.exit : undefined
      if ((code !== undefined && code !== 0) || meta.timeout === true) {
        const what = code !== undefined && code !== 0 ? `Exit code ${code}` : "Timed out"
        await send({
          hook_event_name: "PostToolUseFailure",
          ...common,
          error: output.output ? `${what}\n${output.output}` : what,
        })
        return
      }
      await send({
        hook_event_name: "PostToolUse",
        ...common,
        tool_response: { title: output.title, output: output.output, exit: code },
      })
    },

    // Called for every model request: leaves alone all but the session's own requests between
    // a compaction and the next message (not the title generator's, not the compaction's),
    // and asks sjournal for the block once in that window.
    "experimental.chat.system.transform": async (input, output) => {
      const id = input.sessionID
      if (!id || !compacted.has(id)) return
      const system = output.system.join("\n")
      if (/title generator|summarization|summarize the conversation/i.test(system)) return
      const ctx = preview.get(id) ?? (await nextPromptContext(id, directory))
      if (!ctx) return
      preview.set(id, ctx)
      output.system.push(ctx)
    },

    "experimental.session.compacting": async (input, output) => {
      await ensure(input.sessionID)
      await send({
        hook_event_name: "PreCompact",
        session_id: input.sessionID,
        trigger: trigger.get(input.sessionID) ?? "auto",
      })
      // What sjournal injected is in the conversation being summarised already. The requests
      // after it, until the next message, get the recovery block.
      compacted.add(input.sessionID)
      preview.delete(input.sessionID)
    },
  }
}

export default SjournalPlugin
