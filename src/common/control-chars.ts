/** C0 controls, DEL and C1 controls (NUL included): never allowed in an ID or a storage key. */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/** A UTF-16 surrogate without its partner: it cannot round-trip through UTF-8, so two would share one key. */
export const LONE_SURROGATE =
	/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
