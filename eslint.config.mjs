// n8n's community-node rules in their self-hosted variant, plus typescript-eslint.
import eslint from '@eslint/js';
import { n8nCommunityNodesPlugin } from '@n8n/eslint-plugin-community-nodes';
import tseslint from 'typescript-eslint';

export default tseslint.config(
	{
		ignores: [
			'dist/**',
			'node_modules/**',
			'.tmp/**',
			'.artifacts/**',
			'gulpfile.js',
			'scripts/**/*.mjs',
		],
	},
	{
		files: ['**/*.ts'],
		extends: [eslint.configs.recommended, tseslint.configs.recommended],
		rules: {
			'@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
		},
	},
	{
		files: ['nodes/**/*.ts', 'credentials/**/*.ts', 'src/**/*.ts', 'package.json'],
		extends: [n8nCommunityNodesPlugin.configs.recommendedWithoutN8nCloudSupport],
		rules: {
			// Self-hosted package: the S3 client, the tokenizer and the schema library are real runtime needs.
			'@n8n/community-nodes/no-runtime-dependencies': 'off',
		},
	},
	{
		files: ['src/**/*.ts'],
		rules: {
			// src/ is framework-free (no n8n imports): it throws typed MemoryErrors, which the node wraps in NodeOperationError.
			'@n8n/community-nodes/require-node-api-error': 'off',
			// ... and that is enforced: the engine must stay usable without n8n (and testable without it).
			'no-restricted-imports': [
				'error',
				{
					patterns: [
						{
							regex: '^(n8n-workflow|n8n-core|n8n|@n8n/.*)(/.*)?$',
							message: 'src/ is framework-free: n8n adapters belong in nodes/.',
						},
						{
							regex: '^\\.\\./+(\\.\\./+)*(nodes|credentials|test|bench)(/|$)',
							message: 'src/ must not depend on nodes/, credentials/, tests or benchmarks.',
						},
					],
				},
			],
		},
	},
	{
		files: ['test/**/*.ts', 'bench/**/*.ts', 'demo/**/*.ts'],
		rules: {
			// Test helpers and the demo model server pass arbitrary JSON (request bodies, chat replies) around.
			'@typescript-eslint/no-explicit-any': 'off',
		},
	},
	{
		files: ['package.json'],
		languageOptions: { parser: tseslint.parser, parserOptions: { extraFileExtensions: ['.json'] } },
	},
);
