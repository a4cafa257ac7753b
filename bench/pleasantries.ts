/**
 * Fifty pleasantries in twelve languages, as people send them to a chat bot between real questions:
 * goodbyes, thanks, agreement, encouragement, sympathy. Automatic recall should inject nothing for
 * them. Written for the recall benchmark (recall-locomo.ts) apart from the recall code: none of these
 * messages is in a list of the code, and the benchmark asks them with the code's small-talk word list
 * switched off too, so what it measures is the relevance floor from scores.
 */
export const PLEASANTRIES = [
	// English, beyond the usual greetings and thanks
	'nice one',
	'take care',
	'fair enough',
	'catch you later',
	'no worries at all',
	"that's so sweet of you",
	'talk soon',
	'much appreciated',
	'you rock',
	'lovely chatting with you',
	'have a good one',
	'sounds like a plan',
	'right on',
	'good to know',
	'my pleasure',
	'anytime!',
	'same here',
	'you too!',
	'oh wow, really?',
	'glad to hear that',
	'hang in there',
	'fingers crossed',
	'keep it up!',
	'hugs',
	'all good, carry on',
	// French, German, Spanish, Italian, Portuguese, Dutch
	'à plus tard',
	"d'accord, merci",
	'bonne journée',
	"c'est génial",
	'alles klar, danke',
	'bis bald',
	'schönen Abend noch',
	'vale, gracias',
	'hasta luego',
	'qué bien',
	'nos vemos',
	'va bene, grazie mille',
	'a presto',
	'valeu, até mais',
	'tudo bem',
	'dank je wel',
	'tot ziens',
	// Japanese, Chinese, Russian, Korean, Polish, Turkish
	'ありがとうございます',
	'了解です',
	'谢谢你',
	'好的，再见',
	'спасибо большое',
	'감사합니다',
	'dzięki, na razie',
	'görüşürüz',
];
