import { z } from 'zod';

/** A column name as written in a flow. */
const column = z.string().min(1, 'a column name cannot be empty');
const columnList = z.array(column).min(1, 'give at least one column');
const columnOrList = z.union([column, columnList]);

export const sourceSchema = z
  .object({
    /** A file or a landing folder, relative to the flow file. */
    path: z.string().min(1).optional(),
    /** ndjson | json | csv | parquet; default: from each file's extension. */
    format: z.enum(['ndjson', 'json', 'csv', 'parquet']).optional(),
  })
  .strict();

export const flowSchema = z
  .object({
    name: z.string().min(1).optional(),
    target: z
      .string()
      .min(1)
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'use letters, digits and _ only (a plain table name)'),
    keys: z.union([column, columnList]),
    sequenceBy: columnOrList,
    applyAsDeletes: z.string().min(1).optional(),
    applyAsTruncates: z.string().min(1).optional(),
    columns: columnList.optional(),
    exceptColumns: columnList.optional(),
    storedAs: z.enum(['scd2', 'scd1']).default('scd2'),
    trackHistory: columnList.optional(),
    trackHistoryExcept: columnList.optional(),
    ignoreNullUpdates: z.boolean().default(false),
    database: z.string().min(1).optional(),
    source: sourceSchema.optional(),
    // Output options (SPEC §4)
    startAtColumn: column.default('__START_AT'),
    endAtColumn: column.default('__END_AT'),
    endSentinel: z.union([z.string(), z.number()]).optional(),
    isCurrentColumn: column.optional(),
    surrogateKey: column.optional(),
    deletes: z.enum(['close', 'tombstone']).default('close'),
    deletedColumn: column.default('__DELETED'),
  })
  .strict();

export type FlowInput = z.input<typeof flowSchema>;
export type SourceSpec = z.output<typeof sourceSchema>;
