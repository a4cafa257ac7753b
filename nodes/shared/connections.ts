import type { AINodeConnectionType, IExecuteFunctions } from 'n8n-workflow';

/** The sub-node connected to an AI input (n8n hands a single connection over alone or in an array). */
export async function connectedSubNode(
	ctx: IExecuteFunctions,
	type: AINodeConnectionType,
): Promise<unknown> {
	const connected: unknown = await ctx.getInputConnectionData(type, 0);
	return Array.isArray(connected) ? connected[0] : connected;
}
