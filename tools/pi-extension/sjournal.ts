/**
 * sjournal bridge for Pi (the pi coding agent).
 *
 * Pi has no stdin-JSON hooks, only in-process TypeScript extensions, so this extension turns
 * Pi's events into Claude-Code-shaped hook payloads and pipes each one to
 * `sjournal hook --host claude`. sjournal journals the event and, for SessionStart and
 * UserPromptSubmit, answers with the session's context. The extension caches it per session
 * and appends it to the system prompt of every agent run (`before_agent_start`, so it is not
 * written into Pi's session file and never piles up); after a compaction it fetches the
 * context again (SessionStart, source "compact"), so what the summary dropped comes back.
 *
 * Every payload carries `"sjournal_bridge": "pi"`, so the journal tells bridged events apart.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent"
import { spawn } from "node:child_process"

/** The sjournal binary: $SJOURNAL_BIN, else `sjournal` on PATH. */
const SJOURNAL = process.env.SJOURNAL_BIN || "sjournal"
/** Give up on one call after this long (sjournal answers within its own deadline, 250 ms). */
const CALL_TIMEOUT_MS = 3000

type Payload = Record<string, unknown> & { hook_event_name: string; session_id: string }

/**
 * Runs `sjournal hook --host claude` with the payload on stdin and returns the context it
 * printed ("" if none). Never throws: the journal must never break the agent.
 */
function hook(payload: Payload, cwd: string): Promise<string> {
  return new Promise((resolve) => {
    let out = ""
    let done = false
    const finish = (value: string) => {
      if (!done) {
        done = true
        clearTimeout(timer)
        resolve(value)
      }
    }
    const child = spawn(SJOURNAL, ["hook", "--host", "claude"], { cwd, stdio: ["pipe", "pipe", "ignore"] })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      finish("")
    }, CALL_TIMEOUT_MS)
    child.on("error", () => finish(""))
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      out += chunk
    })
    child.on("close", () => finish(contextOf(out)))
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify({ cwd, transcript_path: null, sjournal_bridge: "pi", ...payload }))
  })
}

/** The `additionalContext` of a Claude-shaped hook reply, or "". */
function contextOf(stdout: string): string {
  const text = stdout.trim()
  if (!text.startsWith("{")) return ""
  try {
    const reply = JSON.parse(text) as { hookSpecificOutput?: { additionalContext?: unknown } }
    const ctx = reply.hookSpecificOutput?.additionalContext
    return typeof ctx === "string" ? ctx : ""
  } catch {
    return ""
  }
}

/** Pi's reasons for a session start, as Claude Code's SessionStart sources. */
const SOURCE = { startup: "startup", reload: "resume", new: "startup", resume: "resume", fork: "fork" } as const

export default function sjournal(pi: ExtensionAPI) {
  /** session id -> the latest context sjournal gave for it. */
  const context = new Map<string, string>()
  const sid = (ctx: ExtensionContext) => ctx.sessionManager.getSessionId()
  const send = (ctx: ExtensionContext, event: string, fields: Record<string, unknown> = {}) =>
    hook({ hook_event_name: event, session_id: sid(ctx), ...fields }, ctx.cwd)
  const remember = (ctx: ExtensionContext, text: string) => {
    if (text) context.set(sid(ctx), text)
  }

  pi.on("session_start", async (event, ctx) => {
    remember(ctx, await send(ctx, "SessionStart", { source: SOURCE[event.reason] }))
  })

  pi.on("before_agent_start", async (event, ctx) => {
    remember(ctx, await send(ctx, "UserPromptSubmit", { prompt: event.prompt }))
    const text = context.get(sid(ctx))
    // For this run only: the cached context rides on the system prompt, never in the history.
    return text ? { systemPrompt: `${event.systemPrompt}\n\n${text}` } : undefined
  })

  pi.on("tool_call", async (event, ctx) => {
    await send(ctx, "PreToolUse", { tool_name: event.toolName, tool_input: event.input, tool_use_id: event.toolCallId })
  })

  pi.on("tool_result", async (event, ctx) => {
    const output = event.content.map((c) => (c.type === "text" ? c.text : "")).join("")
    await send(ctx, "PostToolUse", {
      tool_name: event.toolName,
      tool_input: event.input,
      tool_use_id: event.toolCallId,
      tool_response: { output, is_error: event.isError },
    })
  })

  pi.on("agent_end", async (_event, ctx) => {
    await send(ctx, "Stop")
  })

  pi.on("session_before_compact", async (_event, ctx) => {
    await send(ctx, "PreCompact", { trigger: "auto" })
  })

  pi.on("session_compact", async (_event, ctx) => {
    // The model's view was just summarised: fetch the context again for the next run.
    remember(ctx, await send(ctx, "SessionStart", { source: "compact" }))
  })

  pi.on("session_shutdown", async (event, ctx) => {
    await send(ctx, "SessionEnd", { reason: event.reason === "quit" ? "prompt_input_exit" : "other" })
    context.delete(sid(ctx))
  })
}
