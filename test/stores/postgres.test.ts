import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pool } from "pg";
import type { AuditDraft } from "../../src/audit.js";
import { verifyAuditChain } from "../../src/audit.js";
import { StoreError } from "../../src/errors.js";
import { contentHash } from "../../src/hash.js";
import { migrate, PostgresStore, SCHEMA_VERSION, type PgQueryable } from "../../src/postgres.js";
import type { CheckResult, PruneDecision } from "../../src/stores/store.js";
import { ManualClock } from "../../src/types.js";
import { ContextWindow } from "../../src/index.js";
import { describeStoreConformance, testDraft } from "./conformance.js";
import { describeWithServer, dropSchemas, freshSchema, newPglite, PG_URL, testPool } from "./pg-helpers.js";

const draft = (status: AuditDraft["status"], extra: Partial<AuditDraft> = {}): AuditDraft => testDraft(status, { kind: "k", ...extra });

const reversible = (checks: readonly CheckResult[]): PruneDecision[] =>
  checks.map((c) =>
    c.conditions.existence && c.conditions.addressability && c.conditions.provenance
      ? { status: "reversible", repersist: false, hold: true, audit: draft("reversible") }
      : c.conditions.provenance
        ? { status: "reversible", repersist: true, hold: true, audit: draft("reversible", { repersisted: true }) }
        : { status: "rejected", audit: draft("rejected") },
  );

/** The adapter's own behaviour, run against one backend (PGlite or the real server). */
function describeSpecifics(label: string, backend: () => Pool | PgQueryable, created: string[]): void {
  describe(`PostgresStore specifics: ${label}`, () => {
    const store = async (o: { schema?: string; clock?: ManualClock; handlePrefix?: string } = {}) =>
      new PostgresStore({ name: "toolLog", pool: backend(), retentionMs: 1000, clock: o.clock ?? new ManualClock(0), schema: o.schema ?? (await freshSchema(backend(), "spec", created)), ...(o.handlePrefix ? { handlePrefix: o.handlePrefix } : {}) });

    it("a reversible prune costs at most 2 round trips, a one-item prune or a group alike", async () => {
      const s = await store();
      await s.persist({ session: "s", spanId: "span_1", kind: "k", text: "a", hash: contentHash("a") });
      await s.persist({ session: "s", spanId: "span_2", kind: "k", text: "b", hash: contentHash("b") });
      const before = s.stats.roundTrips;
      const commit = await s.commitPrune({ session: "s", items: [{ spanId: "span_1", kind: "k", backed: true, handle: "#1", hash: contentHash("a"), text: "a" }], holdUntil: null, decide: reversible });
      expect(commit.items[0]!.decision.status).toBe("reversible");
      expect(s.stats.roundTrips - before).toBeLessThanOrEqual(2);
      const mid = s.stats.roundTrips;
      // A group with a re-persist that mints a handle is still two.
      const group = await s.commitPrune({
        session: "s", holdUntil: null, decide: reversible,
        items: [
          { spanId: "span_2", kind: "k", backed: true, handle: "#2", hash: contentHash("b"), text: "b" },
          { spanId: "span_3", kind: "k", backed: true, handle: null, hash: contentHash("c"), text: "c" },
        ],
      });
      expect(group.items.map((i) => i.handle)).toEqual(["#2", "#3"]);
      expect(s.stats.roundTrips - mid).toBeLessThanOrEqual(2);
      // persist is one round trip.
      const p0 = s.stats.roundTrips;
      await s.persist({ session: "s", spanId: "span_4", kind: "k", text: "d", hash: contentHash("d") });
      expect(s.stats.roundTrips - p0).toBe(1);
      expect(verifyAuditChain(await s.auditLog("s"))).toBeNull();
      await s.close();
    });

    it("lookupMany answers every key as lookup does, in the keys' order, in one round trip", async () => {
      const clock = new ManualClock(0);
      const s = await store({ clock });
      for (const [id, text] of [["span_1", "a"], ["span_2", "b"], ["span_3", "c"]] as const) {
        await s.persist({ session: "s", spanId: id, kind: "k", text, hash: contentHash(text) });
      }
      await s.persist({ session: "other", spanId: "span_9", kind: "k", text: "z", hash: contentHash("z") });
      // span_1 is held by its prune; span_2 and span_3 rotate out (retention 1000 ms, no hold): expired.
      clock.advance(500);
      await s.commitPrune({ session: "s", items: [{ spanId: "span_1", kind: "k", backed: true, handle: "#1", hash: contentHash("a"), text: "a" }], holdUntil: null, decide: reversible });
      clock.advance(1000);
      await s.rotate();
      const keys = [{ handle: "#1" }, { spanId: "span_1" }, { spanId: "span_2" }, { handle: "#3" }, { handle: "#404" }, { spanId: "span_9" }, { handle: "#1" }];
      const before = s.stats.roundTrips;
      const many = await s.lookupMany("s", keys);
      expect(s.stats.roundTrips - before).toBe(1);
      const one = [];
      for (const k of keys) one.push(await s.lookup("s", k));
      expect(many).toEqual(one);
      expect(many.map((r) => r.status)).toEqual(["found", "found", "expired", "expired", "absent", "absent", "found"]);
      expect(await s.lookupMany("s", [])).toEqual([]);
      // From 512 keys on, the session's records are read by its index range: the same answers.
      const wide = [...keys, ...Array.from({ length: 512 }, (_, i) => ({ handle: `#${1000 + i}` }))];
      const b2 = s.stats.roundTrips;
      const wideAnswers = await s.lookupMany("s", wide);
      expect(s.stats.roundTrips - b2).toBe(1);
      expect(wideAnswers.slice(0, keys.length)).toEqual(one);
      expect(wideAnswers.slice(keys.length).every((r) => r.status === "absent")).toBe(true);
      await s.close();
    });

    it("a resume reads its copies in one round trip, whatever the session's length", async () => {
      const schema = await freshSchema(backend(), "resume", created);
      const kinds = { k: { store: "toolLog", modes: ["drop"], lossy: "forbid" } } as const;
      const resumeTrips = async (n: number): Promise<number> => {
        const session = `len${n}`;
        const s = new PostgresStore({ name: "toolLog", pool: backend(), schema, clock: new ManualClock(0) });
        const win = new ContextWindow({ session, stores: { toolLog: s }, kinds, clock: new ManualClock(0) });
        const refs = [];
        for (let i = 0; i < n; i++) refs.push(await win.append({ kind: "k", text: `output ${i} of ${session}` }));
        for (const ref of refs.filter((_, i) => i % 2 === 0)) expect((await win.tryPrune({ span: ref, mode: "drop" })).status).toBe("reversible");
        const fresh = new PostgresStore({ name: "toolLog", pool: backend(), schema, clock: new ManualClock(0) });
        const before = fresh.stats.roundTrips;
        const resumed = await ContextWindow.resume({ session, stores: { toolLog: fresh }, kinds, clock: new ManualClock(0) });
        const trips = fresh.stats.roundTrips - before;
        // Every copy came back: the pruned ones recall byte for byte, the live ones are live.
        const back = await resumed.recall(String(refs[0]).split("@")[0]!);
        expect(back.status === "found" && back.text).toBe(`output 0 of ${session}`);
        expect(resumed.entries().filter((e) => e.state === "live")).toHaveLength(Math.floor(n / 2));
        await s.close();
        await fresh.close();
        return trips;
      };
      const short = await resumeTrips(4);
      const long = await resumeTrips(40);
      expect(long).toBe(short);
    });

    it("search reads the copies asked about by handle, whether or not the pg_trgm extension could be created", async () => {
      const s = await store();
      const text = "X-Request-Id: req_7f3a9c2e41 100%_done \\ ok";
      const { handle } = await s.persist({ session: "s", spanId: "span_1", kind: "k", text, hash: contentHash(text) });
      const copies = [{ handle, hash: contentHash(text) }];
      const b = backend();
      const ext = "exec" in b && typeof (b as PgQueryable).exec === "function"
        ? (await (b as PgQueryable).query("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'pg_trgm'")).rows
        : (await (b as Pool).query("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'pg_trgm'")).rows;
      const trgm = Number((ext[0] as { n: number }).n) === 1;
      for (const literal of ["req_7f3a", "100%_", "\\ ok", "7f"]) {
        const r = await s.searchCopies("s", { copies, literal, limit: 5 });
        expect({ trgm, literal, got: r.candidates.map((c) => c.spanId) }).toEqual({ trgm, literal, got: ["span_1"] });
      }
      expect((await s.searchCopies("s", { copies, literal: "100%x", limit: 5 })).candidates).toEqual([]);
      // No PostgreSQL text holds a NUL: the store filters on the literal's longest run without one.
      expect((await s.searchCopies("s", { copies, literal: "\0req_7f", limit: 5 })).candidates.map((c) => c.spanId)).toEqual(["span_1"]);
      await s.close();
    });

    it("migrate is idempotent and records the schema version", async () => {
      const schema = await freshSchema(backend(), "mig", created);
      expect(await migrate(backend(), { schema })).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
      const s = await PostgresStore.connect({ name: "toolLog", pool: backend(), schema });
      await s.close();
    });

    it("one partial index serves recall's prune decisions, `kept` records included (version 7 replaces audit_span)", async () => {
      const schema = await freshSchema(backend(), "idx", created);
      const b = backend();
      const text = `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = '${schema}' AND indexname IN ('audit_span', 'audit_decisions')`;
      const rows = ("exec" in b && typeof (b as PgQueryable).exec === "function" ? (await (b as PgQueryable).query(text)).rows : (await (b as Pool).query(text)).rows) as Array<{ indexname: string; indexdef: string }>;
      expect(rows.map((r) => r.indexname)).toEqual(["audit_decisions"]);
      expect(rows[0]!.indexdef).toMatch(/\(store, session, span_id\) WHERE \(status = ANY \(ARRAY\['reversible'::text, 'lossy'::text, 'kept'::text\]\)\)/);
    });

    it("connect refuses a schema that was never migrated, and says what to run", async () => {
      await expect(PostgresStore.connect({ name: "toolLog", pool: backend(), schema: "pgt_never_migrated" })).rejects.toThrow(/pruneguard migrate/);
      const s = new PostgresStore({ name: "toolLog", pool: backend(), schema: "pgt_never_migrated" });
      await expect(s.lookup("s", { handle: "#1" })).rejects.toBeInstanceOf(StoreError);
    });

    it("closing a store leaves a shared pool open for the others", async () => {
      const schema = await freshSchema(backend(), "share", created);
      const a = new PostgresStore({ name: "a", pool: backend(), schema });
      const b = new PostgresStore({ name: "b", pool: backend(), schema });
      await a.persist({ session: "s", spanId: "span_1", kind: "k", text: "a", hash: contentHash("a") });
      await a.close();
      await expect(a.lookup("s", { spanId: "span_1" })).rejects.toBeInstanceOf(StoreError);
      // b shares the tables and the pool but not a's rows.
      expect(await b.lookup("s", { spanId: "span_1" })).toEqual({ status: "absent" });
      expect((await b.persist({ session: "s", spanId: "span_1", kind: "k", text: "b", hash: contentHash("b") })).handle).toBe("#1");
      await b.close();
    });

    it("stores hostile text byte for byte: quotes, backslashes, dollar quotes, SQL, unicode", async () => {
      const s = await store();
      const text = "it's \\x00 \\' $$ $tag$ '); DROP TABLE records; -- \u2028 naïve 🚀 E'\\\\'";
      const p = await s.persist({ session: "s'; --", spanId: "span_1", kind: "k'", text, hash: contentHash(text) });
      expect(await s.lookup("s'; --", { handle: p.handle })).toMatchObject({ status: "found", text, kind: "k'" });
      await s.appendAudit("s'; --", draft("invalid", { directive: '{"span_id":"\\udc00 lone surrogate", "x": "\u0000"}'.replace("\u0000", "") }));
      const log = await s.auditLog("s'; --");
      expect(verifyAuditChain(log)).toBeNull();
      await s.close();
    });

    it("refuses text PostgreSQL cannot hold (NUL) with a StoreError-free, clear error and writes nothing", async () => {
      const s = await store();
      await expect(s.persist({ session: "s", spanId: "span_1", kind: "k", text: "a\0b", hash: contentHash("a\0b") })).rejects.toThrow(/NUL/);
      expect(await s.lookup("s", { spanId: "span_1" })).toEqual({ status: "absent" });
      await s.close();
    });

    it("commits nothing when a write in the second round trip fails", async () => {
      const s = await store();
      await s.persist({ session: "s", spanId: "span_1", kind: "k", text: "a", hash: contentHash("a") });
      // An audit draft PostgreSQL cannot store fails the second step after the holds were built.
      await expect(s.commitPrune({
        session: "s", holdUntil: null, items: [{ spanId: "span_1", kind: "k", backed: true, handle: "#1", hash: contentHash("a"), text: "a" }],
        decide: (cs) => cs.map(() => ({ status: "reversible", repersist: false, hold: true, audit: draft("reversible", { spanId: "bad\0" }) })),
      })).rejects.toThrow();
      expect(await s.auditLog("s")).toEqual([]);
      expect(await s.releaseHolds("s")).toBe(0);
      // The connection went back clean: the next prune works.
      const ok = await s.commitPrune({ session: "s", holdUntil: null, items: [{ spanId: "span_1", kind: "k", backed: true, handle: "#1", hash: contentHash("a"), text: "a" }], decide: reversible });
      expect(ok.items[0]!.audit.seq).toBe(1);
      await s.close();
    });
  });
}

const pgliteSchemas: string[] = [];
let lite: (PgQueryable & { close(): Promise<void> }) | null = null;
beforeAll(async () => {
  lite = await newPglite();
}, 60_000);
afterAll(async () => {
  if (lite) {
    await dropSchemas(lite, pgliteSchemas);
    await lite.close();
  }
});

describeStoreConformance("PostgresStore on PGlite (in-process)", async (o) => {
  const schema = await freshSchema(lite!, "conf", pgliteSchemas);
  return new PostgresStore({ ...o, pool: lite!, schema });
});
describeSpecifics("PGlite", () => lite!, pgliteSchemas);

describeWithServer("real server", { needs: "any" }, () => {
  const serverSchemas: string[] = [];
  let pool: Pool | null = null;
  beforeAll(() => {
    pool = testPool();
  });
  afterAll(async () => {
    if (pool) {
      await dropSchemas(pool, serverSchemas);
      await pool.end();
    }
  });
  describeStoreConformance("PostgresStore on the server at PRUNEGUARD_PG_URL", async (o) => {
    const schema = await freshSchema(pool!, "conf", serverSchemas);
    return new PostgresStore({ ...o, pool: pool!, schema, statementTimeoutMs: 10_000 });
  });
  describeSpecifics("server", () => pool!, serverSchemas);

  it("connect() opens and ends a pool of its own from the url", async () => {
    const schema = await freshSchema(pool!, "own", serverSchemas);
    const s = await PostgresStore.connect({ name: "toolLog", url: PG_URL, schema });
    await s.persist({ session: "s", spanId: "span_1", kind: "k", text: "a", hash: contentHash("a") });
    await s.close();
    await expect(s.lookup("s", { spanId: "span_1" })).rejects.toBeInstanceOf(StoreError);
  });
});
