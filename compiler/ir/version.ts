/** Version of the IR's shape; bumped on any change an emitter could notice. (Apart from `schema.ts`, so the emitters need not load zod.) */
export const IR_VERSION = 1;
