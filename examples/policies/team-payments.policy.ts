/**
 * The payments team's policy: their tool results can carry card data, so once a copy has rotated out of
 * the tool log it must not be written back from the window. A prune of a `toolResult` is then reversible
 * only within the tool log's 2h retention of its append; after that it is a lossy commitment (with
 * `accept_lossy`) or it is rejected, and the compiler says so (PG3001).
 *
 * This cannot be an overlay of the organisation's policy: there every `toolResult` prune is reversible
 * (expired copies are re-persisted), and an overlay that turns re-persist off makes a prune 2h after its
 * append lossy, which is a loosening (PG2107). So the team declares its own policy — the same stores and
 * kinds, re-persist off — which the platform team reviews as such. The incident replay runs it beside the
 * organisation's.
 */
import { days, definePolicy, forever, hours, pins, store } from "pruneguard/dsl";
import { deployTicket } from "./org.policy.js";

export default definePolicy({
  name: "team-payments",
  stores: {
    toolLog: store.sqlite({ retention: hours(2), holds: true }),
    transcript: store.postgres({ retention: days(30) }),
    notes: store.sqlite({ retention: hours(6), holds: false, writable: false }),
    archive: store.postgres({ retention: forever }),
  },
  kinds: {
    // No re-persist: a copy that rotated out is not written back from the window.
    toolResult: {
      store: "toolLog",
      modes: ["drop", "summarize", "compress"],
      lossy: "with-flag",
      pins: [pins.requestId, pins.errorCode, deployTicket],
      compressTargetTokens: 200,
    },
    toolCall: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag", repersist: true },
    userTurn: { store: "transcript", modes: ["summarize", "compress"], lossy: "forbid", pins: [pins.ticket] },
    scratch: { store: "notes", modes: ["drop", "summarize"], lossy: "with-flag" },
    auditNote: { store: "archive", modes: ["drop"], lossy: "forbid" },
    systemHint: { store: null, modes: ["drop"], lossy: "with-flag" },
    // Never prunable, on purpose, as in the org policy (the compiler's PG3007 warning says so).
    complianceNotice: { store: null, modes: ["drop"], lossy: "forbid" },
  },
  // Card data must not end up in a provider-written summary: no provider-side compaction.
  session: { maxLength: hours(8), lossyBudget: 5, providerCompaction: "forbid" },
  pins: [pins.uuid, pins.gitSha],
  tombstone: "{span} pruned, unrecoverable, contents unknown",
});
