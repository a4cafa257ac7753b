// The facts of one subject (a user, or a conversation without a User ID) within a facts space: what a
// turn reads and learns, and what a person sees and corrects (get, add, edit, retire, history, diff,
// rollback). See src/README.md ("Facts") and docs/facts.md.
import { InvalidInputError } from '../errors';
import type { TokenCounter } from '../tokens/tokens';
import type { HistoryOptions, HistoryPage, VersionDiff } from '../snapshots/types';
import { addByHand, editByHand, retireByHand, rolledBack } from './edits';
import type { AddFactInput, EditFactInput, RetireFactInput } from './edits';
import { learn } from './learn';
import type { LearnInput, LearnResult } from './learn';
import { statusOf } from './records';
import type { Cursor, Fact, FactStatus, FactsDocument } from './records';
import { factsSection } from './request';
import type { FactsSection } from './request';
import { FactsStore } from './store';
import type { FactsOptions, FactsState } from './store';

/** A fact as read, with where it stands. */
export type FactView = Fact & { status: FactStatus };

export interface FactsView {
	/** The version read (null: nothing learned yet). */
	version: number | null;
	savedAt: string | null;
	/** The current facts (with `all`: superseded and retired ones too), in the order they were learned. */
	facts: FactView[];
	/** How far each chat memory was read. */
	cursors: Cursor[];
}

const view = (f: Fact): FactView => ({ ...f, status: statusOf(f) });

function viewOf(state: FactsState, all: boolean): FactsView {
	const facts = state.doc.facts.map(view).filter((f) => all || f.status === 'current');
	return { version: state.version, savedAt: state.savedAt, facts, cursors: state.doc.cursors };
}

export class Facts {
	readonly store: FactsStore;

	constructor(options: FactsOptions) {
		this.store = new FactsStore(options);
	}

	/** `{space}/user:{id}` or `{space}/conversation:{id}`. */
	get scope(): string {
		return this.store.scope;
	}

	/** The stored facts now (one conditional read). */
	read(): Promise<FactsState> {
		return this.store.read();
	}

	/** The current facts, or with `all` the superseded and retired ones too. */
	async get(options: { all?: boolean } = {}): Promise<FactsView> {
		return viewOf(await this.store.read(), options.all === true);
	}

	/** The facts as they were at version `version` (every fact, each with its status then). */
	async getVersion(version: number): Promise<FactsView> {
		const record = await this.store.versions.getVersion(version);
		const doc = this.store.documentOf(record);
		return viewOf({ version: record.version, doc, savedAt: record.created_at }, true);
	}

	/** The section of the current facts for a model call, within `tokenBudget` tokens. */
	section(
		doc: FactsDocument,
		tokenBudget: number,
		counter: Pick<TokenCounter, 'count'>,
	): FactsSection {
		return factsSection(doc, tokenBudget, counter);
	}

	/** Learns from unread turns when they pass the threshold, or on demand (see learn.ts). */
	learn(input: LearnInput): Promise<LearnResult> {
		return learn(this.store, input);
	}

	/** Adds a fact by hand; the person is its evidence. */
	async add(input: AddFactInput): Promise<FactView> {
		let added: Fact | undefined;
		await this.store.change((doc) => {
			const next = structuredClone(doc) as FactsDocument;
			added = addByHand(next, input, this.now());
			return { doc: next, summary: `${added.id} added by ${input.by}` };
		});
		return view(added as Fact);
	}

	/** Corrects a current fact by hand: a new fact supersedes it (the old one stays, marked). */
	async edit(id: string, input: EditFactInput): Promise<{ from: FactView; to: FactView }> {
		let out: { from: Fact; to: Fact } | undefined;
		await this.store.change((doc) => {
			const next = structuredClone(doc) as FactsDocument;
			out = editByHand(next, id, input, this.now(), this.scope);
			return { doc: next, summary: `${out.from.id} → ${out.to.id} edited by ${input.by}` };
		});
		const done = out as { from: Fact; to: Fact };
		return { from: view(done.from), to: view(done.to) };
	}

	/** Retires a current fact by hand, with the reason. */
	async retire(id: string, input: RetireFactInput): Promise<FactView> {
		let retired: Fact | undefined;
		await this.store.change((doc) => {
			const next = structuredClone(doc) as FactsDocument;
			retired = retireByHand(next, id, input, this.now(), this.scope);
			return { doc: next, summary: `${retired.id} retired by ${input.by}` };
		});
		return view(retired as Fact);
	}

	/** The versions of the facts, newest first: each change of belief with its summary. */
	history(options: Omit<HistoryOptions, 'branch'> = {}): Promise<HistoryPage> {
		return this.store.versions.history(options);
	}

	/** What changed between two versions (RFC 6902 and one line per change). */
	diff(from: number, to: number): Promise<VersionDiff> {
		return this.store.versions.diff(from, to);
	}

	/**
	 * Restores the beliefs of an earlier version as a new version (nothing is deleted; the versions
	 * after it stay in history). The turns read since stay read.
	 */
	async rollback(version: number, options: { by: string }): Promise<FactsView> {
		if (typeof options?.by !== 'string' || options.by.trim() === '')
			throw new InvalidInputError('by', 'must name who rolls back');
		const earlier = this.store.documentOf(await this.store.versions.getVersion(version));
		const out = await this.store.change((doc) => ({
			doc: rolledBack(doc, earlier),
			summary: `Rolled back to v${version} by ${options.by.trim()}`,
		}));
		return viewOf(out.state, true);
	}

	private now(): string {
		return this.store.now().toISOString();
	}
}
