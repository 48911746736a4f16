/**
 * The organisation policy: which span kinds are backed by which stores, for how long, and when a prune
 * may become a lossy commitment. Team overlays (`team-*.policy.ts`) may only tighten it.
 */
import { days, definePolicy, forever, hours, pin, pins, store } from "pruneguard/dsl";

/** Deploy tickets are pinned wherever tool results are; overlays import this to keep it. */
export const deployTicket = pin("deployTicket", /DEP-\d{4,6}/);

export default definePolicy({
  name: "org",
  stores: {
    // The embedded default: one agent process, tool calls and results, holds keep referenced copies.
    toolLog: store.sqlite({ retention: hours(2), holds: true }),
    // Shared by every agent process; conversation turns are kept for a month.
    transcript: store.postgres({ retention: days(30) }),
    // A legacy scratchpad another system writes: the window cannot write to it, so it never holds a copy
    // of a scratch span, and every scratch prune is a lossy commitment (the compiler warns, PG3005).
    notes: store.sqlite({ retention: hours(6), holds: false, writable: false }),
    // Audit copies are never rotated.
    archive: store.postgres({ retention: forever }),
  },
  kinds: {
    toolResult: {
      store: "toolLog",
      modes: ["drop", "summarize", "compress"],
      lossy: "with-flag",
      repersist: true,
      pins: [pins.requestId, pins.errorCode, deployTicket],
      compressTargetTokens: 200,
    },
    toolCall: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag", repersist: true },
    userTurn: { store: "transcript", modes: ["summarize", "compress"], lossy: "forbid", pins: [pins.ticket] },
    scratch: { store: "notes", modes: ["drop", "summarize"], lossy: "with-flag" },
    auditNote: { store: "archive", modes: ["drop"], lossy: "forbid" },
    // Nothing keeps a copy of the system prompt; it may go only as an explicit lossy commitment.
    systemHint: { store: null, modes: ["drop"], lossy: "with-flag" },
    // The compliance notice must stay in the window: no store, lossy forbidden, so it is never prunable.
    // The compiler warns that it is (PG3007), as it does for every such kind; here that is the intent.
    complianceNotice: { store: null, modes: ["drop"], lossy: "forbid" },
  },
  // A search answer (matches and the coverage line) costs at most this many tokens in the window. Sessions
  // may let the provider compact on its side, through the request builders that check every span first
  // (docs/provider-compaction.md): the compliance notice is then said again after the provider's block.
  session: { maxLength: hours(8), lossyBudget: 5, searchTokens: 600, providerCompaction: "allow" },
  pins: [pins.uuid, pins.gitSha],
  tombstone: "{span} pruned, unrecoverable, contents unknown",
});
