// Which treatment a file gets on its way to the model, decided by its MIME type (and, when the type is a
// generic one, its name): the table docs/files.md shows users.

/** How a file reaches the model: an image part, its text, a PDF, audio, or a short note. */
export type FileKind = 'image' | 'text' | 'pdf' | 'audio' | 'other';

/** How PDFs and audio are sent: their text (PDFs; audio becomes a note), or native file parts. */
export type PdfAndAudio = 'text' | 'file';

/** Per-file settings: the token limit of a file's text, and how PDFs and audio are sent. */
export interface FileOptions {
	/** Most tokens of one file's text the model gets (default 2,000); longer text is cut, and says so. */
	maxTokensPerFile?: number;
	/** 'text' (default: works with every model) or 'file' (native parts, for models that read them). */
	pdfAndAudio?: PdfAndAudio;
}

export const DEFAULT_MAX_TOKENS_PER_FILE = 2000;

const TEXT_TYPES = new Set([
	'application/json',
	'application/ld+json',
	'application/x-ndjson',
	'application/jsonl',
	'application/xml',
	'application/csv',
	'application/x-yaml',
	'application/yaml',
	'application/toml',
	'application/sql',
	'application/javascript',
	'application/x-javascript',
	'application/typescript',
	'application/x-sh',
	'application/x-httpd-php',
	'application/graphql',
]);

/** Extensions read as text when the type says nothing (browsers send .md or .yaml as octet-stream). */
const TEXT_EXTENSIONS = new Set(
	'txt md markdown csv tsv json jsonl ndjson xml yaml yml toml log ini sql html htm css js ts py sh'.split(
		' ',
	),
);

const GENERIC_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

function baseType(mimeType: string): string {
	return mimeType.split(';')[0].trim().toLowerCase();
}

function extensionOf(name: string): string {
	const dot = name.lastIndexOf('.');
	return dot < 0 ? '' : name.slice(dot + 1).toLowerCase();
}

/** The treatment of a file of this type and name. */
export function fileKind(mimeType: string, name: string): FileKind {
	const type = baseType(mimeType);
	if (type.startsWith('image/')) return 'image';
	if (type === 'application/pdf') return 'pdf';
	if (type.startsWith('audio/')) return 'audio';
	if (type.startsWith('text/') || TEXT_TYPES.has(type)) return 'text';
	if (type.endsWith('+json') || type.endsWith('+xml') || type.endsWith('+yaml')) return 'text';
	if (GENERIC_TYPES.has(type)) {
		const ext = extensionOf(name);
		if (ext === 'pdf') return 'pdf';
		if (TEXT_EXTENSIONS.has(ext)) return 'text';
	}
	return 'other';
}

/**
 * The format of audio a chat model can take as a native part (OpenAI's input_audio: WAV and MP3 only,
 * as LangChain converts them); undefined for any other audio, which stays a note.
 */
export function audioFormat(mimeType: string): 'wav' | 'mp3' | undefined {
	const type = baseType(mimeType);
	if (['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave'].includes(type)) return 'wav';
	if (['audio/mpeg', 'audio/mp3', 'audio/mpeg3', 'audio/x-mpeg-3'].includes(type)) return 'mp3';
	return undefined;
}

/** Whether the model can read a file of this kind (the files a node sends when none are named). */
export function isReadable(mimeType: string, name: string, pdfAndAudio: PdfAndAudio): boolean {
	const kind = fileKind(mimeType, name);
	if (kind === 'audio') return pdfAndAudio === 'file' && audioFormat(mimeType) !== undefined;
	return kind !== 'other';
}
