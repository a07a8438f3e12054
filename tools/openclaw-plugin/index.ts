/**
 * sjournal for OpenClaw (a native plugin; verified with OpenClaw 2026.9.6 through a loopback
 * Gateway by tests/real_hosts/openclaw.rs).
 *
 * OpenClaw has no exec or webhook lifecycle hooks; its typed plugin hooks are the way in. Each
 * hook below runs `sjournal hook --host openclaw` with a payload that keeps OpenClaw's own
 * hook name and (selectively serialized) `event` and `ctx`, plus Claude-shaped fields and the
 * lifecycle RFC's fields OpenClaw does not send, derived here:
 * - `sessionKind`: from the session key (`agent:<id>:subagent:…` spawn, `…:cron:…` cron, else main);
 * - `parentSession`: the requester of a `subagent_spawned` child;
 * - `contextUsagePercent`: `tokenCount / contextTokenBudget` (the budget of the session's last
 *   model call);
 * - `trigger` of a compaction: "auto" during an agent run, else "manual" (`sessions compact`);
 * - `source` of a session start: "resume" when OpenClaw resumed it, "clear" after a reset;
 * - `model`: the model of the hook's context (`ctx.modelProviderId`/`ctx.modelId`, as OpenClaw
 *   names it in its configuration: `provider/model`).
 * The hooks of one session are sent one after the other, in the order OpenClaw called them (a
 * reset calls before_reset, session_end and session_start in a row; sent at once, the journal
 * got them in whatever order the processes happened to finish). At a reset OpenClaw also
 * reports the end of the session's own run as a `subagent_ended` naming the session itself:
 * that is sent as `session_run_ended` (its hook name kept in `openclaw_hook`), not as the end
 * of a subagent the session never had.
 * The session's context, which sjournal returns for `before_prompt_build`, is prepended to the
 * prompt (`prependContext`); notices for the user (`systemMessage`) go to the Gateway's log.
 * The session's duration at its end is sjournal's to compute, from the journal.
 */
import { hook, hookSync, type HookPayload } from "../bridge-common/sjournal-hook.ts"

const BRIDGE = "openclaw"
const HOST = "openclaw"

type Obj = Record<string, any>

/** A copy of `v` without what does not serialize (handles, signals, cycles, huge strings). */
function plain(v: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (v === null || typeof v === "number" || typeof v === "boolean") return v
  if (typeof v === "string") return v.length > 20000 ? v.slice(0, 20000) : v
  if (typeof v !== "object" || depth > 6) return undefined
  if (seen.has(v as object)) return undefined
  seen.add(v as object)
  if (Array.isArray(v)) return v.slice(0, 200).map((x) => plain(x, depth + 1, seen))
  const proto = Object.getPrototypeOf(v)
  if (proto !== Object.prototype && proto !== null) return undefined
  const out: Obj = {}
  for (const [k, x] of Object.entries(v as Obj)) {
    if (k === "config" || k === "cfg" || k === "deps" || k === "abortSignal" || k === "signal") continue
    const p = plain(x, depth + 1, seen)
    if (p !== undefined) out[k] = p
  }
  return out
}

/** main, cron or spawn, from an OpenClaw session key (`agent:<agent>:<rest>`). */
function kindOf(key: string | undefined): string | undefined {
  if (!key) return undefined
  if (/:subagent:|:spawn:|:acp:/.test(key)) return "spawn"
  if (/:cron:|^cron:/.test(key)) return "cron"
  return "main"
}

function text(content: unknown): string {
  if (typeof content === "string") return content
  if (Array.isArray(content)) return content.map((c: Obj) => (c?.type === "text" ? c.text : "")).join("")
  return ""
}

const plugin = {
  id: "sjournal",
  name: "sjournal",
  description: "Journals every session with sjournal and injects its context",
  register(api: Obj) {
    /** sessionKey -> the context budget of its last model call. */
    const budget = new Map<string, number>()
    /** child sessionKey -> requester sessionKey. */
    const parents = new Map<string, string>()
    /** sessionKeys with an agent run under way. */
    const running = new Set<string>()
    /** sessionKey -> the reason its last session ended. */
    const ended = new Map<string, string>()
    /** sessionKey -> the id of its session (for hooks that name only a key). */
    const ids = new Map<string, string>()
    /** sessionKey -> the last call queued for it, and how many are still to finish. */
    const queues = new Map<string, { last: Promise<unknown>; pending: number }>()

    /** Runs `fn` after every call queued before it for the same session. */
    const serial = <T>(key: string, fn: () => Promise<T> | T): Promise<T> => {
      const q = queues.get(key) ?? { last: Promise.resolve(), pending: 0 }
      q.pending += 1
      const run = q.last.then(fn, fn)
      q.last = run.then(
        () => {},
        () => {},
      ).finally(() => {
        q.pending -= 1
      })
      queues.set(key, q)
      return run
    }
    /** True if nothing is queued or under way for the session. */
    const idle = (key: string) => (queues.get(key)?.pending ?? 0) === 0

    const payload = (name: string, event: Obj, ctx: Obj, fields: Obj = {}): HookPayload => {
      const key = fields.sessionKey ?? ctx?.sessionKey ?? event?.sessionKey
      const id = event?.sessionId ?? ctx?.sessionId
      if (key && id) ids.set(key, id)
      const model = ctx?.modelProviderId && ctx?.modelId ? `${ctx.modelProviderId}/${ctx.modelId}` : ctx?.modelId
      return {
        hook_event_name: name,
        session_id: id ?? (key ? ids.get(key) : undefined) ?? key ?? "",
        sessionKey: key,
        sessionKind: kindOf(key),
        parentSession: key ? parents.get(key) : undefined,
        cwd: ctx?.workspaceDir,
        model: typeof model === "string" && model ? model : undefined,
        event: plain(event),
        ctx: plain(ctx),
        ...fields,
      }
    }
    const log = (notice: string) => {
      if (notice) api.logger?.info?.(`sjournal: ${notice}`)
    }
    /** Sends a hook's payload once the session's earlier ones are in. */
    const send = (name: string, event: Obj, ctx: Obj, fields: Obj = {}) => {
      const p = payload(name, event, ctx, fields)
      return serial(String(p.sessionKey ?? p.session_id), async () => {
        const r = await hook(p, (p.cwd as string) || process.cwd(), BRIDGE, HOST)
        log(r.notice)
        return r
      })
    }
    const on = (name: string, fn: (event: Obj, ctx: Obj) => unknown) => {
      api.on(name, async (event: Obj, ctx: Obj) => {
        try {
          return await fn(event ?? {}, ctx ?? {})
        } catch {
          return undefined
        }
      })
    }

    on("session_start", (event, ctx) => {
      const key = ctx.sessionKey ?? event.sessionKey
      const source = event.resumedFrom ? (ended.get(key) === "reset" ? "clear" : "resume") : "startup"
      return send("session_start", event, ctx, { source })
    })
    on("session_end", (event, ctx) => {
      const key = ctx.sessionKey ?? event.sessionKey
      if (key) ended.set(key, event.reason)
      // At shutdown OpenClaw drains these for 2 s: written synchronously, before it exits —
      // at once when nothing of the session's is under way (as at shutdown), else right
      // after what is (as at a reset, after before_reset).
      const p = payload("session_end", event, ctx, { reason: event.reason, messageCount: event.messageCount })
      const q = String(p.sessionKey ?? p.session_id)
      const write = () => log(hookSync(p, (p.cwd as string) || process.cwd(), BRIDGE, HOST).notice)
      if (idle(q)) return write()
      return serial(q, write)
    })
    on("model_call_started", (event, ctx) => {
      const key = ctx.sessionKey ?? event.sessionKey
      const b = event.contextTokenBudget ?? ctx.contextTokenBudget
      if (key && typeof b === "number" && b > 0) budget.set(key, b)
    })
    on("before_prompt_build", async (event, ctx) => {
      if (ctx.sessionKey) running.add(ctx.sessionKey)
      const r = await send("before_prompt_build", { prompt: event.prompt }, ctx, { prompt: event.prompt })
      return r.context ? { prependContext: r.context } : undefined
    })
    on("before_tool_call", (event, ctx) =>
      send("before_tool_call", event, ctx, {
        tool_name: event.toolName,
        tool_input: event.params,
        tool_use_id: event.toolCallId,
      }),
    )
    on("after_tool_call", (event, ctx) => {
      const details = event.result?.details ?? {}
      const code = details.exitCode
      const failed = event.error != null || (typeof code === "number" && code !== 0) || details.status === "error"
      return send("after_tool_call", event, ctx, {
        tool_name: event.toolName,
        tool_input: event.params,
        tool_use_id: event.toolCallId,
        tool_response: { output: text(event.result?.content), exitCode: code },
        duration_ms: event.durationMs,
        error: failed ? String(event.error ?? `exit code ${code}`) : undefined,
      })
    })
    on("agent_end", (event, ctx) => {
      if (ctx.sessionKey) running.delete(ctx.sessionKey)
      const last = [...(event.messages ?? [])].reverse().find((m: Obj) => m?.role === "assistant")
      return send("agent_end", { success: event.success, durationMs: event.durationMs }, ctx, {
        last_assistant_message: last ? text(last.content) : undefined,
        error: event.success === false ? String(event.error ?? "the run failed") : undefined,
      })
    })
    on("before_compaction", (event, ctx) => {
      const key = ctx.sessionKey
      const b = key ? budget.get(key) : undefined
      const usage = typeof event.tokenCount === "number" && b ? (100 * event.tokenCount) / b : undefined
      return send("before_compaction", event, ctx, {
        trigger: key && running.has(key) ? "auto" : "manual",
        contextUsagePercent: usage,
        messageCount: event.messageCount,
      })
    })
    on("after_compaction", (event, ctx) => send("after_compaction", event, ctx))
    on("before_reset", (event, ctx) => send("before_reset", { sessionFile: event.sessionFile }, ctx))
    on("subagent_spawned", (event, ctx) => {
      const child = event.childSessionKey ?? event.targetSessionKey
      const parent = ctx.requesterSessionKey ?? event.requesterSessionKey ?? ctx.sessionKey
      if (child && parent) parents.set(child, parent)
      return send("subagent_spawned", event, ctx, { agent_id: child, agent_type: event.agentId })
    })
    on("subagent_ended", (event, ctx) => {
      // Reported under the child's key: journaled in the child's session.
      const child = event.targetSessionKey ?? ctx.childSessionKey
      // A session that was never spawned (at a reset, OpenClaw ends the session's own run
      // this way): not the end of a subagent.
      if (child && !parents.has(child) && kindOf(child) === "main") {
        return send("session_run_ended", event, ctx, {
          sessionKey: child,
          reason: event.reason,
          openclaw_hook: "subagent_ended",
        })
      }
      return send("subagent_ended", event, ctx, { sessionKey: child, agent_id: child, reason: event.reason })
    })
  },
}

export default plugin
