// One word per thing across the nodes' panels: "Session ID" wherever a Chat Trigger session is meant,
// a notice under Memory Mode saying what the chosen mode does, and the same turn window by default.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import type { INodeProperties, INodeType } from 'n8n-workflow';

/** A node class (required with its extension: "X.node" alone resolves to the codex JSON beside it). */
function node(file: string, name: string): INodeType {
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const Node = require(path.resolve(__dirname, `../../../nodes/${file}.ts`))[
		name
	] as new () => INodeType;
	return new Node();
}

const NODES: Array<[string, INodeType]> = [
	['LLM with Memory', node('LlmWithMemory/LlmWithMemory.node', 'LlmWithMemory')],
	['LLM Memory Store', node('LlmMemoryStore/LlmMemoryStore.node', 'LlmMemoryStore')],
	['LLM Memory Manager', node('LlmMemoryManager/LlmMemoryManager.node', 'LlmMemoryManager')],
	['Memory Base', node('MemoryBase/MemoryBase.node', 'MemoryBase')],
	['Memory Base Tool', node('MemoryBase/MemoryBaseTool.node', 'MemoryBaseTool')],
];

/** Every field of a panel, collections' and fixed collections' fields included. */
function allFields(props: readonly INodeProperties[]): INodeProperties[] {
	return props.flatMap((p) => {
		const nested = (p.options ?? []).flatMap((o) =>
			'type' in o ? allFields([o as INodeProperties]) : 'values' in o ? allFields(o.values) : [],
		);
		return [p, ...nested];
	});
}

const fields = (node: INodeType) => allFields(node.description.properties);
const store = NODES[1][1].description.properties;
const llm = NODES[0][1].description.properties;

describe('Session ID: one word for one thing in every panel', () => {
	for (const [label, node] of NODES)
		it(`${label}: no field calls the chat session a "conversation ID"`, () => {
			for (const f of fields(node)) {
				const text = `${f.displayName} ${f.description ?? ''} ${f.hint ?? ''}`;
				assert.doesNotMatch(text, /conversation id/i, `${label}: ${f.name}`);
			}
			for (const f of fields(node).filter((f) => f.name === 'conversationIdType'))
				assert.equal(f.displayName, 'Session ID', `${label}`);
		});

	it('the LLM Memory Store starts with the Session ID, as n8n’s memory panels do', () => {
		const names = store.filter((p) => p.type !== 'notice').map((p) => p.name);
		assert.deepEqual(names.slice(0, 3), ['conversationIdType', 'conversationId', 'conversationId']);
		assert.ok(names.indexOf('memoryMode') > names.indexOf('conversationId'));
	});

	it('a notice under Memory Mode explains the chosen mode (and None in LLM with Memory)', () => {
		for (const props of [store, llm]) {
			for (const mode of ['conversation', 'node']) {
				const notice = props.find(
					(p) => p.type === 'notice' && p.displayOptions?.show?.memoryMode?.[0] === mode,
				);
				assert.ok(notice, mode);
				assert.match(notice.displayName, /session ID/);
			}
		}
		const none = llm.find(
			(p) => p.type === 'notice' && p.displayOptions?.show?.memoryMode?.[0] === 'none',
		);
		assert.match(none?.displayName ?? '', /stands alone/);
		const conversation = llm.find((p) => p.name === 'conversationModeNotice');
		assert.match(conversation?.displayName ?? '', /Require Session ID/);
	});

	it('the turn window: 10 in both nodes when set; LLM with Memory says why it has none unset', () => {
		const window = allFields(llm).find((p) => p.name === 'window');
		const length = store.find((p) => p.name === 'contextWindowLength');
		assert.equal(window?.default, length?.default);
		assert.match(window?.description ?? '', /Not set: the Max History Tokens budget alone/);
		assert.match(length?.description ?? '', /LLM with Memory has no turn window unless one is set/);
	});
});
