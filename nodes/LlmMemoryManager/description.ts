import type { INodeProperties } from 'n8n-workflow';

import { storageProperties } from '../shared/descriptions';
import { resourceProperties } from './resources';

const { fields, options } = resourceProperties();

/** Resource, Operation and the operation's fields; then storage, as in the other nodes; options last. */
export const properties: INodeProperties[] = [...fields, ...storageProperties({}), ...options];
