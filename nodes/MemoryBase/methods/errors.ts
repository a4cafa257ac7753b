import type { INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	DimensionMismatchError,
	IndexDamagedError,
	MemoryBaseDeletingError,
	SyncCancelledError,
	SyncRunningError,
} from '../../../src';
import { asNodeError, nodeError } from '../../shared/errors';

/** What the Memory Base adds to an engine error: how to go on. */
function help(error: unknown): string | undefined {
	if (error instanceof SyncRunningError)
		return 'Only one sync per conversation (and per whole base) runs at a time; the other one was refused without changing anything (like HTTP 409 Conflict). A crashed sync’s lock expires after the Lock Duration.';
	if (error instanceof SyncCancelledError || error instanceof MemoryBaseDeletingError)
		return 'Delete Memory Base is running for this base.';
	if (error instanceof DimensionMismatchError || error instanceof IndexDamagedError)
		return 'Status shows what is stored; Regenerate rebuilds the knowledge base from the capture log.';
	return undefined;
}

/** Engine errors as node errors, with the Memory Base's advice where it has some. */
export function memoryBaseError(
	ctx: { getNode(): INode },
	error: unknown,
	i: number,
): NodeOperationError {
	const advice = help(error);
	if (advice && !(error instanceof NodeOperationError))
		return nodeError(ctx, (error as Error).message, i, advice);
	return asNodeError(ctx, error, i);
}
