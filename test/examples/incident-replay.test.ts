import { describe, expect, it } from "vitest";
import { replay } from "../../examples/incident-replay.js";

describe("the incident replay (the main job)", () => {
  it("the naive executor confabulates; both guarded windows never let the model read 'nothing there'", async () => {
    const lines: string[] = [];
    const r = await replay({ write: (l) => lines.push(l) });
    expect(r.conclusions[0]).toMatch(/confabulation/);
    expect(r.conclusions[1]).toMatch(/req_7f3a9c2e41.*recoverable \(correct\)/);
    expect(r.conclusions[2]).toMatch(/req_7f3a9c2e41.*pruned and is gone \(correct\)/);
    const n5 = r.rows.find((row) => row.turn === "N+5")!;
    expect(n5.cells[0]).toMatch(/empty/);
    expect(n5.cells[1]).toMatch(/found, \d+ bytes, byte-identical/);
    expect(n5.cells[2]).toMatch(/pruned-unrecoverable/);
    expect(lines.join("\n")).toContain("ids: req_7f3a9c2e41");
  });

  it("at N+6 the model searches for text it cannot place: the naive side hears 'no results', the guarded sides find it or name the span that held it", async () => {
    const r = await replay({ write: () => undefined });
    expect(r.searchConclusions[0]).toMatch(/named no database \(confabulation\)/);
    expect(r.searchConclusions[1]).toMatch(/database name in span_7.*\(correct\)/);
    expect(r.searchConclusions[2]).toMatch(/span_7 may have named the database and is gone.*\(correct\)/);
    const n6 = r.rows.find((row) => row.turn === "N+6")!;
    expect(n6.cells[0]).toMatch(/no results/);
    expect(n6.cells[1]).toMatch(/span_7 \(pruned, recall #1\): .*orders-primary/);
    expect(n6.cells[2]).toMatch(/no match in \d+ live and 0 recoverable pruned spans; span_7 is unrecoverable and may have held it/);
  });

  it("prints the same bytes every run", async () => {
    const a: string[] = [];
    const b: string[] = [];
    await replay({ write: (l) => a.push(l) });
    await replay({ write: (l) => b.push(l) });
    expect(a).toEqual(b);
  });
});
