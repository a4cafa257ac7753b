import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { MemoryBase } from '../../../../src/knowledge/memory-base';
import { unknownBase } from '../../../shared/memory-bases';
import { nodeError } from '../../../shared/errors';
import { requiredIdParameter } from '../../../shared/ids';
import type { ItemOperation } from '../../../shared/operation';
import { storageFor } from '../../../shared/storage';

export const upgrade: ItemOperation = {
	option: {
		name: 'Upgrade Memory Base',
		value: 'upgrade',
		description:
			'Bring a Memory Base kept in an older layout to the current one now: one index for the whole base moved into one partition per user, and the base-wide index built that searches of every conversation read. Otherwise the first search, capture or sync that finds the base idle does it.',
		action: 'Upgrade a memory base',
	},
	properties: [],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const baseId = requiredIdParameter(ctx, 'memoryBaseId', i, 'Memory Base ID', {
			message: 'No memory base ID',
			help: 'Set "Memory Base ID" to the base to upgrade (by default the ID of the workflow that captures into it).',
		});
		const base = new MemoryBase({ storage: await storageFor(ctx, i), baseId });
		const unknown = await unknownBase(base);
		if (unknown) throw nodeError(ctx, unknown.message, i, unknown.help);
		const started = Date.now();
		const r = await base.upgrade();
		// One line in n8n's own log: what moved and how long it took (no IDs of users or sessions).
		ctx.logger.info(
			`LLM Memory Manager: Upgrade Memory Base "${baseId}": ${r.upgraded ? 'upgraded' : 'already current'} (layout ${r.layout}, base-wide index ${r.wide}) in ${Date.now() - started} ms`,
		);
		return [{ json: { ...r, ms: Date.now() - started } }];
	},
};
