/**
 * Pin patterns run over every pruned span, so one that can backtrack exponentially, or that matches the
 * empty string, is an error rather than a slow surprise. The analysis itself is `dsl/pin-analysis.ts`,
 * shared with the runtime; this check only turns its verdict into diagnostics.
 */
import { isCatastrophicPattern } from "../../dsl/pin-analysis.js";
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { PinIR } from "../ir/schema.js";
import type { Check } from "./context.js";

export const checkPins: Check = (policy) => {
  const all: PinIR[] = [...policy.pins, ...policy.kinds.flatMap((k) => k.pins)];
  return all.flatMap(checkPin);
};

export function checkPin(p: PinIR): Diagnostic[] {
  const risk = isCatastrophicPattern(p.pattern);
  if (risk.ok) return [];
  switch (risk.reason) {
    case "invalid":
      return [diagnostic("PG2009", p.location, { pin: p.name, message: `the pattern does not compile with flags 'gu': ${risk.detail}` })];
    case "empty-match":
      return [diagnostic("PG2011", p.location, { pin: p.name, pattern: p.pattern })];
    case "nested-quantifier":
    case "backreference":
      return [diagnostic("PG2010", p.location, { pin: p.name, pattern: p.pattern, reason: risk.detail })];
  }
}
