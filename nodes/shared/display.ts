import type { IDisplayOptions, NodeParameterValue } from 'n8n-workflow';

/** A field's display condition (what `displayOptions.show` takes). */
export type Show = IDisplayOptions['show'];

/** Display conditions used by more than one field, named once (plain values: credentials accept those too). */
type Condition = Record<string, NodeParameterValue[]>;

export const WITH_MEMORY: Condition = { memoryMode: ['conversation', 'node'] };
export const WITHOUT_MEMORY: Condition = { memoryMode: ['none'] };
export const ON_LOCAL_DISK: Condition = { storage: ['localDisk'] };
export const ON_S3: Condition = { storage: ['s3'] };
export const ON_ENCRYPTION: Condition = { encryption: ['key'] };
export const ID_FROM_CHAT_TRIGGER: Condition = { conversationIdType: ['fromInput'] };
export const ID_DEFINED_BELOW: Condition = { conversationIdType: ['customKey'] };
export const PROMPT_FROM_CHAT_TRIGGER: Condition = { promptType: ['auto'] };
export const PROMPT_DEFINED_BELOW: Condition = { promptType: ['define'] };
/** The LLM Memory Store's Tool Results in Memory = Keep (its Max Characters per Tool Result shows). */
export const KEEPING_TOOL_RESULTS: Condition = { toolResults: ['keep'] };

/** Fields of some operations (the Memory Base's Operation list). */
export function showForOperations(...operations: string[]): Condition {
	return { operation: operations };
}

/** Fields of some operations of one resource (n8n's resource/operation pattern). */
export function showFor(resource: string, ...operations: string[]): Condition {
	return { resource: [resource], ...showForOperations(...operations) };
}
