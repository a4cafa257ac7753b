// Facts, the engine: only quoted operations are applied; updates supersede and keep history; retiring;
// malformed answers and failing models apply nothing and leave the turns unread; batching by tokens;
// rollback; edits by hand; another user's facts are never read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	factsRoot,
	FactsReplyError,
	InvalidIdError,
	LocalDiskStorage,
	parseReply,
	UnknownFactError,
} from '../../../src/internal';
import { tempDir } from '../../support/storages';
import { standInExtractor } from '../../support/fact-extractor';
import { factsOn, ops, scripted, SOURCE, turn } from './support';

const force = true;

describe('facts: learning from turns', () => {
	it('applies only operations whose quote is in the turns read; the rest are dropped and counted', async () => {
		const facts = factsOn();
		const messages = turn('m1', 'I have a dog named Biscuit and I live in Lisbon.');
		const { extract } = scripted(
			ops(
				{
					op: 'add',
					text: 'Has a dog named Biscuit',
					quote: 'a dog named  BISCUIT',
					messageId: 'm1:user',
				},
				{ op: 'add', text: 'Owns a yacht', quote: 'I own a yacht in Monaco', messageId: 'm1:user' },
				{ op: 'add', text: 'Lives in Lisbon', quote: 'I live in Lisbon' },
				{ op: 'add', text: 'Said noted', quote: 'Noted.' }, // the assistant's words: not the user's
				{ op: 'add', text: 'Dog', quote: 'dog' }, // too short to prove anything
				{ op: 'fly', text: 'x', quote: 'I have a dog named' },
			),
		);
		const r = await facts.learn({ extract, source: SOURCE, messages, force });
		assert.deepEqual(
			r.added.map((f) => f.text),
			['Has a dog named Biscuit', 'Lives in Lisbon'],
		);
		assert.deepEqual(r.dropped, { invalid: 1, unquoted: 3, unknownFact: 0, repeat: 0, full: 0 });
		const [dog] = r.added;
		assert.equal(dog.evidence.kind, 'quote');
		assert.deepEqual(
			dog.evidence.kind === 'quote' && [
				dog.evidence.message_id,
				dog.evidence.conversation_id,
				dog.evidence.workflow_id,
			],
			['m1:user', 'c1', 'wf'],
		);
		assert.equal(dog.valid_from, messages[0].at);
		const stored = await facts.get();
		assert.deepEqual(
			stored.facts.map((f) => f.text),
			['Has a dog named Biscuit', 'Lives in Lisbon'],
		);
		assert.equal(stored.cursors[0].message_id, 'm1', 'the turn is read');
	});

	it('an update supersedes the old fact, which stays, marked, in the document and in history', async () => {
		const facts = factsOn();
		const { extract } = standInExtractor();
		await facts.learn({
			extract,
			source: SOURCE,
			messages: turn('m1', 'I live in Lisbon.'),
			force,
		});
		const r = await facts.learn({
			extract,
			source: SOURCE,
			messages: turn('m2', 'We moved to Porto last week.'),
			force,
		});
		assert.deepEqual(
			r.updated.map((u) => [u.from.id, u.from.text, u.to.id, u.to.text]),
			[['f1', 'Lives in Lisbon', 'f2', 'Lives in Porto last week']],
		);
		assert.deepEqual(
			(await facts.get()).facts.map((f) => f.text),
			['Lives in Porto last week'],
		);
		const all = await facts.get({ all: true });
		assert.deepEqual(
			all.facts.map((f) => [f.id, f.status, f.superseded?.by]),
			[
				['f1', 'superseded', 'f2'],
				['f2', 'current', undefined],
			],
		);
		const history = await facts.history();
		assert.deepEqual(
			history.entries.map((e) => e.summary),
			['Read 1 turn: updated f1 → f2', 'Read 1 turn: added f1'],
		);
		assert.deepEqual(
			(await facts.getVersion(1)).facts.map((f) => [f.text, f.status]),
			[['Lives in Lisbon', 'current']],
		);
		const diff = await facts.diff(1, 2);
		assert.ok(
			diff.summary.some((l) => l.includes('/facts/0/superseded')),
			diff.summary.join('\n'),
		);
	});

	it('retires a fact with its reason and evidence; it never reaches the section again', async () => {
		const facts = factsOn();
		const { extract } = standInExtractor();
		await facts.learn({
			extract,
			source: SOURCE,
			messages: turn('m1', 'I have a red car.'),
			force,
		});
		const r = await facts.learn({
			extract,
			source: SOURCE,
			messages: turn('m2', 'Sadly I sold my car yesterday.'),
			force,
		});
		assert.deepEqual(
			r.retired.map((f) => [f.id, f.retired?.reason]),
			[['f1', 'sold their car yesterday']],
		);
		const all = await facts.get({ all: true });
		assert.equal(all.facts[0].status, 'retired');
		assert.equal(all.facts[0].retired?.evidence.kind, 'quote');
		const { doc } = await facts.read();
		assert.equal(facts.section(doc, 500, { count: (t) => t.length }).section, '');
	});

	it('an update or retirement of a fact that is not current is dropped', async () => {
		const facts = factsOn();
		const { extract } = scripted(
			ops({ op: 'add', text: 'Lives in Lisbon', quote: 'I live in Lisbon' }),
			ops(
				{ op: 'retire', id: 'f9', reason: 'x', quote: 'I moved to Porto' },
				{ op: 'update', id: 'f1', text: 'Lives in Porto', quote: 'I moved to Porto' },
				{ op: 'retire', id: 'f1', reason: 'moved', quote: 'I moved to Porto' },
			),
		);
		await facts.learn({ extract, source: SOURCE, messages: turn('m1', 'I live in Lisbon'), force });
		const r = await facts.learn({
			extract,
			source: SOURCE,
			messages: turn('m2', 'I moved to Porto'),
			force,
		});
		assert.equal(r.updated.length, 1);
		assert.equal(r.dropped.unknownFact, 2, 'f9 does not exist; f1 was superseded by the update');
	});

	it('a malformed answer applies nothing and leaves the turns unread; the next extraction reads them', async () => {
		for (const bad of [
			'Sure! Here are the facts.',
			'{"operations": [',
			'{"facts": []}',
			'```json\n[1, 2\n```',
		]) {
			const facts = factsOn();
			const messages = turn('m1', 'I have a cat named Tom.');
			const r = await facts.learn({
				extract: scripted(bad).extract,
				source: SOURCE,
				messages,
				force,
			});
			assert.equal(r.extracted, true);
			assert.match(r.error ?? '', /could not be read/);
			assert.equal(r.readTurns, 0);
			assert.equal((await facts.get()).version, null, 'nothing was saved');
			const again = await facts.learn({
				extract: standInExtractor().extract,
				source: SOURCE,
				messages,
				force,
			});
			assert.deepEqual(
				again.added.map((f) => f.text),
				['Has a cat named Tom'],
			);
		}
		assert.throws(() => parseReply('not json'), FactsReplyError);
		assert.doesNotMatch(new FactsReplyError('it is not JSON').message, /cat/);
	});

	it('a model that fails: nothing applied, the turns stay unread, the error says why', async () => {
		const facts = factsOn();
		const extract = async () => {
			throw new Error('503 from the model');
		};
		const messages = turn('m1', 'I have a cat named Tom.');
		const r = await facts.learn({ extract, source: SOURCE, messages, force });
		assert.match(r.error ?? '', /model call failed: 503/);
		assert.equal((await facts.get()).version, null);
		const later = await facts.learn({
			extract: standInExtractor().extract,
			source: SOURCE,
			messages: [...messages, ...turn('m2', 'How are you?')],
			force,
		});
		assert.equal(later.readTurns, 2, 'the failed turn is read with the next one');
		assert.equal(later.added.length, 1);
	});

	it('batches by tokens: at most one call per 5 chat-length turns; on demand below the threshold', async () => {
		const facts = factsOn();
		const { extract, calls } = standInExtractor();
		const answer = 'That sounds lovely. '.repeat(28); // about 140 tokens, a chat-length answer
		let thread: ReturnType<typeof turn> = [];
		for (let i = 0; i < 50; i++) {
			thread = [
				...thread,
				...turn(`t${i}`, `Turn ${i}: I like topic number ${i} a lot, tell me more.`, answer),
			];
			await facts.learn({ extract, source: SOURCE, messages: thread.slice(-96) });
		}
		assert.ok(calls.length >= 5 && calls.length <= 10, `${calls.length} calls for 50 turns`);
		const below = await facts.learn({ extract, source: SOURCE, messages: thread });
		assert.match(below.reason ?? '', /no unread turns|below the threshold/);
		const more = [...thread, ...turn('x', 'I have a piano.')];
		const waits = await facts.learn({ extract, source: SOURCE, messages: more });
		assert.equal(waits.extracted, false);
		assert.match(waits.reason ?? '', /below the threshold of 800 tokens/);
		const now = await facts.learn({ extract, source: SOURCE, messages: more, force });
		assert.equal(now.added.at(-1)?.text, 'Has a piano');
		const all = (await facts.get()).facts.map((f) => f.text);
		assert.equal(
			all.filter((t) => t.startsWith('Likes topic number')).length,
			50,
			'every turn was read once',
		);
	});

	it('short turns are read too: the unread-turn limit runs an extraction whatever their tokens', async () => {
		const facts = factsOn();
		const { extract, calls } = standInExtractor();
		let thread: ReturnType<typeof turn> = [];
		for (let i = 0; i < 24; i++) {
			thread = [...thread, ...turn(`s${i}`, `I like ${i}s`, 'ok')];
			await facts.learn({ extract, source: SOURCE, messages: thread });
		}
		assert.equal(calls.length, 2, 'every 12 short turns');
	});
});

describe('facts: a person sees and corrects them', () => {
	it('adds, edits (the old fact superseded) and retires by hand, each with who and when', async () => {
		const facts = factsOn(undefined, { now: () => new Date('2026-04-01T09:00:00Z') });
		const added = await facts.add({ text: 'Is allergic to peanuts', by: 'nurse@clinic' });
		assert.deepEqual(added.evidence, {
			kind: 'person',
			by: 'nurse@clinic',
			at: '2026-04-01T09:00:00.000Z',
		});
		const { from, to } = await facts.edit(added.id, {
			text: 'Is allergic to peanuts and shellfish',
			by: 'dr@clinic',
			note: 'tested',
		});
		assert.deepEqual(
			[from.status, to.status, from.superseded?.by],
			['superseded', 'current', to.id],
		);
		const retired = await facts.retire(to.id, { reason: 'outgrew it', by: 'dr@clinic' });
		assert.equal(retired.status, 'retired');
		await assert.rejects(facts.retire(to.id, { reason: 'again', by: 'x' }), UnknownFactError);
		await assert.rejects(facts.edit('f99', { text: 't', by: 'x' }), UnknownFactError);
		await assert.rejects(facts.add({ text: ' ', by: 'x' }), /Invalid text/);
		assert.deepEqual(
			(await facts.history()).entries.map((e) => e.summary),
			['f2 retired by dr@clinic', 'f1 → f2 edited by dr@clinic', 'f1 added by nurse@clinic'],
		);
	});

	it('a rollback restores earlier beliefs as a new version; the turns read since stay read', async () => {
		const facts = factsOn();
		const { extract, calls } = standInExtractor();
		const m1 = turn('m1', 'I live in Lisbon.');
		await facts.learn({ extract, source: SOURCE, messages: m1, force });
		const m2 = [...m1, ...turn('m2', 'I moved to Berlin. I have a new job.')];
		await facts.learn({ extract, source: SOURCE, messages: m2, force });
		assert.deepEqual(
			(await facts.get()).facts.map((f) => f.text),
			['Lives in Berlin', 'Has a new job'],
		);
		const back = await facts.rollback(1, { by: 'admin' });
		assert.equal(back.version, 3);
		assert.deepEqual(
			back.facts.map((f) => [f.text, f.status]),
			[['Lives in Lisbon', 'current']],
		);
		const again = await facts.learn({ extract, source: SOURCE, messages: m2, force });
		assert.equal(again.reason, 'no unread turns', 'the rolled-back turn is not learned again');
		assert.equal(calls.length, 2);
		assert.equal((await facts.history()).entries[0].summary, 'Rolled back to v1 by admin');
		const next = await facts.add({ text: 'Likes tea', by: 'admin' });
		assert.equal(next.id, 'f4', 'IDs are never reused');
	});

	it("another user's facts are never read: each user has a folder of their own", async () => {
		const storage = new LocalDiskStorage({ root: tempDir('facts') });
		const alice = factsOn(storage);
		const bob = factsOn(storage, { subject: { userId: 'bob' } });
		const { extract } = standInExtractor();
		await alice.learn({
			extract,
			source: SOURCE,
			messages: turn('a1', 'I have a secret garden.'),
			force,
		});
		const seen: string[] = [];
		const spy = Object.assign(Object.create(storage), {
			get: (key: string, o?: object) => (seen.push(key), storage.get(key, o as never)),
			list: (prefix: string) => (seen.push(prefix), storage.list(prefix)),
		});
		const bobSpied = factsOn(spy, { subject: { userId: 'bob' } });
		const { extract: bobExtract, calls } = standInExtractor();
		await bobSpied.learn({
			extract: bobExtract,
			source: { conversationId: 'b1' },
			messages: turn('b1', 'I have a boat.'),
			force,
		});
		assert.ok(seen.length > 0 && seen.every((k) => !k.includes('/users/alice/')), seen.join('\n'));
		assert.doesNotMatch(JSON.stringify(calls), /garden/);
		assert.deepEqual(
			(await bob.get()).facts.map((f) => f.text),
			['Has a boat'],
		);
		assert.deepEqual((await storage.list(factsRoot())).map((o) => o.key.split('/')[3]).sort(), [
			...Array(3).fill('alice'),
			...Array(3).fill('bob'),
		]);
	});

	it('IDs are checked before anything is read; a user ID never becomes a path', async () => {
		assert.throws(() => factsOn(undefined, { subject: { userId: '../bob' } }), InvalidIdError);
		assert.throws(() => factsOn(undefined, { space: 'a/b' }), InvalidIdError);
		const facts = factsOn();
		await assert.rejects(
			facts.learn({ extract: async () => '[]', source: { conversationId: '' }, messages: [] }),
			InvalidIdError,
		);
	});
});
