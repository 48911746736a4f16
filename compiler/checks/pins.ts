/**
 * Pin patterns run over every pruned span on re2js, a linear-time RE2 engine, so no pattern can hang
 * the process; the price is that the engine refuses what it cannot run in linear time (lookahead,
 * backreferences) and a pattern that matches the empty string pins nothing. The verdict and the advice
 * come from `compilePinPattern` in `src/policy/pins.ts`, shared with the runtime; this check only turns
 * them into diagnostics.
 */
import { compilePinPattern } from "../../src/policy/pins.js";
import { diagnostic, excerpt, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { PinIR } from "../ir/schema.js";
import type { Check } from "./context.js";

export const checkPins: Check = (policy) => {
  const all: PinIR[] = [...policy.pins, ...policy.kinds.flatMap((k) => k.pins)];
  return all.flatMap(checkPin);
};

export function checkPin(p: PinIR): Diagnostic[] {
  const compiled = compilePinPattern(p.pattern);
  if (compiled.ok) return [];
  const { problem } = compiled;
  // A pin's name and pattern are the policy's, and the engine's message may quote the rest of the pattern: cut.
  const pin = excerpt(p.name);
  switch (problem.reason) {
    case "invalid":
      return [diagnostic("PG2009", p.location, { pin, message: `the pattern does not parse as RE2 syntax: ${excerpt(problem.detail, 200)}` })];
    case "empty-match":
      return [diagnostic("PG2011", p.location, { pin, pattern: excerpt(p.pattern) })];
    case "unsupported":
      return [diagnostic("PG2012", p.location, { pin, construct: excerpt(problem.construct ?? problem.detail), instead: problem.instead })];
  }
}
