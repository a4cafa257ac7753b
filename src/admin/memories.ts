// The memories, as admin/ works on them: each one's side of every whole-storage and
// whole-conversation operation (store/memory-admin.ts), over one storage and key prefix.
import { FactsAdmin } from '../facts/admin';
import { HistoryAdmin } from '../history/admin';
import { KnowledgeAdmin } from '../knowledge/admin';
import { SnapshotsAdmin } from '../snapshots/admin';
import type { ExternalVectorStore } from '../knowledge/types';
import type { MemoryAdmin } from '../store/memory-admin';
import type { MemoryStorage } from '../store/storage';

export interface Memories {
	history: HistoryAdmin;
	snapshots: SnapshotsAdmin;
	facts: FactsAdmin;
	knowledge: KnowledgeAdmin;
	/**
	 * All of them, in the order passes visit them: chat memory, versioned data, facts, then the Memory
	 * Base (facts' read positions and the captures are what finds a user's conversations, so Forget
	 * deletes them last; and Prune's versioned data stays while the chat of its conversation is recent).
	 */
	all: readonly MemoryAdmin[];
}

/**
 * The memories of one storage under one key prefix, for one pass; `vectorStore` is where the Memory
 * Base deletes the vectors of bases that keep them in a connected store (Forget User).
 */
export function memoriesOf(
	storage: MemoryStorage,
	keyPrefix?: string,
	vectorStore?: ExternalVectorStore,
): Memories {
	const history = new HistoryAdmin(storage, keyPrefix);
	const snapshots = new SnapshotsAdmin(storage, keyPrefix);
	const facts = new FactsAdmin(storage, keyPrefix);
	const knowledge = new KnowledgeAdmin(storage, keyPrefix, vectorStore);
	return { history, snapshots, facts, knowledge, all: [history, snapshots, facts, knowledge] };
}
