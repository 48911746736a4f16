/** What the provider compaction request builders share: the window they check, and how they refuse. */
import { ProviderCompactionError, type ProviderCompactionPlan } from "../window/provider-compaction.js";

/** What the builders need of a window: its plan (a `ContextWindow` or a guard's window). */
export interface CompactionWindow {
  providerCompactionPlan(): Promise<ProviderCompactionPlan>;
}

/** Throws unless the session's policy allows a provider's compaction. */
export function refuseUnlessAllowed(plan: ProviderCompactionPlan): void {
  if (plan.allowed) return;
  throw new ProviderCompactionError(
    `provider compaction is refused: the session's policy does not allow it (session.providerCompaction is "forbid", the default); allow it in the policy after reading docs/provider-compaction.md`,
    plan,
  );
}

/** `span_3 (kind secret: kind secret forbids lossy prunes…), …` — the first few spans the plan keeps. */
export function describeKept(plan: ProviderCompactionPlan): string {
  const first = plan.kept.slice(0, 3).map((k) => `${k.spanId} (${k.message})`);
  const more = plan.kept.length > 3 ? ` and ${plan.kept.length - 3} more` : "";
  return `${plan.kept.length} span${plan.kept.length === 1 ? "" : "s"}: ${first.join(", ")}${more}`;
}
