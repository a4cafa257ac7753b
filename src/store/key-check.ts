import { CONTROL_CHARS, LONE_SURROGATE } from '../common/control-chars';
import { StorageError } from '../errors';

/** Defence in depth: a storage key must be a relative "/"-path whose segments cannot escape it. */
export function assertStorageKey(key: string): string {
	const bad =
		typeof key !== 'string' ||
		key.length === 0 ||
		key.startsWith('/') ||
		key.includes('\\') ||
		CONTROL_CHARS.test(key) ||
		LONE_SURROGATE.test(key) ||
		key.split('/').some((s) => s === '' || s === '.' || s === '..');
	if (bad)
		throw new StorageError(
			`Refusing unsafe storage key ${JSON.stringify(String(key).slice(0, 80))}`,
		);
	return key;
}
