import type { NodeParameterValue } from 'n8n-workflow';

/** Display conditions used by more than one field, named once (plain values: credentials accept those too). */
type Show = Record<string, NodeParameterValue[]>;

export const WITH_MEMORY: Show = { memoryMode: ['conversation', 'node'] };
export const WITHOUT_MEMORY: Show = { memoryMode: ['none'] };
export const ON_LOCAL_DISK: Show = { storage: ['localDisk'] };
export const ON_S3: Show = { storage: ['s3'] };
export const ID_FROM_CHAT_TRIGGER: Show = { conversationIdType: ['fromInput'] };
export const ID_DEFINED_BELOW: Show = { conversationIdType: ['customKey'] };
