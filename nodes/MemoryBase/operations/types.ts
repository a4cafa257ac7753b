import type { Operation } from '../../shared/operation';
import type { Connections } from '../methods/base';

/** One operation of the Memory Base node, run with the sub-nodes the execution fetched once. */
export type MemoryBaseOperation = Operation<Connections> & {
	/** Whether it needs the embedding model ('capture': only when Auto Capture may sync). */
	needsEmbedder: boolean | 'capture';
};
