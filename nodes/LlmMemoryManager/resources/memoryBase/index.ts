import type { Resource } from '../types';
import { fieldProperties, RESOURCE } from './fields';
import { upgrade } from './upgrade';

/** A Memory Base as a whole: what the Memory Base node does not do itself. */
export const memoryBase: Resource = {
	option: {
		name: 'Memory Base',
		value: RESOURCE,
		description: 'A Memory Base as a whole: upgrade one kept in an older layout now',
	},
	defaultOperation: 'upgrade',
	properties: fieldProperties,
	operations: [upgrade],
};
