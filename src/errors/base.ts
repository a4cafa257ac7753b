/** Base class: every error the memory engine raises on purpose. */
export class MemoryError extends Error {
	constructor(message: string, options?: { cause?: unknown }) {
		super(message, options);
		this.name = new.target.name;
	}
}
