// Files inside message content parts: what a model returned (an image part, an image data URL) or what a
// caller handed to memory with a message, in the shapes LangChain and the providers use. Bytes in data
// URLs and base64 blocks become files to copy into storage; http(s) URLs stay links (never fetched: an
// address written by a model is not one to request from inside the user's network).
import type { FileInput } from '../store/blobs';

type Loose = Record<string, unknown>;

/** A file found in content: its bytes or its URL, type and name if the part gave one. */
type Found = { mimeType: string; name?: string } & ({ data: Uint8Array } | { url: string });

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** Bytes and type of a data URL (base64 or percent-encoded); undefined for anything else. */
export function parseDataUrl(url: string): { mimeType: string; data: Uint8Array } | undefined {
	const m = /^data:([^,]*?),(.*)$/s.exec(url);
	if (!m) return undefined;
	const params = m[1].split(';');
	const isBase64 = params.at(-1)?.toLowerCase() === 'base64';
	const mimeType = params[0] || 'text/plain';
	try {
		const data = isBase64
			? Buffer.from(m[2], 'base64')
			: Buffer.from(decodeURIComponent(m[2]), 'utf8');
		return { mimeType, data: new Uint8Array(data) };
	} catch {
		return undefined; // malformed percent-encoding
	}
}

/** A URL in content: bytes when it is a data URL, a link when http(s), nothing otherwise. */
function fromUrl(
	url: string | undefined,
	mimeType: string | undefined,
	linkType: string,
	name?: string,
): Found | undefined {
	if (!url) return undefined;
	const inline = parseDataUrl(url);
	if (inline) return { ...inline, mimeType: mimeType ?? inline.mimeType, name };
	if (/^https?:\/\//i.test(url))
		return { url, mimeType: mimeType ?? linkType, name: name ?? urlName(url) };
	return undefined;
}

/** The last segment of a URL's path, when it names a file ("cat.jpg"). */
function urlName(url: string): string | undefined {
	try {
		const last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
		return /\.[a-z0-9]+$/i.test(last) ? last : undefined;
	} catch {
		return undefined;
	}
}

function fromBase64(data: string | undefined, mimeType: string, name?: string): Found | undefined {
	return data ? { data: new Uint8Array(Buffer.from(data, 'base64')), mimeType, name } : undefined;
}

function imageOf(p: Loose): Found | undefined {
	const source = (p.source ?? {}) as Loose; // Anthropic: { type: 'base64', media_type, data }
	if (source.type === 'base64')
		return fromBase64(str(source.data), str(source.media_type) ?? 'image/png');
	const mime = str(p.mime_type) ?? str(p.mimeType);
	if (str(p.data)) return fromBase64(str(p.data), mime ?? 'image/png');
	return fromUrl(str(p.url) ?? str(source.url), mime, 'image/*');
}

function fileOf(p: Loose): Found | undefined {
	const meta = (p.metadata ?? {}) as Loose;
	const openAi = (p.file ?? {}) as Loose; // OpenAI: { file: { file_data: dataURL, filename } }
	const name = str(meta.filename) ?? str(meta.name) ?? str(openAi.filename);
	const mime = str(p.mime_type) ?? str(p.mimeType);
	if (str(p.data)) return fromBase64(str(p.data), mime ?? 'application/octet-stream', name);
	return fromUrl(str(p.url) ?? str(openAi.file_data), mime, 'application/octet-stream', name);
}

function partFile(part: unknown): Found | undefined {
	if (!part || typeof part !== 'object') return undefined;
	const p = part as Loose;
	switch (p.type) {
		case 'image_url': {
			const v = p.image_url;
			return fromUrl(
				typeof v === 'string' ? v : str((v as Loose | undefined)?.url),
				undefined,
				'image/*',
			);
		}
		case 'image':
			return imageOf(p);
		case 'file':
		case 'audio':
			return fileOf(p);
		case 'input_audio': {
			const a = (p.input_audio ?? {}) as Loose;
			return fromBase64(str(a.data), `audio/${str(a.format) ?? 'wav'}`);
		}
		default:
			return undefined;
	}
}

const extensionOf = (mimeType: string) =>
	(mimeType.split('/')[1] ?? 'bin').split(/[;+]/)[0].replace('jpeg', 'jpg').replace('*', 'bin');

/**
 * The files in message content: image parts (OpenAI's image_url, LangChain's image blocks, Anthropic's
 * base64 source), file and audio blocks. `transferMethod` says whose they are: 'tool_file' for what a
 * model returned, 'local_file' for what a user sent. Parts without a usable file are passed over.
 */
export function contentFiles(
	content: unknown,
	transferMethod: 'local_file' | 'tool_file',
): FileInput[] {
	if (!Array.isArray(content)) return [];
	const files: FileInput[] = [];
	for (const part of content) {
		const found = partFile(part);
		if (!found) continue;
		const kind = found.mimeType.split('/')[0] || 'file';
		const name = found.name ?? `${kind}-${files.length + 1}.${extensionOf(found.mimeType)}`;
		files.push(
			'url' in found
				? { transferMethod: 'remote_url', url: found.url, mimeType: found.mimeType, name }
				: { transferMethod, data: found.data, mimeType: found.mimeType, name },
		);
	}
	return files;
}
