import type { IExecuteFunctions } from 'n8n-workflow';

import { isReadable } from '../../../src/prompt/file-kinds';
import type { PdfAndAudio } from '../../../src/prompt/file-kinds';
import type { FileInput } from '../../../src/store/blobs';

function matcher(pattern: string): (name: string) => boolean {
	if (!pattern.endsWith('*')) return (name) => name === pattern;
	const stem = pattern.slice(0, -1);
	return (name) => name.startsWith(stem);
}

/**
 * The item's binary files to send and remember. With no setting, the files the model can read (images,
 * text files and PDFs, as n8n's AI Agent passes them through; audio too when it goes as file parts);
 * otherwise the named properties, "*" matching any suffix.
 */
export async function itemFiles(
	ctx: IExecuteFunctions,
	itemIndex: number,
	setting: string | undefined,
	pdfAndAudio: PdfAndAudio,
): Promise<FileInput[]> {
	const binary = ctx.getInputData()[itemIndex]?.binary ?? {};
	const available = Object.keys(binary);
	let names: string[];
	if (setting === undefined) {
		names = available.filter((n) =>
			isReadable(binary[n]?.mimeType ?? '', binary[n]?.fileName ?? n, pdfAndAudio),
		);
	} else {
		const patterns = setting
			.split(',')
			.map((p) => p.trim())
			.filter(Boolean);
		names = [];
		for (const p of patterns) {
			const hits = available.filter(matcher(p));
			if (hits.length === 0 && !p.endsWith('*')) ctx.helpers.assertBinaryData(itemIndex, p); // names the missing property
			names.push(...hits.filter((h) => !names.includes(h)));
		}
	}
	const files: FileInput[] = [];
	for (const name of names) {
		const meta = ctx.helpers.assertBinaryData(itemIndex, name);
		files.push({
			transferMethod: 'local_file',
			data: await ctx.helpers.getBinaryDataBuffer(itemIndex, name),
			mimeType: meta.mimeType || 'application/octet-stream',
			name: meta.fileName || name,
		});
	}
	return files;
}
