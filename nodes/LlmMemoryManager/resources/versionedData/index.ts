import type { Resource } from '../types';
import { createBranch } from './createBranch';
import { diff } from './diff';
import { exportConversation } from './exportConversation';
import { fieldProperties, RESOURCE } from './fields';
import { getCurrent } from './getCurrent';
import { getVersion } from './getVersion';
import { history } from './history';
import { importConversation } from './importConversation';
import { listBranches } from './listBranches';
import { rollback } from './rollback';
import { saveVersion } from './saveVersion';

/** The versioned JSON data of a conversation (LLM with Memory's Versioned Data option writes it too). */
export const versionedData: Resource = {
	option: {
		name: 'Versioned Data',
		value: RESOURCE,
		description:
			'JSON working data of a conversation, saved as numbered versions with a summary each: history, diff, rollback, branches',
	},
	defaultOperation: 'getCurrent',
	properties: fieldProperties,
	operations: [
		createBranch,
		diff,
		exportConversation,
		getCurrent,
		getVersion,
		history,
		importConversation,
		listBranches,
		rollback,
		saveVersion,
	],
};
