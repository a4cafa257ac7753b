// Facts the recall benchmark plants once and never updates (see recall-facts.ts for the shape and
// for the facts that change): personal details, and bookings the assistant confirms with a reference.
import type { FactKind } from './recall-facts';
import {
	BREEDS,
	CHILDREN,
	CITIES,
	INSTRUMENTS,
	JOBS,
	LANGUAGES,
	NAMES,
	PARTNERS,
	RESTAURANTS,
	WEEKDAYS,
	code,
	date,
} from './recall-values';

/** Facts said once. */
export const STABLE: FactKind[] = [
	{
		kind: 'dog',
		role: 'user',
		values: (pick) => ({ slots: { breed: pick(BREEDS), pet: pick(NAMES) } }),
		statements: [
			'We adopted a {breed} puppy and named her {pet}.',
			'Our new {breed}, {pet}, came home from the shelter today.',
		],
		mentions: ['{pet} chewed through another shoe this morning.'],
		questions: [
			"What's my dog called?",
			'What is the name of our pet?',
			'What breed is my puppy?',
			'What is the name of the {breed} we adopted?',
		],
	},
	{
		kind: 'allergy',
		role: 'user',
		values: (pick) => ({
			slots: { allergen: pick(['peanuts', 'shellfish', 'sesame', 'tree nuts', 'kiwi', 'eggs']) },
		}),
		statements: [
			"I'm allergic to {allergen}, so please leave them out.",
			'Careful with {allergen}: I had a bad allergic reaction last year.',
		],
		questions: [
			'What am I allergic to?',
			'Is there any food I must avoid for medical reasons?',
			'Which ingredient makes me ill?',
			'Which foods am I allergic to?',
		],
	},
	{
		kind: 'restaurant booking',
		role: 'assistant',
		values: (pick) => ({
			slots: {
				restaurant: pick(RESTAURANTS),
				n: pick(['two', 'four', 'six']),
				day: pick(WEEKDAYS),
				time: pick(['7 pm', '7:30 pm', '8 pm', '8:15 pm']),
				code: code(pick, 'AA9-9999'),
			},
		}),
		requests: ['Could you book a table for {n} at {restaurant} on {day} evening?'],
		statements: [
			'Done! A table for {n} at {restaurant} is reserved for {day} at {time}. Your confirmation number is {code}.',
			'Booked: {restaurant}, {day} at {time}, party of {n}. Reference {code}.',
		],
		questions: [
			"What's the confirmation number for my dinner reservation?",
			'What time is our table booked for?',
			'Which code do I give the restaurant when we arrive?',
			"What's the reference for the table at {restaurant}?",
		],
	},
	{
		kind: 'flight',
		role: 'assistant',
		values: (pick) => ({
			slots: {
				dest: pick(CITIES),
				flight: `${pick(['LH', 'KL', 'BA', 'AF', 'SK', 'IB'])} ${code(pick, '999')}`,
				date: date(pick),
				seat: `${pick(['4', '12', '17', '23', '31'])}${pick(['A', 'C', 'D', 'F'])}`,
				pnr: code(pick, 'AA9AA9'),
			},
		}),
		requests: ['Please book me the cheapest direct flight to {dest} on {date}.'],
		statements: [
			"You're all set: flight {flight} to {dest} on {date}, seat {seat}. Your booking reference is {pnr}.",
			'I booked {flight} departing {date} for {dest}; you have seat {seat} and the record locator is {pnr}.',
		],
		questions: [
			'Which seat do I have on the plane to {dest}?',
			'What is the booking reference for my trip to {dest}?',
			'When do I fly out?',
			"What's the flight number of my trip to {dest}?",
		],
	},
	{
		kind: 'appointment',
		role: 'assistant',
		values: (pick) => {
			const [specialist, checkup] = pick([
				['dentist', 'get my teeth checked'],
				['optician', 'get my eyes tested'],
				['dermatologist', 'get that mole on my back looked at'],
				['physiotherapist', 'have my knee seen to'],
			]);
			const doc = pick(['Okafor', 'Lindqvist', 'Moreau', 'Tanaka', 'Brennan', 'Costa']);
			const time = pick(['9:30', '11:00', '14:15', '16:40']);
			return { slots: { specialist, checkup, doc, date: date(pick), time } };
		},
		requests: ['My {specialist} called to move my appointment. Can you update the calendar?'],
		statements: [
			"I've moved your appointment with Dr. {doc} to {date} at {time} and set a reminder the day before.",
			'Your calendar now shows Dr. {doc} on {date}, {time}.',
		],
		questions: [
			'When am I seeing Dr. {doc}?',
			'When do I {checkup}?',
			"When's my next {specialist} visit?",
			'When is my appointment with Dr. {doc}?',
		],
	},
	{
		kind: 'child birthday',
		role: 'user',
		values: (pick) => ({
			slots: {
				child: pick(CHILDREN),
				age: pick(['five', 'six', 'seven', 'nine', 'ten']),
				bday: date(pick),
			},
		}),
		statements: [
			"My daughter {child} turns {age} on {bday}, and we're planning a small party.",
			"{child}'s birthday is {bday}; she'll be {age}.",
		],
		mentions: ['{child} has her school play tomorrow, I am so nervous for her.'],
		questions: [
			"When is my kid's birthday?",
			'How old is my daughter going to be?',
			'When should the party for {child} be?',
			"When is {child}'s birthday?",
		],
	},
	{
		kind: 'partner',
		role: 'user',
		values: (pick) => ({ slots: { partner: pick(PARTNERS), pjob: pick(JOBS) } }),
		statements: ['My partner {partner} is {a_pjob}.', '{partner}, my spouse, works as {a_pjob}.'],
		mentions: ['{partner} and I are thinking about a weekend away.'],
		questions: [
			'What does my spouse do for work?',
			"What is my partner's profession?",
			"What's {partner}'s job?",
		],
	},
	{
		kind: 'language',
		role: 'user',
		values: (pick) => ({
			slots: { language: pick(LANGUAGES) },
		}),
		statements: [
			"I've been learning {language} for a few months, mostly with an app.",
			"I'm taking {language} lessons twice a week.",
		],
		questions: [
			'Which language am I studying?',
			'What foreign language am I trying to pick up?',
			'Which language am I learning?',
		],
	},
	{
		kind: 'instrument',
		role: 'user',
		values: (pick) => ({
			slots: { instrument: pick(INSTRUMENTS) },
		}),
		statements: [
			'I play the {instrument} in a community band on Thursday nights.',
			"I've started {instrument} lessons at the music school.",
		],
		questions: [
			'What instrument do I play?',
			'What musical hobby have I got?',
			'Which instrument do I play in the band?',
		],
	},
	{
		kind: 'rent',
		role: 'user',
		values: (pick) => ({ slots: { rent: pick(['€1,150', '€1,450', '£980', '$2,100', '€875']) } }),
		statements: [
			'Our rent is {rent} a month, which is most of my salary.',
			'We pay {rent} in rent every month.',
		],
		questions: [
			'How much do we pay for housing every month?',
			"What's my monthly rent?",
			'What does our flat cost us?',
		],
	},
	{
		kind: 'medication',
		role: 'user',
		values: (pick) => {
			const [med, condition] = pick([
				['lisinopril', 'blood pressure'],
				['levothyroxine', 'thyroid'],
				['sertraline', 'anxiety'],
				['metformin', 'diabetes'],
			]);
			return { slots: { med, condition } };
		},
		statements: [
			'I take {med} every morning for my {condition}.',
			"I'm on {med} for {condition}, 50 mg a day.",
		],
		questions: [
			'What medicine am I on?',
			'Which pills do I take each day?',
			'What do I take for my {condition}?',
		],
	},
	{
		kind: 'anniversary',
		role: 'user',
		values: (pick) => ({ slots: { anniv: date(pick) } }),
		statements: [
			'Our wedding anniversary is on {anniv}, and I need a gift idea.',
			'We got married on {anniv}, eight years ago.',
		],
		questions: [
			'When did I get married?',
			'What date is our anniversary?',
			'When is our wedding anniversary?',
		],
	},
	{
		kind: 'parcel',
		role: 'assistant',
		values: (pick) => ({
			slots: {
				shop: pick(['Zalando', 'IKEA', 'Decathlon', 'Bol.com', 'Currys', 'Fnac']),
				tracking: code(pick, 'AA999999999'),
				day: pick(WEEKDAYS),
			},
		}),
		requests: ['Where is my order from {shop}?'],
		statements: [
			'Your order from {shop} shipped today. The tracking number is {tracking} and delivery is expected on {day}.',
			'{shop} sent your order: tracking {tracking}, arriving {day}.',
		],
		questions: [
			"What's the tracking number for my package?",
			'When will my {shop} delivery arrive?',
			'How can I follow my parcel?',
			"What's the tracking number for my {shop} order?",
		],
	},
];
