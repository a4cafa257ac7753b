// The node's settings panel as n8n receives it: fields, defaults and the queue-mode notice.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import type { INodeProperties, INodeTypeDescription } from 'n8n-workflow';

const NODE = path.resolve(__dirname, '../../../nodes/LlmWithMemory/LlmWithMemory.node.ts');
const DESCRIPTION = path.resolve(__dirname, '../../../nodes/LlmWithMemory/description.ts');

/** Loads the node fresh, as n8n does at startup, with EXECUTIONS_MODE set as given. */
function load(mode: string | undefined): INodeTypeDescription {
	const saved = process.env.EXECUTIONS_MODE;
	if (mode === undefined) delete process.env.EXECUTIONS_MODE;
	else process.env.EXECUTIONS_MODE = mode;
	try {
		for (const f of [NODE, DESCRIPTION]) delete require.cache[require.resolve(f)];
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const { LlmWithMemory } = require(NODE);
		return new LlmWithMemory().description;
	} finally {
		if (saved === undefined) delete process.env.EXECUTIONS_MODE;
		else process.env.EXECUTIONS_MODE = saved;
	}
}

const byName = (d: INodeTypeDescription, name: string) =>
	d.properties.filter((p) => p.name === name);

describe('LLM with Memory settings panel', () => {
	it('declares the Model input like the Basic LLM Chain and n8n metadata', () => {
		const d = load(undefined);
		assert.equal(d.name, 'llmWithMemory');
		assert.equal(d.displayName, 'LLM with Memory');
		// The inputs follow the parameters: the Embedding input only with Long-Term Memory (which may
		// use an embedding model; without one it recalls lexically).
		const inputsFor = (parameter: object) => {
			const body = String(d.inputs)
				.replace(/^=\{\{/, '')
				.replace(/\}\}$/, '');
			return new Function('$parameter', `return (${body});`)(parameter);
		};
		const model = {
			type: 'ai_languageModel',
			displayName: 'Model',
			required: true,
			maxConnections: 1,
		};
		assert.deepEqual(inputsFor({}), ['main', model]);
		assert.deepEqual(inputsFor({ longTermMemory: true }), [
			'main',
			model,
			{ type: 'ai_embedding', displayName: 'Embedding', required: false, maxConnections: 1 },
		]);
		assert.deepEqual(d.icon, {
			light: 'file:llmWithMemory.svg',
			dark: 'file:llmWithMemory.dark.svg',
		});
		assert.match(String(d.subtitle), /Node memory/);
		assert.deepEqual(d.credentials?.[0].displayOptions, {
			show: { storage: ['s3'], memoryMode: ['conversation', 'node'] },
		});
	});

	it('Memory Mode offers None, Conversation and Node, each described', () => {
		const [mode] = byName(load(undefined), 'memoryMode');
		assert.equal(mode.default, 'conversation');
		const options = mode.options as Array<{ name: string; value: string; description: string }>;
		assert.deepEqual(options.map((o) => o.value).sort(), ['conversation', 'node', 'none']);
		for (const o of options) assert.ok(o.description.length > 20, o.name);
	});

	it('prompt and session ID follow n8n’s Chat Trigger idioms', () => {
		const d = load(undefined);
		const [auto] = byName(d, 'text').filter(
			(p) => p.displayOptions?.show?.promptType?.[0] === 'auto',
		);
		assert.equal(auto.default, '={{ $json.chatInput }}');
		assert.deepEqual(auto.disabledOptions, { show: { promptType: ['auto'] } });
		const ids = byName(d, 'conversationId');
		const fromInput = ids.find(
			(p) => p.displayOptions?.show?.conversationIdType?.[0] === 'fromInput',
		) as INodeProperties;
		assert.equal(fromInput.default, '={{ $json.sessionId }}');
		assert.deepEqual(
			byName(d, 'conversationIdType')[0].options?.map((o) => (o as { name: string }).name),
			['Connected Chat Trigger Node', 'Define Below'],
		);
		const options = byName(d, 'options').find((p) =>
			p.displayOptions?.show?.memoryMode?.includes('node'),
		) as INodeProperties;
		assert.deepEqual(
			(options.options as INodeProperties[]).map((o) => o.name),
			[
				'gzip',
				'expireAfterDays',
				'binaryPropertyNames',
				'requireSessionId',
				'maxHistoryTokens',
				'maxTokensPerFile',
				'messageId',
				'parentMessageId',
				'pdfAndAudio',
				'startNewThread',
				'summaryMaxTokens',
				'summaryThreshold',
				'historyOverflow',
				'window',
			],
		);
		assert.deepEqual(
			[
				(options.options as INodeProperties[]).find((o) => o.name === 'historyOverflow')?.default,
				(
					(options.options as INodeProperties[]).find((o) => o.name === 'historyOverflow')
						?.options as Array<{ name: string }>
				).map((o) => o.name),
			],
			['dropOldest', ['Drop Oldest Turns', 'Summarize Older Turns']],
		);
		const option = (name: string) =>
			(options.options as INodeProperties[]).find((o) => o.name === name) as INodeProperties;
		assert.equal(option('maxTokensPerFile').default, 2000);
		assert.deepEqual(
			[
				option('pdfAndAudio').default,
				option('pdfAndAudio').options?.map((o) => (o as { name: string }).name),
			],
			['text', ['Send as Text', 'Send as File Part']],
		);
		assert.equal(
			(options.options as INodeProperties[]).find((o) => o.name === 'maxHistoryTokens')?.default,
			2000,
		);
	});

	it('Versioned Data: off by default and shown with memory; Initial Data and its options when on', () => {
		const d = load(undefined);
		const [toggle] = byName(d, 'versionedData');
		assert.deepEqual([toggle.type, toggle.default], ['boolean', false]);
		assert.deepEqual(toggle.displayOptions, { show: { memoryMode: ['conversation', 'node'] } });
		const on = { memoryMode: ['conversation', 'node'], versionedData: [true] };
		const [initial] = byName(d, 'initialData');
		assert.deepEqual([initial.type, initial.default], ['json', '']);
		assert.deepEqual(initial.displayOptions, { show: on });
		const [options] = byName(d, 'versionedDataOptions');
		assert.deepEqual(options.displayOptions, { show: on });
		const fields = options.options as INodeProperties[];
		assert.deepEqual(
			fields.map((o) => [o.name, o.default]),
			[
				['branch', 'main'],
				['changeMethod', 'auto'],
				['historyEntries', 5],
				['jsonSchema', ''],
				['keepLastVersions', 20],
			],
		);
	});

	it('Remember Facts: off by default and shown with memory; the budget and Learn After with it; the User ID fields shown once whichever switch is on', () => {
		const d = load(undefined);
		const memory = { memoryMode: ['conversation', 'node'] };
		const [toggle] = byName(d, 'rememberFacts');
		assert.deepEqual([toggle.type, toggle.default], ['boolean', false]);
		assert.deepEqual(toggle.displayOptions, { show: memory });
		const on = { ...memory, rememberFacts: [true] };
		const [budget] = byName(d, 'factsTokenBudget');
		assert.deepEqual([budget.type, budget.default], ['number', 400]);
		assert.deepEqual(budget.displayOptions, { show: on });
		const [options] = byName(d, 'factsOptions');
		assert.deepEqual(options.displayOptions, { show: on });
		assert.deepEqual(
			(options.options as INodeProperties[]).map((o) => [o.name, o.default]),
			[['learnAfterTokens', 800]],
		);
		// The User ID fields: under Long-Term Memory when it is on, under Remember Facts when only it is.
		for (const name of ['longTermUserIdSource', 'longTermEmptyUserId']) {
			const shows = byName(d, name).map((p) => p.displayOptions?.show);
			assert.deepEqual(shows, [
				{ ...memory, longTermMemory: [true] },
				{ ...on, longTermMemory: [false] },
			]);
		}
		assert.deepEqual(
			byName(d, 'longTermUserId').map((p) => p.displayOptions?.show),
			[
				{ ...memory, longTermMemory: [true], longTermUserIdSource: ['define'] },
				{ ...on, longTermMemory: [false], longTermUserIdSource: ['define'] },
			],
		);
	});

	it('Summary Max Tokens and Summary Threshold show only with Summarize Older Turns, in both nodes', () => {
		const options = byName(load(undefined), 'options')[0].options as INodeProperties[];
		for (const name of ['summaryMaxTokens', 'summaryThreshold']) {
			const o = options.find((x) => x.name === name)!;
			assert.deepEqual(o.displayOptions, { show: { historyOverflow: ['summarize'] } }, name);
		}
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const { LlmMemoryStore } = require(
			path.resolve(__dirname, '../../../nodes/LlmMemoryStore/LlmMemoryStore.node.ts'),
		) as typeof import('../../../nodes/LlmMemoryStore/LlmMemoryStore.node');
		const store = new LlmMemoryStore().description;
		const storeOptions = byName(store, 'options')[0].options as INodeProperties[];
		for (const name of ['summaryMaxTokens', 'summaryThreshold']) {
			const o = storeOptions.find((x) => x.name === name)!;
			assert.deepEqual(o.displayOptions, { show: { '/historyOverflow': ['summarize'] } }, name);
		}
	});

	it('shows the queue-mode notice for Local Disk only when n8n runs in queue mode', () => {
		assert.deepEqual(byName(load(undefined), 'queueModeNotice'), []);
		assert.deepEqual(byName(load('regular'), 'queueModeNotice'), []);
		const [notice] = byName(load('queue'), 'queueModeNotice');
		assert.equal(notice.type, 'notice');
		assert.match(
			notice.displayName,
			/queue mode.*different workers.*Use S3 storage, or set Folder to one folder.*share/,
		);
		assert.deepEqual(notice.displayOptions, {
			show: { storage: ['localDisk'], memoryMode: ['conversation', 'node'] },
		});
	});
});
