/**
 * The one copy of what every sjournal bridge (OpenCode, Pi, OpenClaw) does per event: run
 * `sjournal hook --host <host>` with a hook payload on stdin and read its reply — the context
 * to inject (`hookSpecificOutput.additionalContext`) and the notice for the user
 * (`systemMessage`). It never throws: the journal must never break the agent.
 *
 * `sjournal install opencode|pi` writes each bridge as one file, with this module inlined in
 * place of its import (and the path of the installing sjournal binary as the default below).
 */
import { spawn, spawnSync } from "node:child_process"

/** The sjournal binary: $SJOURNAL_BIN, else the one that installed the bridge, else PATH. */
const SJOURNAL_DEFAULT = "sjournal" // sjournal-install: binary
const SJOURNAL = process.env.SJOURNAL_BIN || SJOURNAL_DEFAULT
/** Give up on one call after this long (sjournal answers within its own deadline). */
const CALL_TIMEOUT_MS = 10000

export type HookPayload = Record<string, unknown> & { hook_event_name: string; session_id: string }
export type HookReply = { context: string; notice: string }

/** What sjournal printed: the context to inject and the notice for the user ("" if none). */
export function parseReply(stdout: string): HookReply {
  const none = { context: "", notice: "" }
  const text = stdout.trim()
  if (!text.startsWith("{")) return none
  try {
    const r = JSON.parse(text) as {
      hookSpecificOutput?: { additionalContext?: unknown }
      systemMessage?: unknown
    }
    const ctx = r.hookSpecificOutput?.additionalContext
    return {
      context: typeof ctx === "string" ? ctx : "",
      notice: typeof r.systemMessage === "string" ? r.systemMessage : "",
    }
  } catch {
    return none
  }
}

function stdin(payload: HookPayload, cwd: string, bridge: string): string {
  return JSON.stringify({ cwd, transcript_path: null, sjournal_bridge: bridge, ...payload })
}

/** Runs `sjournal hook` for one event and resolves with its reply. */
export function hook(payload: HookPayload, cwd: string, bridge: string, host = "claude"): Promise<HookReply> {
  return new Promise((resolve) => {
    let out = ""
    let done = false
    const finish = (value: HookReply) => {
      if (!done) {
        done = true
        clearTimeout(timer)
        resolve(value)
      }
    }
    const child = spawn(SJOURNAL, ["hook", "--host", host], { cwd, stdio: ["pipe", "pipe", "ignore"] })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      finish({ context: "", notice: "" })
    }, CALL_TIMEOUT_MS)
    child.on("error", () => finish({ context: "", notice: "" }))
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      out += chunk
    })
    child.on("close", () => finish(parseReply(out)))
    child.stdin.on("error", () => {})
    child.stdin.end(stdin(payload, cwd, bridge))
  })
}

/**
 * What the hook would inject at the session's next prompt (`sjournal context show --at prompt`),
 * without journaling anything: "" if nothing (or on any failure).
 */
export function nextPromptContext(sessionId: string, cwd: string): Promise<string> {
  return new Promise((resolve) => {
    let out = ""
    const child = spawn(SJOURNAL, ["context", "show", "--session", sessionId, "--at", "prompt", "--json"], {
      cwd,
      stdio: ["ignore", "pipe", "ignore"],
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), CALL_TIMEOUT_MS)
    child.on("error", () => {
      clearTimeout(timer)
      resolve("")
    })
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      out += chunk
    })
    child.on("close", () => {
      clearTimeout(timer)
      try {
        const text = (JSON.parse(out) as { text?: unknown }).text
        resolve(typeof text === "string" ? text : "")
      } catch {
        resolve("")
      }
    })
  })
}

/**
 * The same, synchronously: for the host's last moments (process exit, session deletion),
 * where an asynchronous child would be killed before it read its payload.
 */
export function hookSync(payload: HookPayload, cwd: string, bridge: string, host = "claude"): HookReply {
  try {
    const r = spawnSync(SJOURNAL, ["hook", "--host", host], {
      cwd,
      input: stdin(payload, cwd, bridge),
      encoding: "utf8",
      timeout: CALL_TIMEOUT_MS,
      stdio: ["pipe", "pipe", "ignore"],
    })
    return parseReply(r.stdout ?? "")
  } catch {
    return { context: "", notice: "" }
  }
}
