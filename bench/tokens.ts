/**
 * Benchmark 6: what pruneguard's lines cost the model, in o200k_base and cl100k_base tokens (gpt-tokenizer),
 * and what dropping the reference incident's ~9k-token tool block frees. The baseline of every marker is
 * the reference document's own tombstone (`span_7: pruned, unrecoverable, contents unknown`); token counts
 * are exact, so these figures do not vary between runs.
 */
import { countTokens as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { presetPins } from "../dsl/pins.js";
import { toolBlock } from "../examples/incident-replay.js";
import { ContextWindow, MemoryStore } from "../src/index.js";
import { DEFAULT_HINT_TOKENS, indexHint } from "../src/hint.js";
import { formatUntil, indexLine, rejectionLine, tombstoneLine } from "../src/render/lines.js";
import { carryPins } from "../src/pin-carry.js";
import { frameUntrusted, GUTTER } from "../src/render/framing.js";
import { goalAtMost, type Benchmark, type Row } from "./report.js";

const AS_TEXT = { disallowedSpecial: new Set<string>() };
const count = (text: string) => ({ o200k: o200k(text, AS_TEXT), cl100k: cl100k(text, AS_TEXT) });
const SEED_TOMBSTONE = "span_7: pruned, unrecoverable, contents unknown";
const DIGEST =
  "Investigated the failing deploy over 40 tool calls: the API returned 502s caused by a database connection timeout; two retries did not help.";

export const tokensBench: Benchmark = {
  id: 6,
  title: "token costs (o200k_base, cl100k_base)",
  async run() {
    const seed = count(SEED_TOMBSTONE);
    const vs = (t: { o200k: number; cl100k: number }) => `${(t.o200k / seed.o200k).toFixed(2)}× / ${(t.cl100k / seed.cl100k).toFixed(2)}×`;
    const both = (t: { o200k: number; cl100k: number }) => `${t.o200k} / ${t.cl100k}`;
    const seedCell = `${both(seed)} (reference tombstone)`;
    const line = (name: string, texts: readonly string[], limit: number | null): Row => {
      // The longest form the bounds are stated for decides the goal.
      const counts = texts.map(count);
      const worst = counts.reduce((a, b) => (b.o200k > a.o200k ? b : a));
      return {
        bench: 6,
        name,
        subject: both(worst),
        baseline: seedCell,
        ratio: vs(worst),
        goal: limit === null ? null : goalAtMost(worst.o200k, limit, " o200k"),
        detail: texts.map((t, i) => `\`${t}\` ${both(counts[i]!)}`).join("; "),
      };
    };
    const rows: Row[] = [
      line("tombstone (o200k / cl100k)", [tombstoneLine("span_7"), tombstoneLine("span_99999")], 13),
      line("index line", [indexLine("span_7", "#3"), indexLine("span_99999", "#9999")], 12),
      // A clock time, so the line does not tick: `until 17:05Z` the same day, with the day when later.
      line("index line of a prune reversible until a time (the same day)", [indexLine("span_7", "#3", null, formatUntil(59 * 60_000, 0)), indexLine("span_99999", "#9999", null, formatUntil(23 * 3_600_000, 0))], 17),
      line("index line of a prune reversible until a later day", [indexLine("span_7", "#3", null, formatUntil(25 * 3_600_000, 0)), indexLine("span_99999", "#9999", null, formatUntil((99 * 60 + 59) * 60_000, 0))], 20),
      // With the hint of what it hid (default budget 12 tokens, plus 1 for ": ").
      line("index line with hint", [
        indexLine("span_7", "#3", indexHint({ text: '{"deploy":8812}', message: { role: "tool-call", callId: "c", toolName: "readDeployLog" } }, DEFAULT_HINT_TOKENS)),
        indexLine("span_99999", "#9999", indexHint({ text: "X-Request-Id: req_7f3a9c2e41" }, DEFAULT_HINT_TOKENS)),
      ], 12 + 1 + DEFAULT_HINT_TOKENS),
      line("rejection line", [
        rejectionLine("span_7", "copy expired", true),
        rejectionLine("span_99999", "store cannot tell pruned from absent, lossy forbidden", false),
      ], null),
    ];

    // Carried pins: the suffix a digest gets when it dropped the block's identifiers.
    const block = toolBlock();

    // The frame: one gutter per line of untrusted text is what makes runtime lines unforgeable.
    const framed = count(frameUntrusted(block));
    const plain = count(block);
    rows.push({
      bench: 6,
      name: "framing the incident's 40-call block (a gutter per line)",
      subject: both({ o200k: framed.o200k - plain.o200k, cl100k: framed.cl100k - plain.cl100k }),
      baseline: `${both(plain)} (the block)`,
      ratio: `+${((100 * (framed.o200k - plain.o200k)) / plain.o200k).toFixed(1)}% / +${((100 * (framed.cl100k - plain.cl100k)) / plain.cl100k).toFixed(1)}%`,
      goal: null,
      detail: `${block.split("\n").length} lines; the gutter \`${GUTTER}\` costs one token per line`,
    });

    // The reversibility map: one head line and one line per live span, over every fate a span can have.
    const mapWin = new ContextWindow({
      session: "map",
      stores: { toolLog: new MemoryStore({ name: "toolLog", retentionMs: 2 * 3_600_000, holds: false }) },
      kinds: {
        toolResult: { store: "toolLog", modes: ["drop", "summarize", "compress"], lossy: "with-flag", repersist: true },
        auditNote: { store: "toolLog", modes: ["drop"], lossy: "forbid" },
        scratch: { store: null, modes: ["drop", "summarize"], lossy: "with-flag" },
        notice: { store: null, modes: ["drop"], lossy: "forbid" },
      },
      limits: { maxLengthMs: 8 * 3_600_000, maxTokens: 200_000 },
    });
    const kinds = ["toolResult", "auditNote", "scratch", "notice"] as const;
    for (let i = 0; i < 200; i++) await mapWin.append({ kind: kinds[i % kinds.length]!, text: `span text ${i}` });
    const map = await mapWin.map();
    // The head is the token line plus the advice or pending line when there is one (this window is far
    // below its limits, so it carries the advice); the span lines are the ones that start with a span id.
    const lines = map.line.split("\n");
    const spanLines = lines.filter((l) => /^span_\d+ /.test(l));
    const head = lines.filter((l) => !/^span_\d+ /.test(l)).join("\n");
    const mapT = count(map.line);
    const headT = count(head);
    const worst = spanLines.map(count).reduce((a, b) => (b.o200k > a.o200k ? b : a));
    rows.push({
      bench: 6,
      name: "reversibility map, per live span (200 spans, every fate)",
      subject: both({ o200k: +((mapT.o200k - headT.o200k) / spanLines.length).toFixed(2), cl100k: +((mapT.cl100k - headT.cl100k) / spanLines.length).toFixed(2) }),
      baseline: seedCell,
      ratio: vs(worst),
      goal: goalAtMost(worst.o200k, 18, " o200k (longest line)"),
      detail: `whole map ${both(mapT)} tokens, head \`${head.replace(/\n/g, " / ")}\` ${both(headT)}; longest span line ${both(worst)}: ${[...new Set(spanLines.map((l) => l.replace(/^span_\d+ /, "")))].map((l) => `\`${l}\``).join(", ")}`,
    });
    const carried = carryPins(block, DIGEST, [presetPins.requestId, presetPins.errorCode]);
    const suffix = carried.text.slice(DIGEST.length);
    const digest = count(DIGEST);
    const suffixT = count(suffix);
    rows.push({
      bench: 6,
      name: "carried pins on the incident digest",
      subject: both(suffixT),
      baseline: `${both(digest)} (the digest)`,
      ratio: `${(suffixT.o200k / digest.o200k).toFixed(2)}× / ${(suffixT.cl100k / digest.cl100k).toFixed(2)}×`,
      goal: null,
      detail: `\`${JSON.stringify(suffix).slice(1, -1)}\` carries ${carried.carried.join(", ")}; the window reports ${carried.tokens} o200k`,
    });

    // Tokens freed: the block pruned in a real window, as a drop and as a summary with its digest.
    const blockT = count(block);
    for (const mode of ["drop", "summarize"] as const) {
      const mem = new MemoryStore({ name: "toolLog" });
      const win = new ContextWindow({
        session: "tokens",
        stores: { toolLog: mem },
        pins: [presetPins.requestId, presetPins.errorCode],
        kinds: { toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag" } },
      });
      const ref = await win.append({ kind: "toolResult", text: block });
      const o = await win.prune(mode === "drop" ? { span: ref, mode } : { span: ref, mode, digest: DIGEST });
      const left = count(o.line);
      const freed = { o200k: blockT.o200k - left.o200k, cl100k: blockT.cl100k - left.cl100k };
      if (freed.o200k !== o.tokensFreed) throw new Error(`benchmark 6: window freed ${o.tokensFreed}, counted ${freed.o200k}`);
      rows.push({
        bench: 6,
        name: `tokens freed by ${mode === "drop" ? "dropping" : "summarizing"} the ~9k-token block`,
        subject: both(freed),
        baseline: `${both(blockT)} (the block)`,
        ratio: `${((100 * freed.o200k) / blockT.o200k).toFixed(1)}% / ${((100 * freed.cl100k) / blockT.cl100k).toFixed(1)}% freed`,
        goal: null,
        detail: `left in the window: ${both(left)} tokens (\`${JSON.stringify(o.line.length > 90 ? `${o.line.slice(0, 87)}...` : o.line).slice(1, -1)}\`)`,
      });
    }
    return rows;
  },
};
