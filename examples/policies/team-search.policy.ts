/**
 * The search team's overlay: search results carry request ids the team's incident reviews depend on, so
 * they are never lost silently, and the team's sessions are shorter with a smaller lossy budget.
 */
import { extendPolicy, hours, pins, store } from "pruneguard/dsl";
import org, { deployTicket } from "./org.policy.js";

export default extendPolicy(org, {
  name: "team-search",
  stores: {
    // The team keeps search results for a week in its own store.
    searchIndex: store.postgres({ retention: hours(24 * 7) }),
  },
  kinds: {
    // Tightened: no compress, and never lossy.
    toolResult: { modes: ["drop", "summarize"], lossy: "forbid", pins: [pins.requestId, pins.errorCode, deployTicket, pins.httpStatus] },
    scratch: { modes: ["drop"] },
    // A kind of the team's own.
    searchHit: { store: "searchIndex", modes: ["drop", "summarize"], lossy: "forbid", pins: [pins.filePath] },
  },
  session: { maxLength: hours(4), lossyBudget: 2 },
});
