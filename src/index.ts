export { defineFlow, loadFlowFile } from './flow/load.js';
export type { Flow, StoredAs } from './flow/flow.js';
export type { FlowInput } from './flow/schema.js';
export { apply, readTarget, exportTarget, withDatabase, databaseOf } from './api.js';
export type { ApplyOptions, DatabaseOption } from './api.js';
export type { ApplyResult, Progress } from './plan/apply.js';
export type { OutputFormat, OutputOptions } from './query/output.js';
export { ScdError, QueryError } from './errors.js';
export { openDriver, duckdbDialect } from './dialects/index.js';
export type { Driver, Dialect, ColumnInfo, InputFile, FileFormat } from './dialects/index.js';
// Driver-level API: reuse one open database for many calls (tests, long-running programs).
export { applyFiles, applyRows } from './plan/apply.js';
export { readTarget as readTargetWith, exportTarget as exportTargetWith, targetQuery } from './query/export.js';
export { readRows, writeRows } from './query/output.js';
export { resolveInputs } from './sources/files.js';
