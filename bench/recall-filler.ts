// Everyday chat for the recall benchmark's conversations (see recall-data.ts): each topic has what a
// user asks and sentences an assistant answers with (two to four of them make a reply). The topics
// brush against the planted facts on purpose (travel names cities, cooking names ingredients, cars,
// pets, flights, doctors and money come up), as real conversations do.
import { CITIES } from './recall-values';

export interface Topic {
	name: string;
	/** What the user asks; `{place}`, `{food}`, `{thing}` are filled at random. */
	asks: string[];
	/** Sentences of the assistant's answers. */
	answers: string[];
}

export const FILL: Record<string, readonly string[]> = {
	place: CITIES,
	food: [
		'lentil soup',
		'risotto',
		'banana bread',
		'chicken curry',
		'pad thai',
		'shakshuka',
		'pancakes',
		'ratatouille',
	],
	thing: ['spreadsheet', 'presentation', 'cover letter', 'report', 'newsletter', 'invoice'],
};

export const TOPICS: Topic[] = [
	{
		name: 'cooking',
		asks: [
			'Can you give me a quick recipe for {food}?',
			'How long can I keep leftover {food} in the fridge?',
			'What can I cook tonight with rice, spinach and a tin of chickpeas?',
			'Is it fine to freeze {food}?',
			'My {food} always comes out bland. What am I doing wrong?',
			'What is a good side dish for roast chicken?',
		],
		answers: [
			'Start by softening an onion and two cloves of garlic in olive oil over medium heat.',
			'Season as you go and taste before serving; a squeeze of lemon brightens most dishes.',
			'Cooked leftovers keep for three to four days in a sealed container in the fridge.',
			'Most stews and soups freeze well for up to three months.',
			'Toasting the spices in the pan for a minute brings out much more flavour.',
			'A simple green salad with a mustard dressing goes with almost anything.',
			'If you are short on time, a pressure cooker cuts the cooking time roughly in half.',
			'Let it rest for ten minutes before cutting so it stays moist.',
		],
	},
	{
		name: 'coding',
		asks: [
			'Why does my Python script say "list index out of range"?',
			'How do I read a CSV file in JavaScript?',
			'What is the difference between let and const?',
			'Can you explain what a race condition is?',
			'My unit tests pass locally but fail in CI. Where should I look?',
			'How do I undo my last git commit without losing the changes?',
			'What does async and await actually do?',
		],
		answers: [
			'That error means the code asks for a position the list does not have, often one past the end.',
			'Use git reset --soft HEAD~1: the commit is undone and the changes stay staged.',
			'Check for differences in environment variables, time zones and the order the tests run in.',
			'A const binding cannot be reassigned, but the object it points to can still change.',
			'A race condition happens when the result depends on which of two operations finishes first.',
			'Printing the length of the list right before the failing line usually shows the problem.',
			'Await pauses the function until the promise settles, without blocking the rest of the program.',
			'For large files, stream the rows instead of loading everything into memory at once.',
		],
	},
	{
		name: 'travel',
		asks: [
			'What should I see in {place} if I only have two days?',
			'Is {place} expensive for a weekend trip?',
			'What is the best way to get from the airport to the centre of {place}?',
			'Any tips for packing light for a week away?',
			'When is the best season to visit {place}?',
			'Is it cheaper to fly midweek?',
		],
		answers: [
			'The old town is walkable, so you can see most of the main sights on foot in a day.',
			'Trains from the airport are usually the fastest option and run every fifteen minutes or so.',
			'Spring and early autumn tend to have mild weather and fewer crowds.',
			'Midweek flights are often cheaper, especially if you book a few weeks ahead.',
			'Roll your clothes, wear your bulkiest shoes on the plane and pack a small laundry bag.',
			'Museums are often free on the first Sunday of the month, so check before you go.',
			'A city card can save money if you plan to use public transport and visit several museums.',
		],
	},
	{
		name: 'fitness',
		asks: [
			'How can I get back into running after a long break?',
			'What is a good beginner strength routine?',
			'How many rest days should I take each week?',
			'My knees hurt after squats. Is my form wrong?',
			'Is it better to exercise in the morning or the evening?',
		],
		answers: [
			'Alternate one minute of jogging with two minutes of walking for the first couple of weeks.',
			'Squats, push-ups, rows and planks cover most of the body with no equipment.',
			'Two rest days a week is plenty for most beginners; sleep matters as much as training.',
			'Keep your knees in line with your toes and push your hips back as you lower.',
			'The best time to exercise is the one you can stick to consistently.',
			'Increase distance or weight by no more than ten per cent a week to avoid injury.',
		],
	},
	{
		name: 'writing',
		asks: [
			'Can you help me make this {thing} sound more professional?',
			'How do I politely decline a meeting invitation?',
			'Could you shorten this email to my landlord?',
			'What is a good subject line for a follow-up email?',
			'Can you proofread my {thing} before I send it?',
		],
		answers: [
			'Here is a tighter version that keeps your main point in the first sentence.',
			'Thank them for the invitation, say you cannot attend, and offer an alternative if you can.',
			'I removed the repetition in the second paragraph and made the request clearer.',
			'A subject line like "Following up on our conversation" is clear and polite.',
			'I fixed a few typos and split the long sentence in the middle into two.',
			'Ending with a specific question makes it more likely that you get a reply.',
		],
	},
	{
		name: 'home',
		asks: [
			'How do I fix a dripping tap?',
			'What is the best way to get rid of mould in the bathroom?',
			'My radiator is cold at the top. What should I do?',
			'Which plants are easy to keep alive indoors?',
			'How do I unblock a kitchen sink without chemicals?',
		],
		answers: [
			'A dripping tap usually needs a new washer; turn off the water supply before you open it.',
			'A cold top on a radiator means trapped air: bleed it with a radiator key until water appears.',
			'A mix of white vinegar and water works well on mould, and good ventilation stops it returning.',
			'Pothos, snake plants and ZZ plants tolerate low light and irregular watering.',
			'Pour boiling water down the drain, then baking soda and vinegar, and flush again after ten minutes.',
			'If the problem keeps coming back, it may be worth calling a plumber.',
		],
	},
	{
		name: 'money',
		asks: [
			'How much of my salary should I save each month?',
			'Is it worth paying off my student loan early?',
			'How do I start a simple household budget?',
			'What is an index fund?',
			'Should I keep an emergency fund in a savings account?',
		],
		answers: [
			'A common rule of thumb is fifty per cent for needs, thirty for wants and twenty for savings.',
			'An emergency fund of three to six months of expenses is a good first goal.',
			'An index fund simply follows a market index, which keeps its fees low.',
			'Track every expense for a month first; most people are surprised where the money goes.',
			'If the loan interest is low, investing the extra money may pay off more in the long run.',
			'Automating a transfer on payday makes saving much easier.',
		],
	},
	{
		name: 'books and films',
		asks: [
			'Can you recommend a good mystery novel?',
			'What should I watch tonight if I liked Arrival?',
			'Any podcasts about history you would suggest?',
			'Is the book better than the film for Dune?',
			'What are some good audiobooks for a long drive?',
		],
		answers: [
			'The Thursday Murder Club is light, funny and a quick read.',
			'If you liked Arrival, try Contact or Annihilation.',
			'Many readers prefer the book for its world building, while the film is visually stunning.',
			'The Rest Is History is entertaining and well researched.',
			'Project Hail Mary works brilliantly as an audiobook.',
			'Short story collections are good when you only have a few minutes a day to read.',
		],
	},
	{
		name: 'pets',
		asks: [
			'How do I stop a dog from pulling on the lead?',
			'How often should a cat go to the vet?',
			'My neighbour asked me to feed their rabbit. What do rabbits eat?',
			'Is chocolate really dangerous for dogs?',
		],
		answers: [
			'Stop walking whenever the lead goes tight and reward the dog when it comes back to your side.',
			'A yearly check-up is enough for most healthy adult cats.',
			'Rabbits mostly eat hay, with some leafy greens and a small amount of pellets.',
			'Yes, chocolate contains theobromine, which is toxic to dogs even in small amounts.',
			'Short, frequent training sessions work better than one long one.',
		],
	},
	{
		name: 'health',
		asks: [
			'How much water should I drink a day?',
			'Why do I wake up tired even after eight hours of sleep?',
			'What can I do about a tension headache?',
			'Is it normal to feel dizzy when I stand up quickly?',
			'How can I reduce screen time before bed?',
		],
		answers: [
			'Around two litres a day is a reasonable guide, more when it is hot or you exercise.',
			'Poor sleep quality, caffeine late in the day and an irregular schedule can all leave you tired.',
			'Rest, water, a short walk and gentle neck stretches often help with tension headaches.',
			'Brief dizziness on standing is common, but mention it to a doctor if it happens often.',
			'Charging your phone outside the bedroom is a simple way to cut screen time at night.',
			'This is general information, not medical advice; please see a doctor if it continues.',
		],
	},
	{
		name: 'work',
		asks: [
			'How do I ask my manager for a raise?',
			'Can you help me prepare for a job interview?',
			'How do I run a shorter weekly meeting?',
			'I have too many tasks this week. How should I prioritise?',
			'How do I give feedback to a colleague without sounding harsh?',
		],
		answers: [
			'Bring concrete examples of your results and a number based on market research.',
			'Prepare three short stories about problems you solved; most interview questions fit one of them.',
			'Send an agenda beforehand and end the meeting with clear owners for each action.',
			'Sort your tasks by urgency and importance, and do the most important one first thing in the morning.',
			'Describe the specific behaviour and its effect, then ask for their view.',
		],
	},
	{
		name: 'small talk',
		asks: [
			'Tell me a fun fact.',
			'What is a good board game for four people?',
			'I am bored. Any ideas for a rainy Sunday?',
			'Can you suggest a name for my fantasy football team?',
			'What is the weather usually like in {place} in November?',
		],
		answers: [
			'Octopuses have three hearts and blue blood.',
			'Ticket to Ride and Codenames are both easy to learn and fun with four players.',
			'A rainy Sunday is perfect for a long walk in a museum, baking, or a film marathon.',
			'How about "Expected Toast"? It is silly, but people remember it.',
			'November tends to be grey and damp there, so bring a warm coat and an umbrella.',
		],
	},
];

/** Short acknowledgements an assistant opens a reply with after the user mentions something personal. */
export const ACKS = [
	'Thanks for telling me.',
	'Good to know!',
	'Noted.',
	"I'll keep that in mind.",
	'That makes sense.',
];
