// metaclaw: the OpenClaw plugin of metaclaw-plugin.
//
// - before_prompt_build: asks the sidecar (`metaclaw-plugin serve`) for the skills that fit the prompt and
//   returns them as prependSystemContext (or appendSystemContext). Side turns (heartbeat, cron, memory)
//   get no injection. On any error or timeout it injects nothing and logs once.
// - llm_input / llm_output: capture the turn (messages as sent, response with tool calls, usage), keyed by
//   the session id and correlated by the run id. agent_end marks a failed run. session_end ends the session.
//   Capture calls are fire-and-forget: they never delay the reply.
// - memory_search / memory_store / memory_forget tools (lib/memory.js) on the sender's memories in the sidecar; the
//   turn hooks pass the sender as the user, so the memory section of the block and what is extracted are per sender.
// - The host's model (learning.model: host): when the sidecar's turns/input answer asks for it, the provider of the
//   turn's model (baseUrl, api, and the key as the gateway's auth resolves it) is sent once to
//   /v1/openclaw/host_model, so the plugin's own calls (evolver, judge, memory, review) use the gateway's provider.
// - A service attaches to the sidecar at `url`, or starts `metaclaw-plugin serve` (autoStart) and stops it
//   with the gateway.
//
// register() runs several times per process ("full" once, "discovery" several times), and OpenClaw
// 2026.9.6 dispatches the agent-turn hooks from a *discovery* registration while services and gateway
// hooks come from the full one. So hooks are registered in every live mode, the service only in "full",
// and the registrations share one state object (found through a Symbol on globalThis, because each
// registration may get its own module instance). That state holds Maps keyed by run id and session id:
// nothing in it is a per-request variable that concurrent sessions could overwrite.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { SidecarClient } from "./lib/client.js";
import { MEMORY_TOOLS, memoryTools, senderOf } from "./lib/memory.js";
import { lastAssistantOf, recentDialog, responseOf, toOpenAIList, usageOf } from "./lib/convert.js";

const PLUGIN_ID = "metaclaw";
const SIDE_TRIGGERS = new Set(["heartbeat", "cron", "memory"]);
const RUN_TTL_MS = 15 * 60 * 1000;
const MAX_RUNS = 10_000;
const FAILED_RUN_GRACE_MS = 2000;
const SESSION_END_WAIT_MS = 1000;
const SESSION_END_DEDUPE_MS = 5000; // the same session_end seen by two registrations

function expandHome(p) {
  if (typeof p !== "string" || !p) return p;
  if (p === "~") return os.homedir();
  if (p.startsWith("~/")) return path.join(os.homedir(), p.slice(2));
  return p;
}

export function resolveConfig(raw) {
  const c = raw && typeof raw === "object" ? raw : {};
  const home = expandHome(c.home || process.env.METACLAW_HOME || "~/.metaclaw-plugin");
  const num = (v, d, lo, hi) => (Number.isFinite(v) ? Math.min(hi, Math.max(lo, Math.trunc(v))) : d);
  let command = c.command ?? "metaclaw-plugin";
  if (typeof command === "string") command = [command];
  return {
    url: typeof c.url === "string" && c.url ? c.url : "http://127.0.0.1:8765",
    home,
    homeExplicit: Boolean(c.home),
    tokenFile: expandHome(c.tokenFile) || path.join(home, "server.token"),
    mode: c.mode,
    inject: c.inject !== false,
    capture: c.capture !== false,
    autoStart: c.autoStart !== false,
    command: command.map(String),
    tenant: typeof c.tenant === "string" && c.tenant ? c.tenant : "default",
    placement: c.placement === "append" ? "append" : "prepend",
    timeoutMs: num(c.timeoutMs, 1500, 50, 14000),
    captureTimeoutMs: num(c.captureTimeoutMs, 5000, 100, 60000),
    contextMessages: num(c.contextMessages, 4, 0, 20),
    memoryTools: c.memoryTools !== false,
  };
}

/** Logs a problem once, then stays quiet until the same thing works again. */
class OnceLogger {
  constructor(logger) {
    this.logger = logger;
    this.failing = new Set();
    this.counts = new Map();
  }
  fail(key, message) {
    this.counts.set(key, (this.counts.get(key) || 0) + 1);
    if (this.failing.has(key)) return;
    this.failing.add(key);
    this.logger?.warn?.(`[metaclaw] ${message} (further ${key} errors are not logged until it works again)`);
  }
  ok(key) {
    if (this.failing.delete(key)) this.logger?.info?.(`[metaclaw] ${key} works again`);
  }
}

function sideTurn(ctx) {
  return SIDE_TRIGGERS.has(String(ctx?.trigger || "").toLowerCase());
}

const STATE_KEY = Symbol.for("metaclaw.openclaw.plugin.state.v1");

/** The state shared by every registration with the same sidecar (url + token file). */
function sharedState(cfg, logger) {
  let all = globalThis[STATE_KEY];
  if (!all) all = globalThis[STATE_KEY] = new Map();
  const key = JSON.stringify([cfg.url, cfg.tokenFile]);
  let st = all.get(key);
  if (!st) {
    st = {
      client: new SidecarClient({ url: cfg.url, tokenFile: cfg.tokenFile }),
      problems: new OnceLogger(logger),
      // runId -> {sessionId, kind, skills, generation, skillsCall, input, outputSent, end, t0, failTimer, model, user}
      runs: new Map(),
      // sessionId -> Set of in-flight capture promises (so session_end can wait for them briefly)
      inflight: new Map(),
      // sessionId -> error of the session's last run, when it failed (for the session outcome)
      lastFailure: new Map(),
      // sessionId -> time its end was last sent (drops the same event seen by two registrations)
      ended: new Map(),
      child: null,
      inserts: 0,
      hostModelOffer: null, // the offer in flight (one at a time)
    };
    all.set(key, st);
  }
  return st;
}

/** The provider entry of `providerId` in the gateway's config (models.providers), or null. */
export function providerConfig(config, providerId) {
  const providers = config?.models?.providers;
  if (!providers || typeof providers !== "object" || typeof providerId !== "string") return null;
  const p = providers[providerId];
  return p && typeof p === "object" ? p : null;
}

/** A secret as the config holds it: a string, or an env reference ({source: "env", id}); else undefined. */
function plainSecret(v) {
  if (typeof v === "string") return v || undefined;
  if (v && typeof v === "object" && v.source === "env" && typeof v.id === "string") return process.env[v.id] || undefined;
  return undefined;
}

/** The provider's key: the gateway's own auth resolution (profiles, env, secret refs), else the config's apiKey. */
async function providerKey(api, providerId, entry) {
  const resolve = api?.runtime?.modelAuth?.resolveApiKeyForProvider;
  if (typeof resolve === "function") {
    try {
      const auth = await resolve({ provider: providerId, cfg: api.config });
      if (typeof auth?.apiKey === "string" && auth.apiKey) return auth.apiKey;
    } catch {
      // no auth configured for it: the config's own apiKey, if any
    }
  }
  return plainSecret(entry?.apiKey);
}

export function createMetaclaw(api) {
  const cfg = resolveConfig(api.pluginConfig);
  const logger = api.logger || console;
  const st = sharedState(cfg, logger);
  const { client, problems, runs, inflight, lastFailure, ended } = st;

  function sweep(now) {
    if (++st.inserts % 128 !== 0 && runs.size < MAX_RUNS) return;
    for (const [id, r] of runs) {
      if (now - r.t0 > RUN_TTL_MS) runs.delete(id);
    }
    while (runs.size > MAX_RUNS) runs.delete(runs.keys().next().value);
    for (const [id, t] of ended) {
      if (now - t > RUN_TTL_MS) ended.delete(id);
    }
  }

  function runState(runId, sessionId, ctx) {
    let r = runs.get(runId);
    if (!r) {
      const now = Date.now();
      r = { sessionId, kind: sideTurn(ctx) ? "side" : "main", skills: [], generation: null, skillsCall: null,
            input: null, outputSent: false, end: null, t0: now, failTimer: null, model: undefined, user: senderOf(ctx) };
      runs.set(runId, r);
      sweep(now);
    }
    if (sessionId && !r.sessionId) r.sessionId = sessionId;
    return r;
  }

  function track(sessionId, p) {
    let set = inflight.get(sessionId);
    if (!set) inflight.set(sessionId, (set = new Set()));
    set.add(p);
    p.finally(() => {
      set.delete(p);
      if (!set.size && inflight.get(sessionId) === set) inflight.delete(sessionId);
    });
    return p;
  }

  function capture(key, pathName, body, sessionId) {
    const p = client
      .post(pathName, body, cfg.captureTimeoutMs)
      .then((res) => {
        problems.ok(key);
        return res;
      })
      .catch((e) => {
        problems.fail(key, `${key} failed: ${e.message}`);
        return null;
      });
    return sessionId ? track(sessionId, p) : p;
  }

  // ---- the host's model (learning.model: host) ---------------------------------------------------
  // Sent only when the sidecar asks (its turns/input answer), one offer at a time; the sidecar stops asking once it
  // keeps or refuses one, and asks again after a restart.
  function offerHostModel(ask, provider, model) {
    if (!ask?.wanted || st.hostModelOffer) return;
    if (typeof ask.name === "string" && ask.name.includes("/")) {
      const i = ask.name.indexOf("/");
      provider = ask.name.slice(0, i);
      model = ask.name.slice(i + 1);
    }
    if (typeof provider !== "string" || !provider || typeof model !== "string" || !model) return;
    st.hostModelOffer = (async () => {
      const entry = providerConfig(api.config, provider);
      const body = { provider, model, api: entry?.api ?? null, base_url: entry?.baseUrl ?? null };
      if (entry) {
        const key = await providerKey(api, provider, entry);
        if (key) body.api_key = key;
        const headers = {};
        for (const [k, v] of Object.entries(entry.headers || {})) {
          const h = plainSecret(v);
          if (h) headers[k] = h;
        }
        if (Object.keys(headers).length) body.headers = headers;
      }
      const res = await client.post("/v1/openclaw/host_model", body, cfg.captureTimeoutMs);
      problems.ok("host_model");
      if (res?.kept) logger.info?.(`[metaclaw] the plugin's own calls use ${res.name} (the gateway's provider)`);
      else if (res?.reason) logger.warn?.(`[metaclaw] the host's model was not taken: ${res.reason}`);
    })()
      .catch((e) => problems.fail("host_model", `offering the host's model failed: ${e.message}`))
      .finally(() => {
        st.hostModelOffer = null;
      });
  }

  // ---- hooks ------------------------------------------------------------------------------------
  async function beforePromptBuild(event, ctx) {
    if (!cfg.inject) return undefined;
    const sessionId = ctx?.sessionId || ctx?.sessionKey;
    if (!sessionId) return undefined;
    const runId = ctx?.runId;
    if (sideTurn(ctx)) {
      if (runId) runState(runId, sessionId, ctx);
      return undefined;
    }
    const prompt = typeof event?.currentUserMessage === "string" && event.currentUserMessage !== ""
      ? event.currentUserMessage
      : typeof event?.prompt === "string" ? event.prompt : "";
    const body = {
      session_id: sessionId,
      tenant: cfg.tenant,
      kind: "main",
      prompt,
      messages: recentDialog(event?.messages, cfg.contextMessages),
    };
    const sender = senderOf(ctx);
    if (sender) body.user = sender; // whole: the sidecar keys a long id by its hash (a cut would merge senders)
    // One retrieval per run: a prompt rebuild (or a second dispatch) of the same run reuses it.
    const r = runId ? runState(runId, sessionId, ctx) : null;
    let call = r?.skillsCall;
    if (!call) {
      call = client.post("/v1/skills", body, cfg.timeoutMs);
      if (r) r.skillsCall = call;
    }
    let res;
    try {
      res = await call;
      problems.ok("skills");
    } catch (e) {
      if (r && r.skillsCall === call) r.skillsCall = null;
      problems.fail("skills", `skill retrieval failed, injecting nothing: ${e.message}`);
      return undefined;
    }
    if (r) {
      r.skills = Array.isArray(res?.skills) ? res.skills : [];
      r.generation = Number.isInteger(res?.generation) ? res.generation : null;
    }
    const block = typeof res?.block === "string" ? res.block : "";
    if (!block) return undefined;
    try {
      ctx?.hookInvocation?.assertActive?.();
    } catch {
      return undefined; // the host stopped waiting for us
    }
    return cfg.placement === "append" ? { appendSystemContext: block } : { prependSystemContext: block };
  }

  function llmInput(event, ctx) {
    if (!cfg.capture) return;
    const runId = event?.runId || ctx?.runId;
    const sessionId = event?.sessionId || ctx?.sessionId;
    if (!runId || !sessionId) return;
    const r = runState(runId, sessionId, ctx);
    const messages = [];
    if (typeof event.systemPrompt === "string" && event.systemPrompt) {
      messages.push({ role: "system", content: event.systemPrompt });
    }
    messages.push(...toOpenAIList(event.historyMessages));
    if (typeof event.prompt === "string" && event.prompt) messages.push({ role: "user", content: event.prompt });
    r.model = event.provider && event.model ? `${event.provider}/${event.model}` : event.model;
    const body = {
      session_id: sessionId,
      run_id: runId,
      tenant: cfg.tenant,
      kind: r.kind,
      model: r.model,
      messages,
      injected_skills: r.skills,
    };
    if (r.generation !== null) body.skill_generation = r.generation;
    if (typeof r.user === "string" && r.user) body.user = r.user;
    r.input = capture("capture", "/v1/turns/input", body, sessionId);
    if (r.kind === "main") r.input.then((res) => offerHostModel(res?.host_model, event.provider, event.model));
  }

  function sendOutput(runId, r, response, usage, error, model) {
    if (r.outputSent) return;
    r.outputSent = true;
    if (r.failTimer) clearTimeout(r.failTimer);
    const body = {
      session_id: r.sessionId,
      run_id: runId,
      tenant: cfg.tenant,
      kind: r.kind,
      response,
      latency_ms: Math.max(0, Date.now() - r.t0),
    };
    if (usage) body.usage = usage;
    if (model || r.model) body.model = model || r.model;
    if (error) body.error = String(error).slice(0, 10_000);
    if (typeof r.user === "string" && r.user) body.user = r.user; // the sidecar keeps the request's anyway
    // The output must reach the sidecar after its input: wait for the input call (bounded by its timeout).
    const p = Promise.resolve(r.input).then(() => client.post("/v1/turns/output", body, cfg.captureTimeoutMs));
    const tracked = p
      .then(() => problems.ok("capture"))
      .catch((e) => problems.fail("capture", `capture failed: ${e.message}`))
      .finally(() => runs.delete(runId));
    track(r.sessionId, tracked);
  }

  function llmOutput(event, ctx) {
    if (!cfg.capture) return;
    const runId = event?.runId || ctx?.runId;
    const sessionId = event?.sessionId || ctx?.sessionId;
    if (!runId || !sessionId) return;
    const r = runState(runId, sessionId, ctx);
    const error = r.end && r.end.success === false ? r.end.error || "run failed" : undefined;
    const model = event.provider && event.model ? `${event.provider}/${event.model}` : event.model;
    sendOutput(runId, r, responseOf(event), usageOf(event.usage), error, model);
  }

  function agentEnd(event, ctx) {
    const sessionId = ctx?.sessionId;
    const runId = event?.runId || ctx?.runId;
    if (sessionId) {
      if (event?.success === false) lastFailure.set(sessionId, String(event.error || "run failed"));
      else lastFailure.delete(sessionId);
    }
    if (!cfg.capture || !runId || !sessionId) return;
    const r = runState(runId, sessionId, ctx);
    r.end = { success: event?.success !== false, error: event?.error };
    if (r.end.success || r.outputSent) return;
    // A failed run may never produce llm_output: record it with the error after a short grace period.
    r.failTimer = setTimeout(() => {
      sendOutput(runId, r, lastAssistantOf(event?.messages), undefined, r.end.error || "run failed");
    }, FAILED_RUN_GRACE_MS);
    r.failTimer.unref?.();
  }

  async function sessionEnd(event, ctx) {
    const sessionId = event?.sessionId || ctx?.sessionId;
    if (!cfg.capture || !sessionId) return;
    const now = Date.now();
    if (now - (ended.get(sessionId) ?? -Infinity) < SESSION_END_DEDUPE_MS) return;
    ended.set(sessionId, now);
    const pending = inflight.get(sessionId);
    if (pending && pending.size) {
      await Promise.race([Promise.allSettled([...pending]), new Promise((r) => setTimeout(r, SESSION_END_WAIT_MS).unref?.())]);
    }
    const body = { tenant: cfg.tenant, reason: event?.reason || "unknown" };
    const failure = lastFailure.get(sessionId);
    if (failure !== undefined) body.outcome = { success: false, feedback: failure.slice(0, 2000) };
    lastFailure.delete(sessionId);
    await capture("session_end", `/v1/sessions/${encodeURIComponent(sessionId)}/end`, body);
  }

  // ---- the sidecar service ----------------------------------------------------------------------
  async function healthy(timeoutMs = 800) {
    try {
      await client.get("/v1/health", timeoutMs);
      return true;
    } catch (e) {
      return e;
    }
  }

  const service = {
    id: "metaclaw-sidecar",
    async start(sctx) {
      const first = await healthy();
      if (first === true) {
        logger.info?.(`[metaclaw] attached to metaclaw-plugin serve at ${cfg.url}`);
        return;
      }
      if (first?.status === 401) {
        logger.warn?.(`[metaclaw] ${cfg.url} refused the token in ${cfg.tokenFile}; is it another METACLAW_HOME?`);
        return;
      }
      if (!cfg.autoStart) {
        logger.warn?.(`[metaclaw] nothing answers at ${cfg.url} (${first?.message}); start it with ` +
          "`metaclaw-plugin serve` (skills and capture are off until then)");
        return;
      }
      const u = new URL(cfg.url);
      if (u.protocol !== "http:") {
        logger.warn?.(`[metaclaw] autoStart only starts a local http sidecar; ${cfg.url} is not one`);
        return;
      }
      const host = u.hostname.replace(/^\[|\]$/g, "");
      const port = u.port || "80";
      const env = { ...process.env };
      if (cfg.homeExplicit || !env.METACLAW_HOME) env.METACLAW_HOME = cfg.home;
      if (cfg.mode) env.METACLAW_MODE = cfg.mode;
      const stateDir = sctx?.stateDir || cfg.home;
      let logFd = "ignore";
      try {
        fs.mkdirSync(path.join(stateDir, "logs"), { recursive: true });
        logFd = fs.openSync(path.join(stateDir, "logs", "metaclaw-serve.log"), "a");
      } catch {
        logFd = "ignore";
      }
      const [cmd, ...pre] = cfg.command;
      try {
        st.child = spawn(cmd, [...pre, "serve", "--host", host, "--port", port], {
          env,
          stdio: ["ignore", logFd, logFd],
          detached: false,
        });
      } catch (e) {
        logger.warn?.(`[metaclaw] could not start ${cfg.command.join(" ")} serve: ${e.message}`);
        st.child = null;
        return;
      } finally {
        if (typeof logFd === "number") fs.closeSync(logFd);
      }
      const proc = st.child;
      proc.on("error", (e) => {
        logger.warn?.(`[metaclaw] ${cfg.command.join(" ")} serve failed to start: ${e.message}`);
      });
      proc.on("exit", (code, signal) => {
        if (!proc.stopping) {
          logger.warn?.(`[metaclaw] metaclaw-plugin serve exited (${signal || code}); skills and capture are off`);
        }
        if (st.child === proc) st.child = null;
      });
      // Wait a little for it to answer, without holding the gateway's start-up for long.
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && st.child === proc) {
        if ((await healthy(500)) === true) {
          logger.info?.(`[metaclaw] started metaclaw-plugin serve (pid ${proc.pid}) at ${cfg.url}`);
          return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      if (st.child === proc) logger.warn?.(`[metaclaw] metaclaw-plugin serve (pid ${proc.pid}) is not answering yet at ${cfg.url}`);
    },
    async stop() {
      const proc = st.child;
      if (proc) {
        proc.stopping = true;
        proc.kill("SIGTERM");
        await Promise.race([
          new Promise((r) => proc.once("exit", r)),
          new Promise((r) => setTimeout(r, 3000).unref?.()),
        ]);
        if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      }
      client.close(); // drops idle keep-alive sockets; the client still works if a hook runs afterwards
    },
  };

  return {
    cfg,
    hooks: { beforePromptBuild, llmInput, llmOutput, agentEnd, sessionEnd },
    service,
    // for tests and debugging
    _state: st,
  };
}

export default {
  id: PLUGIN_ID,
  name: "MetaClaw",
  description: "Injects learned skills and captures turns through metaclaw-plugin serve.",
  register(api) {
    // Hooks in every live registration (OpenClaw dispatches turn hooks from a discovery one); the service,
    // which starts a process, only in the full one. No runtime exists in cli-metadata / setup-only loads.
    const mode = api.registrationMode;
    if (mode === "cli-metadata" || mode === "setup-only") return;
    const m = createMetaclaw(api);
    api.on("before_prompt_build", m.hooks.beforePromptBuild, { timeoutMs: Math.min(m.cfg.timeoutMs + 1000, 15000) });
    api.on("llm_input", m.hooks.llmInput);
    api.on("llm_output", m.hooks.llmOutput);
    api.on("agent_end", m.hooks.agentEnd);
    api.on("session_end", m.hooks.sessionEnd, { timeoutMs: 1800 });
    if (m.cfg.memoryTools && typeof api.registerTool === "function") {
      const opts = { client: m._state.client, tenant: m.cfg.tenant, timeoutMs: m.cfg.captureTimeoutMs };
      api.registerTool((toolContext) => memoryTools(opts, toolContext), { names: MEMORY_TOOLS });
    }
    if (mode === undefined || mode === "full") api.registerService(m.service);
  },
};
