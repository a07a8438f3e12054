/**
 * sjournal bridge for OpenCode.
 *
 * OpenCode has no stdin-JSON hooks, only in-process plugins, so this plugin turns OpenCode's
 * plugin hooks and bus events into Claude-Code-shaped hook payloads and pipes each one to
 * `sjournal hook --host claude`. sjournal journals the event and, for SessionStart and
 * UserPromptSubmit, answers with the session's context, which the plugin caches per session
 * and adds to the system prompt of every model call (`experimental.chat.system.transform`,
 * which must stay cheap: it never spawns anything). After a compaction the context is fetched
 * again (SessionStart, source "compact") and also offered to the compaction prompt.
 *
 * Every payload carries `"sjournal_bridge": "opencode"`, so the journal tells bridged events
 * apart from Claude Code's own.
 */
import type { Plugin } from "@opencode-ai/plugin"
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
    child.stdin.end(JSON.stringify({ cwd, transcript_path: null, sjournal_bridge: "opencode", ...payload }))
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

export const SjournalPlugin: Plugin = async ({ directory }) => {
  /** sessionID -> the latest context sjournal gave for it. */
  const context = new Map<string, string>()

  const remember = (sessionID: string, ctx: string) => {
    if (ctx) context.set(sessionID, ctx)
  }
  const sessionStart = async (sessionID: string, source: "startup" | "compact") => {
    remember(sessionID, await hook({ hook_event_name: "SessionStart", session_id: sessionID, source }, directory))
  }

  return {
    event: async ({ event }) => {
      switch (event.type) {
        case "session.created":
          await sessionStart(event.properties.info.id, "startup")
          break
        case "session.compacted":
          // The model's view of the session was just rewritten: fetch the context again.
          await sessionStart(event.properties.sessionID, "compact")
          break
        case "session.idle":
          await hook({ hook_event_name: "Stop", session_id: event.properties.sessionID }, directory)
          break
        case "session.deleted":
          context.delete(event.properties.info.id)
          await hook({ hook_event_name: "SessionEnd", session_id: event.properties.info.id, reason: "other" }, directory)
          break
      }
    },

    "chat.message": async (input, output) => {
      const prompt = output.parts
        .map((p) => (p.type === "text" ? p.text : ""))
        .filter((t) => t.length > 0)
        .join("\n")
      remember(
        input.sessionID,
        await hook({ hook_event_name: "UserPromptSubmit", session_id: input.sessionID, prompt }, directory),
      )
    },

    "tool.execute.before": async (input, output) => {
      await hook(
        {
          hook_event_name: "PreToolUse",
          session_id: input.sessionID,
          tool_name: input.tool,
          tool_input: output.args,
          tool_use_id: input.callID,
        },
        directory,
      )
    },

    "tool.execute.after": async (input, output) => {
      await hook(
        {
          hook_event_name: "PostToolUse",
          session_id: input.sessionID,
          tool_name: input.tool,
          tool_input: input.args,
          tool_use_id: input.callID,
          tool_response: { title: output.title, output: output.output },
        },
        directory,
      )
    },

    // Called for every model request: only reads the cache.
    "experimental.chat.system.transform": async (input, output) => {
      const ctx = input.sessionID ? context.get(input.sessionID) : undefined
      if (ctx) output.system.push(ctx)
    },

    "experimental.session.compacting": async (input, output) => {
      await hook({ hook_event_name: "PreCompact", session_id: input.sessionID, trigger: "auto" }, directory)
      const ctx = context.get(input.sessionID)
      if (ctx) output.context.push(ctx)
    },
  }
}

export default SjournalPlugin
