// The LLM Memory Manager's Facts resource through n8n-core's WorkflowExecute, on facts LLM with Memory
// learned (its scripted model answers extractions as the demo model does, demo/facts.ts): Get Facts,
// a person's Add, Edit and Retire (evidence: who and when) reaching the model at the next turn, Facts
// History, Facts Diff and Roll Back Facts; errors name the field or the fact.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { chatCalls, factsSectionOf, scriptFactsModel } from '../support/facts-model';
import { manage, ok } from '../support/manager-runs';
import { nodeTypes, workflow } from '../support/manager-workflows';
import { scriptedModelLog } from '../support/scripted-model';
import { tempDir } from '../support/storages';
import { runWorkflow } from '../support/workflow-harness';

type Json = Record<string, any>;

const WF = 'wf-facts-manager';

/** One turn of `user` through LLM with Memory with Remember Facts (read after every turn). */
async function say(folder: string, text: string, session: string, user: string): Promise<Json> {
	const wf = workflow(folder, {
		id: WF,
		llms: [
			{
				name: 'A',
				id: 'node-a',
				params: {
					memoryMode: 'conversation',
					rememberFacts: true,
					longTermUserId: '={{ $json.userId }}',
					factsOptions: { learnAfterTokens: 0 },
				},
			},
		],
	});
	const items: INodeExecutionData[] = [
		{ json: { chatInput: text, sessionId: session, userId: user } },
	];
	const r = await runWorkflow(wf, { nodeTypes, triggerItems: items });
	assert.equal(r.status, 'success', r.error?.message);
	return r.output('A')[0].json as Json;
}

/** The Manager's Facts resource with `params`, for `user` (or none: the item's session). */
async function facts(folder: string, params: INodeParameters, user?: string, onError = false) {
	const r = await manage(
		folder,
		{ resource: 'facts', ...(user ? { factsUserId: user } : {}), ...params },
		[{ json: { sessionId: 's1' } }],
		{ id: WF, ...(onError ? { onError: 'continueRegularOutput' as const } : {}) },
	);
	return r;
}

const lastSection = () => factsSectionOf(chatCalls('A Model').at(-1)!);

afterEach(() => scriptedModelLog.clear());

describe('LLM Memory Manager: Facts', () => {
	it('Get Facts lists what was learned with its evidence; a person’s edit and retirement reach the model at the next turn', async () => {
		scriptFactsModel('A Model');
		const folder = tempDir('facts-manager');
		const first = await say(folder, 'I live in Lyon.', 'c1', 'alice');
		await say(folder, 'I have a dog named Biscuit.', 'c1', 'alice');
		const [got] = ok(await facts(folder, { operation: 'getFacts' }, 'alice'));
		assert.deepEqual([got.memoryBaseId, got.userId, got.version, got.count], [WF, 'alice', 2, 2]);
		assert.deepEqual(
			got.facts.map((f: Json) => [f.id, f.text, f.status]),
			[
				['f1', 'Lives in Lyon', 'current'],
				['f2', 'Has a dog named Biscuit', 'current'],
			],
		);
		const evidence = got.facts[0].evidence;
		assert.deepEqual(
			[
				evidence.kind,
				evidence.quote,
				evidence.messageId,
				evidence.conversationId,
				evidence.workflowId,
			],
			['quote', 'I live in Lyon', `${first.messageId}:user`, 'c1', WF],
		);

		const [edited] = ok(
			await facts(
				folder,
				{
					operation: 'editFact',
					factId: 'f1',
					factText: 'Lives in Bergen',
					editedBy: 'ada@example.com',
					options: { note: 'confirmed on the phone' },
				},
				'alice',
			),
		);
		assert.deepEqual([edited.replaced.status, edited.replaced.supersededBy], ['superseded', 'f3']);
		assert.deepEqual(
			[edited.fact.id, edited.fact.text, edited.fact.evidence.by, edited.fact.evidence.note],
			['f3', 'Lives in Bergen', 'ada@example.com', 'confirmed on the phone'],
		);
		assert.equal(edited.version, 3);
		await say(folder, 'Where do I live?', 'c2', 'alice');
		assert.match(lastSection(), /Lives in Bergen/);
		assert.doesNotMatch(lastSection(), /Lyon/);

		const [retired] = ok(
			await facts(
				folder,
				{ operation: 'retireFact', factId: 'f2', retireReason: 'Biscuit was rehomed' },
				'alice',
			),
		);
		assert.deepEqual(
			[retired.retired.status, retired.retired.retiredReason, retired.retired.retiredEvidence.by],
			['retired', 'Biscuit was rehomed', 'workflow manager test'],
			'Edited By defaults to the workflow’s name',
		);
		await say(folder, 'Anything else?', 'c2', 'alice');
		assert.doesNotMatch(lastSection(), /Biscuit/);
		const [all] = ok(
			await facts(folder, { operation: 'getFacts', includeSuperseded: true }, 'alice'),
		);
		assert.deepEqual(
			all.facts.map((f: Json) => `${f.id} ${f.status}`),
			['f1 superseded', 'f2 retired', 'f3 current'],
		);
	});

	it('Add Fact, Facts History, Facts Diff and Roll Back Facts; the rollback reaches the model', async () => {
		scriptFactsModel('A Model');
		const folder = tempDir('facts-manager');
		await say(folder, 'I live in Lyon.', 'c1', 'bea');
		ok(
			await facts(
				folder,
				{ operation: 'editFact', factId: 'f1', factText: 'Lives in Rome', editedBy: 'ops' },
				'bea',
			),
		);
		const [added] = ok(
			await facts(
				folder,
				{
					operation: 'addFact',
					factText: 'Prefers tea',
					editedBy: 'ops',
					options: { validFrom: '2026-01-02T03:04:05.000Z' },
				},
				'bea',
			),
		);
		assert.deepEqual(
			[added.added.id, added.added.validFrom, added.added.evidence.kind, added.version],
			['f3', '2026-01-02T03:04:05.000Z', 'person', 3],
		);
		const [history] = ok(
			await facts(folder, { operation: 'factsHistory', returnAll: true }, 'bea'),
		);
		assert.deepEqual(
			history.entries.map((e: Json) => [e.version, e.summary]),
			[
				[3, 'f3 added by ops'],
				[2, 'f1 → f2 edited by ops'],
				[1, 'Read 1 turn: added f1'],
			],
		);
		const [limited] = ok(await facts(folder, { operation: 'factsHistory', limit: 1 }, 'bea'));
		assert.equal(limited.entries.length, 1);
		const [diff] = ok(
			await facts(folder, { operation: 'factsDiff', fromVersion: 1, toVersion: 2 }, 'bea'),
		);
		assert.deepEqual([diff.from, diff.to], [1, 2]);
		assert.ok(diff.changes.length > 0 && diff.patch.length > 0, JSON.stringify(diff));
		assert.ok(
			diff.changes.some((c: string) => c.includes('Lives in Rome')),
			diff.changes.join('\n'),
		);

		const [back] = ok(
			await facts(folder, { operation: 'rollbackFacts', factsVersion: 1, editedBy: 'ops' }, 'bea'),
		);
		assert.equal(back.rolledBackTo, 1);
		assert.equal(back.version, 4);
		const current = back.facts.filter((f: Json) => f.status === 'current').map((f: Json) => f.text);
		assert.deepEqual(current, ['Lives in Lyon']);
		await say(folder, 'Where do I live?', 'c2', 'bea');
		assert.match(lastSection(), /Lives in Lyon/);
		assert.doesNotMatch(lastSection(), /Rome|tea/);
	});

	it('a conversation’s own facts by Session ID; errors name what is missing or which fact', async () => {
		scriptFactsModel('A Model');
		const folder = tempDir('facts-manager');
		const wf = workflow(folder, {
			id: WF,
			llms: [
				{
					name: 'A',
					id: 'node-a',
					params: {
						memoryMode: 'conversation',
						rememberFacts: true,
						factsOptions: { learnAfterTokens: 0 },
					},
				},
			],
		});
		const turn = await runWorkflow(wf, {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'I own a red bicycle.', sessionId: 's1' } }],
		});
		assert.equal(turn.status, 'success');
		const [own] = ok(await facts(folder, { operation: 'getFacts' }));
		assert.deepEqual([own.conversationId, own.facts[0]?.text], ['s1', 'Owns a red bicycle']);

		const unknown = await facts(folder, {
			operation: 'retireFact',
			factId: 'f9',
			retireReason: 'x',
		});
		assert.equal(unknown.status, 'error');
		assert.match(String(unknown.error?.message), /Fact "f9" does not exist/);
		assert.match(String(unknown.error?.description), /Get Facts lists the current facts/);
		const continued = await facts(
			folder,
			{ operation: 'editFact', factId: 'f9', factText: 'y' },
			undefined,
			true,
		);
		assert.match(String(continued.output('Manager')[0].json.error), /Fact "f9" does not exist/);

		const r = await manage(folder, { resource: 'facts', operation: 'getFacts' }, [{ json: {} }], {
			id: WF,
		});
		assert.equal(r.status, 'error');
		assert.match(String(r.error?.message), /Facts need a User ID or a Session ID/);
		const empty = await facts(
			folder,
			{ operation: 'addFact', factText: '  ', editedBy: 'ops' },
			'z',
		);
		assert.equal(empty.status, 'error');
		assert.match(String(empty.error?.message), /text/);
	});
});
