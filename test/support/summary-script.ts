// The scripted conversation of the Summarize Older Turns tests: facts planted at turns 3, 50 and 300,
// small talk everywhere else (no number and no name, so the stand-in summarizer leaves it out).
export const FACTS: Record<number, string> = {
	3: 'My name is Ada Lovelace.',
	50: 'My order number is 48213.',
	300: 'I moved to Lisbon last spring.',
};
export const FILLER = 'Just chatting about the weather again, nothing new to say here today.';
export const userText = (turn: number): string => FACTS[turn] ?? FILLER;
