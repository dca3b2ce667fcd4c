/**
 * The largest record scdkit reads, in bytes of its text: the one limit of every reader (JSON lines,
 * JSON arrays, Debezium envelopes). A record over it is quarantined with its whole raw text; the
 * engines' line readers are given buffers sized from it. docs/TYPES.md states it.
 */
export const MAX_RECORD_BYTES = 32 * 1024 * 1024;

/** A record's reason when it is over the limit. */
export const TOO_LARGE = `record larger than ${MAX_RECORD_BYTES >> 20} MiB`;
