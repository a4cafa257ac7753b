export type WarningHandler = (message: string) => void;

/** Where engine warnings go unless the caller says otherwise. */
export const defaultWarn: WarningHandler = (message) =>
	process.emitWarning(message, 'LlmMemoryWarning');
