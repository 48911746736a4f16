/**
 * A decision's outcome read as telemetry: the span attributes, the dimensions of the decision counter, the
 * tokens freed, lossy commitments, recall answer and store failures the metrics count — from ids, kinds,
 * stores, modes, reasons and counts only, never a span's text, a digest, a directive or a query (unless
 * `queryText` asks for a query's first characters).
 */
import { SPAN_ID } from "../directive.js";
import type { DirectiveOutcome } from "../outcome.js";
import { cutUnits } from "../render/framing.js";
import type { TelemetryAttributes, TelemetryContext } from "./index.js";
import { clean } from "./otel-plumbing.js";

/** A store failure a decision ran into (a span event, and a count). */
export interface Failure {
  readonly store: string | null;
  /** `store-error`, `unavailable`, `outcome-unknown`, `audit-pending`, `persist`, `note`, or the thrown error's name. */
  readonly failure: string;
}

/** A decision's outcome as telemetry reads it: span attributes, and what the metrics count. */
export interface Described {
  readonly op: string;
  readonly status: string;
  readonly attributes: TelemetryAttributes;
  /** Attributes of the decision counter beyond op and status (bounded: kind, reason). */
  readonly dimensions: TelemetryAttributes;
  readonly tokensFreed: number;
  readonly lossy: number;
  readonly failures: readonly Failure[];
  readonly recall: TelemetryAttributes | null;
}

/** A decision's outcome as attributes and counts; never its text, digest, directive or query (but `queryText`). */
export function describeOutcome(o: DirectiveOutcome, ctx: TelemetryContext, queryText: number): Described {
  const attributes: TelemetryAttributes = {};
  const dimensions: TelemetryAttributes = {};
  const failures: Failure[] = [];
  let tokensFreed = 0;
  let lossy = 0;
  let recall: TelemetryAttributes | null = null;
  const op = o.op ?? "unknown";
  const facts = (spanId: string) => ctx.span(spanId);
  const spanAttributes = (spanId: string | null | undefined, kind?: string | null) => {
    const id = spanId !== null && spanId !== undefined && SPAN_ID.test(spanId) ? spanId : undefined;
    const k = kind ?? (id === undefined ? undefined : facts(id)?.kind);
    Object.assign(attributes, clean({ "pruneguard.span.id": id, "pruneguard.span.kind": k }));
    if (k !== undefined && k !== null) dimensions["pruneguard.span.kind"] = k;
    return k ?? null;
  };
  switch (o.op) {
    case "prune": {
      if (o.status === "invalid") break;
      const kind = spanAttributes(o.spanId, o.kind);
      const store = kind === null ? null : (ctx.storeOfKind(kind) ?? null);
      Object.assign(attributes, clean({ "pruneguard.mode": o.mode, "pruneguard.store": store }));
      if (o.status === "rejected") {
        attributes["pruneguard.reason"] = o.reason;
        dimensions["pruneguard.reason"] = o.reason;
        if (o.failed.length > 0) attributes["pruneguard.conditions.failed"] = [...o.failed];
        if (o.reason === "store-error" || o.reason === "outcome-unknown") failures.push({ store, failure: o.reason });
        break;
      }
      tokensFreed = Math.max(0, o.tokensFreed);
      lossy = (o.status === "lossy" ? 1 : 0) + o.group.filter((g) => g.status === "lossy").length;
      Object.assign(attributes, {
        "pruneguard.tokens.freed": o.tokensFreed,
        "pruneguard.pins_carried": o.pinsCarried.length,
        "pruneguard.group.size": o.groupPruned.length + 1,
        "pruneguard.grew": o.grew !== null,
        "pruneguard.lossy.count": lossy,
        ...applies(o.applies),
      });
      if (o.status === "reversible") {
        Object.assign(attributes, clean({ "pruneguard.handle": o.handle, "pruneguard.repersisted": o.repersisted, "pruneguard.reversible_until": o.until ?? undefined }));
      } else if (o.failed.length > 0) {
        attributes["pruneguard.conditions.failed"] = [...o.failed];
      }
      break;
    }
    case "recall": {
      if (o.status === "invalid") break;
      const spanId = o.status === "unknown" ? null : o.spanId;
      const kind = spanAttributes(spanId, o.status === "lost" ? o.kind : undefined);
      const store = spanId === null ? null : (facts(spanId)?.store ?? null);
      Object.assign(attributes, clean({ "pruneguard.store": store }));
      const extra: TelemetryAttributes = {};
      if (o.status === "found") extra["pruneguard.recall.source"] = o.source;
      if (o.status === "found" || o.status === "pruned-unrecoverable" || o.status === "unavailable") Object.assign(attributes, clean({ "pruneguard.handle": o.handle }));
      if (o.status === "pruned-unrecoverable") extra["pruneguard.reason"] = o.reason;
      if (o.status === "expanded") attributes["pruneguard.range.members"] = o.members.length;
      if (o.status === "unavailable") failures.push({ store, failure: "unavailable" });
      Object.assign(attributes, extra);
      recall = clean({ "pruneguard.status": o.status, "pruneguard.span.kind": kind, ...extra });
      break;
    }
    case "search": {
      if (o.status === "invalid") break;
      const c = o.coverage;
      const holes = { lossy: 0, "copy-lost": 0, unavailable: 0, elsewhere: 0 };
      const unavailableStores = new Set<string | null>();
      for (const h of c.holes) {
        holes[h.why]++;
        if (h.why === "unavailable") unavailableStores.add(facts(h.spanId)?.store ?? null);
      }
      const coverage = c.truncated || c.unread > 0 ? "partial" : c.holes.length > 0 ? "holes" : "complete";
      dimensions["pruneguard.reason"] = coverage;
      Object.assign(attributes, {
        "pruneguard.reason": coverage,
        "pruneguard.search.regex": o.regex,
        "pruneguard.search.query_chars": o.query.length,
        "pruneguard.search.matches": o.matches.length + o.omitted,
        "pruneguard.search.shown": o.matches.length,
        "pruneguard.search.live": c.live,
        "pruneguard.search.pruned": c.pruned,
        "pruneguard.search.holes": c.holes.length,
        "pruneguard.search.holes.lossy": holes.lossy,
        "pruneguard.search.holes.copy_lost": holes["copy-lost"],
        "pruneguard.search.holes.unavailable": holes.unavailable,
        "pruneguard.search.holes.elsewhere": holes.elsewhere,
        "pruneguard.search.truncated": c.truncated,
        "pruneguard.search.unread": c.unread,
        "pruneguard.search.tokens": o.tokens,
      });
      if (queryText > 0) attributes["pruneguard.search.query"] = cutUnits(o.query, queryText);
      for (const store of unavailableStores) failures.push({ store, failure: "unavailable" });
      break;
    }
    case "map": {
      if (o.status === "invalid") break;
      const counts = { reversible: 0, "reversible-until": 0, "lossy-with-flag": 0, never: 0 };
      let unavailable = 0;
      for (const s of o.spans) {
        counts[s.forecast]++;
        if (s.why === "store unavailable") unavailable++;
      }
      Object.assign(attributes, clean({
        "pruneguard.map.spans": o.spans.length,
        "pruneguard.map.reversible": counts.reversible,
        "pruneguard.map.reversible_until": counts["reversible-until"],
        "pruneguard.map.lossy_with_flag": counts["lossy-with-flag"],
        "pruneguard.map.never": counts.never,
        "pruneguard.window.tokens": o.tokens.used,
        "pruneguard.window.max_tokens": o.tokens.limit ?? undefined,
        "pruneguard.pending.decisions": o.pending?.decisions ?? 0,
        "pruneguard.pending.tokens": o.pending?.pendingTokens,
        "pruneguard.pending.rewrite_tokens": o.pending?.rewriteTokens,
      }));
      if (unavailable > 0) failures.push({ store: null, failure: "unavailable" });
      break;
    }
    case "summarize_range": {
      if (o.status === "invalid") break;
      if (o.status === "rejected") {
        Object.assign(attributes, clean({
          "pruneguard.reason": o.reason, "pruneguard.range.from": SPAN_ID.test(o.from) ? o.from : undefined, "pruneguard.range.to": SPAN_ID.test(o.to) ? o.to : undefined,
        }));
        dimensions["pruneguard.reason"] = o.reason;
        if (o.reason === "store-error") failures.push({ store: null, failure: o.reason });
        break;
      }
      tokensFreed = Math.max(0, o.tokensFreed);
      const stores = [...new Set(o.pruned.map((p) => facts(p.spanId)?.store ?? null))].filter((s): s is string => s !== null);
      Object.assign(attributes, clean({
        "pruneguard.span.id": o.spanId,
        "pruneguard.span.kind": "summary",
        "pruneguard.range.from": o.members[0],
        "pruneguard.range.to": o.members.at(-1),
        "pruneguard.range.members": o.members.length,
        "pruneguard.range.pruned": o.pruned.length,
        "pruneguard.store": stores[0],
        "pruneguard.tokens.freed": o.tokensFreed,
        "pruneguard.pins_carried": o.pinsCarried.length,
        ...applies(o.applies),
      }));
      if (o.noteError !== undefined) failures.push({ store: ctx.homeStore, failure: "note" });
      break;
    }
    case "compact": {
      if (o.status === "invalid") break;
      Object.assign(attributes, {
        "pruneguard.compaction.applied": o.applied,
        "pruneguard.compaction.folded": o.folded,
        "pruneguard.compaction.not_applied": o.notApplied,
        "pruneguard.compaction.tokens_freed": o.freedTokens,
        "pruneguard.compaction.tokens_rewritten": o.rewrittenTokens,
      });
      break;
    }
    case null:
      // An invalid directive whose op could not be read: only what every outcome has (below).
      break;
    default:
      // Exhaustive: a new operation does not compile until it is given its attributes here. At run time an
      // outcome of no known op gets only the common attributes below (telemetry never throws).
      o satisfies never;
  }
  if (o.status === "invalid") attributes["pruneguard.issues"] = o.issues.length;
  attributes["pruneguard.op"] = op;
  attributes["pruneguard.status"] = o.status;
  if (o.auditSeq !== null) attributes["pruneguard.audit.seq"] = o.auditSeq;
  else if (!(o.status === "rejected" && o.reason === "outcome-unknown")) {
    // Not written yet: the audit store failed, and the record waits to be written before the next store call.
    attributes["pruneguard.audit.pending"] = true;
    failures.push({ store: null, failure: "audit-pending" });
  }
  return { op, status: o.status, attributes, dimensions, tokensFreed, lossy, failures, recall };
}

/** When a decision reaches what the model reads. */
function applies(a: { readonly at: "now" } | { readonly at: "next-compaction"; readonly pendingTokens: number; readonly rewriteTokens: number }): TelemetryAttributes {
  return a.at === "now"
    ? { "pruneguard.applies": "now" }
    : { "pruneguard.applies": "next-compaction", "pruneguard.pending.tokens": a.pendingTokens, "pruneguard.pending.rewrite_tokens": a.rewriteTokens };
}
