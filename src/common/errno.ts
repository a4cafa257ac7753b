/** The errno code of a Node.js system error ("ENOENT", "ENOSPC" …), or undefined. */
export function errnoCode(error: unknown): string | undefined {
	const code = (error as NodeJS.ErrnoException | undefined)?.code;
	return typeof code === 'string' ? code : undefined;
}
