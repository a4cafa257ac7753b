// The node's source. Loaded by explicit path: an extensionless import would find the codex file
// LlmWithMemory.node.json first.
import * as path from 'node:path';

type NodeModule = typeof import('../../nodes/LlmWithMemory/LlmWithMemory.node');

// eslint-disable-next-line @typescript-eslint/no-require-imports
const loaded = require(
	path.resolve(__dirname, '../../nodes/LlmWithMemory/LlmWithMemory.node.ts'),
) as NodeModule;

export const LlmWithMemory = loaded.LlmWithMemory;

type StoreModule = typeof import('../../nodes/LlmMemoryStore/LlmMemoryStore.node');

// eslint-disable-next-line @typescript-eslint/no-require-imports
const store = require(
	path.resolve(__dirname, '../../nodes/LlmMemoryStore/LlmMemoryStore.node.ts'),
) as StoreModule;

export const LlmMemoryStore = store.LlmMemoryStore;
