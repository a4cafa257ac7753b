/**
 * A minimal, valid PDF written by hand (the format's own objects, no library): one page per entry of
 * `pages`, each line drawn with the standard Helvetica font. pdf.js reads its text back exactly, so the
 * tests check real extraction with files of a few hundred bytes. test/fixtures/notes.pdf was made
 * with it (`node --import tsx test/support/pdf.ts test/fixtures/notes.pdf "line" …`).
 */
import { writeFileSync } from 'node:fs';

const escape = (line: string) => line.replace(/[\\()]/g, (c) => `\\${c}`);

export function minimalPdf(pages: readonly (readonly string[])[]): Buffer {
	const objects: string[] = [];
	objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
	const kids = pages.map((_, i) => `${4 + 2 * i} 0 R`).join(' ');
	objects[2] = `<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`;
	objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
	pages.forEach((lines, i) => {
		const text = lines.map((l) => `(${escape(l)}) Tj T*`);
		const body = ['BT', '/F1 12 Tf', '14 TL', '72 720 Td', ...text, 'ET'].join('\n');
		objects[4 + 2 * i] =
			`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] ` +
			`/Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`;
		objects[5 + 2 * i] =
			`<< /Length ${Buffer.byteLength(body, 'latin1')} >>\nstream\n${body}\nendstream`;
	});
	let out = '%PDF-1.4\n';
	const offsets: number[] = [];
	for (let n = 1; n < objects.length; n++) {
		offsets[n] = Buffer.byteLength(out, 'latin1');
		out += `${n} 0 obj\n${objects[n]}\nendobj\n`;
	}
	const xref = Buffer.byteLength(out, 'latin1');
	out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
	for (let n = 1; n < objects.length; n++)
		out += `${String(offsets[n]).padStart(10, '0')} 00000 n \n`;
	out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
	return Buffer.from(out, 'latin1');
}

if (require.main === module) {
	const [file, ...lines] = process.argv.slice(2);
	writeFileSync(file, minimalPdf([lines]));
}
