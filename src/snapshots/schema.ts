// JSON Schema checks of versioned data, with Ajv 8 (the reference JavaScript validator: drafts 07,
// 2019-09 and 2020-12). Schemas are compiled once per process and never fetch anything ($ref to other
// documents must be resolvable inside the schema).
import Ajv from 'ajv';
import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';

import { BoundedCache } from '../common/bounded-cache';
import { InvalidSchemaError, NotJsonError } from '../errors';
import type { SchemaIssue } from '../errors';
import { canonicalJson, toJsonText } from './json';

/** Checks data against a compiled schema: the violations, empty when it is valid. */
export type DataValidator = (data: unknown) => SchemaIssue[];

const OPTIONS: Options = {
	allErrors: true,
	// Unknown keywords (e.g. a misspelt "requried") make the schema invalid instead of being ignored.
	strict: true,
	strictTypes: false,
	strictTuples: false,
	strictRequired: false,
	// "format" is an annotation only (the default of drafts 2019-09 and 2020-12): checking formats needs
	// the separate ajv-formats package, and an unchecked format must not make the schema fail to compile.
	validateFormats: false,
	logger: false,
};

/** Compiled validators by schema, so a node that builds a VersionedData per execution compiles once. */
const compiled = new BoundedCache<ValidateFunction>({ name: 'JSON schemas', maxEntries: 64 });

function engineFor(schema: unknown) {
	const dialect =
		typeof schema === 'object' && schema !== null && '$schema' in schema
			? (schema as { $schema: unknown }).$schema
			: undefined;
	if (dialect === undefined) return new Ajv(OPTIONS);
	if (typeof dialect !== 'string') throw new InvalidSchemaError('"$schema" must be a string');
	if (dialect.includes('2020-12')) return new Ajv2020(OPTIONS);
	if (dialect.includes('2019-09')) return new Ajv2019(OPTIONS);
	if (/draft-0[67]/.test(dialect)) return new Ajv(OPTIONS);
	throw new InvalidSchemaError(
		`"$schema" ${JSON.stringify(dialect)} is not supported (use draft-07, 2019-09 or 2020-12)`,
	);
}

function issue(e: ErrorObject): SchemaIssue {
	const p = e.params as Record<string, unknown>;
	let message = e.message ?? e.keyword;
	if (e.keyword === 'additionalProperties' || e.keyword === 'unevaluatedProperties')
		message += ` (${JSON.stringify(p.additionalProperty ?? p.unevaluatedProperty)})`;
	else if (e.keyword === 'enum') message += ` (${JSON.stringify(p.allowedValues)})`;
	return { path: e.instancePath, message };
}

/** Compiles a JSON Schema (an object or a boolean); an invalid one is an InvalidSchemaError saying why. */
export function compileSchema(schema: unknown): DataValidator {
	if (
		typeof schema !== 'boolean' &&
		(typeof schema !== 'object' || schema === null || Array.isArray(schema))
	)
		throw new InvalidSchemaError('a JSON Schema must be an object or a boolean');
	try {
		toJsonText('schema', schema, Infinity);
	} catch (error) {
		if (error instanceof NotJsonError) throw new InvalidSchemaError(error.reason, { cause: error });
		throw error;
	}
	const id = canonicalJson(schema);
	const check = compiled.getOrSet(id, () => {
		try {
			return engineFor(schema).compile(schema as object);
		} catch (error) {
			if (error instanceof InvalidSchemaError) throw error;
			throw new InvalidSchemaError((error as Error).message, { cause: error });
		}
	});
	return (data) => (check(data) ? [] : (check.errors ?? []).map(issue));
}
