import { MemoryStore } from "../../src/stores/memory.js";
import { describeStoreConformance } from "./conformance.js";

describeStoreConformance("MemoryStore", async (o) => new MemoryStore(o));
