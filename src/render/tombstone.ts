/**
 * The tombstone line, in a module of its own that loads no tokenizer: the compiler fills a policy's
 * wording with it to check the line the model will read.
 */

export const DEFAULT_TOMBSTONE = "{span} pruned, unrecoverable, contents unknown";

export function tombstoneLine(spanId: string, template: string = DEFAULT_TOMBSTONE): string {
  return template.split("{span}").join(spanId);
}
