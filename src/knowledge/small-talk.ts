// Small talk: a message made only of greetings, thanks, acknowledgements, laughter and pleasantries
// ("thanks!", "ok cool", "good morning, how are you?") has nothing to look up, so automatic recall
// does not search for it: recalling the best five matches of "thanks" spends tokens on unrelated
// memories every turn. Judged on the message's terms (tokenize.ts: common English words are already
// left out); any other word makes it worth a search. English, with a few greetings and thanks of other
// languages; a message in another language is searched as usual.
import { tokenize } from '../indexes';

const WORDS = [
	// greetings and goodbyes
	'hi hello hey heya hiya yo howdy hallo hola bonjour bonsoir salut ciao servus greetings welcome',
	'morning afternoon evening night goodnight gn day bye goodbye byebye cya see later soon tomorrow',
	'today tonight care adios tschuss',
	// thanks and politeness
	'thanks thank thx ty tysm cheers appreciate appreciated merci beaucoup danke gracias grazie',
	'obrigado obrigada please pls plz sorry excuse pardon np problem worries mention',
	// acknowledgements
	'ok okay okey k kk alright right sure yes yeah yep yup ya yea no nope nah maybe fine good great',
	'cool nice awesome perfect excellent wonderful amazing lovely brilliant fantastic sweet neat super',
	'gotcha got understood understand agree agreed exactly indeed true totally absolutely definitely',
	'sounds sound makes sense noted done well much lot bit also still really',
	// laughter and interjections
	'lol lmao rofl haha hahaha hahahaha hehe heh wow oh ah ahh aw aww hmm hm uh um umm oops omg ooh',
	'yay hurray whoa meh',
	// how are you, and the forms contractions take once their apostrophe is gone ("how's" → "hows")
	'going doing glad happy meet nice chat talk help helped helpful funny hilarious cute',
	'im ive ill id youre youve hows whats thats theres heres lets dont didnt cant wont isnt',
	'mate buddy dude bro pal guys folks',
];

const FILLER = new Set(tokenize(WORDS.join(' ')));

/** Whether a message has no term worth searching for (empty, punctuation, or only the words above). */
export function isSmallTalk(text: string): boolean {
	return tokenize(text).every((term) => FILLER.has(term));
}
