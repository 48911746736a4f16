/**
 * The TypeScript 6 parser the front end uses: the `typescript.js` that ts-morph bundles (in its
 * `@ts-morph/common` package), loaded on its own. The front end only parses (see `host.ts`), so nothing of
 * ts-morph itself is needed; `import { ts } from "ts-morph"` also evaluated ts-morph (~1 MB), its common
 * package (~3 MB, most of it the lib `.d.ts` files as strings) and their dependencies, which cost a cold
 * compile as much again as the parser's own load (BENCHMARKS.md, figure 4).
 *
 * It is the same module ts-morph loads — resolved from ts-morph's own folder, as ts-morph resolves it —
 * so `ts-morph`'s version in the compiler's fingerprint still names the parser. `ts` is the module's value
 * and, through the namespace below, the names of the types the front end uses.
 */
import { createRequire } from "node:module";
import type { ts as TS } from "ts-morph";

const require = createRequire(import.meta.url);

export const ts: typeof TS = createRequire(require.resolve("ts-morph"))("@ts-morph/common/dist/typescript.js") as typeof TS;

/** The types of `ts` the front end names (a type-only namespace beside the value: `ts.Node`, `ts.SourceFile`). */
export declare namespace ts {
  export type ArrayLiteralExpression = TS.ArrayLiteralExpression;
  export type ArrowFunction = TS.ArrowFunction;
  export type BinaryExpression = TS.BinaryExpression;
  export type CallExpression = TS.CallExpression;
  export type DiagnosticMessageChain = TS.DiagnosticMessageChain;
  export type DiagnosticWithLocation = TS.DiagnosticWithLocation;
  export type ElementAccessExpression = TS.ElementAccessExpression;
  export type ExportDeclaration = TS.ExportDeclaration;
  export type Expression = TS.Expression;
  export type ExtendedConfigCacheEntry = TS.ExtendedConfigCacheEntry;
  export type FunctionExpression = TS.FunctionExpression;
  export type FunctionLikeDeclaration = TS.FunctionLikeDeclaration;
  export type Identifier = TS.Identifier;
  export type ImportDeclaration = TS.ImportDeclaration;
  export type ModuleKind = TS.ModuleKind;
  export type ModuleResolutionKind = TS.ModuleResolutionKind;
  export type Node = TS.Node;
  export type NodeFlags = TS.NodeFlags;
  export type NumericLiteral = TS.NumericLiteral;
  export type ObjectLiteralExpression = TS.ObjectLiteralExpression;
  export type ParenthesizedExpression = TS.ParenthesizedExpression;
  export type ParseConfigHost = TS.ParseConfigHost;
  export type PrefixUnaryExpression = TS.PrefixUnaryExpression;
  export type PropertyAccessExpression = TS.PropertyAccessExpression;
  export type RegularExpressionLiteral = TS.RegularExpressionLiteral;
  export type ScriptTarget = TS.ScriptTarget;
  export type SourceFile = TS.SourceFile;
  export type Statement = TS.Statement;
  export type StringLiteral = TS.StringLiteral;
  export type SyntaxKind = TS.SyntaxKind;
  export type TemplateExpression = TS.TemplateExpression;
}
