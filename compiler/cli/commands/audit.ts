/**
 * `pruneguard audit <sqlite-file>` or `pruneguard audit --url <postgres-url> [--schema s]`: lists a
 * session's logged decisions readably and, with `--verify`,
 * checks its hash chain. Exit 0 when all is well, 1 when `--verify` finds a break (the record and why
 * are printed), 2 on usage or I/O errors.
 *
 * The store is read through its engine's audit reader (`src/stores/audit-reader.ts`): a SQLite file is
 * opened read-only and never created or migrated, a PostgreSQL store is read in a `READ ONLY`
 * transaction, so auditing never changes what it audits. Besides
 * the chain itself, `--verify` checks that each row's indexed columns (`seq`, `status`, `hash`) agree
 * with the sealed record: the store counts the lossy budget from the `status` column, so an edit there
 * must not pass unnoticed. Each record's stored text must be exactly the canonical serialisation of what
 * it parses to (a key written twice is tampering: readers disagree on its value), and the session's
 * counters must cover the chain: a lossy budget counter below the lossy commitments the chain records was
 * reset. A chain cannot see its own tail being cut off; `--anchor <hash>` checks that
 * a head recorded elsewhere earlier is still in the chain.
 *
 * `--format html --session S` writes the session as one self-contained timeline page (`../timeline.ts`):
 * every store's chain of it, verified, with its spans, copies and holds; content only with `--content`.
 *
 * The store is untrusted (a file in a pull request is anyone's): a record longer than 1 MiB
 * (`MAX_AUDIT_RECORD_BYTES`) is not read, and one that is not JSON or whose fields are not of their types is
 * not shown; each is reported as unreadable, and the chain does not verify past it. Every other column is
 * read only up to its own bound (`MAX_AUDIT_FIELD_BYTES`; span text in part), a row with a column past it
 * reported as unreadable; a run reads at most `MAX_AUDIT_ROWS` rows and `MAX_AUDIT_TEXT_BYTES` of text, and
 * exits 2 past them (`src/stores/audit-reader.ts`). Every string from the
 * store is escaped in the page and written with `\uXXXX` escapes for its control characters on the terminal.
 *
 * The engine is the one the runtime's engine table (`ENGINE_ADAPTERS`, `src/stores/engine-adapters.ts`) says
 * is read by a file, or by a URL; the flags stay as they are whatever engines there are.
 *
 * This module only registers the command; `audit.run.ts` (the audit chain) is loaded when it runs, an
 * engine's reader only when it opens a store: node:sqlite only for a file, and pg only for `--url`.
 */
import type { RegisterCommand } from "../context.js";
import { formatOption } from "../options.js";
import { helpFooter } from "../report.js";

export type { AuditProblem } from "./audit.run.js";

export interface AuditFlags {
  readonly store?: string;
  readonly session?: string;
  readonly verify?: boolean;
  readonly anchor?: string;
  readonly url?: string;
  readonly schema?: string;
  /** `html`: one session as a self-contained timeline page (`../timeline.ts`), on stdout. */
  readonly format: "pretty" | "json" | "html";
  /** With `html`: span text, digests and directives (queries) in the page. */
  readonly content?: boolean;
  /** With `html`: the most entries a table lists (0: all). */
  readonly rows?: string;
}

export const registerAudit: RegisterCommand = (program, cli) => {
  program
    .command("audit")
    .description("list a session's logged prune and recall decisions from a SQLite or PostgreSQL store; --verify checks the hash chain")
    .argument("[sqlite-file]", "the SQLite file a SqliteStore writes (or --url for a PostgreSQL store)")
    .option("--url <url>", "read a PostgreSQL store instead: its connection URL (read only)")
    .option("--schema <schema>", "with --url: the schema that holds the store's tables", "pruneguard")
    .option("--store <name>", "the store whose chain to read (default: each store's chain of the session in turn; json: the only one)")
    .option("--session <id>", "the session to list (without it: list the sessions in the file)")
    .option("--verify", "check the chain: exit 1 naming the first edited, dropped or reordered record")
    .option("--anchor <hash>", "with --verify: a head hash recorded earlier that must still be in the chain (detects a cut tail)")
    .addOption(formatOption(["html"], "json prints results and errors as data on stdout; html writes one session as a self-contained timeline page (with --session)"))
    .option("--content", "with --format html: include span text, digests and directives (queries); without it the page has none")
    .option("--rows <n>", "with --format html: the most decisions and spans each table lists (0: all)", "2000")
    .addHelpText(
      "after",
      helpFooter("0 ok, 1 the chain is broken (with --verify), 2 usage or I/O error.", [
        "pruneguard audit agent.db                                  # sessions in the file",
        "pruneguard audit agent.db --session s-42                   # that session's decisions",
        "pruneguard audit agent.db --store toolLog --session s-42 --verify --format json",
        "pruneguard audit --url postgres://app@db:5432/agents --schema pruneguard --session s-42 --verify",
        "pruneguard audit agent.db --session s-42 --format html > s-42.html   # the session as a timeline page",
      ]),
    )
    .action(async (file: string | undefined, flags: AuditFlags) => (await import("./audit.run.js")).runAudit(file, flags, cli));
};
