// Conversion of OpenClaw (pi-agent) messages to OpenAI chat-format messages, the core's neutral format.
//
// OpenClaw messages: {role: "user", content: string | [{type: "text", text} | {type: "image", ...}]},
// {role: "assistant", content: [{type: "text"} | {type: "thinking"} | {type: "toolCall", id, name, arguments}]},
// {role: "toolResult", toolCallId, toolName, content: [...], isError}, {role: "custom", content, ...}.

function partsText(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return String(content);
  const out = [];
  for (const p of content) {
    if (p == null) continue;
    if (typeof p === "string") out.push(p);
    else if (p.type === "text" && typeof p.text === "string") out.push(p.text);
    else if (p.type === "image" || p.type === "image_url") out.push("[image]");
  }
  return out.join("\n");
}

function toolCallsOf(content) {
  if (!Array.isArray(content)) return [];
  const calls = [];
  for (const p of content) {
    if (p && p.type === "toolCall") {
      let args = p.arguments;
      if (typeof args !== "string") {
        try {
          args = JSON.stringify(args ?? {});
        } catch {
          args = "{}";
        }
      }
      calls.push({ id: String(p.id ?? ""), type: "function", function: { name: String(p.name ?? ""), arguments: args } });
    }
  }
  return calls;
}

/** One OpenClaw message as an OpenAI chat message, or null when it carries nothing for the model. */
export function toOpenAI(m) {
  if (!m || typeof m !== "object") return null;
  switch (m.role) {
    case "system":
    case "developer":
    case "user":
      return { role: m.role, content: partsText(m.content) };
    case "assistant": {
      const out = { role: "assistant", content: partsText(m.content) };
      const calls = toolCallsOf(m.content);
      if (calls.length) out.tool_calls = calls;
      return out;
    }
    case "toolResult":
    case "tool":
      return { role: "tool", tool_call_id: String(m.toolCallId ?? m.tool_call_id ?? ""), content: partsText(m.content) };
    case "custom": {
      // OpenClaw sends its runtime-context carriers to the model as user messages.
      const text = partsText(m.content);
      return text ? { role: "user", content: text } : null;
    }
    default:
      return null;
  }
}

export function toOpenAIList(messages) {
  const out = [];
  if (!Array.isArray(messages)) return out;
  for (const m of messages) {
    const c = toOpenAI(m);
    if (c) out.push(c);
  }
  return out;
}

/** The last `n` user/assistant messages (text only), for retrieval context. */
export function recentDialog(messages, n) {
  if (!Array.isArray(messages) || n <= 0) return [];
  const out = [];
  for (let i = messages.length - 1; i >= 0 && out.length < n; i--) {
    const m = messages[i];
    if (!m || (m.role !== "user" && m.role !== "assistant")) continue;
    const text = partsText(m.content);
    if (text) out.push({ role: m.role, content: text });
  }
  return out.reverse();
}

/** The assistant message of an llm_output event: text plus tool calls of the last assistant message. */
export function responseOf(event) {
  const last = event?.lastAssistant;
  const texts = Array.isArray(event?.assistantTexts) ? event.assistantTexts.filter((t) => typeof t === "string") : [];
  const content = texts.length ? texts.join("\n") : partsText(last?.content);
  const out = { role: "assistant", content };
  const calls = toolCallsOf(last?.content);
  if (calls.length) out.tool_calls = calls;
  return out;
}

/** The last assistant message in an agent_end event's messages, as OpenAI chat format. */
export function lastAssistantOf(messages) {
  if (!Array.isArray(messages)) return null;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "assistant") return toOpenAI(messages[i]);
  }
  return null;
}

export function usageOf(u) {
  if (!u || typeof u !== "object") return undefined;
  const out = {};
  if (Number.isFinite(u.input)) out.prompt_tokens = u.input;
  if (Number.isFinite(u.output)) out.completion_tokens = u.output;
  const total = Number.isFinite(u.total) ? u.total : Number.isFinite(u.totalTokens) ? u.totalTokens : undefined;
  if (total !== undefined) out.total_tokens = total;
  if (Number.isFinite(u.cacheRead)) out.cache_read_tokens = u.cacheRead;
  if (Number.isFinite(u.cacheWrite)) out.cache_write_tokens = u.cacheWrite;
  return Object.keys(out).length ? out : undefined;
}
