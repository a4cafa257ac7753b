// The facts the recall benchmark plants in its conversations (see recall-data.ts): for each kind, the
// values one user gets, how the fact is said (by the user, or by the assistant confirming something),
// how a later message updates it, and questions a user would ask about it weeks later. Questions were
// written as a person would ask them, not from the search engine's point of view; the benchmark
// measures how much their words overlap the evidence instead of assuming it.
import { CARS, CITIES, COMPANIES, DIETS, JOBS, PLANS, two } from './recall-values';

/** Slot values of one fact, filled into `{name}` in the templates. */
export type Slots = Record<string, string>;

export interface FactKind {
	kind: string;
	/** Who states the fact: the user, or the assistant (confirming a booking, a change, …). */
	role: 'user' | 'assistant';
	/** The values of one user's fact; `prev` too for a fact that is updated later. */
	values(pick: <T>(xs: readonly T[]) => T): { slots: Slots; prev?: Slots };
	/** What the user asks first, when the assistant states the fact. */
	requests?: string[];
	/** The first statement (with `prev`'s values when the fact is updated later). */
	statements: string[];
	/** The newer statement (its `{prev_…}` slots are the older values). */
	updates?: string[];
	/** Later passing mentions: not evidence, but the same names. */
	mentions?: string[];
	questions: string[];
}

/** Facts that change: the newer statement is the answer. */
export const UPDATED: FactKind[] = [
	{
		kind: 'home city',
		role: 'user',
		values: (pick) => {
			const [a, b] = two(pick, CITIES);
			return { prev: { city: a }, slots: { city: b } };
		},
		statements: [
			'I live in {city}, so anything near there works for me.',
			"We've been living in {city} for about three years now.",
			"I'm based in {city}, by the way.",
		],
		updates: [
			'Big news: we moved from {prev_city} to {city} last weekend!',
			'I finally relocated to {city}. Leaving {prev_city} was harder than I thought.',
			"We've just moved to {city}, so I'm no longer in {prev_city}.",
			'Just so you know, I live in {city} now, not in {prev_city} anymore.',
		],
		mentions: ['The weather in {city} has been miserable this week.'],
		questions: [
			'Where do I live now?',
			'Which city is home these days?',
			'What city am I based in at the moment?',
			'Where did I end up moving to?',
			'Where did we move after leaving {prev_city}?',
		],
	},
	{
		kind: 'employer',
		role: 'user',
		values: (pick) => {
			const [a, b] = two(pick, COMPANIES);
			return { prev: { company: a, job: pick(JOBS) }, slots: { company: b, job: pick(JOBS) } };
		},
		statements: [
			'I work as {a_job} at {company}.',
			"I've been {a_job} at {company} for five years.",
		],
		updates: [
			'I left {prev_company} and started a new position at {company} as {a_job}.',
			'Today was my first day as {a_job} at {company}!',
			'I accepted the offer from {company}, so I hand in my notice at {prev_company} tomorrow.',
			'I work at {company} now, as {a_job}; I left {prev_company} last month.',
		],
		mentions: ['Work has been hectic at {company} this month.'],
		questions: [
			'Where am I employed?',
			'Who is my current employer?',
			'What do I do for a living?',
			'Which company do I work for?',
			'What is my new job?',
		],
	},
	{
		kind: 'car',
		role: 'user',
		values: (pick) => {
			const [a, b] = two(pick, CARS);
			return { prev: { car: a }, slots: { car: b } };
		},
		statements: ['I drive {car}, so fuel consumption matters to me.', 'My car is {car}.'],
		updates: [
			'I sold {prev_car} and bought {car}.',
			'We traded in {prev_car} for {car} this week.',
			'Goodbye {prev_car}: I picked up {car} from the dealer today.',
			'My car is {car} now, I sold {prev_car}.',
		],
		questions: [
			'What car do I have?',
			'Which vehicle do I own now?',
			'What am I driving these days?',
			'What kind of automobile did I get?',
			'What car did I buy?',
		],
	},
	{
		kind: 'phone plan',
		role: 'assistant',
		values: (pick) => {
			const [a, b] = two(pick, PLANS);
			return {
				prev: { plan: a[0], data: a[1], price: a[2] },
				slots: { plan: b[0], data: b[1], price: b[2] },
			};
		},
		requests: [
			'Can you sort out my mobile contract? I want something that fits how I use my phone.',
			'Please change my phone contract, the current one does not suit me anymore.',
		],
		statements: [
			'Done: your mobile plan is now {plan}, with {data} of data for {price} a month.',
			"I've set up the {plan} plan for you: {data} of data at {price} per month.",
		],
		updates: [
			"Done: I've moved you from {prev_plan} to the {plan} plan, {data} of data for {price} a month, from the next billing cycle.",
			'Your contract changes from {prev_plan} to {plan} on the 1st: {data} of data, {price} monthly.',
			'Your mobile plan is now {plan} instead of {prev_plan}: {data} of data for {price} a month.',
		],
		questions: [
			'Which phone plan am I on?',
			'How much mobile data do I get each month?',
			'What do I pay for my phone contract?',
			'What tariff did we settle on for my cell service?',
			'What is my current mobile plan and how much data does it include?',
		],
	},
	{
		kind: 'diet',
		role: 'user',
		values: (pick) => {
			const [a, b] = two(pick, DIETS);
			return { prev: { diet: a }, slots: { diet: b } };
		},
		statements: [
			"I'm {diet}, so please keep that in mind for recipes.",
			'Just so you know, I eat {diet}.',
		],
		updates: [
			"Quick update: I'm no longer {prev_diet}, I've gone {diet}.",
			'My doctor suggested I switch from {prev_diet} to {diet}, so that is what I do now.',
			"I've started a {diet} diet, so no more {prev_diet} recipes for me.",
			"I eat {diet} now; I'm not {prev_diet} anymore.",
		],
		questions: [
			'What are my eating habits?',
			'Do I follow any particular diet?',
			'What kind of food should you suggest for my meals?',
			'Which dietary restriction do I have now?',
			'What diet am I on now?',
		],
	},
];
