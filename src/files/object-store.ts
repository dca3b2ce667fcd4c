/**
 * An object-store URL (`s3://…`, `abfss://…`, `gs://…`, `dbfs://…`, `file://…`): an input file the
 * engine reads at that name itself. scd never opens, lists or hashes one (docs/SPARK.md "Paths").
 */
export function isObjectStoreUrl(path: string): boolean {
  return isUrl(path);
}

/** A URL: a scheme and `://` (`s3://`, `sc://`, `postgres://`), never a local path or a Windows drive. */
export function isUrl(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
}
