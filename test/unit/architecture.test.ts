// The layering rules of src/ (see src/README.md), checked with the project's own ESLint config, so
// that `npm run lint` failing on them is proven here rather than assumed.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { ESLint } from 'eslint';

const ROOT = path.resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const p = path.join(dir, name);
		return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
	});
}

describe('src/ is framework-free', () => {
	it(
		'ESLint refuses an n8n import, or an import of nodes/ or tests, in src/',
		{ timeout: 60_000 },
		async () => {
			const eslint = new ESLint({ cwd: ROOT });
			const probe = [
				"import { NodeOperationError } from 'n8n-workflow';",
				"import { x } from '../../nodes/shared/errors';",
				"import { y } from '../../test/support/storages';",
				'export const all = [NodeOperationError, x, y];',
			].join('\n');
			const [result] = await eslint.lintText(probe, {
				filePath: path.join(ROOT, 'src/store/probe.ts'),
			});
			const restricted = result.messages
				.filter((m) => m.ruleId === 'no-restricted-imports')
				.map((m) => m.line);
			assert.deepEqual(restricted, [1, 2, 3]);
			// The same imports are fine in nodes/.
			const [inNodes] = await eslint.lintText(
				probe.replace('../../nodes/shared/errors', '../shared/errors'),
				{
					filePath: path.join(ROOT, 'nodes/shared/probe.ts'),
				},
			);
			assert.deepEqual(
				inNodes.messages.filter((m) => m.ruleId === 'no-restricted-imports'),
				[],
			);
		},
	);

	it('no file in src/ imports n8n today', () => {
		for (const file of sourceFiles(path.join(ROOT, 'src'))) {
			const text = readFileSync(file, 'utf8');
			assert.doesNotMatch(
				text,
				/from '(n8n-workflow|n8n-core|@n8n\/[^']*)'/,
				path.relative(ROOT, file),
			);
		}
	});
});
