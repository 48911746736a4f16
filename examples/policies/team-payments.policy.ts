/**
 * The payments team's overlay: their tool results can carry card data, so once a copy has rotated out of
 * the tool log it must not be written back from the window. Turning re-persist off is a tightening: a
 * prune of a `toolResult` is reversible only within the tool log's 2h retention of its append, and after
 * that it is a lossy commitment (with `accept_lossy`) or it is rejected. The compiler says so (PG3001);
 * the incident replay runs this policy beside the organisation's.
 */
import { extendPolicy } from "pruneguard/dsl";
import org from "./org.policy.js";

export default extendPolicy(org, {
  name: "team-payments",
  kinds: {
    toolResult: { repersist: false },
  },
});
