import type { INodeProperties } from 'n8n-workflow';

import { storageProperties } from '../shared/descriptions';
import { operationProperties, optionsProperty } from './operations';

/** Operation and its fields, then storage (as in the other nodes), options last. */
export const properties: INodeProperties[] = [
	...operationProperties,
	...storageProperties({}),
	optionsProperty,
];
