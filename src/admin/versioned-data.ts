import { VersionedData as SnapshotData } from '../snapshots/versioned-data';
import { exportConversation, importConversation } from './conversation-transfer';
import type { ConversationExport, ConversationImportResult } from './conversation-transfer';

/**
 * Versioned data of one conversation (see snapshots/), with whole-conversation export and import:
 * those cover chat memory too, which is admin/'s work, so they are added here rather than in snapshots/.
 */
export class VersionedData extends SnapshotData {
	/** This conversation as one JSON value: chat memory, files, and every version and branch (see exportConversation). */
	exportConversation(): Promise<ConversationExport> {
		return exportConversation(this.storage, this.appId, this.conversationId, {
			keyPrefix: this.keyPrefix,
		});
	}

	/** Imports an export into this conversation; refuses existing data unless `overwrite` (see importConversation). */
	importConversation(
		value: unknown,
		options: { overwrite?: boolean } = {},
	): Promise<ConversationImportResult> {
		return importConversation(this.storage, this.appId, value, {
			conversationId: this.conversationId,
			keyPrefix: this.keyPrefix,
			overwrite: options.overwrite,
		});
	}
}
