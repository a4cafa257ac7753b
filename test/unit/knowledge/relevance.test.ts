// The relevance floor of automatic recall, from the memory's own statistics rather than a word list:
// a message recalls only by a word that is rare in the memory (or words rare together), or by vectors whose best match stood
// out clearly beyond word salad. Pleasantries in several languages (none of them in the small-talk
// list, which is checked) recall nothing; real questions still recall, in English and in German.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LinkedEmbedder } from '../../../bench/linked-vectors';
import {
	clearCalibrations,
	isSmallTalk,
	LocalDiskStorage,
	MemoryBase,
} from '../../../src/internal';
import type { Embedder } from '../../../src/internal';
import { TestEmbedder } from '../../support/embeddings';
import { EVERYDAY } from '../../support/everyday';
import { tempDir } from '../../support/storages';

/** Sixty German everyday messages. */
const ALLTAG = [
	'Heute früh beim Bäcker an der Ecke Brötchen geholt.',
	'Der Zug nach Köln hatte wieder vierzig Minuten Verspätung.',
	'Tomaten und Basilikum auf dem Balkon gepflanzt.',
	'Eine Doku über Kraken gesehen, die öffnen Gläser!',
	'Endlich das quietschende Scharnier an der Küchentür repariert.',
	'Der Zahnarzttermin ist auf Donnerstag um neun verschoben.',
	'Drei Akkorde auf der Ukulele gelernt, die Finger tun weh.',
	'Die Katze hat gestern ein Weinglas vom Tisch gestoßen.',
	'Ein Linsencurry mit Kreuzkümmel ausprobiert, ziemlich gut.',
	'Vor dem Frühstück am Kanal entlang gelaufen.',
	'Der Nachbar hat das Paket angenommen, während wir weg waren.',
	'Muss vor der Sommerreise meinen Reisepass verlängern.',
	'Die Budgetbesprechung ging zwei Stunden länger, anstrengend.',
	'Das Hotel in Porto für die zweite Juniwoche gebucht.',
	'Mein Bruder heiratet im September.',
	'Ein gebrauchtes Fahrrad gekauft, die Reifen brauchen Luft.',
	'Den Roman über den Leuchtturmwärter ausgelesen, wunderbar.',
	'Die Kaffeemühle ist kaputt, jetzt gibt es Pulverkaffee.',
	'Den Regenschirm im Bus vergessen, natürlich hat es geregnet.',
	'Einen Knopf an die Winterjacke genäht.',
	'Der Laptopakku hält kaum noch eine Stunde.',
	'Endlich die Rechnung für das Märzprojekt geschickt.',
	'Der Rückflug hatte wegen eines Sturms über den Alpen Verspätung.',
	'Einen Schokoladenkuchen für Mias Geburtstag gebacken.',
	'Karten für das Jazzkonzert am Samstag gekauft.',
	'Klavierstunden bei einer sehr geduldigen Lehrerin angefangen.',
	'Meinem Neffen bei den Mathehausaufgaben geholfen, wieder Brüche.',
	'Den Nachmittag im Museum für moderne Kunst verbracht.',
	'Picknick im Park mit Broten und Limonade.',
	'Der Vermieter sagt, der Heizkessel wird nächsten Monat ersetzt.',
	'Die Garage ausgeräumt und mein altes Skateboard gefunden.',
	'Die Tierärztin meint, der Hund sollte etwas abnehmen.',
	'Im Supermarkt einen alten Schulfreund getroffen.',
	'Das Handydisplay ist beim Sturz auf der Treppe gesprungen.',
	'Für einen Töpferkurs am Mittwochabend angemeldet.',
	'Auf dem Bauernmarkt gab es die ersten Erdbeeren des Jahres.',
	'Das Badezimmer blassgrün gestrichen.',
	'Das Pokalfinale mit Kollegen in der Kneipe geschaut.',
	'Meine Tante hat eine Postkarte aus Kreta geschickt.',
	'Nach dem Datenleck alle Passwörter geändert.',
	'Der Drucker hat bei der Generalprobe der Präsentation geklemmt.',
	'Den Küstenweg zum Leuchtturm und zurück gewandert.',
	'Einen tollen Podcast über mittelalterliche Geschichte gefunden.',
	'Der Klempner kommt am Dienstag wegen des Lecks.',
	'Zimtschnecken gebacken, die Küche duftete herrlich.',
	'Unser Team hat den Quizabend in der Bibliothek gewonnen.',
	'Die Schlüssel im Büro vergessen und zurückgefahren.',
	'Die Kinder haben einen Schneemann größer als der Zaun gebaut.',
	'Ein Buch über Schlaf und Gedächtnis angefangen.',
	'Eine neue Matratze bestellt, Lieferung in zehn Tagen.',
	'Die neue Espressomaschine im Café unten getestet.',
	'Das Auto zur Jahresinspektion gebracht.',
	'Einen kurzen Vortrag beim Design-Treffen gehalten.',
	'Oma hat mir ihr Rezept für Zwetschgenknödel beigebracht.',
	'Beim Schach gegen das zwölfjährige Nachbarskind verloren.',
	'Das Fitnessstudio war voll, also bin ich schwimmen gegangen.',
	'Auf dem Spaziergang einen Reiher am Fluss gesehen.',
	'Das Internet war fast den ganzen Morgen weg.',
	'In einen Chor eingetreten, Proben sind montags.',
	'Alte Fotos für meine Eltern in Alben sortiert.',
];

/** Pleasantries in several languages, none of them in the small-talk list. */
const PLEASANT = [
	'fair enough',
	'sounds like a plan',
	'keep it up!',
	'much obliged',
	'à plus tard',
	'super, danke dir',
	'hasta luego',
	'va bene, grazie mille',
	'tudo bem',
	'ありがとうございます',
	'谢谢你',
	'спасибо большое',
];
const PLEASANT_DE = ['super, danke dir', 'schönen Abend', 'passt schon', 'na dann, tschüss'];

async function base(texts: string[], embedder?: Embedder, baseId = 'kb'): Promise<MemoryBase> {
	const mb = new MemoryBase({
		storage: new LocalDiskStorage({ root: tempDir('relevance') }),
		baseId,
		...(embedder ? { embedder } : {}),
		autoCapture: false,
	});
	let run = 0;
	for (const text of texts)
		await mb.capture({
			sessionId: 's',
			userId: 'u',
			runId: `r${++run}`,
			messages: [{ text, role: 'user', metadata: { messageId: `m${run}` } }],
		});
	if (embedder) await mb.sync();
	return mb;
}

/** What recall put in the section (oldest first), as one text to match against. */
const recalled = async (mb: MemoryBase, query: string) =>
	(await mb.recall({ query, userId: 'u' })).hits.map((h) => h.text).join(' | ');

describe('automatic recall recalls by what carries information in this memory', () => {
	it('none of the pleasantries is in the small-talk list: the floor is what stops them', () => {
		for (const p of [...PLEASANT, ...PLEASANT_DE]) assert.equal(isSmallTalk(p), false, p);
	});

	for (const [name, embedder] of [
		['words only', undefined],
		['a weak model', () => new TestEmbedder(16)],
	] as const)
		it(`English memory, ${name}: pleasantries in any language recall nothing; questions recall`, async () => {
			clearCalibrations();
			const mb = await base(EVERYDAY, embedder?.(), `kb-${name.replace(/ /g, '-')}`);
			for (const p of PLEASANT) {
				const r = await mb.recall({ query: p, userId: 'u' });
				assert.deepEqual(r.hits, [], `${p}: ${r.hits.map((h) => h.text).join(' | ')}`);
				assert.ok(r.reason, p);
			}
			assert.match(await recalled(mb, 'how is the ukulele going?'), /ukulele/);
			assert.match(await recalled(mb, 'what did the plumber say about the leak?'), /plumber/);
		});

	it('German memory: German pleasantries recall nothing; a German question recalls', async () => {
		const mb = await base(ALLTAG, new TestEmbedder(16), 'kb-de');
		for (const p of PLEASANT_DE) assert.equal(await recalled(mb, p), '', p);
		assert.match(await recalled(mb, 'Wann kommt der Klempner?'), /Klempner/);
		assert.match(await recalled(mb, 'Was hat die Katze kaputt gemacht?'), /Katze/);
	});

	it('a word most messages hold does not recall alone; a rare one does', async () => {
		const texts = EVERYDAY.map((t, i) => (i % 8 === 0 ? `${t} Cheerful weather.` : t));
		const mb = await base(texts);
		// "cheerful" and "weather" are in 8 of 60 messages (13 %): too common to tell them apart.
		const common = await mb.recall({ query: 'cheerful weather', userId: 'u' });
		assert.deepEqual(common.hits, []);
		assert.match(common.reason ?? '', /no word that is rare in this memory/);
		assert.match(await recalled(mb, 'cheerful heron'), /heron/);
	});

	it('words common alone but rare together recall the few messages that hold them all', async () => {
		// "cheerful" and "weather" each in 12 of 60 messages (20 %), together in 2 (3 %).
		const texts = EVERYDAY.map((t, i) =>
			i === 1 || i === 2
				? `${t} Cheerful weather.`
				: i % 6 === 0
					? `${t} Cheerful.`
					: i % 6 === 3
						? `${t} Weather.`
						: t,
		);
		const mb = await base(texts);
		const { hits } = await mb.recall({ query: 'cheerful weather', userId: 'u', k: 10 });
		const both = hits.filter((h) => /cheerful weather/i.test(h.text));
		assert.equal(both.length, 2, hits.map((h) => h.text).join(' | '));
		for (const h of hits)
			assert.ok(both.includes(h) || h.context, `only the two, and messages beside them: ${h.text}`);
		assert.deepEqual((await mb.recall({ query: 'cheerful', userId: 'u' })).hits, []);
	});

	it('a question in other words than the memory recalls by a model that understands it', async () => {
		clearCalibrations();
		const question = 'Which wading bird caught my eye?';
		const answer = EVERYDAY.find((t) => /heron/.test(t))!;
		const model = new LinkedEmbedder(
			new TestEmbedder(),
			new Map([
				[question, [1]],
				[answer, [1]],
			]),
			1,
		);
		assert.match(await recalled(await base(EVERYDAY, model, 'kb-links'), question), /heron/);
		// Without the model, no rare word of the question is in the memory: nothing.
		assert.equal(await recalled(await base(EVERYDAY, undefined, 'kb-none'), question), '');
	});
});
