import type { Operation } from '../../shared/operation';
import type { Connections } from '../methods/base';

/** One operation of the Memory Base node, run with the sub-nodes the execution fetched once. */
export type MemoryBaseOperation = Operation<Connections> & {
	/** Whether it cannot run without an embedding model (others use one when it is connected). */
	needsEmbedder: boolean;
};
