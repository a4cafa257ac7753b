// The index room's door: everything the Memory Base (src/knowledge) uses of its indexes. Behind it
// are the word index (lexical/: BM25 over segments, with the chunks of its open sources read through
// a reader its owner injects), the vector indexes (vector/: the embedded one with its SIMD kernel, and
// a connected vector store), rank fusion, and what they share (chunks/). The room knows nothing of
// capture logs, sync, leases or lifecycle: its owner names the folders it keeps its objects in and
// decides what an open source is.
export { chunkKey, chunkOrder } from './chunks/chunk';
export type { IndexedChunk } from './chunks/chunk';
export { passes } from './chunks/filter';
export type { ChunkFilter } from './chunks/filter';
export { SearchReads } from './chunks/search-reads';
export { fuse, newerFirst, NEWER_OF, SCALE_OVER } from './fusion/fuse';
export type { Ranked, VectorCandidate } from './fusion/fuse';
export { calibrationOf, nullOf } from './fusion/calibration';
export { medianStandout, PROBE_SIZE, PROBES, seedOf, wordProbes } from './fusion/probes';
export { seeded } from '../common/seeded';
export { MIN_STANDOUT_SCOPE, standout } from './fusion/standout';
export { weigh } from './fusion/weights';
export type { FusionWeights } from './fusion/weights';
export { LexicalIndex } from './lexical/lexical-index';
export type { LexicalIndexOptions } from './lexical/lexical-index';
export { lexicalStats, lexicalView } from './lexical/view';
export { streamedView } from './lexical/stream';
export { settleTiers, maintainTiers } from './lexical/tier-maintenance';
export { TIER_SEGMENTS, SETTLING, GROWTH, MAX_TIERS, sizeClass } from './chunks/tiering';
export { settleCellTiers, maintainCellTiers, isCellKey } from './vector/cell-upkeep';
export { tiersOf, bucketKeys, isBucketKey } from './lexical/tiers';
export type { TermTier } from './lexical/tiers';
export type { LexicalManifest, OpenSource } from './lexical/manifest';
export type { IndexManifest as VectorManifest } from './vector/manifest';
export { mergeUsers } from './lexical/open-sources';
export type {
	ClosedSource,
	Listing,
	SourceReader,
	SourceState,
	SourceTail,
} from './lexical/open-sources';
export { tokenize } from './lexical/tokenize';
export type { LexicalStats, LexicalView } from './lexical/types';
export { ExternalIndex } from './vector/external-store';
export type { ExternalVectorStore } from './vector/external-store';
export { EmbeddedIndex } from './vector/vector-index';
export type { IndexStats } from './vector/vector-index';
export { rankOver } from './vector/ranking';
export { streamedRanking } from './vector/stream';
export type { Similarities, VectorRanking } from './vector/ranking';
export { MAX_TOP_K, normaliseRows, SEGMENT_MAX_VECTORS } from './vector/vector-segment';
export type { Touched } from './chunks/touched';
