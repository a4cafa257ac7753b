import type { IExecuteFunctions } from 'n8n-workflow';

/**
 * A field of the workflow's Chat Trigger output (sessionId, chatInput, metadata), read by name as n8n's
 * own memory nodes do: nodes behind an AI Agent get items without it. Undefined without a Chat Trigger.
 */
export function chatTriggerField(ctx: IExecuteFunctions, i: number, field: string): unknown {
	const trigger = ctx.getChatTrigger?.();
	if (!trigger) return undefined;
	const name = trigger.name.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
	return ctx.evaluateExpression(`{{ $('${name}').first().json.${field} }}`, i);
}
