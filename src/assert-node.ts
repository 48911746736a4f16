/**
 * Imported first by every runtime entry point (`index.ts`, `postgres.ts`, `adapters.ts`), so that on a Node
 * below the supported version the import itself fails with one clear message, before any module that
 * needs the newer Node is evaluated (ES modules evaluate their imports in order).
 */
import { assertSupportedNode } from "./node-version.js";

assertSupportedNode();
