// What an S3 SDK error means for the storage: absent object, failed condition, a status, a host that does not resolve.

export interface SdkError {
	name?: string;
	Code?: string;
	message?: string;
	$metadata?: { httpStatusCode?: number; attempts?: number };
}

export function status(error: unknown): number | undefined {
	return (error as SdkError)?.$metadata?.httpStatusCode;
}

/** The object is absent. A missing bucket (NoSuchBucket, also a 404) is an error, never "empty". */
export function isNotFound(error: unknown): boolean {
	const e = error as SdkError;
	if (e?.name === 'NoSuchBucket' || e?.Code === 'NoSuchBucket') return false;
	return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || status(error) === 404;
}

/** The client sent the request more than once (an earlier attempt's answer was lost or an error). */
export const wasRetried = (error: unknown) => ((error as SdkError)?.$metadata?.attempts ?? 1) > 1;

export function isConflict(error: unknown): boolean {
	const s = status(error);
	return s === 412 || s === 409 || (error as SdkError)?.name === 'PreconditionFailed';
}

interface NetError {
	code?: string;
	hostname?: string;
	message?: string;
	cause?: unknown;
}

/** The host name an error (or an error it wraps) says does not resolve (getaddrinfo ENOTFOUND). */
function unresolvedHost(error: unknown): string | undefined {
	for (let e = error as NetError | undefined, depth = 0; e && depth < 5; depth++) {
		if (e.code === 'ENOTFOUND') return e.hostname ?? /ENOTFOUND (\S+)/.exec(e.message ?? '')?.[1];
		e = e.cause as NetError | undefined;
	}
	return undefined;
}

/**
 * A hint for an error that says the bucket's virtual-host name (`<bucket>.<host>`, how S3 addresses a
 * bucket unless forcePathStyle is on) does not resolve: most S3-compatible servers are reached by their
 * own host name only, so the bucket must go in the path. Empty for any other error.
 */
export function virtualHostHint(
	error: unknown,
	bucket: string,
	forcePathStyle: boolean,
	endpoint: string | undefined,
): string {
	const hostname = forcePathStyle ? undefined : unresolvedHost(error);
	if (!hostname?.startsWith(`${bucket}.`)) return '';
	const pathStyle = `${(endpoint ?? hostname.slice(bucket.length + 1)).replace(/\/+$/, '')}/${bucket}`;
	return (
		`The bucket's virtual-host name ${hostname} does not resolve: with Force Path Style ` +
		`(forcePathStyle) off, requests go to <bucket>.<host>. Turn on Force Path Style to send them to ` +
		`${pathStyle} instead, as most S3-compatible servers need.`
	);
}
