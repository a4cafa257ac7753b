/**
 * In-process workflow runner for tests, built on n8n-core's real `WorkflowExecute`.
 *
 * Nothing in the engine is mocked: node contexts, expressions, sub-node
 * (`supplyData`) resolution, pairedItem handling, onError/continueOnFail and
 * binary helpers are the real n8n-core 2.8 / n8n-workflow 2.8 code. Only the
 * *host services* the engine pulls from the `@n8n/di` container are replaced
 * with small in-memory stand-ins (see `installEngineServices`), so a run touches
 * no disk (~/.n8n), no network and leaves no timers behind.
 *
 * ```ts
 * const result = await runWorkflow(workflowJson, {
 *   nodeTypes: { 'CUSTOM.myNode': new MyNode() },
 *   triggerItems: [{ json: { chatInput: 'hi', sessionId: 's1' } }],
 * });
 * result.status;            // 'success' | 'error' | ...
 * result.output('My Node'); // items of main output 0, run 0
 * ```
 */
import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';
import {
	BinaryDataConfig,
	BinaryDataService,
	ErrorReporter,
	ExecutionLifecycleHooks,
	InstanceSettings,
	WorkflowExecute,
} from 'n8n-core';
// Not re-exported from n8n-core's index, but eagerly resolved by every node context.
import { SSHClientsManager } from 'n8n-core/dist/execution-engine/ssh-clients-manager';
import {
	BINARY_ENCODING,
	LoggerProxy,
	NodeHelpers,
	Workflow,
	createRunExecutionData,
	type ExecutionError,
	type ExecutionStatus,
	type IBinaryData,
	type ICredentialDataDecryptedObject,
	type ICredentialsHelper,
	type IDataObject,
	type IExecuteData,
	type INode,
	type INodeExecutionData,
	type INodeType,
	type INodeTypes,
	type IRun,
	type IRunData,
	type IVersionedNodeType,
	type IWorkflowBase,
	type IWorkflowExecuteAdditionalData,
	type IWorkflowSettings,
	type WorkflowExecuteMode,
} from 'n8n-workflow';
import { randomBytes } from 'node:crypto';

import { SCRIPTED_MODEL_TYPE, ScriptedChatModel } from './scripted-model';
import {
	TEST_LOOP_TYPE,
	TEST_TRIGGER_TYPE,
	TRIGGER_ALIASES,
	TestLoop,
	TestTrigger,
} from './test-nodes';

export type AnyNodeType = INodeType | IVersionedNodeType;

/** Minimal shape of an n8n workflow export accepted by `runWorkflow`. */
export interface WorkflowJson {
	id?: string;
	name?: string;
	nodes: INode[];
	connections: IWorkflowBase['connections'];
	settings?: IWorkflowSettings;
	pinData?: IWorkflowBase['pinData'];
	staticData?: IDataObject;
	[key: string]: unknown;
}

export interface RunWorkflowOptions {
	/** Node types keyed by the `type` string used in the workflow JSON (merged over the built-ins). */
	nodeTypes?: Record<string, AnyNodeType>;
	/** Items fed into the start node. Default: `[{ json: {} }]`. */
	triggerItems?: INodeExecutionData[];
	/** Name of the node to start from. Default: the first test trigger / trigger-like root node. */
	startNode?: string;
	/** Default: a fresh unique id per run. */
	executionId?: string;
	/** Returned by `this.getInstanceId()`. Default: 'test-instance-id'. */
	instanceId?: string;
	/** Default: 'manual'. */
	mode?: WorkflowExecuteMode;
	/** Decrypted credential data by credential type name, returned by `this.getCredentials(type)`. */
	credentials?: Record<string, ICredentialDataDecryptedObject>;
	/** `$vars` in expressions. */
	variables?: IDataObject;
}

export interface WorkflowRunResult {
	status: ExecutionStatus;
	/** Workflow-level error (the node error that stopped the run), if any. */
	error?: ExecutionError;
	runData: IRunData;
	lastNodeExecuted?: string;
	/** Main output 0 of the last run of `lastNodeExecuted` ([] when it produced nothing). */
	lastNodeOutput: INodeExecutionData[];
	/** Node names in the order their runs finished (sub-nodes included when they record run data). */
	executionOrder: string[];
	executionId: string;
	workflowId: string;
	/** `additionalData.logAiEvent` calls. */
	aiEvents: Array<{ event: string; payload: unknown }>;
	/** The raw `IRun` returned by `WorkflowExecute`. */
	run: IRun;
	/**
	 * Items of output `outputIndex` of run `runIndex` of a node (throws if the node did not run).
	 * `connectionType` defaults to 'main'; use 'ai_languageModel' for recorded model sub-node runs.
	 */
	output(
		nodeName: string,
		opts?: { runIndex?: number; outputIndex?: number; connectionType?: string },
	): INodeExecutionData[];
	/** Number of times a node ran in this execution. */
	runCount(nodeName: string): number;
	/** The error recorded on a node run, if any (also set for nodes that continued on fail). */
	nodeError(nodeName: string, runIndex?: number): ExecutionError | undefined;
}

/** Node types available to every run (can be overridden via `options.nodeTypes`). */
export function builtInNodeTypes(): Record<string, AnyNodeType> {
	const trigger = new TestTrigger();
	const types: Record<string, AnyNodeType> = {
		[TEST_TRIGGER_TYPE]: trigger,
		[TEST_LOOP_TYPE]: new TestLoop(),
		[SCRIPTED_MODEL_TYPE]: new ScriptedChatModel(),
	};
	for (const alias of TRIGGER_ALIASES) types[alias] = trigger;
	return types;
}

// ---------------------------------------------------------------------------
// DI services
// ---------------------------------------------------------------------------

const debug = !!process.env.N8N_HARNESS_DEBUG;

function makeLogger(): Logger {
	const log =
		(level: string) =>
		(message: string, meta?: unknown): void => {
			if (debug) console.error(`[n8n:${level}] ${message}`, meta ?? '');
		};
	const logger = {
		error: log('error'),
		warn: log('warn'),
		info: log('info'),
		debug: log('debug'),
		scoped: () => logger,
	};
	return logger as unknown as Logger;
}

const instanceSettings = {
	instanceId: 'test-instance-id',
	hmacSignatureSecret: 'test-hmac-secret',
	encryptionKey: 'test-encryption-key',
	instanceType: 'main',
	instanceRole: 'unset',
	n8nFolder: '/nonexistent/.n8n',
	staticCacheDir: '/nonexistent/.cache/n8n',
	isDocker: false,
};

let servicesInstalled = false;

/**
 * Registers in-memory stand-ins for the host services n8n-core resolves from
 * `Container` during an execution. The real classes would read/write
 * ~/.n8n/config (InstanceSettings), init Sentry (ErrorReporter), configure
 * winston (Logger) or start a 60s `setInterval` (SSHClientsManager).
 * Idempotent; called by `runWorkflow`.
 */
export function installEngineServices(): void {
	if (servicesInstalled) return;
	const logger = makeLogger();
	Container.set(Logger, logger);
	LoggerProxy.init(logger);
	Container.set(InstanceSettings, instanceSettings as unknown as InstanceSettings);
	Container.set(ErrorReporter, {
		error: (e: unknown) => debug && console.error('[n8n:errorReporter]', e),
		warn: () => {},
		info: () => {},
	} as unknown as ErrorReporter);
	// 'default' mode = binary data stays inline (base64 in `data`); convertBinaryData is a no-op.
	const binaryDataConfig = {
		mode: 'default',
		availableModes: ['default'],
		localStoragePath: '/nonexistent/binaryData',
		signingSecret: 'test-signing-secret',
		dbMaxFileSize: 512,
	} as unknown as BinaryDataConfig;
	Container.set(BinaryDataConfig, binaryDataConfig);
	// Without init() the service has no storage managers: store() keeps data inline
	// and getAsBuffer() decodes `data` (no `id`), i.e. pure in-memory binary data.
	Container.set(
		BinaryDataService,
		new BinaryDataService(binaryDataConfig, Container.get(ErrorReporter), logger),
	);
	const sshUnavailable = () => {
		throw new Error('SSH tunnels are not available in the engine test harness');
	};
	Container.set(SSHClientsManager, {
		getClient: sshUnavailable,
		updateLastUsed: () => {},
	} as unknown as SSHClientsManager);
	servicesInstalled = true;
}

// ---------------------------------------------------------------------------
// Engine plumbing
// ---------------------------------------------------------------------------

class TestNodeTypes implements INodeTypes {
	constructor(private readonly types: Record<string, AnyNodeType>) {}

	getByName(type: string): AnyNodeType {
		return this.types[type];
	}

	getByNameAndVersion(type: string, version?: number): INodeType {
		const nodeType = this.types[type];
		// undefined for unknown types, like n8n (Workflow skips them, issue checks report them)
		return nodeType && NodeHelpers.getVersionedNodeType(nodeType, version);
	}

	getKnownTypes(): IDataObject {
		return {};
	}
}

/** Serves `options.credentials` by credential type; no encryption, no OAuth refresh. */
class TestCredentialsHelper implements ICredentialsHelper {
	constructor(private readonly credentials: Record<string, ICredentialDataDecryptedObject>) {}

	getParentTypes(): string[] {
		return [];
	}

	async authenticate(_c: unknown, _t: string, requestOptions: never) {
		return requestOptions;
	}

	async preAuthentication() {
		return undefined;
	}

	async getCredentials(): Promise<never> {
		throw new Error('getCredentials is not supported by the engine test harness');
	}

	async getDecrypted(_a: unknown, _n: unknown, type: string) {
		const data = this.credentials[type];
		if (!data) throw new Error(`No test credentials of type "${type}" (pass options.credentials)`);
		return structuredClone(data);
	}

	async updateCredentials() {}

	async updateCredentialsOauthTokenData() {}

	getCredentialsProperties() {
		return [];
	}
}

let executionCounter = 0;

function pickStartNode(workflow: Workflow, nodes: INode[], requested: string | undefined): INode {
	if (requested) {
		const node = workflow.getNode(requested);
		if (!node) throw new Error(`startNode "${requested}" is not in the workflow`);
		return node;
	}
	const enabled = nodes.filter((n) => !n.disabled).map((n) => workflow.getNode(n.name)!);
	const testTrigger = enabled.find(
		(n) => workflow.nodeTypes.getByNameAndVersion(n.type, n.typeVersion) instanceof TestTrigger,
	);
	if (testTrigger) return testTrigger;
	const roots = enabled.filter((n) => {
		if (workflow.connectionsByDestinationNode[n.name]?.main?.some((c) => c?.length)) return false;
		return workflow.nodeTypes
			.getByNameAndVersion(n.type, n.typeVersion)
			.description.group.includes('trigger');
	});
	const start = roots[0] ?? workflow.getStartNode();
	if (!start) throw new Error('Could not determine the start node; pass options.startNode');
	return start;
}

/** Helper to build an inline (base64) binary property for trigger items. */
export function binaryData(
	content: Buffer | string,
	opts: { mimeType?: string; fileName?: string } = {},
): IBinaryData {
	const buffer = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
	const fileName = opts.fileName ?? 'file.bin';
	return {
		data: buffer.toString(BINARY_ENCODING),
		mimeType: opts.mimeType ?? 'application/octet-stream',
		fileName,
		fileExtension: fileName.includes('.') ? fileName.split('.').pop() : undefined,
		fileSize: `${buffer.length} B`,
		bytes: buffer.length,
	};
}

/**
 * Runs a workflow JSON in-process through n8n-core's `WorkflowExecute`.
 *
 * Node errors never reject: they come back as `status: 'error'` + `error`
 * (and on the node's run data). The promise only rejects for harness misuse
 * (unknown node type, missing start node).
 */
export async function runWorkflow(
	workflowJson: WorkflowJson,
	options: RunWorkflowOptions = {},
): Promise<WorkflowRunResult> {
	installEngineServices();
	if (options.instanceId) instanceSettings.instanceId = options.instanceId;
	else instanceSettings.instanceId = 'test-instance-id';

	// Workflow mutates node objects (fills parameter defaults): never touch the caller's JSON.
	const json = structuredClone(workflowJson);
	const types = { ...builtInNodeTypes(), ...options.nodeTypes };
	for (const node of json.nodes) {
		if (!types[node.type]) {
			throw new Error(
				`Unknown node type "${node.type}" (node "${node.name}"). Known: ${Object.keys(types).join(', ')}`,
			);
		}
	}

	const workflowId = json.id ?? 'test-workflow';
	const mode = options.mode ?? 'manual';
	const executionId =
		options.executionId ?? `test-exec-${++executionCounter}-${randomBytes(4).toString('hex')}`;
	const workflow = new Workflow({
		id: workflowId,
		name: json.name ?? workflowId,
		nodes: json.nodes,
		connections: json.connections ?? {},
		active: false,
		nodeTypes: new TestNodeTypes(types),
		// New n8n workflows use the v1 execution order; JSON settings win.
		settings: { executionOrder: 'v1', ...json.settings },
		staticData: json.staticData,
		pinData: json.pinData,
	});

	const startNode = pickStartNode(workflow, json.nodes, options.startNode);
	const triggerItems = options.triggerItems ?? [{ json: {} }];
	if (triggerItems.length === 0) throw new Error('triggerItems must contain at least one item');

	const workflowData = {
		id: workflowId,
		name: workflow.name,
		nodes: json.nodes,
		connections: json.connections,
		settings: workflow.settings,
		active: false,
		isArchived: false,
		createdAt: new Date(),
		updatedAt: new Date(),
		activeVersionId: null,
	} as unknown as IWorkflowBase;
	const hooks = new ExecutionLifecycleHooks(mode, executionId, workflowData);
	const executionOrder: string[] = [];
	hooks.addHandler('nodeExecuteAfter', (nodeName) => {
		executionOrder.push(nodeName);
	});

	const aiEvents: WorkflowRunResult['aiEvents'] = [];
	const notAvailable = (what: string) => async () => {
		throw new Error(`${what} is not available in the engine test harness`);
	};
	const additionalData = {
		hooks,
		executionId,
		currentNodeExecutionIndex: 0,
		credentialsHelper: new TestCredentialsHelper(options.credentials ?? {}),
		executeWorkflow: notAvailable('executeWorkflow (sub-workflows)'),
		getRunExecutionData: async () => undefined,
		startRunnerTask: notAvailable('startRunnerTask (task runners)'),
		restApiUrl: 'http://localhost:5678/rest',
		instanceBaseUrl: 'http://localhost:5678',
		formWaitingBaseUrl: 'http://localhost:5678/form-waiting',
		webhookBaseUrl: 'http://localhost:5678/webhook',
		webhookWaitingBaseUrl: 'http://localhost:5678/webhook-waiting',
		webhookTestBaseUrl: 'http://localhost:5678/webhook-test',
		variables: options.variables ?? {},
		logAiEvent: (event: string, payload: unknown) => aiEvents.push({ event, payload }),
		externalSecretsProxy: {
			hasProvider: () => false,
			hasSecret: () => false,
			getSecret: () => undefined,
		},
		workflowSettings: workflow.settings,
	} as unknown as IWorkflowExecuteAdditionalData;

	const nodeExecutionStack: IExecuteData[] = [
		{ node: startNode, data: { main: [structuredClone(triggerItems)] }, source: null },
	];
	const runExecutionData = createRunExecutionData({
		executionData: {
			nodeExecutionStack,
			// Pre-established execution context: skips the context-hook machinery
			// (ExecutionContextService → Cipher → real InstanceSettings), which only
			// matters for credential-resolving triggers.
			runtimeData: {
				version: 1,
				establishedAt: Date.now(),
				source: mode,
				triggerNode: { name: startNode.name, type: startNode.type },
			},
		},
	});

	const workflowExecute = new WorkflowExecute(additionalData, mode, runExecutionData);
	let run: IRun;
	try {
		run = await workflowExecute.processRunExecutionData(workflow);
	} catch (error) {
		// Thrown synchronously for parameter issues (WorkflowHasIssuesError): report which.
		const issues = workflowExecute.checkReadyForExecution(workflow, { startNode: startNode.name });
		const e = error as ExecutionError;
		if (issues) e.description = `Workflow issues: ${JSON.stringify(issues)}`;
		run = {
			data: runExecutionData,
			mode,
			startedAt: new Date(),
			stoppedAt: new Date(),
			status: 'error',
			storedAt: 'db',
		};
		run.data.resultData.error = e;
	}

	const { resultData } = run.data;
	const runData = resultData.runData;
	const lastNodeExecuted = resultData.lastNodeExecuted;
	const lastRun = lastNodeExecuted ? runData[lastNodeExecuted]?.at(-1) : undefined;

	return {
		status: run.status,
		error: resultData.error,
		runData,
		lastNodeExecuted,
		lastNodeOutput: lastRun?.data?.main?.[0] ?? [],
		executionOrder,
		executionId,
		workflowId,
		aiEvents,
		run,
		output(nodeName, { runIndex = 0, outputIndex = 0, connectionType = 'main' } = {}) {
			const task = runData[nodeName]?.[runIndex];
			if (!task) {
				throw new Error(
					`Node "${nodeName}" has no run #${runIndex} (ran: ${Object.keys(runData).join(', ') || 'nothing'})`,
				);
			}
			return task.data?.[connectionType]?.[outputIndex] ?? [];
		},
		runCount: (nodeName) => runData[nodeName]?.length ?? 0,
		nodeError: (nodeName, runIndex = 0) => runData[nodeName]?.[runIndex]?.error,
	};
}
