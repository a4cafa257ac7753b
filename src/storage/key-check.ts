import { StorageError } from '../errors';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Defence in depth: a storage key must be a relative "/"-path whose segments cannot escape it. */
export function assertStorageKey(key: string): string {
	const bad =
		typeof key !== 'string' ||
		key.length === 0 ||
		key.startsWith('/') ||
		key.includes('\\') ||
		CONTROL.test(key) ||
		key.split('/').some((s) => s === '' || s === '.' || s === '..');
	if (bad) throw new StorageError(`Refusing unsafe storage key ${JSON.stringify(String(key).slice(0, 80))}`);
	return key;
}
