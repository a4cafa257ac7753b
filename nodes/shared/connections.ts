import type { AINodeConnectionType, IExecuteFunctions, ISupplyDataFunctions } from 'n8n-workflow';

/** The sub-node connected to an AI input (n8n hands a single connection over alone or in an array). */
export async function connectedSubNode(
	ctx: IExecuteFunctions,
	type: AINodeConnectionType,
): Promise<unknown> {
	const connected: unknown = await ctx.getInputConnectionData(type, 0);
	return Array.isArray(connected) ? connected[0] : connected;
}

/**
 * The sub-node on an optional AI input, or undefined when none is connected (n8n throws then) or it is
 * not what `accepts` checks for.
 */
export async function optionalSubNode<T>(
	ctx: IExecuteFunctions | ISupplyDataFunctions,
	type: AINodeConnectionType,
	i: number,
	accepts: (value: unknown) => value is T,
): Promise<T | undefined> {
	let connected: unknown;
	try {
		connected = await ctx.getInputConnectionData(type, i);
	} catch {
		return undefined; // nothing connected to an optional input
	}
	const node = Array.isArray(connected) ? connected[0] : connected;
	return accepts(node) ? node : undefined;
}
