/**
 * The provider registry is the public API under other names: each entry is registered under its own name,
 * renders a window as the public renderer does, and builds the tools the public tool builder builds.
 */
import { describe, expect, it } from "vitest";
import {
  aiSDKTools, anthropicTools, ContextWindow, directiveTools, ManualClock, MemoryStore, openAIChatTools, openAIResponsesTools,
  toAISDK, toAnthropic, toOpenAI, toOpenAIResponses, type DirectiveTool,
} from "../../src/index.js";
import type { Provider } from "../../src/providers/provider.js";
import { PROVIDERS, type ProviderName } from "../../src/providers/registry.js";
import { immediate } from "../window/immediate.js";

const kinds = {
  chat: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  toolCall: { store: "log", modes: ["drop"], lossy: "with-flag" },
  toolResult: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
} as const;

async function smallWindow() {
  const clock = new ManualClock(0);
  const win = new ContextWindow(immediate({ session: "s", clock, stores: { log: new MemoryStore({ name: "log", clock }) }, kinds }));
  await win.append({ kind: "chat", text: "You are a deploy assistant.", message: { role: "system" } });
  await win.append({ kind: "chat", text: "Why did deploy 8812 fail?", message: { role: "user" } });
  await win.append({ kind: "toolCall", text: '{"id":8812}', message: { role: "tool-call", callId: "call_1", toolName: "getDeploy" } });
  const result = await win.append({ kind: "toolResult", text: "HTTP 502", message: { role: "tool-result", callId: "call_1", toolName: "getDeploy" } });
  await win.prune({ span: result, mode: "summarize", digest: "deploy failed with a 502" });
  return win;
}

type Win = Awaited<ReturnType<typeof smallWindow>>;

/** Each provider's public renderer and tool builder, with the tool options the registry entry is given. */
const PUBLIC: Record<ProviderName, { render(w: Win): unknown; tools(w: Win, t: readonly DirectiveTool[]): unknown; options(w: Win): object }> = {
  anthropic: { render: toAnthropic, tools: (_, t) => anthropicTools(t, { strict: true, cacheControl: true }), options: () => ({ strict: true, cacheControl: true }) },
  "openai-chat": { render: toOpenAI, tools: (_, t) => openAIChatTools(t, { strict: true }), options: () => ({ strict: true }) },
  "openai-responses": { render: toOpenAIResponses, tools: (_, t) => openAIResponsesTools(t, { strict: true }), options: () => ({ strict: true }) },
  "ai-sdk": { render: toAISDK, tools: (w, t) => aiSDKTools(w, t, { agentTools: {}, strict: "anthropic" }), options: (w) => ({ window: w, agentTools: {}, strict: "anthropic" }) },
};

/**
 * A value with its functions replaced, so two builds compare: the AI SDK tools are closures made per call.
 * A function of no parameters (the schema's `jsonSchema.input`) is replaced by what it returns.
 */
function comparable(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_, v: unknown) => (typeof v === "function" ? (v.length === 0 ? { returns: (v as () => unknown)() } : "[function]") : v)));
}

describe("the provider registry", () => {
  it("holds exactly the providers with a public renderer and tool builder", () => {
    expect(Object.keys(PROVIDERS).sort()).toEqual(Object.keys(PUBLIC).sort());
  });

  for (const name of Object.keys(PUBLIC) as ProviderName[]) {
    it(`${name}: its name, its rendering and its tools are the public API's`, async () => {
      const provider: Provider = PROVIDERS[name];
      const win = await smallWindow();
      const tools = directiveTools({ names: { prune: "context_prune" } });
      expect(provider.name).toBe(name);
      expect(provider.render(win)).toEqual(PUBLIC[name].render(win));
      const built = comparable(provider.tools(tools, PUBLIC[name].options(win)));
      expect(built).toEqual(comparable(PUBLIC[name].tools(win, tools)));
      expect(JSON.stringify(built)).toContain("context_prune");
    });
  }
});
