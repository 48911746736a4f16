/**
 * The build's last step (`npm run build`, after `tsc`): records the compiler's code hash next to the built
 * `fingerprint.js`, so `compile` and `check` read one small file instead of hashing the code on every run
 * (see `fingerprint.ts` for when the record is trusted).
 */
import { writeBuiltFingerprint } from "./fingerprint.js";

writeBuiltFingerprint();
